#!/usr/bin/env bash
# The pto command against its contract (docs/cli.md, "Options, for every command"): a flag's value
# after '=' as after a space; a single-valued flag or one NAME given twice with different values,
# and a flag that only qualifies another given without it, are refused (exit 2) rather than one
# of them winning or being ignored in silence; nothing is written by a refused command.
source "$(dirname "$0")/lib/common.bash"

ADD=("$EX/add.ptir")

# pto help of a command that does not exist: bad usage, as 'pto frobnicate' is.
run_pto 2 help frobnicate && expect_out "pto help: 'frobnicate' is not a pto command"
run_pto 0 help run && expect_out "usage: pto run PROG"

# --flag=VALUE reads as --flag VALUE, for --dim, --in, --out, --rtol and --atol too.
run_pto 0 run "${ADD[@]}" --dim=M=4 --in=a=zeros --out=c="$T/c.npy" --check --rtol=0 --atol=0 &&
  expect_out "(rtol 0, atol 0)  PASS"
expect_true "--out=c=FILE wrote FILE" test -s "$T/c.npy"
run_pto 2 run "${ADD[@]}" --dim M=4 --check --rtol=x && expect_out "--rtol x: expected a finite non-negative number"
run_pto 2 run "${ADD[@]}" --dim M=4 --check --atol && expect_out "--atol needs a number"

# Numbers: digits only, in range (strtoull took random:-1 as seed 2^64-1; strtoll took "+5").
run_pto 2 run "${ADD[@]}" --dim M=4 --in a=random:-1 && expect_out "--in a=random:-1: expected random or random:SEED (SEED 0 to 2^64-1)"
run_pto 2 run "${ADD[@]}" --dim M=4 --in a=random:18446744073709551616 && expect_out "expected random or random:SEED"
run_pto 0 run "${ADD[@]}" --dim M=4 --in a=random:18446744073709551615 --check && expect_out PASS
run_pto 2 run "${ADD[@]}" --dim M=+4 && expect_out "--dim M=+4: expected a non-negative integer"
run_pto 2 run "${ADD[@]}" --dim M=-0 && expect_out "--dim M=-0: expected a non-negative integer"

# A flag whose value was forgotten does not take the next option for its file, dir or name (it
# wrote a file named --check, a depfile named --no-cache); FLAG=VALUE or ./-x gives such a name.
mkdir "$T/nv" && cd "$T/nv" || exit 1
run_pto 2 run "${ADD[@]}" --dim M=4 --swimlane --check && expect_out "--swimlane needs a file name"
run_pto 2 run "${ADD[@]}" --dim M=4 --swimlane-records --check && expect_out "--swimlane-records needs a file name"
run_pto 2 run "${ADD[@]}" --dim M=4 --timeline-svg --check && expect_out "--timeline-svg needs a file name"
run_pto 2 run "${ADD[@]}" --dim M=4 --dump-args --trace && expect_out "--dump-args needs a directory"
run_pto 2 run "${ADD[@]}" --dim M=4 --entry --check && expect_out "--entry needs a value"
run_pto 2 compile "${ADD[@]}" -o w --depfile --no-cache && expect_out "--depfile needs a value"
run_pto 2 compile "${ADD[@]}" -o --force && expect_out "-o needs a directory"
run_pto 2 compile "${ADD[@]}" -o w -D --no-cache && expect_out "-D needs NAME=VALUE"
run_pto 2 compile "$EX/allreduce_mesh.ptir" -o w --devices -1 && expect_out "--devices -1:"
run_pto 2 trace "$T/none.log" --spread --json && expect_out "--spread needs stdev, minmax, both or none"
run_pto 2 cache gc --max-size --json && expect_out "--max-size needs a size"
run_pto 2 rebuild "$T/none" --orch-entry --help-me && expect_out "--orch-entry needs the entry's symbol name"
expect_true "no file named after an option" test -z "$(ls -A)"
run_pto 0 run "${ADD[@]}" --dim M=4 --swimlane=--check --timeline-svg ./-t.svg
expect_true "FLAG=VALUE and ./-x name such files" test -s ./--check -a -s ./-t.svg
cd - >/dev/null || exit 1

# --swimlane-records FILE's folder is made just before the run: a command refused before it (bad
# input found once the program is loaded) leaves no folder behind; a file where a folder of the
# path must be is refused at once.
mkdir "$T/rf" && cd "$T/rf" || exit 1
run_pto 2 run "$EX/chain.ptir" --dim M=4 --swimlane-records new/sub/r.json && expect_out "'alpha' (f32) has no value"
run_pto 2 bench "$EX/allreduce_mesh.ptir" --devices 2 --dim M=64 --swimlane-records hb/r.json &&
  expect_out "--swimlane-records of a host program: use 'pto run'"
run_pto 2 run "$EX/allreduce_mesh.ptir" --devices 2 --dim M=64 --swimlane-records hr/r.json --swimlane s.json &&
  expect_out "a host program runs on 2 chips"
expect_true "refused commands leave no records folder" test -z "$(ls -A)"
echo x >f
run_pto 2 run "$EX/chain.ptir" --dim M=4 --in alpha=1 --swimlane-records f/sub/r.json &&
  expect_out "--swimlane-records f/sub/r.json: f is not a folder"
run_pto 0 run "$EX/chain.ptir" --dim M=4 --in alpha=1 --swimlane-records ok/sub/r.json
expect_true "the folder is made for a run" test -s ok/sub/r.json -a -s ok/sub/deps.json
run_pto 0 bench "$EX/chain.ptir" --dim M=4 --in alpha=1 --rounds 2 --swimlane-records b/r.json
expect_true "and for a bench" test -s b/r.json
cd - >/dev/null || exit 1

# The same flag or NAME twice with different values: refused, naming both.
run_pto 2 compile "${ADD[@]}" -o "$T/w1" -o "$T/w2" && expect_out "-o given twice: '$T/w1' and '$T/w2'"
expect_true "a refused compile writes no dir" test ! -e "$T/w1" -a ! -e "$T/w2"
run_pto 0 compile "${ADD[@]}" -o "$T/w1" -o "$T/w1"
run_pto 2 compile "${ADD[@]}" -o "$T/w2" --entry main --entry other && expect_out "--entry given twice: 'main' and 'other'"
run_pto 0 compile "${ADD[@]}" -o "$T/w2" --entry main --entry @main
run_pto 2 compile "${ADD[@]}" -o "$T/w3" --entry= && expect_out "--entry needs a function name"
run_pto 2 compile "${ADD[@]}" -o "$T/w3" --depfile "$T/a.d" --depfile "$T/b.d" && expect_out "--depfile given twice"
run_pto 2 run "$EX/scale_rows.ptir" --dim M=4 --in alpha=1 -D act=1 -D act=0 &&
  expect_out "-D act: given twice, as act=1 and act=0"
run_pto 0 run "$EX/scale_rows.ptir" --dim M=4 --in alpha=1 -D act=1 -D act=1 --check && expect_out PASS
run_pto 2 run "${ADD[@]}" --dim M=4 --dim M=8 && expect_out "--dim M: given twice, as M=4 and M=8"
# The same value spelled two ways is one value (the numbers are compared, not the strings): it
# was refused as given twice.
run_pto 0 run "${ADD[@]}" --dim M=04 --dim M=4 --check && expect_out PASS
run_pto 0 run "$EX/chain.ptir" --dim M=4 --in alpha=1 --in alpha=1.0 --in alpha=1e0 --in alpha=0x1 --check &&
  expect_out PASS
run_pto 0 run "$EX/scale_rows.ptir" --dim M=4 --in alpha=1 -D act=1 -D act=01 --check && expect_out PASS
run_pto 2 run "$EX/chain.ptir" --dim M=4 --in alpha=1 --in alpha=1.5 &&
  expect_out "--in alpha: given twice, as alpha=1 and alpha=1.5"
run_pto 2 run "$EX/chain.ptir" --dim M=4 --in alpha=1 --in alpha=one && expect_out "--in alpha: given twice"
run_pto 0 run "${ADD[@]}" --dim M=4 --dim M=4 --check && expect_out "c: [4,128] f32"
run_pto 2 run "${ADD[@]}" --dim M=4 --in a=zeros --in a=ones && expect_out "--in a: given twice, as a=zeros and a=ones"
run_pto 2 run "${ADD[@]}" --dim M=4 --out c="$T/x.npy" --out c="$T/y.npy" && expect_out "--out c: given twice"
expect_true "a refused run writes no --out file" test ! -e "$T/x.npy" -a ! -e "$T/y.npy"
run_pto 2 run "${ADD[@]}" --dim M=4 --transport shm --transport mpi && expect_out "--transport given twice: 'shm' and 'mpi'"
run_pto 2 run "${ADD[@]}" --dim M=4 --transport && expect_out "--transport needs a value: the transports are"
run_pto 2 cache gc --max-size 1G --max-size 2G && expect_out "--max-size given twice: '1G' and '2G'"
run_pto 2 compile "${ADD[@]}" -o "$T/w3" --remote-cache http://a/ --remote-cache http://b/ &&
  expect_out "--remote-cache given twice"
run_pto 2 run "${ADD[@]}" --dim M=4 --swimlane "$T/s1.json" --swimlane "$T/s2.json" && expect_out "--swimlane given twice"
run_pto 2 run "${ADD[@]}" --dim M=4 --timeline-svg "$T/a.svg" --timeline-svg "$T/b.svg" && expect_out "--timeline-svg given twice"
run_pto 2 run "${ADD[@]}" --dim M=4 --dump-args "$T/d1" --dump-args "$T/d2" && expect_out "--dump-args given twice"
run_pto 2 run "${ADD[@]}" --dim M=4 --swimlane-records "$T/r1/r.json" --swimlane-records "$T/r2/r.json" &&
  expect_out "--swimlane-records given twice"
expect_true "refused runs write none of those" bash -c 'cd "$1" && for f in s1.json s2.json a.svg b.svg d1 d2 r1 r2; do [ ! -e "$f" ] || exit 1; done' _ "$T"
run_pto 2 run "${ADD[@]}" --dim M=4 --timeline --timeline-width 40 --timeline-width=50 &&
  expect_out "--timeline-width given twice: '40' and '50'"
run_pto 2 bench "${ADD[@]}" --dim M=4 --rounds 2 --rounds 3 && expect_out "--rounds given twice: '2' and '3'"
# --rtol, --atol and --tree [N] too (the last one won in silence); one value twice counts once.
run_pto 2 run "${ADD[@]}" --dim M=4 --check --rtol 0.1 --rtol=0.2 && expect_out "--rtol given twice: '0.1' and '0.2'"
run_pto 2 run "${ADD[@]}" --dim M=4 --check --atol 0 --atol 1 && expect_out "--atol given twice: '0' and '1'"
run_pto 0 run "${ADD[@]}" --dim M=4 --check --atol 0.1 --atol=1e-1 && expect_out "atol 0.1)  PASS"
run_pto 2 bench "${ADD[@]}" --dim M=4 --rounds 2 --tree 1 --tree 2 && expect_out "--tree given twice: '--tree 1' and '--tree 2'"
run_pto 2 bench "${ADD[@]}" --dim M=4 --rounds 2 --tree --tree=1 && expect_out "--tree given twice: '--tree' and '--tree 1'"
run_pto 2 trace "$T/none.log" --tree 0 --tree && expect_out "--tree given twice: '--tree 0' and '--tree'"
run_pto 0 bench "${ADD[@]}" --dim M=4 --rounds 2 --tree 1 --tree=1 && expect_out "mean of 2 launches"
run_pto 0 bench "${ADD[@]}" --dim M=4 --rounds 2 --rounds=2 --warmup 0 && expect_out "2 launches after 0 warmup"
# -O levels: the last one applies, as with a C compiler.
run_pto 0 run "${ADD[@]}" --dim M=4 -O0 -O3 --check && expect_out PASS

# A flag that qualifies another, given without it: refused, not ignored.
run_pto 2 run "${ADD[@]}" --dim M=4 --rtol 0.1 && expect_out "--rtol without --check"
run_pto 2 run "${ADD[@]}" --dim M=4 --atol 0.1 && expect_out "--atol without --check"
run_pto 2 run "${ADD[@]}" --dim M=4 --timeline-width 50 && expect_out "--timeline-width 50 without --timeline"
run_pto 2 run "${ADD[@]}" --dim M=4 --timeline-width 50 --timeline-svg "$T/t.svg" &&
  expect_out "--timeline-width 50 without --timeline"
expect_true "a refused run writes no --timeline-svg file" test ! -e "$T/t.svg"
run_pto 2 bench "${ADD[@]}" --dim M=4 --rounds 2 --timeline-width 50 && expect_out "--timeline-width 50 without --timeline"
"$PTO" run "${ADD[@]}" --dim M=64 --trace >/dev/null 2>"$T/run.log"
run_pto 2 trace "$T/run.log" --timeline-width 50 && expect_out "--timeline-width 50 without --timeline"
# --inv N alone: that launch's statistics (the command's synopsis lists it beside --tree, not under --timeline).
PTO_LOG_LEVEL=timing "$PTO" bench "${ADD[@]}" --dim M=64 --rounds 4 --warmup 0 >/dev/null 2>"$T/b4.log"
run_pto 0 trace "$T/b4.log" --warmup 0 && expect_out "4 launches of hid"
run_pto 0 trace "$T/b4.log" --inv 2 --tree && expect_out "1 launch of hid" && expect_out "after 0 warmup"
expect_out "chip.run"
run_pto 2 trace "$T/b4.log" --inv 999 && expect_out "no launch with inv=999"
run_pto 0 trace "$T/run.log" --timeline --timeline-width 40 --inv 1 && expect_out "timeline of launch inv=1"

# Flags that contradict each other: refused, not one of them dropped in silence.
run_pto 2 bench "${ADD[@]}" --dim M=4 --rounds 2 --json --timeline && expect_out "--timeline draws on stdout, which --json keeps JSON"
run_pto 2 trace "$T/run.log" --json --timeline && expect_out "--timeline draws on stdout, which --json keeps JSON"
run_pto 0 trace "$T/run.log" --json --timeline-svg "$T/j.svg" && expect_out '"samples"'
expect_true "--json --timeline-svg writes the SVG" test -s "$T/j.svg"
run_pto 2 compile "${ADD[@]}" -o "$T/w4" --no-cache --remote-cache http://127.0.0.1:1/c &&
  expect_out "--remote-cache http://127.0.0.1:1/c with --no-cache"
run_pto 2 run "${ADD[@]}" --dim M=4 --no-cache --remote-cache http://127.0.0.1:1/c && expect_out "with --no-cache"

# --spread is an option of its own in the synopsis (not nested under --tree): accepted alone.
run_pto 0 bench "${ADD[@]}" --dim M=4 --rounds 2 --spread both && expect_out "device wall"
run_pto 0 bench "${ADD[@]}" --dim M=4 --rounds 2 --spread both --tree 1 && expect_out "mean ±stdev [min..max]"
run_pto 0 trace "$T/run.log" --spread none && expect_out "device wall"
run_pto 2 trace "$T/run.log" --tree --spread none --spread both && expect_out "--spread given twice"

# --rank, --pid and --slot choose a dispatch of an L3 program or log; an L2 one has none.
run_pto 2 bench "${ADD[@]}" --dim M=4 --rounds 2 --rank 0 &&
  expect_out "--rank, --pid and --slot choose a dispatch of a host (L3) program; @main is an L2 program"
run_pto 2 bench "${ADD[@]}" --dim M=4 --rounds 2 --slot 0 && expect_out "@main is an L2 program"
run_pto 2 trace "$T/run.log" --pid 1 && expect_out "this log holds L2 launches"
# [--rank R | --pid P]: one of them, refused together before anything runs (the bench ran to its
# end before, and only then found the two disagree).
run_pto 2 bench "$EX/allreduce_mesh.ptir" --devices 2 --dim M=64 --rounds 2 --rank 1 --pid 5 &&
  expect_out "--rank 1 and --pid 5: a dispatch is chosen by its rank or by its chip's pid, not both"
expect_true "nothing ran" bash -c '! grep -q "per_round" <<<"$1"' _ "$OUT"
run_pto 2 trace "$T/run.log" --pid=7 --rank=0 && expect_out "--rank 0 and --pid 7: a dispatch is chosen"
run_pto 2 bench "${ADD[@]}" --dim M=4 --rounds 2 --tree -1 && expect_out "--tree -1: expected a depth (0 or more)"
# A depth past INT_MAX is named as one, not taken for a second program (or log).
run_pto 2 bench "${ADD[@]}" --dim M=4 --rounds 2 --tree 2147483648 && expect_out "--tree 2147483648: expected a depth (0 or more) up to 2147483647"
run_pto 2 trace --tree 99999999999 "$T/none.log" && expect_out "--tree 99999999999: expected a depth"

# --devices on run and bench of a work dir (it fixes the device set on compile, run and bench): the
# dir's own set is accepted, another one refused naming it (both were "compile options apply").
run_pto 0 compile "$EX/allreduce_mesh.ptir" --devices 2 -o "$T/ar"
run_pto 0 run "$T/ar" --devices 2 --dim M=64 --check && expect_out "2 devices (0,1)" && expect_out PASS
run_pto 0 run "$T/ar" --devices 0,1 --dim M=64 && expect_out "2 devices (0,1)"
run_pto 2 run "$T/ar" --devices 4 --dim M=64 &&
  expect_out "--devices 4: the work dir $T/ar was compiled for devices 0,1 (pto compile it again with --devices 4"
run_pto 2 bench "$T/ar" --devices 2,3 --dim M=64 --rounds 1 && expect_out "compiled for devices 0,1"
run_pto 2 run "$T/ar" --devices 2 -O3 --dim M=64 && expect_out "-O3: compile options apply to a .ptir program"
# --transport too: how a host program's chips talk (it was ignored for an L2 program).
run_pto 2 run "${ADD[@]}" --dim M=4 --transport shm &&
  expect_out "--transport shm: applies to programs with a host entry (their chips talk over it); @main is an L2 program"
run_pto 2 bench "${ADD[@]}" --dim M=4 --rounds 1 --transport=shm && expect_out "@main is an L2 program"
run_pto 0 run "$T/ar" --dim M=64 --transport shm && expect_out "2 devices (0,1)"
run_pto 2 run "$T/w1" --devices 2 --dim M=4 && expect_out "--devices 2: applies to programs with a host entry; $T/w1 holds an L2 program"

# "--" ends the options (pto COMMAND --help already stopped at it): a file named -x.ptir.
cp "$EX/add.ptir" "$T/-add.ptir"
cd "$T" || exit 1
run_pto 2 check -add.ptir && expect_out "unknown option '-add.ptir'"
run_pto 0 check -- -add.ptir
run_pto 0 fmt -- -add.ptir && expect_out "program add"
run_pto 0 run --dim M=4 --check -- -add.ptir && expect_out PASS
run_pto 0 compile -o "$T/dd" -- -add.ptir
run_pto 0 rebuild -- "$T/dd" && expect_out "up to date"
run_pto 2 run --dim M=4 -- -add.ptir --check && expect_out "one program at a time: '-add.ptir' and '--check'"
"$PTO" run "$EX/add.ptir" --dim M=4 --trace 2>-run.log >/dev/null
run_pto 0 trace -- -run.log && expect_out "1 launch of hid"
run_pto 0 build-id -- "$T/dd/kernels/kernels.so" && expect_out "build-id="
cd - >/dev/null || exit 1

# pto cache: --max-size 0 would mean "no limit" to the library, the opposite of what it says;
# a bad --remote-cache URL is bad usage (2) here as in compile.
run_pto 2 cache gc --max-size 0 && expect_out "--max-size 0: the size must be above 0"
run_pto 2 cache ls --remote --remote-cache ftp://x && expect_out "--remote-cache ftp://x: not an http://, https:// or redis:// URL"
run_pto 2 cache ls --remote --remote-cache redis://a --remote-cache=redis://b && expect_out "--remote-cache given twice: 'redis://a' and 'redis://b'"
run_pto 2 cache stats --remote-cache redis://a && expect_out "--remote-cache redis://a: only with ls --remote"
run_pto 2 cache ls --remote-cache redis://a && expect_out "only with ls --remote"
# PTO_REMOTE_CACHE that does not parse: bad input as --remote-cache is (exit 2, not 1), naming
# the variable; so is a redis:// URL given with a bad port.
PTO_REMOTE_CACHE=ftp://x run_pto 2 cache ls --remote &&
  expect_out "PTO_REMOTE_CACHE: remote cache 'ftp://x': not an http://, https:// or redis:// URL"
PTO_REMOTE_CACHE=redis://h:99999 run_pto 2 cache ls --remote && expect_out "PTO_REMOTE_CACHE: remote cache 'redis://h:99999': bad port"
run_pto 2 cache ls --remote --remote-cache redis://h:99999 && expect_out "--remote-cache: remote cache 'redis://h:99999': bad port"
# an http:// remote has no listing: bad input, exit 2 (not 1, a job that ran and failed)
run_pto 2 cache ls --remote --remote-cache http://127.0.0.1:9/pto &&
  expect_out "remote cache http://127.0.0.1:9/pto cannot list its entries: an HTTP store"

# pto rebuild --orch-entry NAME that the orchestration does not export: refused, the entry
# recorded before kept (the dir still runs), instead of "up to date" and a dir that cannot load.
run_pto 0 compile "${ADD[@]}" -o "$T/wd"
run_pto 2 rebuild "$T/wd" --orch-entry a --orch-entry=b && expect_out "--orch-entry given twice: 'a' and 'b'"
run_pto 2 rebuild "$T/wd" --orch-entry no_such_entry &&
  expect_out "--orch-entry no_such_entry refused, the entry symbol stays aicpu_orchestration_entry" &&
  expect_out "no 'no_such_entry' symbol"
expect_true "the manifest records no entry symbol" bash -c '! grep -q no_such_entry "$1/manifest.json"' _ "$T/wd"
run_pto 0 run "$T/wd" --dim M=4 --check && expect_out PASS
# A bad PTO_DIST_CHIPS is refused naming the variable, as PTO_DIST_JOIN's and
# PTO_DIST_TIMEOUT_MS's are (it said "unknown chips 'fibers'").
PTO_DIST_CHIPS=fibers run_pto 2 run "$EX/allreduce_mesh.ptir" --devices 2 --dim M=128 &&
  expect_out "PTO_DIST_CHIPS is 'fibers': expected processes"

# PTO_NO_REBUILD=yes rebuilt a stale work dir in silence (only 1 refused): now refused, naming
# it; 0 and 1 as before.
run_pto 0 compile "$EX/add.ptir" -o "$T/nr"
PTO_NO_REBUILD=yes run_pto 2 run "$T/nr" --dim M=4 && expect_out "PTO_NO_REBUILD is 'yes': expected 1"
PTO_NO_REBUILD=0 run_pto 0 run "$T/nr" --dim M=4
PTO_NO_REBUILD=1 run_pto 0 bench "$T/nr" --dim M=4 --rounds 1

# An output file named like the --dump-args DIR (or compile's -o DIR) that does not exist yet:
# refused before the run (exit 2, both named), nothing left behind. The program ran, the dump
# was written into DIR, and only then did --out/--swimlane/... fail on the folder.
cd "$T" || exit 1
run_pto 2 run "$EX/add.ptir" --dim M=4 --out c=dz1 --dump-args dz1 &&
  expect_out "--out dz1 and --dump-args dz1 are one file"
run_pto 2 run "$EX/add.ptir" --dim M=4 --dump-args=dz2 --swimlane dz2 &&
  expect_out "--swimlane dz2 and --dump-args dz2 are one file"
run_pto 2 run "$EX/add.ptir" --dim M=4 --timeline-svg dz3 --dump-args ./dz3 &&
  expect_out "--timeline-svg dz3 and --dump-args ./dz3 are one file"
run_pto 2 run "$EX/add.ptir" --dim M=4 --swimlane-records dz4 --dump-args dz4 &&
  expect_out "--dump-args dz4 and --swimlane-records dz4 are one file"
run_pto 2 bench "$EX/add.ptir" --dim M=4 --rounds 1 --dump-args dz5 --swimlane "$T/dz5" &&
  expect_out "are one file"
run_pto 2 compile "$EX/add.ptir" -o dz6 --depfile dz6 && expect_out "-o dz6 and --depfile dz6 are one file"
expect_true "nothing left behind" test "$(ls -d dz* 2>/dev/null)" = ""
# distinct names, and records beside the dump, still run
run_pto 0 run "$EX/add.ptir" --dim M=4 --dump-args dz7 --swimlane-records dz7/r.json --out c=dz7.npy
cd - >/dev/null || exit 1
finish
