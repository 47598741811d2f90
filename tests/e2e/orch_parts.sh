#!/usr/bin/env bash
# A long orchestration is written in parts (docs/cli.md, pto compile): the shorter
# sibling of orch_long_slow.sh, kept out of the slow label so that every run of the suite checks
# the parts (about 200 calls: the entry and a loop body of 300 statements split, values defined
# in the first part used in the last, a tensor carried through the split loop body to its yield).
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/long_orch.bash"

long_orch_check 200 4
finish
