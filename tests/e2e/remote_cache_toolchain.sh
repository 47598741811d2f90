#!/usr/bin/env bash
# The remote key leaves the toolchain out (a runtime-only pto, which has none, finds entries), so
# an entry another LLVM compiled is filed under the same remote key as this pto's. A pto that
# compiles reads the LLVM version its manifest records: another one is a remote miss (nothing of
# it is loaded), the program is compiled here and the entry stored over the old one, which every
# machine then gets. A signed entry (the HMAC checks out: a peer with the key, before its LLVM
# upgrade) is a miss too, not a refusal. docs/remote-cache.md (The remote key).
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/remote_servers.bash"
[ -x /usr/bin/python3 ] || {
  echo "SKIP: needs /usr/bin/python3"
  exit 77
}
command -v curl >/dev/null || {
  echo "SKIP: needs curl"
  exit 77
}
trap 'stop_servers; rm -rf "$T"' EXIT
port=$(free_port)
timeout 300 /usr/bin/python3 "$(dirname "$0")/lib/hostile_remote.py" "$port" "$T/store" \
  2>"$T/server.log" &
SERVER_PIDS+=($!)
base=http://127.0.0.1:$port
wait_until "the remote" curl -s -o /dev/null "$base/ok/probe" || exit 1
unset PTO_REMOTE_CACHE PTO_REMOTE_CACHE_KEY_FILE PTO_REMOTE_CACHE_TIMEOUT_MS
export PTO_REMOTE_CACHE_KEY=s3cret-of-the-farm

compile_with() {
  PTO_CACHE_DIR="$T/$1" run_pto 0 compile "$EX/add.ptir" -o "$T/w-$1" --force \
    --remote-cache "$base/ok"
}
stats() { OUT=$(PTO_CACHE_DIR="$T/$1" "$PTO" cache stats --json); }
not_in() { ! grep -qF -- "$1" <<<"$2"; }

compile_with ci
stats ci && expect_out '"remote_stores": 1'
obj=$(ls "$T"/store/*)
llvm=$(grep -ao ';llvm=[0-9][^;"]*;' "$obj" | head -1 | sed 's/;llvm=//; s/;$//')
expect_true "the entry's manifest records this pto's LLVM ($llvm)" test -n "$llvm"

# relabel OLD NEW: the stored entry as a machine with LLVM OLD would have stored it (the same
# bytes but the version in its manifests, signed again with the farm's key).
relabel() {
  /usr/bin/python3 - "$obj" "$1" "$2" <<'PY'
import hashlib, hmac, sys
path, old, new = sys.argv[1], sys.argv[2].encode(), sys.argv[3].encode()
data = open(path, "rb").read()
body = data[: data.rindex(b"sig hmac-sha256 ")]
assert len(old) == len(new) and body.count(b";llvm=" + old + b";") >= 1
body = body.replace(b";llvm=" + old + b";", b";llvm=" + new + b";")
mac = hmac.new(b"s3cret-of-the-farm", body, hashlib.sha256).hexdigest().encode()
open(path, "wb").write(body + b"sig hmac-sha256 " + mac + b"\n")
PY
}
old=$(sed 's/[0-9]/9/' <<<"$llvm") # same length, another version
relabel "$llvm" "$old"
expect_true "the entry now names LLVM $old" grep -aq ";llvm=$old;" "$obj"
# A machine with this LLVM: a miss (not a hit, not a refusal), compiled here, stored over it.
compile_with upgraded
expect_true "no refusal warned" not_in "refusing" "$OUT"
stats upgraded
expect_out '"stores": 1'
expect_out '"remote_hits": 0, "remote_misses": 1, "remote_stores": 1, "remote_errors": 0, "remote_refusals": 0'
PTO_CACHE_DIR="$T/upgraded" run_pto 0 run "$T/w-upgraded" --dim M=70 --check && expect_out PASS
expect_true "the remote holds this LLVM's entry again" grep -aq ";llvm=$llvm;" "$obj"
# The next machine gets it from the remote.
compile_with next
stats next && expect_out '"stores": 0' && expect_out '"remote_hits": 1'
finish
