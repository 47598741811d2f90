#!/usr/bin/env bash
# An HTTP remote cache that misbehaves (tests/e2e/lib/hostile_remote.py, on 127.0.0.1 under a
# bounded lifetime): an HTTP 500, a redirect (never followed, even to a valid entry), a body that
# stops mid-way (bounded by PTO_REMOTE_CACHE_TIMEOUT_MS), a Content-Length longer than the body,
# a Content-Length of 3 GiB (refused from the header, before any of it is buffered), and a valid
# signed entry of another program served under this one's key (refused: the object names the
# remote key it was stored under, inside its signature). Each is one warning; a failure turns the
# remote off for the process, a refusal does not; nothing of it is loaded, the program is
# compiled here and runs. A damaged object is replaced by the entry compiled here; one signed
# with another key is not. A fake Redis (lib/hostile_redis.py) announcing a 3 GiB answer, sending
# one a byte a second, or answering GET with an array of 10^9 elements, is one bounded failure
# too; names it lists that pto does not store are not listed (nor their escape sequences
# printed). A password in the URL is never printed; a query or fragment in it is refused. docs/remote-cache.md.
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
wait_until "the hostile remote" curl -s -o /dev/null "$base/ok/probe" || exit 1
# Redis remotes that misbehave (lib/hostile_redis.py): a 3 GiB bulk string, a trickled one, an
# array for a GET, a SCAN that lists hostile names, one that never ends.
for mode in huge trickle array scan scanloop; do
  rport=$(free_port)
  timeout 300 /usr/bin/python3 "$(dirname "$0")/lib/hostile_redis.py" "$rport" $mode &
  SERVER_PIDS+=($!)
  printf -v "redis_$mode" '%s' "redis://127.0.0.1:$rport"
  wait_until "the hostile redis ($mode)" /usr/bin/python3 -c \
    "import socket; socket.create_connection(('127.0.0.1', $rport)).close()" || exit 1
done
unset PTO_REMOTE_CACHE PTO_REMOTE_CACHE_KEY_FILE PTO_REMOTE_CACHE_TIMEOUT_MS
export PTO_REMOTE_CACHE_KEY=s3cret-of-the-farm

# compile_with CACHE_NAME MODE PROGRAM: a compile with its own local cache, the remote at MODE.
compile_with() {
  PTO_CACHE_DIR="$T/$1" run_pto 0 compile "$EX/$3.ptir" -o "$T/w-$1-$3" --force \
    --remote-cache "$base/$2"
}
stats() { OUT=$(PTO_CACHE_DIR="$T/$1" "$PTO" cache stats --json); }
not_in() { ! grep -qF -- "$1" <<<"$2"; }

# Two signed entries on the remote, and a host that runs one from there.
compile_with ci ok add
compile_with ci ok chain
stats ci && expect_out '"remote_stores": 2'
compile_with host ok add
stats host && expect_out '"stores": 0' && expect_out '"remote_hits": 1'

# check_failure MODE TEXT: the remote fails once (TEXT in the warning), is turned off, and the
# program is compiled here, stored locally and runs; nothing came from the remote.
check_failure() {
  compile_with "$1" "$1" add &&
    expect_out "remote cache $base/$1: fetching an entry" &&
    expect_out "$2" && expect_out "not using it for the rest of this process"
  stats "$1"
  expect_out '"stores": 1'
  expect_out '"remote_hits": 0, "remote_misses": 0, "remote_stores": 0, "remote_errors": 1'
  PTO_CACHE_DIR="$T/$1" run_pto 0 run "$T/w-$1-add" --dim M=70 --check && expect_out PASS
}
check_failure 500 "HTTP status 500"
check_failure redirect "HTTP status 302"
check_failure shortlen "transfer closed"
PTO_REMOTE_CACHE_TIMEOUT_MS=1000 check_failure slowbody "timed out"
# Announced as 3 GiB: refused from the header (within the timeout, which would otherwise end it).
PTO_REMOTE_CACHE_TIMEOUT_MS=60000 check_failure huge "the answer is larger than 1 GiB"

# Redis: a bulk string announced as 3 GiB is refused from its length (before hiredis buffers it);
# one trickled a byte a second is bounded by the timeout for the whole answer, not per read.
check_redis() {
  local name=$1 url=$2 text=$3
  PTO_CACHE_DIR="$T/$name" run_pto 0 compile "$EX/add.ptir" -o "$T/w-$name" --remote-cache "$url" &&
    expect_out "remote cache $url: fetching an entry" && expect_out "$text"
  stats "$name"
  expect_out '"stores": 1'
  expect_out '"remote_hits": 0, "remote_misses": 0, "remote_stores": 0, "remote_errors": 1'
}
PTO_REMOTE_CACHE_TIMEOUT_MS=60000 check_redis rhuge "$redis_huge" "GET: the answer is larger than 1 GiB"
start=$(date +%s)
PTO_REMOTE_CACHE_TIMEOUT_MS=1000 check_redis rtrickle "$redis_trickle" "GET: no whole answer within 1000 ms"
expect_true "a trickling redis costs one bounded timeout (<30 s)" test $(($(date +%s) - start)) -lt 30
# An array for a GET (announced with 10^9 elements, then 64 KiB of them a second) is refused from
# its header: hiredis would allocate the table of 10^9 pointers and every element that follows,
# as long as the timeout lets it.
start=$(date +%s)
PTO_REMOTE_CACHE_TIMEOUT_MS=60000 check_redis rarray "$redis_array" \
  "GET: the answer is an array of 1000000000, not one value"
expect_true "an array for a GET is refused at once (<30 s)" test $(($(date +%s) - start)) -lt 30
# A listing shows the names pto stores (pto:<32 hex digits>), not others' bytes on the terminal.
PTO_CACHE_DIR="$T/rscan" run_pto 0 cache ls --remote --remote-cache "$redis_scan" &&
  expect_out 0123456789abcdef0123456789abcdef
expect_true "a listed name of escape sequences is not printed" not_in pwned "$OUT"
expect_true "one entry listed" test "$(grep -c '[0-9a-f]\{32\}' <<<"$OUT")" -eq 1
# A SCAN that never ends (cursor never 0) stops after a million names, not after 100000 rounds.
start=$(date +%s)
PTO_CACHE_DIR="$T/rscan" run_pto 1 cache ls --remote --remote-cache "$redis_scanloop" &&
  expect_out "SCAN lists more than 1048576 names (or does not end); stopping"
expect_true "an endless SCAN stops (<60 s)" test $(($(date +%s) - start)) -lt 60

# The password of a URL's user information (sent as Basic authentication) is not printed.
base_auth=http://farm:hunter2@127.0.0.1:$port
PTO_CACHE_DIR="$T/auth" run_pto 0 compile "$EX/add.ptir" -o "$T/w-auth" \
  --remote-cache "$base_auth/500" && expect_out "remote cache http://farm:***@127.0.0.1:$port/500"
expect_true "the remote's password is not printed" not_in hunter2 "$OUT"
PTO_REMOTE_CACHE="$base_auth/nope" PTO_CACHE_DIR="$T/auth" run_pto 2 cache ls --remote &&
  expect_out "http://farm:***@127.0.0.1:$port/nope"
expect_true "the remote's password is not printed by ls --remote" not_in hunter2 "$OUT"
PTO_CACHE_DIR="$T/auth" run_pto 2 cache ls --remote --remote-cache redis://u:hunter2@127.0.0.1:99999/1 &&
  expect_out "redis://u:***@127.0.0.1:99999/1': bad port"
expect_true "a redis:// URL's password is not printed" not_in hunter2 "$OUT"

# A query or fragment in an HTTP URL would take the key (URL/<key>): every entry one object on a
# server that ignores queries. Bad input, named, as any URL that does not parse.
PTO_CACHE_DIR="$T/query" run_pto 0 compile "$EX/add.ptir" -o "$T/w-query" \
  --remote-cache "$base/ok?v=1" &&
  expect_out "remote cache '$base/ok?v=1': a query or fragment ('?', '#') has no place in it" &&
  expect_out "not using the remote cache"
stats query && expect_out '"remote_hits": 0, "remote_misses": 0, "remote_stores": 0'
PTO_CACHE_DIR="$T/query" run_pto 2 cache ls --remote --remote-cache "$base/ok#x" &&
  expect_out "--remote-cache: remote cache '$base/ok#x': a query or fragment"

# Another program's valid entry under this one's key: a refusal, the remote stays on (and gets
# this program's entry, stored over the refused object, as below).
compile_with replay replay add &&
  expect_out "refusing the remote cache entry" &&
  expect_out "not a pto remote entry for remote key"
stats replay
expect_out '"stores": 1'
expect_out '"remote_hits": 0, "remote_misses": 0, "remote_stores": 1, "remote_errors": 0, "remote_refusals": 1'
PTO_CACHE_DIR="$T/replay" run_pto 0 run "$T/w-replay-add" --dim M=70 --check && expect_out PASS

# A damaged object on the remote (cut in half) is refused, and the entry compiled here replaces
# it: the next machine gets a remote hit instead of refusing it too, for good.
obj=$(grep -l add_block "$T"/store/* | head -1)
truncate -s $(($(stat -c %s "$obj") / 2)) "$obj"
compile_with heal ok add && expect_out "refusing the remote cache entry"
stats heal
expect_out '"remote_stores": 1, "remote_errors": 0, "remote_refusals": 1'
compile_with healed ok add
stats healed && expect_out '"stores": 0' && expect_out '"remote_hits": 1'
# An entry refused for its signature (another key) is not replaced: it may be a peer's.
PTO_REMOTE_CACHE_KEY=another-key compile_with otherkey ok add &&
  expect_out "signature does not match"
stats otherkey
expect_out '"remote_stores": 0, "remote_errors": 0, "remote_refusals": 1'
compile_with healed2 ok add
stats healed2 && expect_out '"remote_hits": 1'

# A key file every user can read is warned about (and still used); a private one is not.
printf 's3cret-of-the-farm\n' >"$T/key"
chmod 644 "$T/key"
PTO_REMOTE_CACHE_KEY= PTO_REMOTE_CACHE_KEY_FILE="$T/key" compile_with keyfile ok add &&
  expect_out "PTO_REMOTE_CACHE_KEY_FILE $T/key can be read or written by every user (mode 0644)"
stats keyfile && expect_out '"remote_hits": 1'
chmod 600 "$T/key"
PTO_REMOTE_CACHE_KEY= PTO_REMOTE_CACHE_KEY_FILE="$T/key" compile_with keyfile2 ok add &&
  expect_true "no warning for a private key file" not_in "every user" "$OUT"
finish
