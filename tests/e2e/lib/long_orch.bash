# Shared by orch_parts.sh and orch_long_slow.sh: a long orchestration, written in parts
# (docs/cli.md, pto compile), and the checks on it.
#
# long_orch_kernels: the program's first line and its two kernels, a one-tensor @inc and a
# two-tensor @axpy (bench/compile_orch.sh writes its programs with these too).
long_orch_kernels() {
  cat <<'PTIR'
program longorch

kernel @inc(inout %y: tensor[1,16] f32) -> (tensor[1,16] f32) {
  %t = tile.load(%y, [0, 0], [1, 16])
  %s = tile.adds(%t, 1.0)
  %y1 = tile.store(%s, [0, 0], %y)
  return %y1
}

kernel @axpy(%x: tensor[1,16] f32, inout %y: tensor[1,16] f32, %a: f32) -> (tensor[1,16] f32) {
  %tx = tile.load(%x, [0, 0], [1, 16])
  %ty = tile.load(%y, [0, 0], [1, 16])
  %s = tile.muls(%tx, %a)
  %r = tile.add(%s, %ty)
  %y1 = tile.store(%r, [0, 0], %y)
  return %y1
}
PTIR
}

# long_orch_calls N [PAD]: N straight-line calls, alternating @inc and @axpy (of the scalar %a) on
# 1x16 slices of %x and %y (64 rows), each line indented by two spaces after PAD.
long_orch_calls() {
  local n=$1 pad=${2:-} i r
  for ((i = 0; i < n; i++)); do
    r=$((i % 64))
    if ((i % 2 == 0)); then
      printf '%s  %%y%d = tensor.slice(%%y, [%d, 0], [1, 16])\n' "$pad" "$i" "$r"
      printf '%s  call @inc(%%y%d)\n' "$pad" "$i"
    else
      printf '%s  %%x%d = tensor.slice(%%x, [%d, 0], [1, 16])\n' "$pad" "$i" "$r"
      printf '%s  %%y%d = tensor.slice(%%y, [%d, 0], [1, 16])\n' "$pad" "$i" $(((r + 7) % 64))
      printf '%s  call @axpy(%%x%d, %%y%d, %%a)\n' "$pad" "$i" "$i"
    fi
  done
}

# long_orch_gen N: the program, N straight-line calls (long_orch_calls), then a loop of 3
# iterations of 151 calls, then calls using values from the top.
long_orch_gen() {
  local n=$1 i
  long_orch_kernels
  cat <<'PTIR'

kernel @addk(%x: tensor[1,16] f32, out %y: tensor[1,16] f32, %k: f32) -> (tensor[1,16] f32) {
  %t = tile.load(%x, [0, 0], [1, 16])
  %s = tile.adds(%t, %k)
  %y1 = tile.store(%s, [0, 0], %y)
  return %y1
}

orch @main(%x: tensor[64,16] f32, inout %y: tensor[64,16] f32, out %z: tensor[1,16] f32,
           %a: f32 = runtime, %d: index = runtime) -> (tensor[64,16] f32, tensor[1,16] f32) {
  %x0 = tensor.slice(%x, [0, 0], [1, 16])
  %k0 = %a * 2.0
PTIR
  long_orch_calls "$n"
  echo '  %fin = for %i in range(0, 3) iter(%cur: tensor[1,16] f32 = %x0) {'
  echo '    %n = tensor.create([1, 16], f32)'
  echo '    call @addk(%cur, %n, 1.0)'
  for ((i = 0; i < 150; i++)); do
    printf '    %%ys%d = tensor.slice(%%y, [mod(%%i * 5 + %d, 64), 0], [1, 16])\n' "$i" "$i"
    printf '    call @inc(%%ys%d)\n' "$i"
  done
  echo '    yield %n'
  echo '  }'
  echo '  %q = 64 / %d'
  echo '  %yq = tensor.slice(%y, [%q - 1, 0], [1, 16])'
  echo '  call @axpy(%x0, %yq, %k0)'
  echo '  call @addk(%fin, %z, %k0)'
  echo '  return %y, %z'
  echo '}'
}

# long_orch_check N MIN_PARTS: compiles the program of N calls, checks that the entry and the loop
# body are written in parts (at least MIN_PARTS, each closed), runs it twice with --check against
# the reference interpreter, and has the division in the last part fail the launch, the error
# naming its line.
long_orch_check() {
  local n=$1 min=$2
  long_orch_gen "$n" >"$T/long.ptir"
  run_pto 0 compile "$T/long.ptir" -o "$T/w"
  local cpp="$T/w/orchestration/main.cpp" opened closed line
  expect_true "the entry is written in parts" grep -q 'part 2 of this block' "$cpp"
  expect_true "the loop body is written in parts" \
    grep -q '^    \[&\]() __attribute__((noinline)) {' "$cpp"
  opened=$(grep -c '\[&\]() __attribute__((noinline)) {' "$cpp")
  closed=$(grep -c '}();  // part ' "$cpp")
  expect_true "every part is closed ($opened opened, $closed closed)" test "$opened" = "$closed"
  expect_true "at least $min parts ($opened)" test "$opened" -ge "$min"

  run_pto 0 run "$T/long.ptir" --in a=0.5 --in d=1 --check && expect_out PASS
  run_pto 0 run "$T/long.ptir" --in a=-3 --in d=2 --check && expect_out PASS
  line=$(grep -n '%q = 64 / %d' "$T/long.ptir" | cut -d: -f1)
  run_pto 1 run "$T/long.ptir" --in a=1 --in d=0
  expect_out "long.ptir:$line"
}
