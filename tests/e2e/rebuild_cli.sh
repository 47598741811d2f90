#!/usr/bin/env bash
# Work dirs that are edited by hand: pto rebuild rebuilds exactly the stale parts (the new code
# runs, the hid changes), nothing when nothing changed; pto run DIR rebuilds before loading and
# never loads a stale binary; PTO_NO_REBUILD=1 refuses a stale dir instead; a malformed or
# foreign manifest is one clear error naming the file and the field.
source "$(dirname "$0")/lib/common.bash"
export PTO_CACHE_DIR="$T/cache"
W="$T/add"
RUN=(run "$W" --dim M=100 --check)

run_pto 0 compile "$EX/add.ptir" -o "$W"
run_pto 0 rebuild "$W"
expect_out "up to date"
run_pto 0 "${RUN[@]}" && expect_out PASS
manifest_before=$(cat "$W/manifest.json")
run_pto 0 rebuild "$W"
expect_true "nothing edited: the manifest is untouched" test "$manifest_before" = "$(cat "$W/manifest.json")"

hid() { "$PTO" build-id "$1" | sed -n 's/.*hid=\([0-9a-f]*\).*/\1/p'; }
old_hid=$(hid "$W/orchestration/main.so")
kso_before=$(sha1sum <"$W/kernels/kernels.so")

# ---- an edited orchestration: only the first block of rows is computed now ----------------
sed -i 's/v4_i < v3_nblk /v4_i < 1 /' "$W/orchestration/main.cpp"
expect_true "the edit applied" grep -q 'v4_i < 1 ' "$W/orchestration/main.cpp"
PTO_NO_REBUILD=1 run_pto 1 "${RUN[@]}"
expect_out "orchestration/main.cpp: edited since it was compiled"
expect_out "run: pto rebuild"
run_pto 0 rebuild "$W"
expect_out "rebuilt 1 file"
new_hid=$(hid "$W/orchestration/main.so")
expect_true "the hid changed ($old_hid -> $new_hid)" test -n "$new_hid" -a "$old_hid" != "$new_hid"
expect_true "the manifest records the new hid" grep -q "\"hid\": \"$new_hid\"" "$W/manifest.json"
expect_true "kernels.so was not rebuilt" test "$kso_before" = "$(sha1sum <"$W/kernels/kernels.so")"
run_pto 1 "${RUN[@]}"
expect_out "FAIL" # the new behaviour runs: rows past the first block stay zero
run_pto 0 rebuild "$W"
expect_out "up to date"

# ---- pto run DIR rebuilds first ------------------------------------------------------------
sed -i 's/v4_i < 1 /v4_i < v3_nblk /' "$W/orchestration/main.cpp"
run_pto 0 "${RUN[@]}"
expect_out "rebuilt 1 stale file"
expect_out PASS

# ---- an edited kernel: its object and kernels.so ---------------------------------------------
ll="$W/kernels/add_block.ll"
expect_true "the kernel adds" grep -q "fadd float" "$ll"
sed -i 's/fadd float/fsub float/' "$ll"
run_pto 0 rebuild "$W"
expect_out "rebuilt 2 files"
expect_true "kernels.so was relinked" test "$kso_before" != "$(sha1sum <"$W/kernels/kernels.so")"
run_pto 1 "${RUN[@]}"
expect_out "FAIL" # subtracting now
sed -i 's/fsub float/fadd float/' "$ll"
run_pto 0 "${RUN[@]}" && expect_out PASS

# ---- a hand-written orchestration whose entry has another name: --orch-entry -----------------
sed -i 's/void aicpu_orchestration_entry(/void my_orch_entry(/' "$W/orchestration/main.cpp"
expect_true "the entry renamed" grep -q 'void my_orch_entry(' "$W/orchestration/main.cpp"
run_pto 2 "${RUN[@]}"
expect_out "no 'aicpu_orchestration_entry' symbol"
expect_out "pto rebuild DIR --orch-entry NAME"
run_pto 2 rebuild "$W" --orch-entry 9lives
expect_out "field 'orchestration.entry_symbol': '9lives' is not a C identifier"
expect_true "a refused name leaves the manifest alone" sh -c "! grep -q entry_symbol '$W/manifest.json'"
run_pto 0 rebuild "$W" --orch-entry my_orch_entry
expect_out "orchestration entry my_orch_entry"
expect_true "the manifest names it" grep -q '"entry_symbol": "my_orch_entry"' "$W/manifest.json"
run_pto 0 "${RUN[@]}" && expect_out PASS
sed -i 's/void my_orch_entry(/void aicpu_orchestration_entry(/' "$W/orchestration/main.cpp"
run_pto 2 "${RUN[@]}"
expect_out "no 'my_orch_entry' symbol"
run_pto 0 rebuild "$W" --orch-entry aicpu_orchestration_entry
expect_true "back to the default: no field" sh -c "! grep -q entry_symbol '$W/manifest.json'"
run_pto 0 "${RUN[@]}" && expect_out PASS
run_pto 2 rebuild "$W" --orch-entry
expect_out "--orch-entry needs the entry's symbol name"

# ---- orchestration written for PyPTO's runtime includes the header by its bare name ----------
sed -i 's#"pto/pto_orchestration_api.h"#"pto_orchestration_api.h"#' "$W/orchestration/main.cpp"
expect_true "the include renamed" grep -q '^#include "pto_orchestration_api.h"' "$W/orchestration/main.cpp"
run_pto 0 rebuild "$W"
expect_out "rebuilt 1 file"
run_pto 0 "${RUN[@]}" && expect_out PASS
sed -i 's#"pto_orchestration_api.h"#"pto/pto_orchestration_api.h"#' "$W/orchestration/main.cpp"

# ---- the config function (emitted, as PyPTO's): a launch with fewer arguments fails ----------
expect_true "the config function is emitted" grep -q 'expected_arg_count = 3' "$W/orchestration/main.cpp"
sed -i 's/expected_arg_count = 3/expected_arg_count = 4/' "$W/orchestration/main.cpp"
run_pto 1 "${RUN[@]}"
expect_out "the orchestration's config expects 4 arguments, the launch has 3 (3 tensors, 0 scalars)"
sed -i 's/expected_arg_count = 4/expected_arg_count = 3/' "$W/orchestration/main.cpp"
run_pto 0 "${RUN[@]}" && expect_out PASS

# ---- what cannot be trusted is named -----------------------------------------------------------
cp "$W/manifest.json" "$T/manifest.good"
sed -i 's/"opt_level": 2/"opt_level": 9/' "$W/manifest.json"
run_pto 2 "${RUN[@]}"
expect_out "$W/manifest.json: field 'opt_level': 9 is out of range [0, 3]"
run_pto 2 rebuild "$W"
expect_out "field 'opt_level'"
sed -i 's#"schema": "pto.manifest/1"#"schema": "other.tool/3"#' "$T/manifest.good"
cp "$T/manifest.good" "$W/manifest.json"
run_pto 2 "${RUN[@]}"
expect_out "manifest.json: field 'schema': expected \"pto.manifest/1\", got \"other.tool/3\""
echo '{"schema": "pto.manifest/1",' >"$W/manifest.json"
run_pto 2 "${RUN[@]}"
expect_out "manifest.json:2:0: invalid JSON"
run_pto 2 rebuild "$T/nonexistent"
run_pto 2 rebuild
run_pto 0 rebuild --help
expect_out "example:"
finish
