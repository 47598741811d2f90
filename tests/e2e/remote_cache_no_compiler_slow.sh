#!/usr/bin/env bash
# Compile once, run anywhere (docs/remote-cache.md): a runtime-only pto (-DPTO_COMPILER=OFF, built
# here into <build>/runtime-only, a few minutes the first time, ccache hits after; hence slow)
# links no LLVM and, with an empty local cache, runs programs a full pto stored, signed, in an
# nginx WebDAV store and in Redis (started here on loopback). Tampering with every stored object
# makes it refuse (exit 1, nothing loaded, the message says it cannot compile and names the
# remote) and the full pto recompile and run. A work dir compiled by the full pto runs as today.
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/remote_servers.bash"
source "$(dirname "$0")/lib/runtime_only.bash"
need_servers
trap 'stop_servers; rm -rf "$T"' EXIT

# ---- the runtime-only build -----------------------------------------------------------------
build_runtime_only
deps=$(ldd "$RTPTO" "$RT"/loader/libpto_loader.so "$RT"/runtime/libpto_runtime.so)
expect_true "the runtime-only pto links no LLVM" test "$(grep -ci llvm <<<"$deps")" = 0
expect_true "the runtime-only build has no compiler library" \
  test -z "$(find "$RT" -name 'libpto_compiler*')"

start_nginx || exit 1
start_redis || exit 1
unset PTO_REMOTE_CACHE PTO_REMOTE_CACHE_KEY
printf 'the farm secret\n' >"$T/key"
chmod 600 "$T/key" # readable by this user only, as docs/remote-cache.md advises
export PTO_REMOTE_CACHE_KEY_FILE="$T/key"
PROGRAMS=(add chain)
dims() { case $1 in add) echo "--dim M=70" ;; chain) echo "--dim M=256 --in alpha=0.5" ;; esac; }
# with_cache CACHE CMD...: CMD with its own local cache dir.
with_cache() {
  local c=$1
  shift
  PTO_CACHE_DIR="$T/$c" "$@"
}

for url in "$HTTP_URL" "$REDIS_URL"; do
  b=${url%%:*}
  # The CI job: a full pto compiles the set into the remote.
  for p in "${PROGRAMS[@]}"; do
    with_cache "ci-$b" run_status 0 timeout 120 "$PTO" compile "$EX/$p.ptir" -o "$T/ci-$b-$p" --remote-cache "$url"
  done
  # The host: runtime-only, empty local cache.
  for p in "${PROGRAMS[@]}"; do
    with_cache "host-$b" run_status 0 timeout 120 "$RTPTO" run "$EX/$p.ptir" $(dims $p) --check --remote-cache "$url" &&
      expect_out PASS
  done
  with_cache "host-$b" run_status 0 "$RTPTO" cache stats --json
  expect_out '"entries": 2'
  expect_out '"stores": 0'
  expect_out '"remote_hits": 2'
  # pto compile on the host copies the entry into a work dir, which then runs.
  with_cache "host-$b" run_status 0 "$RTPTO" compile "$EX/add.ptir" -o "$T/host-$b-add" --remote-cache "$url"
  run_status 0 "$RTPTO" run "$T/host-$b-add" --dim M=70 --check && expect_out PASS
done

# The Python package of the runtime-only build compiles (from the remote) without a compiler.
if [ -x /usr/bin/python3 ]; then
  PTO_CACHE_DIR="$T/python" PTO_REMOTE_CACHE=$REDIS_URL PYTHONPATH="$RT/python" run_status 0 \
    timeout 120 /usr/bin/python3 -c "import pto; p = pto.compile('$EX/add.ptir'); print('compiled', type(p).__name__)"
  expect_out "compiled CompiledProgram"
  OUT=$(PTO_CACHE_DIR="$T/python" "$RTPTO" cache stats --json)
  expect_out '"remote_hits": 1'
fi

# A work dir compiled elsewhere runs as today, without any cache.
run_status 0 env PTO_CACHE_DIR="$T/none" "$RTPTO" run "$T/ci-http-chain" --dim M=256 --in alpha=0.5 --check &&
  expect_out PASS

# Tampering with every stored object (a byte in the middle of each).
for f in "$HTTP_DATA"/*; do
  [ -f "$f" ] && [ "${f##*/}" != probe ] || continue
  printf 'X' | dd of="$f" bs=1 seek=$(($(stat -c %s "$f") / 2)) conv=notrunc 2>/dev/null
done
for k in $(rcli --scan --pattern 'pto:*'); do
  rcli setrange "$k" $(($(rcli strlen "$k") / 2)) X >/dev/null
done
for url in "$HTTP_URL" "$REDIS_URL"; do
  b=${url%%:*}
  for p in "${PROGRAMS[@]}"; do
    with_cache "tampered-rt-$b" run_status 1 timeout 120 "$RTPTO" run "$EX/$p.ptir" $(dims $p) --remote-cache "$url"
    expect_out "refusing the remote cache entry"
    expect_out "runtime-only (built with -DPTO_COMPILER=OFF) and cannot compile"
    expect_out "the remote cache $url"
  done
  with_cache "tampered-rt-$b" run_status 0 "$RTPTO" cache stats --json
  expect_out '"entries": 0'
  expect_out '"remote_refusals": 2'
  # The full pto refuses the same objects, compiles and runs.
  for p in "${PROGRAMS[@]}"; do
    with_cache "tampered-full-$b" run_status 0 timeout 120 "$PTO" run "$EX/$p.ptir" $(dims $p) --check --remote-cache "$url"
    expect_out "refusing the remote cache entry"
    expect_out PASS
  done
done

# No remote at all: the message says what would serve.
with_cache empty run_status 1 "$RTPTO" run "$EX/add.ptir" --dim M=70
expect_out "none set: PTO_REMOTE_CACHE=URL or --remote-cache URL"
expect_out "or run a work dir compiled elsewhere (pto run DIR)"
# Without a remote, no remote can have refused an entry: the message used to say one was warned
# about above all the same.
expect_true "no refusal named without a remote" test "${OUT/refused remote entry/}" = "$OUT"
finish
