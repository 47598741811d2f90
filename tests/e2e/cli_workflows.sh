#!/usr/bin/env bash
# The command line as a user scripts it (docs/cli.md), fourth pass: combinations and whole
# workflows, where the earlier passes (cli_contract3, cli_conformance, ...) took each flag alone.
# - every flag on every subcommand: accepted where the docs give it, refused (exit 2, the message
#   naming the flag) where they do not; --help of each command lists every flag its parser takes
#   (the flags are read from the parser's source, so a flag added there and not to --help fails
#   here) and every flag the synopsis gives it;
# - --flag=value and --flag value alike (-o=DIR and -D=NAME=VALUE too), '--' ending options on
#   every command, a single-valued flag given twice with two values refused on every command;
# - one run with every output flag at once, single chip and --devices 2,3: the same bits as a
#   plain run, then pto trace, pto cache ls/show/rm/gc, pto build-id and pto rebuild on what it
#   made;
# - environment variables against their flags; output for scripts (JSON on stdout, nothing else
#   there; exit codes 0/1/2);
# - pto compile interrupted (SIGINT, SIGTERM, timeout -s INT): no half work dir, no cache entry,
#   and the next compile succeeds.
source "$(dirname "$0")/lib/common.bash"
export PTO_CACHE_DIR="$T/cache"
unset PTO_REMOTE_CACHE PTO_REMOTE_CACHE_KEY PTO_REMOTE_CACHE_KEY_FILE PTO_DIST_TRANSPORT PTO_LOG_LEVEL
A="$EX/add.ptir"
cd "$T"

# Nothing but what the docs give on stdout: run_split keeps stdout in $STDOUT, stderr in $STDERR.
run_split() {
  local want=$1
  shift
  "$PTO" "$@" >"$T/stdout" 2>"$T/stderr"
  local got=$?
  STDOUT=$(cat "$T/stdout")
  STDERR=$(cat "$T/stderr")
  OUT="$STDOUT$STDERR"
  if [ "$got" != "$want" ]; then
    echo "FAIL: pto $* exited $got, expected $want"
    sed 's/^/  | /' "$T/stdout" "$T/stderr"
    FAILS=$((FAILS + 1))
    return 1
  fi
  PASSES=$((PASSES + 1))
}
is_json() { python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$1"; }

# ---- fixtures: a work dir, a log, a kernels.so -------------------------------------------------
run_pto 0 compile "$A" -o "$T/wd"
run_pto 0 run "$A" --dim M=4 --trace
printf '%s\n' "$OUT" >"$T/run.log"

# ---- every flag on every command ---------------------------------------------------------------
# A value for each flag that takes one (one the flag would accept), empty for a switch.
declare -A VAL=(
  [-o]="$T/ro" [--entry]=main [-D]=n=1 [--arg]=a=4x4 [--platform]=sim [--devices]=2
  [--depfile]="$T/d.d" [--remote-cache]=http://127.0.0.1:9/x [--dim]=M=4 [--in]=a=ones
  [--out]=c="$T/c.npy" [--rtol]=0.1 [--atol]=0.1 [--transport]=shm [--swimlane]="$T/s.json"
  [--swimlane-records]="$T/r.json" [--swimlane-level]=2 [--timeline-width]=40
  [--timeline-svg]="$T/t.svg" [--dump-args]="$T/dd" [--dump-level]=1 [--rounds]=1 [--warmup]=0
  [--rank]=0 [--pid]=1 [--slot]=0 [--spread]=both [--inv]=1 [--max-size]=1G [--orch-entry]=x
)
SWITCHES=(--check --trace --strict-cores --timeline --no-cache --force --json --remote -i -O1
  --tree)
# What the docs give each command (the synopsis and the flag tables of docs/cli.md).
COMPILE_OPTS="--entry -D --arg --platform --devices -O1 --no-cache --remote-cache"
VIEW="--tree --spread --json --rank --pid --slot --timeline --timeline-svg --timeline-width"
declare -A ALLOWED=(
  [compile]="-o $COMPILE_OPTS --depfile --force"
  [run]="$COMPILE_OPTS --dim --in --out --check --rtol --atol --trace --transport --swimlane
    --swimlane-records --swimlane-level --timeline --timeline-width --timeline-svg --dump-args
    --dump-level --strict-cores"
  [bench]="$COMPILE_OPTS --dim --in --transport --rounds --warmup $VIEW --swimlane
    --swimlane-records --swimlane-level --dump-args --dump-level --strict-cores"
  [cache]="--json --remote --remote-cache --max-size"
  [build-id]=""
  [rebuild]="--orch-entry"
  [fmt]="-i"
  [check]=""
  [trace]="$VIEW --inv --warmup"
)
# A command line each command accepts, to which one flag is added.
declare -A BASE=(
  [compile]="compile $A -o $T/wb"
  [run]="run $A --dim M=4"
  [bench]="bench $A --dim M=4 --rounds 1 --warmup 0"
  [cache]="cache stats"
  [build-id]="build-id $T/wd/kernels/kernels.so"
  [rebuild]="rebuild $T/wd"
  [fmt]="fmt $A"
  [check]="check $A"
  [trace]="trace $T/run.log"
)
ALL_FLAGS=("${!VAL[@]}" "${SWITCHES[@]}")
declare -A REFUSED=()
for cmd in "${!BASE[@]}"; do
  for flag in "${ALL_FLAGS[@]}"; do
    case " $(echo ${ALLOWED[$cmd]}) " in *" $flag "*) continue ;; esac
    args=("$flag")
    [ -n "${VAL[$flag]+x}" ] && args+=("${VAL[$flag]}")
    # shellcheck disable=SC2086 # BASE is words
    run_split 2 ${BASE[$cmd]} "${args[@]}" || continue
    REFUSED[$cmd:$flag]=1
    # Refused at once, naming the flag, on stderr alone.
    expect_true "pto $cmd $flag: the refusal names $flag ($STDERR)" grep -qF -- "$flag" <<<"$STDERR"
    expect_true "pto $cmd $flag: nothing on stdout ($STDOUT)" test -z "$STDOUT"
  done
done
expect_true "no file made by a refused command" test ! -e "$T/wb" -a ! -e "$T/c.npy" \
  -a ! -e "$T/s.json" -a ! -e "$T/dd" -a ! -e "$T/d.d"

# --help lists every flag the command's parser takes. The flags are the parser's own strings
# (tools/*.c); each is probed on each command alone: a parser that takes it answers with
# anything but "unknown option" (a missing program or value), and then --help must name it.
SRC_FLAGS=$(grep -ohE '"--?[A-Za-z][A-Za-z0-9-]*=?"' "$PTO_SOURCE_DIR"/tools/*.c | tr -d '"=' |
  grep -vxE -- '-h|--help|--version|--dump-' | sort -u)
expect_true "flags read from the parser's source" test "$(wc -w <<<"$SRC_FLAGS")" -gt 30
for cmd in compile run bench cache build-id rebuild fmt check trace; do
  help=$("$PTO" "$cmd" --help)
  for flag in $SRC_FLAGS -O0 -O1 -O2 -O3; do
    out=$("$PTO" "$cmd" "$flag" 2>&1 </dev/null)
    grep -qF "unknown option '$flag'" <<<"$out" && continue
    # Parsed, then refused with a message of its own (run --depfile: a work dir's, pto compile's).
    [ -n "${REFUSED[$cmd:$flag]+x}" ] && continue
    name=$flag
    case $flag in -O[0-3]) name=-O0 ;; esac # "-O0..-O3" or "-O0 | -O1 | -O2 | -O3"
    expect_true "pto $cmd takes $flag, and its --help names it" \
      grep -qE -- "(^|[][ (|,])$name([] =|,.)]|$)" <<<"$help"
  done
  # ... and every flag the docs give it.
  for flag in ${ALLOWED[$cmd]}; do
    case $flag in -O1) flag=-O0 ;; esac
    expect_true "pto $cmd --help names $flag" grep -qE -- "(^|[][ (|,])$flag([] =|,.)]|$)" <<<"$help"
  done
done

# ---- --flag=value and --flag value -------------------------------------------------------------
run_pto 0 compile "$EX/scale_rows.ptir" -o="$T/eq1" -D=act=1 --entry=main --platform=sim \
  --depfile="$T/eq1.d"
run_pto 0 compile "$EX/scale_rows.ptir" -o "$T/eq2" -D act=1 --entry main --platform sim \
  --depfile "$T/eq2.d"
run_pto 0 compile "$EX/scale_rows.ptir" -o "$T/eq3" -Dact=1
for f in manifest.json kernels/kernels.so; do
  expect_true "-o=DIR -D=N=V wrote the bits of -o DIR -D N=V ($f)" cmp -s "$T/eq1/$f" "$T/eq2/$f"
  expect_true "-DN=V wrote the bits of -D N=V ($f)" cmp -s "$T/eq3/$f" "$T/eq2/$f"
done
run_pto 0 run "$EX/chain.ptir" --dim=M=40 --in=alpha=0.5 --in=x=random:3 --out=y="$T/e1.npy" \
  --check --rtol=1e-4 --atol=1e-5 --timeline-svg="$T/e1.svg" --dump-args="$T/e1d" --dump-level=2
run_pto 0 run "$EX/chain.ptir" --dim M=40 --in alpha=0.5 --in x=random:3 --out y="$T/e2.npy" \
  --check --rtol 1e-4 --atol 1e-5 --timeline-svg "$T/e2.svg" --dump-args "$T/e2d" --dump-level 2
expect_true "--out=... and --out ... write one array" cmp -s "$T/e1.npy" "$T/e2.npy"
expect_true "--dump-args=DIR and --dump-args DIR write one dump" cmp -s "$T/e1d/args.bin" "$T/e2d/args.bin"
# Level 1 dumps the arguments a kernel marks: chain marks none, so nothing is written, as the
# reference runtime writes nothing then; the report says so rather than naming a file.
run_split 0 run "$EX/chain.ptir" --dim M=40 --in alpha=0.5 --dump-args "$T/e3d" --dump-level 1
expect_true "level 1 of no marked argument: no dump" test ! -e "$T/e3d/args_dump.json"
expect_true "... and the report says nothing was written ($STDOUT)" \
  grep -qF "args dump (level 1): no task argument to dump at this level" <<<"$STDOUT"
touch -d '+1 hour' "$T/e1d/args_dump.json"
run_split 0 run "$EX/chain.ptir" --dim M=40 --in alpha=0.5 --dump-args "$T/e1d" --dump-level 1
expect_true "... nor names the dump an earlier run left there" \
  grep -qF "nothing written in $T/e1d" <<<"$STDOUT"
run_pto 0 trace "$T/run.log" --tree=1 --spread=both --warmup=0 --inv=1 --json
run_pto 0 cache gc --max-size=1G

# ---- '--' ends options, on every command -------------------------------------------------------
mkdir -p "$T/dash" && cd "$T/dash"
cp "$A" ./-add.ptir
cp "$T/run.log" ./-run.log
cp "$T/wd/kernels/kernels.so" ./-k.so
run_pto 0 check -- -add.ptir
run_pto 0 fmt -- -add.ptir
run_pto 0 fmt -i -- -add.ptir
run_pto 0 compile -o=-wd -- -add.ptir
run_pto 0 rebuild -- -wd
expect_out "up to date"
run_pto 0 run --dim M=4 --check -- -add.ptir && expect_out PASS
run_pto 0 run --dim M=4 --check -- -wd && expect_out PASS
run_pto 0 bench --dim M=4 --rounds 1 --warmup 0 -- -add.ptir
run_pto 0 trace -- -run.log
run_pto 0 build-id -- -k.so && expect_out "-k.so: hid="
run_pto 2 check -- --help
expect_out "--help" # a file of that name, not the help
run_pto 2 cache rm -- -nokey
expect_out "-nokey"
cd "$T"

# ---- a single-valued flag given twice with two values: refused on every command ---------------
twice() { # EXPECTED-FLAG ARGS...
  local flag=$1
  shift
  run_pto 2 "$@" && expect_out "$flag" && expect_out "given twice"
}
twice -o compile "$A" -o "$T/t1" -o "$T/t2"
twice --entry compile "$A" -o "$T/t1" --entry main --entry other
twice --depfile compile "$A" -o "$T/t1" --depfile "$T/a.d" --depfile "$T/b.d"
twice --devices run "$EX/allreduce_mesh.ptir" --devices 2 --devices 3
twice --transport run "$EX/allreduce_mesh.ptir" --transport shm --transport=mpi
twice --remote-cache run "$A" --remote-cache http://a/x --remote-cache=http://b/x
twice --max-size cache gc --max-size 1G --max-size 2G
twice --spread trace "$T/run.log" --spread both --spread none
twice --orch-entry rebuild "$T/wd" --orch-entry a --orch-entry b
twice --swimlane run "$A" --swimlane "$T/a.json" --swimlane "$T/b.json"
twice --swimlane-records run "$A" --swimlane-records "$T/a.json" --swimlane-records "$T/b.json"
twice --timeline-svg run "$A" --timeline-svg "$T/a.svg" --timeline-svg "$T/b.svg"
twice --dump-args run "$A" --dump-args "$T/da" --dump-args "$T/db"
twice --rounds bench "$A" --rounds 1 --rounds 2
twice --warmup bench "$A" --warmup 1 --warmup 2
twice --inv trace "$T/run.log" --inv 1 --inv 2
twice --rank trace "$T/run.log" --rank 0 --rank 1
twice --pid trace "$T/run.log" --pid 1 --pid 2
twice --slot trace "$T/run.log" --slot 0 --slot 1
twice --dump-level run "$A" --dump-args "$T/da" --dump-level 1 --dump-level 2
twice --swimlane-level run "$A" --swimlane-records "$T/a.json" --swimlane-level 1 --swimlane-level 2
twice --timeline-width run "$A" --timeline --timeline-width 40 --timeline-width 50
twice --rtol run "$A" --check --rtol 0.1 --rtol 0.2
twice --atol run "$A" --check --atol 0.1 --atol 0.2
twice --tree trace "$T/run.log" --tree 1 --tree 2
twice "--dim M" run "$A" --dim M=4 --dim M=5
twice "-D act" compile "$EX/scale_rows.ptir" -o "$T/t1" -D act=1 -D act=0
twice "--arg a" compile "$A" -o "$T/t1" --arg a=4x4 --arg a=8x8
expect_true "no file made by a refused command" test ! -e "$T/t1" -a ! -e "$T/a.json" -a ! -e "$T/da"
# Of -O0..-O3 the last applies, as with a C compiler: the entry says which one it is.
run_pto 0 compile "$A" -o "$T/o1" -O3 -O1
run_pto 0 cache ls
expect_out "O1"

# ---- one run with every flag, single chip: the bits of a plain run ----------------------------
export PTO_CACHE_DIR="$T/wf-cache"
SR=("$EX/scale_rows.ptir" --dim M=77 --in alpha=-1.5 --in x=random:7)
run_split 0 run "${SR[@]}" -D act=runtime --in act=1 --out y="$T/plain.npy"
run_split 0 run "${SR[@]}" -D act=runtime --in act=1 --out y="$T/full.npy" --check --trace \
  --swimlane "$T/full.json" --dump-args "$T/full.dump" --timeline-svg "$T/full.svg" \
  --swimlane-records "$T/rec/full.json"
expect_true "every flag at once: the bits of the plain run" cmp -s "$T/plain.npy" "$T/full.npy"
expect_true "the check passed, on stdout" grep -qx PASS <<<"$STDOUT"
expect_true "no [STRACE] line on stdout" test -z "$(grep -F '[STRACE]' <<<"$STDOUT")"
expect_true "the [STRACE] lines on stderr" grep -qF '[STRACE] v=1' <<<"$STDERR"
expect_true "every output written" test -s "$T/full.json" -a -s "$T/full.dump/args.bin" \
  -a -s "$T/full.svg" -a -s "$T/rec/full.json" -a -s "$T/rec/deps.json"
is_json "$T/full.json" && is_json "$T/full.dump/args_dump.json" && is_json "$T/rec/full.json"
expect_true "the outputs are JSON" test $? = 0
printf '%s\n' "$STDERR" >"$T/full.log"
run_split 0 trace "$T/full.log" --json
expect_true "pto trace --json: JSON alone on stdout" is_json "$T/stdout"
HID=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["hid"])' "$T/stdout")
run_split 0 trace "$T/full.log" --tree && expect_out "chip.run"
# The entry it made: ls, show, then build-id of its work dir matches the log's hid.
run_split 0 cache ls --json
expect_true "pto cache ls --json: JSON alone" is_json "$T/stdout"
KEY=$(python3 -c 'import json,sys
e=[e for e in json.load(open(sys.argv[1])) if e["program"]=="scale_rows"]
print(e[0]["key"] if len(e)==1 else "")' "$T/stdout")
expect_true "one scale_rows entry in the cache" test -n "$KEY"
run_split 0 cache show "${KEY:0:8}" --json
expect_true "pto cache show --json: JSON alone" is_json "$T/stdout"
run_pto 0 compile "$EX/scale_rows.ptir" -D act=runtime -o "$T/srwd"
run_split 0 build-id "$T/srwd/orchestration/main.so" "$T/srwd/kernels/kernels.so"
expect_true "build-id of the work dir's orchestration is the log's hid $HID" \
  grep -qF "main.so: hid=$HID build-id=" <<<"$STDOUT"
run_pto 0 rebuild "$T/srwd" && expect_out "up to date"
echo "; a hand edit" >>"$T/srwd/kernels/scale_block.ll"
run_pto 0 rebuild "$T/srwd"
run_split 0 run "$T/srwd" --dim M=77 --in alpha=-1.5 --in x=random:7 --in act=1 --out y="$T/wd.npy"
expect_true "the rebuilt work dir gives the same bits" cmp -s "$T/plain.npy" "$T/wd.npy"
run_pto 0 cache rm "${KEY:0:8}"
run_split 0 cache ls --json
expect_true "the entry is gone" test -z "$(grep -F "$KEY" <<<"$STDOUT")"
run_pto 0 run "${SR[@]}" -D act=runtime --in act=1 --out y="$T/again.npy"
expect_true "compiled again after rm: the same bits" cmp -s "$T/plain.npy" "$T/again.npy"
run_pto 0 cache gc --max-size 1G && expect_out "evicted 0 entries"

# ---- the same with a host program on devices 2,3 -----------------------------------------------
RING=("$EX/allreduce_ring.ptir" --devices 2,3 --dim M=64 --in alpha=0.5 --in rounds=1 --in x=random:3)
run_split 0 run "${RING[@]}" --out y="$T/l3plain.npy"
expect_out "2 devices (2,3)"
run_split 0 run "${RING[@]}" -D alpha=runtime --out y="$T/l3full.npy" --check --trace \
  --swimlane-records "$T/l3rec/r.json" --dump-args "$T/l3dump"
expect_true "L3, every flag: the bits of the plain run" cmp -s "$T/l3plain.npy" "$T/l3full.npy"
expect_true "L3 check passed" grep -qx PASS <<<"$STDOUT"
expect_true "L3 records and dumps per rank" test -s "$T/l3rec/rank_1/dispatch_0/r.json" \
  -a -s "$T/l3dump/rank_1/dispatch_0/args.bin"
expect_true "the L3 report counts the dumps written ($STDOUT)" \
  grep -qF "rank_R/dispatch_N/args_dump.json (simpler's dump_viewer reads each): 2" <<<"$STDOUT"
printf '%s\n' "$STDERR" >"$T/l3.log"
# The earlier run's manifests stay; one dated after this run starts (a clock tick's race, here
# made certain) is still not this run's: a manifest counts when the run replaced it.
touch -d '+1 hour' "$T/l3dump/rank_0/dispatch_0/args_dump.json"
run_split 0 run "${RING[@]}" --dump-args "$T/l3dump" --dump-level 1
expect_true "L3 level 1, nothing marked: nothing written, and said so ($STDOUT)" \
  grep -qF "args dump (level 1): no task argument to dump at this level" <<<"$STDOUT"
expect_true "... nor counts the dumps an earlier run left there, whatever their mtime" \
  grep -qF "nothing written in $T/l3dump" <<<"$STDOUT"
run_split 0 trace "$T/l3.log" --json
expect_true "pto trace of the L3 log: JSON" is_json "$T/stdout"
expect_true "two ranks in the L3 log" test "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["nranks"])' "$T/stdout")" = 2
run_pto 2 trace "$T/l3.log" --inv 1 && expect_out "--inv"
run_pto 0 cache ls && expect_out "devices=2,3"
run_pto 0 compile "$EX/allreduce_ring.ptir" --devices 2,3 -o "$T/ringwd"
run_pto 0 rebuild "$T/ringwd" && expect_out "up to date"
run_split 0 run "$T/ringwd" --dim M=64 --in alpha=0.5 --in rounds=1 --in x=random:3 --out y="$T/l3wd.npy"
expect_true "the L3 work dir gives the same bits" cmp -s "$T/l3plain.npy" "$T/l3wd.npy"
run_pto 2 run "$T/ringwd" --devices 0,1 --dim M=64 --in alpha=0.5 --in rounds=1
expect_out "--devices"
run_pto 0 build-id "$T/ringwd/host/host.so"
run_split 0 bench "${RING[@]}" --rounds 2 --warmup 0 --json
expect_true "pto bench --json of the host program: JSON alone" is_json "$T/stdout"

# ---- environment variables against their flags -------------------------------------------------
# PTO_CACHE_DIR chooses the cache every command uses.
PTO_CACHE_DIR="$T/cache2" run_pto 0 run "$A" --dim M=4
PTO_CACHE_DIR="$T/cache2" run_split 0 cache ls --json
expect_true "PTO_CACHE_DIR: the entry is there" grep -qF "$T/cache2/" <<<"$STDOUT"
# --remote-cache wins over PTO_REMOTE_CACHE (a bad one in the environment is not even read).
PTO_CACHE_DIR="$T/cache3" PTO_REMOTE_CACHE=ftp://bad run_pto 0 run "$A" --dim M=4 \
  --remote-cache http://127.0.0.1:9/x
expect_true "--remote-cache wins over PTO_REMOTE_CACHE" test -z "$(grep -F ftp://bad <<<"$OUT")"
PTO_CACHE_DIR="$T/cache4" PTO_REMOTE_CACHE=ftp://bad run_pto 0 run "$A" --dim M=4
expect_out "warning: PTO_REMOTE_CACHE: remote cache 'ftp://bad'"
PTO_REMOTE_CACHE=ftp://bad run_pto 2 cache ls --remote && expect_out "PTO_REMOTE_CACHE"
PTO_REMOTE_CACHE=ftp://bad run_pto 2 cache ls --remote --remote-cache ftp://flag
expect_out "--remote-cache" && expect_true "the flag's URL is the one named" test -z "$(grep -F ftp://bad <<<"$OUT")"
# --no-cache refuses --remote-cache, not PTO_REMOTE_CACHE (which it simply does not use).
PTO_REMOTE_CACHE=http://127.0.0.1:9/x run_pto 0 run "$A" --dim M=4 --no-cache
run_pto 2 run "$A" --dim M=4 --no-cache --remote-cache http://127.0.0.1:9/x
expect_out "--no-cache"
# --transport wins over PTO_DIST_TRANSPORT.
PTO_DIST_TRANSPORT=bogus run_pto 0 run "$EX/allreduce_mesh.ptir" --devices 2 --dim M=64 --transport shm
PTO_DIST_TRANSPORT=bogus run_pto 2 run "$EX/allreduce_mesh.ptir" --devices 2 --dim M=64
expect_out "bogus"
# --trace raises PTO_LOG_LEVEL to timing, and keeps a later level.
PTO_LOG_LEVEL=null run_split 0 run "$A" --dim M=4 --trace
expect_true "--trace over PTO_LOG_LEVEL=null" grep -qF '[STRACE] v=1' <<<"$STDERR"
PTO_LOG_LEVEL=bogus run_pto 2 run "$A" --dim M=4 --trace && expect_out PTO_LOG_LEVEL
# PTO_CACHE_MAX_SIZE is the default of gc --max-size; the flag wins.
PTO_CACHE_MAX_SIZE=bogus run_pto 0 cache gc --max-size 1G
PTO_CACHE_MAX_SIZE=bogus run_pto 2 cache gc && expect_out PTO_CACHE_MAX_SIZE

# ---- exit codes and streams --------------------------------------------------------------------
run_split 2 run "$A" --dim M=4 --frobnicate
expect_true "a usage error: nothing on stdout" test -z "$STDOUT"
expect_true "a usage error names the flag" grep -qF -- "--frobnicate" <<<"$STDERR"
run_split 2 cache explain abc
expect_true "an unknown cache command is named as such ($STDERR)" \
  grep -qF "'explain' is not a cache command" <<<"$STDERR"
run_split 2 frobnicate && expect_true "an unknown command: nothing on stdout" test -z "$STDOUT"
# A transport the build lacks is a configuration error (2), named by the environment as by
# --transport mpi: the worker's open refuses it, naming the variable, before anything runs.
if ! grep -q mpi <<<"$("$PTO" --version)"; then
  PTO_DIST_TRANSPORT=mpi run_split 2 run "$EX/allreduce_mesh.ptir" --devices 2 --dim M=64
  expect_true "PTO_DIST_TRANSPORT=mpi without MPI: nothing on stdout" test -z "$STDOUT"
  expect_true "... and the variable named ($STDERR)" grep -qF \
    "PTO_DIST_TRANSPORT is 'mpi': transport 'mpi' is not in this build" <<<"$STDERR"
  run_split 2 run "$EX/allreduce_mesh.ptir" --devices 2 --dim M=64 --transport mpi
  expect_true "--transport mpi without MPI: the same exit, nothing on stdout" test -z "$STDOUT"
fi
for c in stats ls; do
  run_split 0 cache "$c" --json && expect_true "cache $c --json: JSON alone" is_json "$T/stdout"
done
run_split 0 bench "$A" --dim M=4 --rounds 2 --warmup 0 --json --tree --timeline-svg "$T/b.svg"
expect_true "bench --json with --timeline-svg: JSON alone" is_json "$T/stdout"
run_split 0 help run && expect_true "pto help run on stdout" grep -qF -- "--check" <<<"$STDOUT"
run_split 2 help frobnicate && expect_true "pto help of no command: stdout empty" test -z "$STDOUT"
for cmd in compile run bench cache build-id rebuild fmt check trace; do
  run_split 0 "$cmd" --help
  expect_true "pto $cmd --help: on stdout, with an example" grep -q "example" <<<"$STDOUT"
done

# ---- pto compile interrupted -------------------------------------------------------------------
# The compile is held between building and publishing its cache entry (the test build's
# PTO_CACHE_TEST_PAUSE), so the signal lands in the middle of it for certain.
interrupt() { # SIGNAL DIR ARGS...
  local sig=$1 dir=$2
  shift 2
  # A background job of a script starts with SIGINT ignored (and pto keeps an ignored signal
  # ignored): python3 puts its default back before it runs pto.
  PTO_CACHE_TEST_PAUSE=60 python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' "$PTO_TEST" compile "$@" -o "$dir" 2>"$T/int.err" &
  local pid=$!
  for _ in $(seq 1 600); do
    ls "$PTO_CACHE_DIR"/tmp/*/manifest.json >/dev/null 2>&1 && break
    sleep 0.1
  done
  expect_true "the compile got to its pause" bash -c "ls '$PTO_CACHE_DIR'/tmp/*/manifest.json >/dev/null"
  kill "-$sig" "$pid"
  wait "$pid"
  local rc=$?
  expect_true "SIG$sig ended the compile ($rc)" test "$rc" -gt 128
}
entries() { find "$PTO_CACHE_DIR" -mindepth 2 -maxdepth 2 -path "$PTO_CACHE_DIR/[0-9a-f][0-9a-f]/*"; }
if [ -n "${PTO_TEST:-}" ] && [ -x "$PTO_TEST" ]; then
  for sig in INT TERM HUP; do
    export PTO_CACHE_DIR="$T/int-$sig/cache"
    interrupt "$sig" "$T/int-$sig/new/wd" "$EX/chain.ptir"
    expect_true "SIG$sig: no cache entry" test -z "$(entries)"
    expect_true "SIG$sig: no half work dir (the dir it made is gone)" test ! -e "$T/int-$sig/new/wd"
    expect_true "SIG$sig: its parent, made by it too, is gone" test ! -e "$T/int-$sig/new"
    expect_true "SIG$sig: the folder that was there stays" test -d "$T/int-$sig"
    run_pto 0 cache ls && expect_true "SIG$sig: pto cache ls lists nothing" test -z "$OUT"
    run_pto 0 cache verify && expect_out "0 entries checked, 0 corrupt"
    run_pto 0 compile "$EX/chain.ptir" -o "$T/int-$sig/new/wd"
    run_pto 0 run "$T/int-$sig/new/wd" --dim M=40 --in alpha=0.5 --check && expect_out PASS
    # the signal removed the cache's build dir too: nothing stale is left for gc
    expect_true "SIG$sig: no cache build dir left" test -z "$(ls -A "$PTO_CACHE_DIR/tmp" 2>/dev/null)"
    run_pto 0 cache gc && expect_out "removed 0 stale build dirs"
  done
  # Into a work dir that holds a program: it still holds that one, whole, and nothing else.
  export PTO_CACHE_DIR="$T/int-old/cache"
  run_pto 0 compile "$EX/scale_rows.ptir" -D act=1 -o "$T/int-old/wd"
  before=$(cd "$T/int-old/wd" && find . | sort)
  interrupt INT "$T/int-old/wd" "$EX/scale_rows.ptir" -D act=0
  expect_true "the old work dir is as it was" test "$(cd "$T/int-old/wd" && find . | sort)" = "$before"
  run_pto 0 rebuild "$T/int-old/wd" && expect_out "up to date"
  run_pto 0 run "$T/int-old/wd" --dim M=40 --in alpha=2 --check && expect_out PASS
  # timeout -s INT, as a script bounds a compile.
  export PTO_CACHE_DIR="$T/int-timeout/cache"
  PTO_CACHE_TEST_PAUSE=60 timeout -s INT 3 "$PTO_TEST" compile "$EX/add.ptir" -o "$T/int-timeout/wd" 2>/dev/null
  expect_true "timeout -s INT: ended by the timeout" test $? = 124
  expect_true "timeout -s INT: no work dir" test ! -e "$T/int-timeout/wd"
  expect_true "timeout -s INT: no cache entry" test -z "$(entries)"
  run_pto 0 compile "$EX/add.ptir" -o "$T/int-timeout/wd"
fi

finish
