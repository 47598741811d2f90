#!/bin/sh
# run.sh PYTHON TEST_FILE: runs one pytest file, or skips (exit 77) saying what is missing.
py=$1; shift
if ! command -v "$py" >/dev/null 2>&1; then echo "SKIP: $py not found"; exit 77; fi
if ! "$py" -c 'import numpy' 2>/dev/null; then echo "SKIP: numpy missing for $py (apt-get install python3-numpy)"; exit 77; fi
if ! "$py" -c 'import pytest' 2>/dev/null; then echo "SKIP: pytest missing for $py (apt-get install python3-pytest)"; exit 77; fi
exec "$py" -m pytest -q -p no:cacheprovider "$@"
