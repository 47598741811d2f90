#!/usr/bin/env bash
# A cache dir shared with another version of pto (its key names that version, so this one never
# looks the entry up): pto cache verify leaves that version's entry alone, rather than reporting
# it corrupt, counting a corruption and deleting it (exit 1), as it did for a manifest of schema
# pto.manifest/2 that matched its seal. A manifest of another schema that does not match its
# seal is still corrupt. pto cache ls shows that version's entry as such, not as unreadable.
source "$(dirname "$0")/lib/common.bash"

if [ -n "$PTO_SANFLAGS" ]; then # an uninstrumented python3 cannot load sanitized libraries
  echo "SKIP: python3 seals the manifests with libpto_base, built with $PTO_SANFLAGS"
  exit 77
fi
base=$(ldd "$PTO" | sed -n 's/.*libpto_base[^ ]* => \([^ ]*\) .*/\1/p' | head -1)
[ -n "$base" ] && python3 -c 'import ctypes' 2>/dev/null || {
  echo "SKIP: no libpto_base to seal a manifest with"
  exit 77
}
export PTO_CACHE_DIR="$T/cache"
run_pto 0 compile "$EX/add.ptir" -o "$T/wd"
run_pto 0 cache ls --json
key=$(printf '%s' "$OUT" | sed -n 's/.*"key": "\([0-9a-f]*\)".*/\1/p' | head -1)
entry="$PTO_CACHE_DIR/${key:0:2}/${key:2}"
# other KEY SEAL: a copy of the entry filed under KEY, as another pto (pto.manifest/2) writes it;
# SEAL=1 seals its manifest, 0 leaves the old seal.
other() {
  python3 - "$base" "$entry" "$PTO_CACHE_DIR/${1:0:2}/${1:2}" "$key" "$1" "$2" <<'PY'
import ctypes, shutil, sys
lib, src, dst, key, newkey, seal = sys.argv[1:]
shutil.copytree(src, dst)
m = open(src + "/manifest.json", "rb").read()
m = m.replace(b'"pto.manifest/1"', b'"pto.manifest/2"').replace(key.encode(), newkey.encode())
open(dst + "/manifest.json", "wb").write(m)
if seal == "1":
    out = ctypes.create_string_buffer(33)
    ctypes.CDLL(lib).pto_hash_xxh128_hex(m, len(m), out)
    open(dst + "/manifest.xxh128", "w").write(out.value.decode() + "\n")
PY
}
k2=ee111111111111111111111111111111
k3=ee222222222222222222222222222222
other $k2 1
other $k3 0
# cache ls says what the other version's entry is (kept, not used), not "(unreadable)", as it
# does for an entry that is corrupt; --json names its schema.
run_pto 0 cache ls && expect_out "(other version)"
expect_out "(another pto version's entry, pto.manifest/2: kept, not used by this pto)"
expect_true "ls names the corrupt one unreadable" grep -q "^$k3  (unreadable) .*corrupt?" <<<"$OUT"
expect_true "ls names only the corrupt one unreadable" test "$(grep -c unreadable <<<"$OUT")" = 1
run_pto 0 cache ls --json
expect_true "ls --json: other_version of the other version's entry" \
  grep -q "\"key\": \"$k2\".*\"other_version\": \"pto.manifest/2\"}" <<<"$OUT"
expect_true "ls --json: other_version null for this version's entry" \
  grep -q "\"key\": \"$key\".*\"other_version\": null}" <<<"$OUT"
expect_true "ls --json: other_version null for the corrupt entry" \
  grep -q "\"key\": \"$k3\".*\"other_version\": null}" <<<"$OUT"
# cache show of it says the same (exit 0), where it said "written by another version of pto;
# compile the program again"; of the corrupt one it says corrupt.
run_pto 0 cache show ee11 && expect_out "another pto version's entry (pto.manifest/2): kept for it"
run_pto 0 cache show ee11 --json && expect_out "\"other_version\": \"pto.manifest/2\", \"manifest\": null}"
run_pto 0 cache show "$key" --json && expect_out "\"other_version\": null, \"manifest\": {"
run_pto 2 cache show ee22 && expect_out "cache entry $k3 does not read: corrupt ('pto cache verify'"
run_pto 1 cache verify && expect_out "1 corrupt (discarded)" && expect_out "corrupt  $k3"
expect_true "verify reports only the unsealed one" test -z "$(grep -F "$k2" <<<"$OUT")"
expect_true "the other version's entry stays" test -d "$PTO_CACHE_DIR/ee/${k2:2}"
expect_true "the unsealed one is gone" test ! -e "$PTO_CACHE_DIR/ee/${k3:2}"
run_pto 0 cache verify && expect_out "2 entries checked, 0 corrupt"
run_pto 0 cache stats && expect_out "corruptions      1"
run_pto 0 run "$T/wd" --dim M=4 --check && expect_out PASS
finish
