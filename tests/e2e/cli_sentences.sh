#!/usr/bin/env bash
# The command line's contract (docs/cli.md), sentence by sentence, where no other test held a
# check: as a tester who has only the docs would write them. Every --help has an example, on
# stdout, and its usage lines name the synopsis's flags; a bad program is exit 2 at
# FILE:LINE:COL whichever command reads it; a compile that fails leaves no folder it made (-o
# DIR is created with its parents), nor does a failed run (--swimlane-records FILE's folder);
# --in's generated inputs (random in [-1, 1) for floats, -8..8 for signed integers, 0..16 for
# unsigned ones, 0 or 1 for bool; zeros, ones; unfed in tensors random; unfed out and inout
# ones zeros) and --check's line per output; the streams (the report and --check on stdout,
# [STRACE] lines on stderr only); pto trace prints the statistics pto bench prints (one JSON
# layout, with the types of its fields); build-id's hid is the first 8 bytes of the GNU
# Build-ID read little-endian. The runtime-only pto's part is cli_sentences_slow.sh (it builds
# one).
source "$(dirname "$0")/lib/common.bash"
export PTO_CACHE_DIR="$T/cache"
if ! command -v python3 >/dev/null; then
  echo "SKIP: python3 not found"
  exit 77
fi
cd "$T"

# py CODE: python3 with a plain .npy reader (struct: no numpy needed) and json imported.
cat >"$T/npyread.py" <<'EOF'
import ast, struct
FMT = {"f2": "e", "f4": "f", "f8": "d", "i1": "b", "i2": "h", "i4": "i", "i8": "q",
       "u1": "B", "u2": "H", "u4": "I", "u8": "Q", "b1": "B"}
def read(path):
    b = open(path, "rb").read()
    assert b[:6] == b"\x93NUMPY", path
    n = struct.unpack("<H", b[8:10])[0]
    h = ast.literal_eval(b[10:10 + n].decode("latin-1"))
    f = FMT[h["descr"][1:]]
    count = 1
    for s in h["shape"]:
        count *= s
    size = struct.calcsize(f)
    data = b[10 + n:10 + n + count * size]
    return h["descr"], h["shape"], list(struct.unpack("<%d%s" % (count, f), data))
EOF
py() { (cd "$T" && python3 -c "import json, npyread
$1"); }

# ---- every command's --help: exit 0, on stdout, with an example ------------------------------
for c in compile run bench cache build-id rebuild fmt check trace; do
  OUT=$("$PTO" "$c" --help 2>"$T/help.err")
  rc=$?
  expect_true "pto $c --help exits 0 ($rc)" test "$rc" = 0
  expect_out "usage: pto $c"
  expect_out "example"
  expect_true "pto $c --help writes nothing on stderr" test ! -s "$T/help.err"
done
OUT=$("$PTO" --help 2>"$T/help.err") && expect_out "usage: pto <command>" && expect_out "example"
expect_true "pto --help writes nothing on stderr" test ! -s "$T/help.err"

# The usage lines (the help's first paragraph) of bench, trace and cache name every flag and
# subcommand of their synopsis in docs/cli.md (bench's lacked --rank, --pid and --slot).
synopsis() { "$PTO" "$1" --help | sed '/^$/q'; }
OUT=$(synopsis bench)
for f in --rounds --warmup "--tree [N]" "--rank R | --pid P" "--slot S" --spread --json; do
  expect_out "$f"
done
OUT=$(synopsis trace)
for f in "--tree [N]" "--inv N" "--rank R | --pid P" "--slot S" --spread --json; do
  expect_out "$f"
done
OUT=$(synopsis cache)
for f in stats "ls [--remote" "show KEY" "rm KEY..." verify "gc [--max-size SIZE]" clear; do
  expect_out "$f"
done

# ---- a bad program: exit 2 naming FILE:LINE:COL, whichever command reads it -----------------
printf 'program bad\norch @main( {\n}\n' >"$T/bad.ptir"
for c in run bench check fmt; do
  run_pto 2 "$c" "$T/bad.ptir" && expect_out "bad.ptir:2:13: "
done
run_pto 2 compile "$T/bad.ptir" -o "$T/badwd" && expect_out "bad.ptir:2:13: "
expect_true "a program that does not parse makes no work dir" test ! -e "$T/badwd"

# ---- -o DIR is created with its parents; a compile that fails leaves none of them -------------
# The program is read after the command line: its errors (an unknown -D name or --entry, a value
# out of its dtype's range) come once DIR was made. The folders made for it are removed again,
# those that were there before stay.
mkdir "$T/there"
run_pto 2 compile "$EX/add.ptir" -o "$T/there/new/sub/wd" -D nope=1
expect_out "-D nope: @main has no parameter named 'nope'"
expect_true "no folder made for a refused compile stays" test ! -e "$T/there/new"
expect_true "the folder that was there stays" test -d "$T/there"
run_pto 2 compile "$EX/add.ptir" -o "$T/made/a/b/" --entry nope
expect_out "the program has no function named @nope"
expect_true "-o DIR/ (a trailing slash) too" test ! -e "$T/made"
run_pto 2 compile "$EX/scale_rows.ptir" -o "$T//made//x" -D act=99999999999
expect_out "out of range for i32"
expect_true "-o with doubled slashes too" test ! -e "$T/made"
# A folder something else put there meanwhile is not removed (only empty folders are).
run_pto 0 compile "$EX/add.ptir" -o "$T/made/ok/wd"
expect_true "a compile that succeeds makes DIR and its parents" test -f "$T/made/ok/wd/manifest.json"
run_pto 2 compile "$EX/add.ptir" -o "$T/made/ok/other/wd" --entry nope
expect_true "a refused compile beside a work dir leaves that one" test -f "$T/made/ok/wd/manifest.json"
expect_true "... and removes only what it made" test ! -e "$T/made/ok/other"

# --swimlane-records FILE's folder is created just before the run: a run that fails (exit 1, a
# launch error) and so writes no records leaves none of the folders it made, L2 or host program;
# --swimlane of the failed launch is still written (the tasks that ran), as docs/cli.md says.
sed 's/%row0 = %i \* 32$/%row0 = %i * 32 + 64/' "$EX/add.ptir" >"$T/oob.ptir"
expect_true "oob.ptir slices past its rows" grep -q '%i \* 32 + 64' "$T/oob.ptir"
run_pto 1 run "$T/oob.ptir" --dim M=8 --swimlane-records "$T/rec/a/r.json" --swimlane "$T/sw.json"
expect_out "outside the extent 8"
expect_true "a failed run leaves no records folder it made" test ! -e "$T/rec"
expect_true "... and writes the failed launch's swimlane" test -s "$T/sw.json"
run_pto 1 bench "$T/oob.ptir" --dim M=8 --rounds 1 --swimlane-records "$T/rec/b/r.json"
expect_true "a failed bench leaves no records folder it made" test ! -e "$T/rec"
mkdir "$T/rec"
run_pto 1 run "$EX/allreduce_mesh.ptir" --devices 2 --dim M=8 --swimlane-records "$T/rec/c/r.json"
expect_out "outside the extent 8"
expect_true "a failed host program leaves no records folder it made, and the one there" \
  test -d "$T/rec" -a ! -e "$T/rec/c"
rmdir "$T/rec"

# ---- --in SOURCE: generated inputs, and --check's line per output -----------------------------
DTYPES=(i8 u8 i32 u16 bool f32 f16)
{
  echo "program copies"
  for d in "${DTYPES[@]}"; do
    cat <<EOF
kernel @k_$d(%x: tensor[8,32] $d, out %y: tensor[8,32] $d) -> (tensor[8,32] $d) {
  %t = tile.load(%x, [0, 0], [8, 32])
  %y1 = tile.store(%t, [0, 0], %y)
  return %y1
}
EOF
  done
  params="" results="" calls="" rets=""
  for d in "${DTYPES[@]}"; do
    params+="${params:+, }%x_$d: tensor[8,32] $d, out %y_$d: tensor[8,32] $d"
    results+="${results:+, }tensor[8,32] $d"
    calls+="  call @k_$d(%x_$d, %y_$d)"$'\n'
    rets+="${rets:+, }%y_$d"
  done
  printf 'orch @main(%s) -> (%s) {\n%s  return %s\n}\n' "$params" "$results" "$calls" "$rets"
} >"$T/copies.ptir"
outs() { for d in "${DTYPES[@]}"; do echo "--out y_$d=$T/$1_$d.npy"; done; }
feed() { for d in "${DTYPES[@]}"; do echo "--in x_$d=$1"; done; }
# shellcheck disable=SC2046 # one word per flag and value
run_pto 0 run "$T/copies.ptir" $(feed random:11) $(outs rnd) --check
for d in "${DTYPES[@]}"; do
  expect_out "y_$d: [8,32] $d  max abs err 0  max rel err 0  ("
done
expect_true "--check ends with one PASS line" test "$(tail -n 1 <<<"$OUT")" = PASS
expect_true "random: -8..8 for signed integers, 0..16 for unsigned, 0/1 for bool, [-1, 1) for floats" py "
ranges = {'i8': (-8, 8), 'i32': (-8, 8), 'u8': (0, 16), 'u16': (0, 16), 'bool': (0, 1),
          'f32': (-1, 1), 'f16': (-1, 1)}
for d, (lo, hi) in ranges.items():
    descr, shape, v = npyread.read('rnd_%s.npy' % d)
    assert shape == (8, 32), (d, shape)
    assert min(v) >= lo and max(v) <= hi, (d, min(v), max(v))
    assert d[0] != 'f' or max(v) < 1, (d, max(v))
    assert len(set(v)) > 1 and (lo == 0 or min(v) < 0 < max(v)), (d, sorted(set(v))[:8])"
# shellcheck disable=SC2046
run_pto 0 run "$T/copies.ptir" $(outs unfed) --check && expect_out PASS
expect_true "unfed inputs are random too (not zeros)" py "
for d in ('i8', 'u16', 'f32'):
    assert len(set(npyread.read('unfed_%s.npy' % d)[2])) > 1, d"
for src in zeros ones; do
  # shellcheck disable=SC2046
  run_pto 0 run "$T/copies.ptir" $(feed $src) $(outs $src)
done
expect_true "zeros and ones" py "
for d in ('i8', 'u8', 'i32', 'u16', 'bool', 'f32', 'f16'):
    assert set(npyread.read('zeros_%s.npy' % d)[2]) == {0}, d
    assert set(npyread.read('ones_%s.npy' % d)[2]) == {1}, d"
# Outputs not fed start as zeros (y, which the kernel writes, is checked: zeros where it does not
# write); so does an unfed inout (an output too), as docs/cli.md says. The kernel does not write
# z, so it comes back as it went in.
cat >"$T/keep.ptir" <<'EOF'
program keep
kernel @k(%x: tensor[4,32] f32, out %y: tensor[4,32] f32) -> (tensor[4,32] f32) {
  %t = tile.load(%x, [0, 0], [4, 32])
  %y1 = tile.store(%t, [0, 0], %y)
  return %y1
}
orch @main(%x: tensor[4,32] f32, out %y: tensor[4,32] f32, inout %z: tensor[4,32] f32)
    -> (tensor[4,32] f32, tensor[4,32] f32) {
  call @k(%x, %y)
  return %y, %z
}
EOF
run_pto 0 run "$T/keep.ptir" --in x=ones --out z="$T/z0.npy" --check && expect_out PASS
run_pto 0 run "$T/keep.ptir" --in x=ones --in z=ones --out z="$T/z1.npy"
expect_true "an unfed inout starts as zeros, a fed one as fed" py "
assert set(npyread.read('z0.npy')[2]) == {0}
assert set(npyread.read('z1.npy')[2]) == {1}"

# ---- streams: the report and --check on stdout, [STRACE] lines on stderr alone -----------------
ADD=("$EX/add.ptir" --dim M=64)
"$PTO" run "${ADD[@]}" --trace --check >"$T/run.out" 2>"$T/run.log"
expect_true "pto run --trace --check exits 0" test $? = 0
expect_true "the report is on stdout" grep -q "^ran @main on sim" "$T/run.out"
expect_true "--check's verdict is on stdout" grep -qx PASS "$T/run.out"
expect_true "no [STRACE] line on stdout" test "$(grep -c STRACE "$T/run.out")" = 0
expect_true "the [STRACE] v=1 lines are on stderr" grep -q '^\[STRACE\] v=1 pid=' "$T/run.log"
expect_true "only they (and [STASK] lines) are" \
  test "$(grep -cv '^\[STRACE\] v=1 \|^\[STASK\] v=1 ' "$T/run.log")" = 0

# ---- pto trace prints the statistics pto bench prints: one JSON layout -----------------------
"$PTO" trace "$T/run.log" --json >"$T/trace.json" 2>"$T/trace.err"
expect_true "pto trace --json exits 0, nothing on stderr" test $? = 0 -a ! -s "$T/trace.err"
"$PTO" bench "${ADD[@]}" --rounds 3 --warmup 1 --json >"$T/bench.json" 2>"$T/bench.err"
expect_true "pto bench --json exits 0, nothing on stderr" test $? = 0 -a ! -s "$T/bench.err"
expect_true "bench and trace --json: the same fields, of the documented types" py "
b, t = json.load(open('bench.json')), json.load(open('trace.json'))
assert sorted(b) == sorted(t), (sorted(b), sorted(t))
num = (int, float)
for d, rounds in ((b, 3), (t, 1)):
    assert d['rounds'] == rounds and isinstance(d['warmup'], int), d['rounds']
    assert isinstance(d['hid'], str) and int(d['hid'], 16) > 0
    assert d['unit'] == 'us' and d['ntasks'] == 2 and d['ncores'] > 0, (d['ntasks'], d['ncores'])
    metrics = ['busy', 'device_wall', 'effective', 'host_wall']
    assert sorted(d['samples']) == metrics and sorted(d['summary']) == metrics, d['summary']
    for m in metrics:
        assert len(d['samples'][m]) == rounds and all(isinstance(x, num) for x in d['samples'][m])
        s = d['summary'][m]
        assert sorted(s) == ['count', 'max', 'mean', 'median', 'min', 'stdev'], sorted(s)
        assert s['count'] == rounds and s['min'] <= s['median'] <= s['max'], (m, s)
    assert isinstance(d['mean_tree'], list) and d['mean_tree'][0]['name'] == 'chip.run'
assert b['hid'] == t['hid'], (b['hid'], t['hid'])"
"$PTO" cache stats --json >"$T/stats.json"
expect_true "cache stats --json: counters are integers" py "
d = json.load(open('stats.json'))
for k in ('entries', 'bytes', 'hits', 'misses', 'stores', 'evictions', 'corruptions', 'races',
          'uncached', 'remote_hits', 'remote_misses', 'remote_stores', 'remote_errors',
          'remote_refusals'):
    assert isinstance(d[k], int) and d[k] >= 0, k
assert d['entries'] >= 3 and isinstance(d['dir'], str)"

# A PTO_CACHE_MAX_SIZE that is not a size warns, naming the variable, and is not used; stats
# then does not tell the user to set the variable they did set.
OUT=$(PTO_CACHE_MAX_SIZE=lots "$PTO" cache stats 2>&1)
expect_out "PTO_CACHE_MAX_SIZE: size 'lots': expected a number of bytes"
expect_out "size limit       none (PTO_CACHE_MAX_SIZE is not a size)"
OUT=$(PTO_CACHE_MAX_SIZE= "$PTO" cache stats 2>&1) && expect_out "none (set PTO_CACHE_MAX_SIZE)"

# A bad PTO_REMOTE_CACHE warns, naming the variable, and is not used by pto run, bench and
# compile: at once, also for a program the local cache holds (which never asks the remote), and
# once (the cache does not warn again on a miss); the URL's password is not printed. A work dir
# reads no cache: no word.
for c in "run ${ADD[*]}" "bench ${ADD[*]} --rounds 1" "compile $EX/add.ptir -o $T/rc"; do
  # shellcheck disable=SC2086 # the command and its arguments as words
  OUT=$(PTO_REMOTE_CACHE=ftp://u:hunter2@h "$PTO" $c 2>&1 >/dev/null)
  expect_true "a bad PTO_REMOTE_CACHE warns once, naming the variable: $c" test "$OUT" = \
    "pto: warning: PTO_REMOTE_CACHE: remote cache 'ftp://u:***@h': not an http://, https:// or redis:// URL; not using the remote cache"
done
OUT=$(PTO_CACHE_DIR="$T/cache-rc" PTO_REMOTE_CACHE=ftp://h "$PTO" run "${ADD[@]}" 2>&1 >/dev/null)
expect_true "on a miss too, once" test "$(grep -c PTO_REMOTE_CACHE <<<"$OUT")" = 1
OUT=$(PTO_REMOTE_CACHE=ftp://h "$PTO" run "$T/rc" --dim M=4 2>&1 >/dev/null)
expect_true "a work dir: no warning" test -z "$OUT"

# ---- build-id: hid is the Build-ID's first 8 bytes read little-endian, no padding ------------
run_pto 0 compile "$EX/chain.ptir" -o "$T/chain"
run_pto 0 build-id "$T/chain/kernels/kernels.so" "$T/chain/orchestration/main.so"
expect_true "hid = the first 8 bytes of the build-id, little-endian, lowercase, unpadded" py "
import re
lines = '''$OUT'''.splitlines()
assert len(lines) == 2, lines
for line in lines:
    m = re.fullmatch(r'(.*): hid=([0-9a-f]+) build-id=([0-9a-f]+)', line)
    assert m, line
    hid, bid = m.group(2), m.group(3)
    assert len(bid) == 40, bid  # GNU ld's default: a 160-bit SHA-1
    want = '%x' % int.from_bytes(bytes.fromhex(bid[:16]), 'little')
    assert hid == want, (hid, want)"
if command -v readelf >/dev/null; then
  bid=$(LC_ALL=C readelf -n "$T/chain/kernels/kernels.so" | sed -n 's/^ *Build ID: //p')
  expect_out "kernels.so: hid=" && expect_out "build-id=$bid"
fi
# A file without a Build-ID note: hid is FNV-1a-64 of its bytes, build-id=none.
if command -v cc >/dev/null; then
  echo 'int f(void) { return 1; }' >"$T/nonote.c"
  cc -shared -fPIC -Wl,--build-id=none -o "$T/nonote.so" "$T/nonote.c"
  run_pto 0 build-id "$T/nonote.so" && expect_out "nonote.so: hid=" && expect_out " build-id=none"
  expect_true "no note: hid is FNV-1a-64 of the file's bytes" py "
h = 0xcbf29ce484222325
for b in open('nonote.so', 'rb').read():
    h = ((h ^ b) * 0x100000001b3) & (2 ** 64 - 1)
out = '''$OUT'''.strip()
assert out.endswith(': hid=%x build-id=none' % h), (out, '%x' % h)"
fi
finish
