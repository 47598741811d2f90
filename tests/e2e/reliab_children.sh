#!/usr/bin/env bash
# Killing pto while its C++ compiler runs (issue #34, item 15): the compiler dies with pto, by
# SIGTERM or SIGKILL (a parent-death signal). SIGTERM's handler removes the compile's build dir
# (and the work dir it made); the one a SIGKILLed compile left is reclaimed by the next compile.
# The fake compiler tells the test its pid through a FIFO (the test blocks on it, with a
# deadline) and then sleeps in place of compiling.
source "$(dirname "$0")/lib/common.bash"
export PTO_CACHE_DIR="$T/cache"

mkfifo "$T/fifo"
cat >"$T/fake-cxx" <<EOF
#!/bin/sh
case "\$1" in --version) echo "fake-cxx 1"; exit 0 ;; esac
echo \$\$ >"$T/fifo"
exec sleep 120
EOF
chmod +x "$T/fake-cxx"

# gone PID: PID exits within 30 s (tail returns when it does).
gone() { timeout 30 tail --pid="$1" -f /dev/null; }

for sig in TERM KILL; do
  PTO_CXX="$T/fake-cxx" "$PTO" compile "$EX/add.ptir" --no-cache -o "$T/w" >"$T/log" 2>&1 &
  pto_pid=$!
  cxx_pid=$(timeout 60 cat "$T/fifo")
  expect_true "SIG$sig: the compiler started ($cxx_pid)" test -n "$cxx_pid"
  [ -n "$cxx_pid" ] || break
  kill -"$sig" "$pto_pid"
  wait "$pto_pid"
  expect_true "SIG$sig: the compiler died with pto" gone "$cxx_pid"
  kill -KILL "$cxx_pid" 2>/dev/null # only when the check above failed
  if [ "$sig" = TERM ]; then
    # A compile ended by a catchable signal removes its build dir, and DIR, which it made.
    expect_true "SIGTERM: the compile removed its build dir and the DIR it made" test ! -e "$T/w"
  else
    expect_true "SIGKILL: the killed compile left its build dir" test -n "$(find "$T/w" -maxdepth 1 -name '.pto-build-*')"
  fi
done
# A compile through the cache (pto run PROG.ptir) ended by SIGTERM removes its build dir in the
# cache's tmp folder, which stayed until pto cache gc; an uncached one (--no-cache) its private
# build dir in TMPDIR.
mkdir -p "$T/sigtmp"
for mode in cache no-cache; do
  extra=()
  if [ "$mode" = no-cache ]; then extra=(--no-cache); fi
  TMPDIR="$T/sigtmp" PTO_CXX="$T/fake-cxx" "$PTO" run "$EX/add.ptir" --dim M=8 "${extra[@]}" \
    >"$T/log" 2>&1 &
  pto_pid=$!
  cxx_pid=$(timeout 60 cat "$T/fifo")
  expect_true "$mode: the compiler started ($cxx_pid)" test -n "$cxx_pid"
  [ -n "$cxx_pid" ] || break
  kill -TERM "$pto_pid"
  wait "$pto_pid"
  expect_true "$mode: the compiler died with pto" gone "$cxx_pid"
  kill -KILL "$cxx_pid" 2>/dev/null # only when the check above failed
  expect_true "$mode: SIGTERM removed the build dir in the cache ($(ls -A "$T/cache/tmp"))" \
    test -z "$(ls -A "$T/cache/tmp")"
  expect_true "$mode: ... and in TMPDIR ($(ls -A "$T/sigtmp"))" test -z "$(ls -A "$T/sigtmp")"
done
run_pto 0 compile "$EX/add.ptir" -o "$T/w"
expect_true "the next compile reclaimed the build dirs" test -z "$(find "$T/w" -maxdepth 1 -name '.pto-build-*')"
run_pto 0 run "$T/w" --dim M=8 --check
# A compiler that cannot be started is reported as before, and leaves no log file.
export TMPDIR="$T/tmp"
mkdir -p "$TMPDIR"
PTO_CXX="$T/no-such-cxx" run_pto 1 compile "$EX/add.ptir" --no-cache -o "$T/w2" &&
  expect_out "cannot run $T/no-such-cxx: No such file or directory"
expect_true "no temporary log files left" test -z "$(ls -A "$TMPDIR")"

finish
