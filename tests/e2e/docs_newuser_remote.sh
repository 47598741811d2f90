#!/usr/bin/env bash
# The remote cache as docs/remote-cache.md's first block sets it up, with the key in a file
# (PTO_REMOTE_CACHE_KEY_FILE, mode 600) and nginx's WebDAV module on loopback: "CI" compiles a
# program into a work dir (stored locally and remotely, signed); "elsewhere", an empty local
# cache runs it from the remote without compiling (a remote hit); a machine whose key file holds
# another secret refuses the entry, naming its key file (not PTO_REMOTE_CACHE_KEY, which it never
# set), counts a refusal and compiles the program itself; `pto cache ls --remote` of an http://
# remote is bad input (exit 2), as the docs' table says.
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/remote_servers.bash"
need_servers
trap 'stop_servers; rm -rf "$T"' EXIT
start_nginx || exit 1
unset PTO_REMOTE_CACHE_KEY PTO_CACHE_MAX_SIZE
cd "$T" || exit 1
cp "$PTO_SOURCE_DIR/tests/e2e/data/newuser_pipe.ptir" pipe.ptir
printf 'the farm secret\n' >farm.key
printf 'another secret\n' >other.key
chmod 600 farm.key other.key
mkdir -m 700 ci elsewhere other
export PTO_REMOTE_CACHE=$HTTP_URL PTO_REMOTE_CACHE_KEY_FILE=$T/farm.key

PTO_CACHE_DIR=$T/ci run_pto 0 compile pipe.ptir -o wd -D alpha=2
PTO_CACHE_DIR=$T/ci run_pto 0 cache stats
expect_out "remote stores    1"
expect_true "the remote holds one object" test "$(find "$HTTP_DATA" -type f ! -name probe | wc -l)" = 1

PTO_CACHE_DIR=$T/elsewhere run_pto 0 run pipe.ptir -D alpha=2 --dim M=16 --in bias=0 --check
expect_out PASS
PTO_CACHE_DIR=$T/elsewhere run_pto 0 cache stats
expect_out "remote hits      1" && expect_out "uncached         0"

PTO_REMOTE_CACHE_KEY_FILE=$T/other.key PTO_CACHE_DIR=$T/other run_pto 0 run pipe.ptir -D alpha=2 \
  --dim M=16 --in bias=0 --check
expect_out "its HMAC-SHA256 signature does not match the key in PTO_REMOTE_CACHE_KEY_FILE $T/other.key"
expect_out PASS
PTO_CACHE_DIR=$T/other run_pto 0 cache stats
expect_out "remote refusals  1" && expect_out "misses           1"

run_pto 2 cache ls --remote
expect_out "cannot list its entries"
finish
