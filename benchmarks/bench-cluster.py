#!/usr/bin/env python3
"""Benchmark: frames per second and per-frame latency of `facewire --role local` with 1 and 2 workers, next to
the detector alone in one process (`facewire detect`) on the same frames.

Usage: benchmarks/bench-cluster.py [--binary PATH] [--source PATH] [--frames N] [--model PATH]

Throughput is (lines - 1) / (time of the last line - time of the first line), read as the lines arrive, so process
start-up is not counted. Latency is each line's `timings.total`: capture (or, for `detect`, read) to output, ms.
Standard library only.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import lifeline  # noqa: E402  (benchmarks/lifeline.py; the script's folder is on sys.path)

lifeline.install()  # the processes this script starts end with it

parser = argparse.ArgumentParser()
parser.add_argument("--binary", default=".build/release/facewire")
cache = os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache"))
parser.add_argument("--source", default=os.path.join(cache, "facewire/demo/astronaut"))
parser.add_argument("--frames", type=int, default=600)
parser.add_argument("--model", default=None)
parser.add_argument("--runs", type=int, default=3, help="runs per configuration; the median run is reported")
args = parser.parse_args()


def run(command):
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    arrivals, latencies, processed = [], [], 0
    for line in process.stdout:
        arrivals.append(time.monotonic())
        frame = json.loads(line)
        if frame["status"] == "processed":
            processed += 1
            latencies.append(frame["timings"]["total"])
    if process.wait() != 0:
        sys.exit(f"failed: {' '.join(command)}")
    fps = (len(arrivals) - 1) / (arrivals[-1] - arrivals[0])
    latencies.sort()
    p99 = latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))]
    return {"fps": fps, "p50": statistics.median(latencies), "p99": p99, "lines": len(arrivals), "processed": processed}


model = ["--model", args.model] if args.model else []
common = ["--source", args.source, "--loop", "--frames", str(args.frames)] + model
configurations = [
    ("detector alone, 1 thread, one process", [args.binary, "detect"] + common),
    ("local, 1 worker (1 thread), --fps max", [args.binary, "--role", "local", "--workers", "1", "--fps", "max"] + common),
    ("local, 2 workers (1 thread each), --fps max", [args.binary, "--role", "local", "--workers", "2", "--fps", "max"] + common),
    ("local, 2 workers, real time (30 fps)", [args.binary, "--role", "local", "--workers", "2"] + common),
]
print(f"source {args.source}, {args.frames} frames, model {args.model or 'default'}, {args.runs} runs each (median run)")
print("| configuration | frames/s | latency p50 ms | latency p99 ms | processed / lines |")
print("|---|---|---|---|---|")
for name, command in configurations:
    results = sorted((run(command) for _ in range(args.runs)), key=lambda r: r["fps"])
    r = results[len(results) // 2]
    print(f"| {name} | {r['fps']:.1f} | {r['p50']:.1f} | {r['p99']:.1f} | {r['processed']} / {r['lines']} |", flush=True)
