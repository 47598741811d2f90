#!/usr/bin/env bash
# A long orchestration (about 2000 kernel calls, straight-line and in a loop body of 300
# statements) is emitted in parts (docs/cli.md, pto compile): it compiles, runs like
# the reference interpreter (values defined in the first part and used in the last, a loop whose
# body is split carrying a tensor to its yield), and a launch error in the last part names its
# line.
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/long_orch.bash"

long_orch_check 1800 20
finish
