#!/usr/bin/env bash
# The command line against docs/cli.md, third pass: a flag given twice with one value however
# spelled counts once (--devices 2 and 02 and 0,1; random:5 and random:05; a path and ./path,
# dir and dir/), where it was refused as two values; an output named '-' is refused (it is not
# stdout, where the report goes), where
# it wrote a file named '-'; 'pto --help NAME' prints NAME's help, as 'pto help NAME' does; a
# number fed to a tensor says so.
source "$(dirname "$0")/lib/common.bash"
export PTO_CACHE_DIR="$T/cache"
ADD=("$EX/add.ptir" --dim M=4)
MESH=("$EX/allreduce_mesh.ptir")
cd "$T"

# ---- one value however spelled ---------------------------------------------------------------
run_pto 0 compile "${MESH[@]}" --devices 2 --devices 02 -o "$T/m2"
run_pto 0 compile "${MESH[@]}" --devices 2 --devices 0,1 -o "$T/m2"
run_pto 0 compile "${MESH[@]}" --devices 0,1 --devices=2 -o "$T/m2"
run_pto 2 compile "${MESH[@]}" --devices 2 --devices 1,0 -o "$T/m2"
expect_out "--devices given twice: '2' and '1,0'"
run_pto 2 compile "${MESH[@]}" --devices 2 --devices 3 -o "$T/m2"
expect_out "--devices given twice: '2' and '3'"
run_pto 0 run "$T/m2" --dim M=64 --devices 2 --devices 0,1 --check && expect_out PASS
run_pto 0 run "${ADD[@]}" --in a=random:5 --in a=random:05 --out c="$T/c1.npy"
run_pto 0 run "${ADD[@]}" --in a=random:5 --out c="$T/c2.npy"
expect_true "random:05 is seed 5" cmp -s "$T/c1.npy" "$T/c2.npy"
run_pto 2 run "${ADD[@]}" --in a=random:5 --in a=random:6
expect_out "--in a: given twice, as a=random:5 and a=random:6"
run_pto 2 run "${ADD[@]}" --in a=random:5 --in a=random:0x5
expect_out "--in a: given twice, as a=random:5 and a=random:0x5"

# A path given twice, one file however spelled, counts once; two files are two values.
run_pto 0 compile "$EX/add.ptir" -o "$T/w9" -o "$T/w9/" -o "$T/./w9"
run_pto 0 run "${ADD[@]}" --out c=x.npy --out c=./x.npy --swimlane s.json --swimlane "$T/s.json" \
  --timeline-svg t.svg --timeline-svg ./t.svg --dump-args d --dump-args d/
expect_true "--out written" test -f "$T/x.npy"
run_pto 2 run "${ADD[@]}" --out c=x.npy --out c=y.npy
expect_out "--out c: given twice, as c=x.npy and c=y.npy"
run_pto 2 run "${ADD[@]}" --out c=x.npy --out c=./y.npy
run_pto 2 run "${ADD[@]}" --swimlane s.json --swimlane s2.json
expect_out "--swimlane given twice: 's.json' and 's2.json'"
run_pto 2 compile "$EX/add.ptir" -o "$T/w9" -o "$T/w10"
expect_out "-o given twice"

run_pto 0 cache gc --max-size 1G --max-size 1024M
run_pto 2 cache gc --max-size 1G --max-size 1000M
expect_out "--max-size given twice: '1G' and '1000M'"

# A number fed to a tensor is named as such, not as a missing file "1.5"; a file of that name
# is still read as one.
run_pto 2 run "${ADD[@]}" --in a=1.5
expect_out "--in a=1.5: 'a' is a tensor (f32), and a number feeds a runtime scalar: a tensor takes"
echo x >"$T/2.5"
run_pto 2 run "${ADD[@]}" --in a=2.5 && expect_out "2.5: not a .npy file"

# ---- an output named '-' ---------------------------------------------------------------------
for out in "--out c=-" "--swimlane -" "--timeline-svg -" "--dump-args -" "--out=c=-"; do
  # shellcheck disable=SC2086 # the flag and its value as two words
  run_pto 2 run "${ADD[@]}" $out
  expect_out "pto writes this output to a"
  expect_out "not to stdout (where its report goes); write ./- for one named '-'"
done
run_pto 2 compile "$EX/add.ptir" -o -
expect_out "-o -: pto writes this output to a folder, not to stdout"
run_pto 2 compile "$EX/add.ptir" -o "$T/wd" --depfile -
expect_out "--depfile -: pto writes this output to a file"
expect_true "no file or folder named '-'" test ! -e "$T/-"
run_pto 0 run "${ADD[@]}" --out c=./-
expect_true "./- writes a file named '-'" test -f "$T/-"

# ---- help ------------------------------------------------------------------------------------
for c in compile run bench cache build-id rebuild fmt check trace; do
  run_pto 0 --help "$c"
  expect_out "usage: pto $c"
  run_pto 0 help "$c"
  expect_out "usage: pto $c"
done
run_pto 0 help --help && expect_out "usage: pto <command>"
run_pto 2 --help frob && expect_out "'frob' is not a pto command"
finish
