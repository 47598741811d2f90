#!/usr/bin/env bash
# A work dir compiled on another machine (docs/remote-cache.md, "A runtime-only pto": pto run DIR)
# holds binaries for the platform its manifest names, and kernels compiled for that machine's
# CPU. A platform this runtime does not have (only sim) is refused before anything is loaded. Its manifest records LLVM's CPU features
# ("toolchain": ...;features=+avx512f,...); loading it on a CPU without one of the instruction
# set extensions it records is refused with a message naming the extension, before anything is
# loaded, instead of the kernels stopping with an illegal instruction. A cache entry never needs
# this: its key holds this CPU's model and flags.
source "$(dirname "$0")/lib/common.bash"
export PTO_CACHE_DIR="$T/cache"

run_pto 0 compile "$EX/add.ptir" -o "$T/w"
expect_true "the manifest records the CPU features" grep -q 'features=+' "$T/w/manifest.json"
run_pto 0 run "$T/w"

# set_features DIR LIST: the manifest's recorded features become LIST (as another CPU's).
set_features() {
  python3 - "$1/manifest.json" "$2" <<'PY'
import json, re, sys
p, feats = sys.argv[1], sys.argv[2]
m = json.load(open(p))
m["toolchain"] = re.sub(r"features=[^;]*", "features=" + feats, m["toolchain"])
open(p, "w").write(json.dumps(m, indent=2) + "\n")
PY
}

if ! command -v python3 >/dev/null; then
  echo "no python3 to edit a manifest"
  exit 77
fi

# Another platform (a manifest of another or a later pto): refused, naming it.
cp -a "$T/w" "$T/plat"
sed -i 's|"platform": "sim"|"platform": "a2a3"|' "$T/plat/manifest.json"
expect_true "the manifest names the platform" grep -q '"platform": "a2a3"' "$T/plat/manifest.json"
run_pto 1 run "$T/plat" && expect_out "compiled for platform 'a2a3', which this runtime does not have"

flags=$(grep -m1 '^flags' /proc/cpuinfo || true)
if [ "$(uname -m)" = x86_64 ] && [ -n "$flags" ]; then
  # An extension this CPU lacks: Intel's AMX (AMD has none), else AVX512-FP16.
  if ! grep -qw amx_tile <<<"$flags"; then
    want=amx_tile llvm=amx-tile
  elif ! grep -qw avx512_fp16 <<<"$flags"; then
    want=avx512_fp16 llvm=avx512fp16
  else
    want=
  fi
  if [ -n "$want" ]; then
    cp -a "$T/w" "$T/other"
    set_features "$T/other" "+sse2,+$llvm,+avx2"
    run_pto 1 run "$T/other" &&
      expect_out "was compiled for a CPU with $want (LLVM feature +$llvm), which this CPU lacks" &&
      expect_out "illegal instruction"
  fi
  # Features this CPU has, and names the check does not know, load as before.
  cp -a "$T/w" "$T/same"
  set_features "$T/same" "+sse2,+avx2,+no-such-feature,-amx-tile"
  run_pto 0 run "$T/same"
fi
finish
