#!/usr/bin/env python3
"""Measures `kerf plan` as a user runs it: the whole process (start, parsing, planning, JSON
out), on inputs the project's generators write, over a range of sizes.

    scripts/bench-plan.py provision [--sizes 1000,5000,10000,20000,40000]
    scripts/bench-plan.py disrupt   [--sizes 200,500,1000,2000,4000]

Each size is generated with a different seed per run set (`--seeds`), written as YAML and
JSON, and planned `--runs` times per format (default 10); the table gives the median, min and
max wall time and the peak resident memory of each, and the growth from one size to the next
(time ratio over size ratio: 1.0 is linear). `--kerf` names the binary (default
target/cli/kerf), `--gen` the directory holding the gen-benchmark and gen-cluster examples
(default: the binary's examples/), `--fields bare|dump` the objects' fields, `--cpu N` pins
every run to one core with taskset.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

NOW = "2026-06-01T12:00:00Z"


def run_once(cmd, cpu):
    """One run: wall seconds and peak RSS in MiB."""
    if cpu is not None:
        cmd = ["taskset", "-c", str(cpu)] + cmd
    start = time.perf_counter()
    with open(os.devnull, "wb") as null:
        proc = subprocess.Popen(cmd, stdout=null, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        err = proc.stderr.read().decode(errors="replace")
        proc.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"{' '.join(cmd)} exited {code}:\n{err}")
    return wall, usage.ru_maxrss / 1024.0


def generate(args, size, seed, out):
    """Writes the inputs for one size; returns {format: (input file, extra plan args)}."""
    gen = args.gen
    if args.mode == "provision":
        subprocess.run([os.path.join(gen, "gen-benchmark"), str(size), out, str(seed),
                        args.requests, args.fields], check=True)
        cat = ["--catalog", os.path.join(out, "catalog.json")]
        return {f: (os.path.join(out, f"pods.{f}"), cat) for f in ("yaml", "json")}
    pods = size * args.pods_per_node
    subprocess.run([os.path.join(gen, "gen-cluster"), str(size), str(pods), out, args.mix,
                    str(seed), args.fields], check=True)
    extra = ["--mode", "disrupt", "--now", NOW]
    return {f: (os.path.join(out, f"cluster.{f}"), extra) for f in ("yaml", "json")}


def measure(args, size):
    rows = {}
    per_seed = max(1, args.runs // len(args.seeds))
    for seed in args.seeds:
        with tempfile.TemporaryDirectory() as out:
            inputs = generate(args, size, seed, out)
            for fmt, (path, extra) in inputs.items():
                cmd = [args.kerf, "plan", path, "-o", "json"] + extra
                run_once(cmd, args.cpu)  # warm the page cache
                for _ in range(per_seed):
                    rows.setdefault(fmt, []).append(run_once(cmd, args.cpu))
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("mode", choices=["provision", "disrupt"])
    p.add_argument("--sizes")
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--seeds", default="1,2")
    p.add_argument("--kerf", default="target/cli/kerf")
    p.add_argument("--gen")
    p.add_argument("--fields", default="dump", choices=["bare", "dump"])
    p.add_argument("--requests", default="ranges", choices=["sets", "ranges"])
    p.add_argument("--mix", default="mixed")
    p.add_argument("--pods-per-node", type=int, default=17)
    p.add_argument("--cpu", type=int)
    args = p.parse_args()
    default = "1000,5000,10000,20000,40000" if args.mode == "provision" else "200,500,1000,2000,4000"
    sizes = [int(s) for s in (args.sizes or default).split(",")]
    args.seeds = [int(s) for s in args.seeds.split(",")]
    args.gen = args.gen or os.path.join(os.path.dirname(args.kerf), "examples")
    unit = "pods" if args.mode == "provision" else "nodes"
    print(f"kerf plan --mode {args.mode}, {args.fields} fields, {args.runs} runs per format "
          f"(seeds {args.seeds}), wall ms median [min-max], peak RSS MiB")
    print(f"| {unit} | format | median ms | min | max | peak MiB | growth |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    last = {}
    for size in sizes:
        for fmt, runs in measure(args, size).items():
            walls = sorted(w for w, _ in runs)
            med = statistics.median(walls) * 1000
            rss = max(m for _, m in runs)
            growth = ""
            if fmt in last:
                prev_size, prev_med = last[fmt]
                growth = f"{(med / prev_med) / (size / prev_size):.2f}"
            last[fmt] = (size, med)
            print(f"| {size} | {fmt} | {med:.1f} | {walls[0] * 1000:.1f} | "
                  f"{walls[-1] * 1000:.1f} | {rss:.0f} | {growth} |", flush=True)


if __name__ == "__main__":
    main()
