#!/usr/bin/env bash
# Environment variables the command line reads: PTO_LOG_LEVEL takes the reference's level names
# (any case; each includes those before it, timing and later write the [STRACE] lines), and
# another value is refused (exit 2) naming the variable, where it was silently ignored (a misspelt
# "timnig" wrote nothing and said nothing). A cache dir refused for its mode is named with the
# variable that chose it (PTO_CACHE_DIR=..., XDG_CACHE_HOME=...), not by its path alone, and so
# is one that is a file; pto cache reads '--' as every command does. PTO_CACHE_DEBUG and
# PTO_CACHE_NO_TOOLCHAIN_MEMO are 1 or 0: another value warns (it was silently off, or on for 0).
source "$(dirname "$0")/lib/common.bash"
export PTO_CACHE_DIR="$T/cache"
ADD=("$EX/add.ptir" --dim M=4)

# ---- PTO_LOG_LEVEL ----------------------------------------------------------------------------
run_pto 0 compile "$EX/add.ptir" -o "$T/wd"
for level in timnig 1 "timing " verbose; do
  run_status 2 env PTO_LOG_LEVEL="$level" "$PTO" run "${ADD[@]}" --out c="$T/c.npy"
  expect_out "PTO_LOG_LEVEL is '$level': expected one of: null, error, warn, timing, info, debug"
  expect_true "PTO_LOG_LEVEL=$level: nothing written" test ! -e "$T/c.npy"
done
run_status 2 env PTO_LOG_LEVEL=timnig "$PTO" bench "$T/wd" --dim M=4 --rounds 1 --warmup 0
expect_out "PTO_LOG_LEVEL is 'timnig'"
run_status 2 env PTO_LOG_LEVEL=timnig "$PTO" run "$EX/allreduce_mesh.ptir" --devices 2 --dim M=64
expect_out "PTO_LOG_LEVEL is 'timnig'"
for level in "" null error warn WARNING; do
  run_status 0 env PTO_LOG_LEVEL="$level" "$PTO" run "$T/wd" --dim M=4
  expect_true "PTO_LOG_LEVEL='$level' writes no [STRACE] line" \
    test "$(grep -c '^\[STRACE\]' <<<"$OUT")" = 0
done
for level in timing TIMING info Debug; do
  run_status 0 env PTO_LOG_LEVEL="$level" "$PTO" run "$T/wd" --dim M=4
  expect_true "PTO_LOG_LEVEL=$level writes the [STRACE] lines" \
    test "$(grep -c '^\[STRACE\] v=1 ' <<<"$OUT")" -ge 7
done
run_status 0 env PTO_LOG_LEVEL=info "$PTO" run "$EX/allreduce_mesh.ptir" --devices 2 --dim M=64
expect_true "PTO_LOG_LEVEL=info: a host program's [STRACE] lines" \
  test "$(grep -c '^\[STRACE\] v=1 .* l3=' <<<"$OUT")" -ge 1

# pto run --trace sets the timing level for its run, but keeps a later one (its orchestration
# lines: a LOG_INFO written into the work dir's orchestration by hand) and refuses a bad one.
run_pto 0 compile "$EX/add.ptir" -o "$T/wdl"
sed -i '/void aicpu_orchestration_entry(/a\  LOG_INFO("an info line");' "$T/wdl/orchestration/main.cpp"
run_status 0 env PTO_LOG_LEVEL=info "$PTO" run "$T/wdl" --dim M=4 --trace
expect_out "[INFO] orchestration aicpu_orchestration_entry: an info line"
expect_out "[STRACE] v=1 "
run_status 0 env PTO_LOG_LEVEL=error "$PTO" run "$T/wdl" --dim M=4 --trace
expect_out "[STRACE] v=1 "
expect_true "--trace over error: no info line" test -z "$(grep -F 'an info line' <<<"$OUT")"
run_status 2 env PTO_LOG_LEVEL=timnig "$PTO" run "$T/wdl" --dim M=4 --trace
expect_out "PTO_LOG_LEVEL is 'timnig'"

# ---- the cache's switches: 1 or 0; another value warns, naming the variable, and is off -------
run_status 0 env PTO_CACHE_DIR="$T/dbg" PTO_CACHE_DEBUG=yes "$PTO" run "${ADD[@]}"
expect_out "PTO_CACHE_DEBUG is 'yes': expected 1 (on) or 0 (off, the default); taken as 0"
expect_true "PTO_CACHE_DEBUG=yes writes no key.txt" test -z "$(find "$T/dbg" -name key.txt)"
run_status 0 env PTO_CACHE_DIR="$T/dbg1" PTO_CACHE_DEBUG=1 "$PTO" run "${ADD[@]}"
expect_true "PTO_CACHE_DEBUG=1 writes key.txt" test -n "$(find "$T/dbg1" -name key.txt)"
run_status 0 env PTO_CACHE_DIR="$T/dbg" PTO_CACHE_NO_TOOLCHAIN_MEMO=on "$PTO" run "${ADD[@]}"
expect_out "PTO_CACHE_NO_TOOLCHAIN_MEMO is 'on': expected 1 (on) or 0 (off, the default)"
run_status 0 env PTO_CACHE_DIR="$T/dbg" PTO_CACHE_NO_TOOLCHAIN_MEMO=0 "$PTO" run "${ADD[@]}"
expect_true "PTO_CACHE_NO_TOOLCHAIN_MEMO=0 says nothing" test -z "$(grep -F warning <<<"$OUT")"

# ---- a cache dir that is not private, named with its variable ----------------------------------
mkdir -p "$T/open" && chmod 777 "$T/open"
run_status 0 env PTO_CACHE_DIR="$T/open" "$PTO" run "${ADD[@]}"
expect_out "cache directory $T/open (PTO_CACHE_DIR=$T/open) is writable by group or others (mode 777)"
expect_out "run chmod 700 $T/open, or set PTO_CACHE_DIR to a directory of your own"
run_status 1 env PTO_CACHE_DIR="$T/open" "$PTO" cache ls
expect_out "cache directory $T/open (PTO_CACHE_DIR=$T/open) is writable by group or others"
mkdir -p "$T/xdg/pto" && chmod 777 "$T/xdg/pto"
run_status 1 env -u PTO_CACHE_DIR XDG_CACHE_HOME="$T/xdg" "$PTO" cache stats
expect_out "cache directory $T/xdg/pto (XDG_CACHE_HOME=$T/xdg) is writable by group or others"
# A PTO_CACHE_DIR of other files: pto uses its pto folder, and names it so.
mkdir -p "$T/proj/pto" && touch "$T/proj/notes.txt" && chmod 777 "$T/proj/pto"
run_status 1 env PTO_CACHE_DIR="$T/proj" "$PTO" cache ls
expect_out "cache directory $T/proj (PTO_CACHE_DIR=$T/proj) holds files that pto did not create: using $T/proj/pto instead"
expect_out "cache directory $T/proj/pto (the pto folder of PTO_CACHE_DIR=$T/proj) is writable"
# A cache dir that is a file names the variable that chose it; a relative XDG_CACHE_HOME is
# ignored (the XDG spec), so HOME chose it, not XDG_CACHE_HOME.
mkdir -p "$T/home/.cache" && touch "$T/home/.cache/pto"
run_status 2 env -u PTO_CACHE_DIR XDG_CACHE_HOME=rel HOME="$T/home" "$PTO" cache stats
expect_out "the cache directory $T/home/.cache/pto (from HOME=$T/home) is not a directory"
# '--' ends the options of pto cache too: the KEYs after it are KEYs, not options.
run_pto 0 cache -- stats
run_pto 2 cache rm -- -x
expect_out "'-x': a key is 1 to 32 hex digits"
run_pto 2 cache rm --x
expect_out "unknown option '--x'"
expect_true "nothing was written into the open dirs" \
  test -z "$(find "$T/open" "$T/xdg/pto" "$T/proj/pto" -mindepth 1)"
finish
