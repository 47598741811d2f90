#!/usr/bin/env bash
# The binary cache's remote second level (docs/remote-cache.md) against real servers started here
# on loopback: nginx's WebDAV module (http://) and redis-server (redis://). For each: a compile
# stores to both levels, signed; a pto with an empty local cache runs the program from the remote
# without compiling; a wrong key, an unsigned entry and a tampered object are refused (counted,
# nothing loaded) and the program is compiled here instead; a remote that is down or hangs costs
# one bounded timeout and one warning, and the compile proceeds. `pto cache ls --remote` lists
# what a redis:// remote holds. A runtime-only pto fetching: remote_cache_no_compiler_slow.sh.
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/remote_servers.bash"
need_servers
trap 'stop_servers; rm -rf "$T"' EXIT
start_nginx || exit 1
start_redis || exit 1
unset PTO_REMOTE_CACHE PTO_REMOTE_CACHE_KEY_FILE
export PTO_REMOTE_CACHE_KEY=s3cret-of-the-farm
PROGRAMS=(add chain)

# run_from CACHE_NAME PTO_BINARY STATUS ARGS...: a run with its own local cache dir.
run_from() {
  local cache=$1 bin=$2 want=$3
  shift 3
  PTO_CACHE_DIR="$T/$cache" run_status "$want" timeout 120 "$bin" "$@"
}
stats() { PTO_CACHE_DIR="$T/$1" "$PTO" cache stats --json; }
dims() { case $1 in add) echo "--dim M=70" ;; chain) echo "--dim M=256 --in alpha=0.5" ;; esac; }

for backend in http redis; do
  if [ $backend = http ]; then url=$HTTP_URL; else url=$REDIS_URL; fi

  # ---- a full pto compiles into both levels ---------------------------------------------------
  for p in "${PROGRAMS[@]}"; do
    run_from "$backend-ci" "$PTO" 0 run "$EX/$p.ptir" $(dims $p) --check --remote-cache "$url" &&
      expect_out PASS
  done
  OUT=$(stats "$backend-ci")
  expect_out '"stores": 2'
  expect_out '"remote_misses": 2, "remote_stores": 2, "remote_errors": 0, "remote_refusals": 0'

  # ---- an empty local cache runs them from the remote, compiling nothing ----------------------
  for p in "${PROGRAMS[@]}"; do
    run_from "$backend-host" "$PTO" 0 run "$EX/$p.ptir" $(dims $p) --check --remote-cache "$url" &&
      expect_out PASS
  done
  OUT=$(stats "$backend-host")
  expect_out '"stores": 0'
  expect_out '"remote_hits": 2'
  # PTO_REMOTE_CACHE works as the flag does; now a local hit, the remote is not asked.
  PTO_REMOTE_CACHE=$url run_from "$backend-host" "$PTO" 0 run "$EX/add.ptir" --dim M=70 --check
  OUT=$(stats "$backend-host")
  expect_out '"hits": 1'
  expect_out '"remote_hits": 2, "remote_misses": 0'

  # ---- trust: another key, no key on the storing side, a tampered object ----------------------
  PTO_REMOTE_CACHE_KEY=another-key run_from "$backend-wrongkey" "$PTO" 0 run "$EX/add.ptir" \
    --dim M=70 --check --remote-cache "$url"
  expect_out "refusing the remote cache entry"
  expect_out "signature does not match PTO_REMOTE_CACHE_KEY"
  expect_out PASS
  OUT=$(stats "$backend-wrongkey")
  expect_out '"stores": 1'
  expect_out '"remote_refusals": 1'
done

# An entry stored without a key is refused by a pto that has one.
unsigned_url="$HTTP_URL/unsigned"
PTO_REMOTE_CACHE_KEY= run_from unsigned-ci "$PTO" 0 run "$EX/add.ptir" --dim M=70 --remote-cache "$unsigned_url"
run_from unsigned-host "$PTO" 0 run "$EX/add.ptir" --dim M=70 --remote-cache "$unsigned_url"
expect_out "the entry is not signed, and PTO_REMOTE_CACHE_KEY requires a signature"
# Without a key, the same entry is taken: its files match its manifest.
PTO_REMOTE_CACHE_KEY= run_from unsigned-nokey "$PTO" 0 run "$EX/add.ptir" --dim M=70 --remote-cache "$unsigned_url"
OUT=$(stats unsigned-nokey)
expect_out '"stores": 0'
expect_out '"remote_hits": 1'
# An empty key file is refused, not taken as no key (docs/remote-cache.md): nothing is stored,
# and a fetched entry is refused for that reason and compiled here.
printf '\n' >"$T/empty.key"
PTO_REMOTE_CACHE_KEY= PTO_REMOTE_CACHE_KEY_FILE="$T/empty.key" run_from emptykey "$PTO" 0 run \
  "$EX/add.ptir" --dim M=70 --remote-cache "$HTTP_URL/emptykey"
expect_out "not storing" && expect_out "PTO_REMOTE_CACHE_KEY_FILE $T/empty.key is empty: put the shared secret in it"
PTO_REMOTE_CACHE_KEY= PTO_REMOTE_CACHE_KEY_FILE="$T/empty.key" run_from emptykey-fetch "$PTO" 0 \
  run "$EX/add.ptir" --dim M=70 --remote-cache "$unsigned_url"
expect_out "refusing the remote cache entry" && expect_out "$T/empty.key is empty"
OUT=$(stats emptykey-fetch)
expect_out '"remote_refusals": 1'

# Tampering with every stored object: a byte of each changed, in the HTTP store's files and in
# Redis. A pto with the key refuses every one, loads nothing and compiles; a pto without a key
# refuses them too, since the changed byte breaks a file hash or the object's framing.
for f in "$HTTP_DATA"/*; do
  [ -f "$f" ] && [ "${f##*/}" != probe ] || continue
  printf 'X' | dd of="$f" bs=1 seek=$(($(stat -c %s "$f") / 2)) conv=notrunc 2>/dev/null
done
for k in $(rcli --scan --pattern 'pto:*'); do
  n=$(rcli strlen "$k")
  rcli setrange "$k" $((n / 2)) X >/dev/null
done
for url in "$HTTP_URL" "$REDIS_URL"; do
  for p in "${PROGRAMS[@]}"; do
    run_from "tampered-${url%%:*}" "$PTO" 0 run "$EX/$p.ptir" $(dims $p) --check --remote-cache "$url"
    expect_out "refusing the remote cache entry"
    expect_out PASS
  done
  OUT=$(stats "tampered-${url%%:*}")
  expect_out '"stores": 2'
  expect_out '"remote_hits": 0, "remote_misses": 0, "remote_stores": 0, "remote_errors": 0, "remote_refusals": 2'
done

# ---- failure never breaks a build -----------------------------------------------------------
down_port=$(free_port)
start=$(date +%s)
run_from down "$PTO" 0 run "$EX/add.ptir" --dim M=70 --check --remote-cache "http://127.0.0.1:$down_port/c"
expect_out "not using it for the rest of this process"
expect_out PASS
expect_true "one warning for a remote that is down" test "$(grep -c 'remote cache' <<<"$OUT")" = 1
# One try, then off: the counters and the one warning say so. The time (a compile and a run
# included, under a sanitizer on a loaded host) is only bounded against a hang: 60 s.
expect_true "a remote that is down costs no hang (<60 s)" test $(($(date +%s) - start)) -lt 60
OUT=$(stats down)
expect_out '"stores": 1'
expect_out '"remote_errors": 1'
# A Redis that accepts connections but never answers (stopped): one bounded timeout.
redis_pid=$(rcli info server | sed -n 's/^process_id:\([0-9]*\).*/\1/p' | tr -d '\r')
kill -STOP "$redis_pid"
start=$(date +%s)
PTO_REMOTE_CACHE_TIMEOUT_MS=300 run_from hang "$PTO" 0 run "$EX/add.ptir" --dim M=70 --check \
  --remote-cache "$REDIS_URL"
kill -CONT "$redis_pid"
expect_out "not using it for the rest of this process"
expect_out PASS
expect_true "a hanging remote costs no hang (<60 s)" test $(($(date +%s) - start)) -lt 60
OUT=$(stats hang)
expect_out '"remote_errors": 1'
# An answer that is not an entry (a web page at the URL) is refused, and the compile proceeds.
mkdir -p "$HTTP_DATA/garbage"
run_from garbage-ci "$PTO" 0 run "$EX/add.ptir" --dim M=70 --remote-cache "$HTTP_URL/garbage"
for f in "$HTTP_DATA/garbage"/*; do echo '<html>not an entry</html>' >"$f"; done
run_from garbage "$PTO" 0 run "$EX/add.ptir" --dim M=70 --check --remote-cache "$HTTP_URL/garbage"
expect_out "not a pto remote entry"
expect_out PASS
run_pto 2 run "$EX/add.ptir" --dim M=70 --remote-cache ftp://example/c
expect_out "not an http://, https:// or redis:// URL"

# ---- the CMake integration: -DPTO_REMOTE_CACHE=URL makes pto_add_program share the remote ----
build=$(cd "$(dirname "$PTO")/.." && pwd)
mkdir -p "$T/proj"
cat >"$T/proj/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.25)
project(remote_proj C)
find_package(pto REQUIRED)
pto_add_program(scale SOURCE "$EX/scale_rows.ptir")
EOF
run_status 0 timeout 120 cmake -S "$T/proj" -B "$T/proj/b" -G Ninja -Dpto_DIR="$build/cmake" \
  -DPTO_REMOTE_CACHE="$HTTP_URL/cmake"
PTO_CACHE_DIR="$T/cmake-cache" run_status 0 timeout 300 cmake --build "$T/proj/b"
OUT=$(stats cmake-cache)
expect_out '"remote_stores": 1'
expect_true "the program is in the remote" test "$(ls "$HTTP_DATA/cmake" | wc -l)" = 1

# ---- listing ----------------------------------------------------------------------------------
PTO_REMOTE_CACHE=$REDIS_URL run_pto 0 cache ls --remote
expect_true "ls --remote lists the two entries" test "$(grep -c 'KiB' <<<"$OUT")" = 2
PTO_REMOTE_CACHE=$REDIS_URL run_pto 0 cache ls --remote --json
expect_out '"bytes": '
# an http:// remote cannot list: bad input (exit 2, docs/cli.md), saying what can; --json prints no list
PTO_REMOTE_CACHE=$HTTP_URL run_pto 2 cache ls --remote
expect_out "cannot list its entries: an HTTP store (GET, HEAD, PUT) has no listing, a redis:// one has"
PTO_REMOTE_CACHE=$HTTP_URL run_pto 2 cache ls --remote --json
expect_true "no JSON list for a remote that cannot list" test "$(grep -c '^\[' <<<"$OUT")" = 0
PTO_REMOTE_CACHE= run_pto 2 cache ls --remote
expect_out "no remote cache: set PTO_REMOTE_CACHE=URL"
run_pto 2 cache stats --remote
finish
