#!/usr/bin/env python3
"""Times commands in new processes, interleaved: round r runs every contender once, in order,
so that a change in the machine's load (another tenant, a frequency step) falls on all of them
alike instead of on whichever ran during it, as with one block of runs per command.

  interleave.py [--runs N] [--warmup W] [--json FILE] -- NAME CMD [NAME CMD ...]

CMD is one shell-quoted string: leading VAR=value words set environment variables, a leading
'prepare:SHELL-COMMAND;' runs that command untimed before each run (e.g. to empty a cache). The
first contender is the peer: the table gives each one's min, median and mean wall time (from
posix_spawn to the exit status, stdout and stderr to /dev/null) and its ratio to the peer's min
and median, and the median of the round-by-round ratios (each round's pair ran back to back).
A command that exits non-zero stops the run (exit 1)."""
import json
import os
import shlex
import statistics
import subprocess
import sys
import time


def parse(argv):
    runs, warmup, out, i = 30, 3, None, 0
    while i < len(argv) and argv[i] != "--":
        if argv[i] == "--runs":
            runs = int(argv[i + 1]); i += 2
        elif argv[i] == "--warmup":
            warmup = int(argv[i + 1]); i += 2
        elif argv[i] == "--json":
            out = argv[i + 1]; i += 2
        else:
            sys.exit(f"interleave.py: unknown option {argv[i]} (see the top of the file)")
    rest = argv[i + 1:]
    if not rest or len(rest) % 2:
        sys.exit("interleave.py: give NAME CMD pairs after --")
    specs = []
    for name, cmd in zip(rest[::2], rest[1::2]):
        prepare = None
        if cmd.startswith("prepare:"):
            prepare, cmd = cmd[len("prepare:"):].split(";", 1)
        words = shlex.split(cmd)
        env = dict(os.environ)
        while words and "=" in words[0] and not words[0].startswith(("/", ".")):
            k, v = words.pop(0).split("=", 1)
            env[k] = v
        if not words:
            sys.exit(f"interleave.py: {name}: no command")
        path = words[0] if "/" in words[0] else shutil_which(words[0], env)
        specs.append({"name": name, "argv": words, "path": path, "env": env, "prepare": prepare})
    return runs, warmup, out, specs


def shutil_which(prog, env):
    for d in env.get("PATH", "").split(":"):
        p = os.path.join(d or ".", prog)
        if os.access(p, os.X_OK):
            return p
    sys.exit(f"interleave.py: {prog}: not found in PATH")


def run_once(s, devnull):
    if s["prepare"]:
        subprocess.run(s["prepare"], shell=True, check=True)
    t0 = time.perf_counter_ns()
    pid = os.posix_spawn(s["path"], s["argv"], s["env"],
                         file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1),
                                       (os.POSIX_SPAWN_DUP2, devnull, 2)])
    _, status = os.waitpid(pid, 0)
    t1 = time.perf_counter_ns()
    if status != 0:
        sys.exit(f"interleave.py: {s['name']} failed (wait status {status}): "
                 f"{shlex.join(s['argv'])}")
    return (t1 - t0) / 1e6


def main():
    runs, warmup, out, specs = parse(sys.argv[1:])
    devnull = os.open(os.devnull, os.O_WRONLY)
    times = {s["name"]: [] for s in specs}
    for r in range(warmup + runs):
        for s in specs:
            t = run_once(s, devnull)
            if r >= warmup:
                times[s["name"]].append(t)
    peer = specs[0]["name"]
    pt = times[peer]
    print(f"| command ({runs} interleaved rounds) | min ms | median ms | mean ms | "
          f"vs {peer}: min | median | round by round (median) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for s in specs:
        t = times[s["name"]]
        pairs = statistics.median(a / b for a, b in zip(t, pt))
        print(f"| {s['name']} | {min(t):.3f} | {statistics.median(t):.3f} | "
              f"{statistics.mean(t):.3f} | {min(t) / min(pt):.2f}x | "
              f"{statistics.median(t) / statistics.median(pt):.2f}x | {pairs:.2f}x |")
    if out:
        with open(out, "w") as f:
            json.dump({"runs": runs, "times_ms": times}, f)


if __name__ == "__main__":
    main()
