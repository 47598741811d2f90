#!/usr/bin/env bash
# A .ptir that declares very many names costs memory and time linear in them: 100,000 dynamic
# symbols, functions, parameters of one kernel, and calls. The builder grew each of those arrays
# one element at a time in its arena (which never frees: 10,000 parameters took 3.2 GB, 100,000
# dynamic symbols 11 GB) and found each name by a linear scan (100,000 parameters: minutes).
# Every case runs in 1 GB of address space under a deadline far above what it needs; a name
# declared twice is still refused, naming it. ir/builder.c. Then names too long for a file name.
source "$(dirname "$0")/lib/common.bash"
/usr/bin/python3 - "$T" <<'PY'
import sys
t, n = sys.argv[1], 100000
kern = "kernel @k%d(%%a: tensor[4] f32) {\n  return\n}\n"
main = "orch @main(%%a: tensor[4] f32) {\n%s  return\n}\n"
def write(name, text):
    open("%s/%s.ptir" % (t, name), "w").write("program p\n" + text)
syms = ", ".join("D%d" % i for i in range(n))
write("syms", "dynamic " + syms + "\n" + main % "")
write("syms_dup", "dynamic " + syms + ", D777\n" + main % "")
kernels = "".join(kern % i for i in range(n))
write("funcs", kernels + main % "")
write("funcs_dup", kernels + kern % 4242 + main % "")
params = ", ".join("%%a%d: tensor[4] f32" % i for i in range(n))
write("params", "kernel @k(%s) {\n  return\n}\n" % params + main % "")
write("params_dup", "kernel @k(%s, %%a99999: tensor[4] f32) {\n  return\n}\n" % params + main % "")
write("calls", kernels + main % "".join("  call @k%d(%%a)\n" % i for i in range(n)))
PY
# check FILE STATUS: pto check FILE in 1 GB (not under a sanitizer, whose shadow memory needs
# more), bounded by a deadline.
check() {
  if [ -z "$PTO_SANFLAGS" ]; then
    run_status "$2" timeout 300 bash -c "ulimit -v 1000000 && exec \"\$0\" \"\$@\"" "$PTO" check "$1"
  else
    run_status "$2" timeout 300 "$PTO" check "$1"
  fi
}
for f in syms funcs params calls; do
  check "$T/$f.ptir" 0
done
check "$T/syms_dup.ptir" 2 && expect_out "dynamic symbol D777 is declared twice"
check "$T/funcs_dup.ptir" 2 && expect_out "funcs_dup.ptir:300002:8: @k4242 is already defined at 12728:1"
check "$T/params_dup.ptir" 2 && expect_out "parameter %a99999 is declared twice in @k"

# Names longer than a file name: two kernels whose 1,000-character names share their first 999
# compile, load and run. Their files were named after them whole ("File name too long"), and the
# lowering cut the function's symbol to 299 bytes, so the loader, which looks up the manifest's
# "pto_kernel_<name>", found no kernel. compiler/driver.c, compiler/lower_kernel.c.
export PTO_CACHE_DIR="$T/cache"
/usr/bin/python3 - "$EX/add.ptir" "$T/long.ptir" <<'PY'
import sys, re
src = open(sys.argv[1]).read()
k = re.search(r"kernel @add_block.*?\n}\n", src, re.S).group(0)
a, b = "k" + "x" * 998 + "a", "k" + "x" * 998 + "b"
open(sys.argv[2], "w").write(src.replace(k, k.replace("add_block", a) + k.replace("add_block", b))
                             .replace("call @add_block", "call @" + b))
PY
run_pto 0 run "$T/long.ptir" --dim M=40 --check && expect_out PASS
run_pto 0 compile "$T/long.ptir" -o "$T/wlong"
expect_true "each kernel has its own files" test "$(ls "$T/wlong/kernels" | grep -c '\.ll$')" = 2
run_pto 0 run "$T/wlong" --dim M=40 --check && expect_out PASS
finish
