#!/usr/bin/env python3
"""Shards (issue 29, SPEC 19): the ordered results per second of N collectors that each own a share of the streams,
against one collector taking the same load, in one run; and one tail following every shard.

Usage: benchmarks/bench-shards.py [--binary PATH] [--shards 4] [--streams-per-shard 50] [--frames 1500]
                                  [--threads 4] [--faces 2] [--smoke] [--keep-logs]

Two runs, the same load: `--shards` generators (`facewire bench collector-load --shard K/N`, a test tool that plays one
fake capture node per stream and `--threads` fake worker threads sending valid pre-encoded results, closed-loop),
generator K playing the first `--streams-per-shard` streams of load-00000, load-00001, ... that shard K owns.
  * one collector: every generator sends to it;
  * N shards: N collectors (`--shard K/N`), generator K sends to collector K.
In both, one tail follows everything (`--collector 'c0;c1;...'` in the second: the shards' list, as every node takes it)
and writes JSON Lines to a file.

Figures: "ordered results/s" is every result of every stream over the wall time from the first generator's start to
the last generator's end (a generator ends once its own subscriber saw each of its streams' summaries: the collectors'
work is done). CPU is utime + stime from /proc, per result, summed over the collectors. Checks: every collector
finished each of its streams with every frame processed; each stream was finished by the collector that owns it by an
independent implementation of SPEC 19.1 (below); the tail printed each stream in order, every face tracked (with
--smoke, every frame of every stream).

The machine has 2 cores: N collectors, N generators and a tail share them, so the sharded figure shows what the
shards cost and that they add up, not the N-fold capacity N hosts would give. Standard library only.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import lifeline  # noqa: E402  (benchmarks/lifeline.py; the script's folder is on sys.path)

lifeline.install()  # the processes this script starts end with it

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "compare"))
sys.path.insert(0, HERE)
import measure  # noqa: E402  (the benchmarks' shared process helpers)
from ports import free_ports  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--binary", default=".build/release/facewire")
parser.add_argument("--shards", type=int, default=4)
parser.add_argument("--streams-per-shard", type=int, default=50)
parser.add_argument("--frames", type=int, default=1500, help="results per stream")
parser.add_argument("--threads", type=int, default=4, help="fake worker threads per generator")
parser.add_argument("--faces", type=int, default=2)
parser.add_argument("--keep-logs", action="store_true")
parser.add_argument("--smoke", action="store_true", help="a tiny run (2 shards) that fails on any problem")
args = parser.parse_args()
if args.smoke:
    args.shards, args.streams_per_shard, args.frames, args.threads = 2, 3, 200, 2
# As bench-collector.py: on a loaded machine a fake worker thread can stall past the default 1 s wait; the smoke run
# waits 30 s, so only a real loss or reordering fails it.
SLOW = ["--max-delay", "30000"] if args.smoke else []
M64 = (1 << 64) - 1


def fnv1a64(text):
    h = 0xCBF29CE484222325
    for byte in text.encode():
        h = ((h ^ byte) * 0x100000001B3) & M64
    return h


def mix(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def owner(stream, shards):
    """SPEC 19.1, written from its text: the k with the highest mix(fnv1a64(S) ^ k * 0x9E3779B97F4A7C15), ties low."""
    h = fnv1a64(stream)
    weights = [mix(h ^ ((k * 0x9E3779B97F4A7C15) & M64)) for k in range(shards)]
    return weights.index(max(weights))


def run(logs, name, collectors):
    """One run with `collectors` collectors (1, or one per shard); generator K sends to collector K mod `collectors`."""
    ports = free_ports(2 * collectors)
    control = [f"tcp://127.0.0.1:{ports[2 * i]}" for i in range(collectors)]
    publish = [f"tcp://127.0.0.1:{ports[2 * i + 1]}" for i in range(collectors)]
    collector_logs = [os.path.join(logs, f"{name}-collector-{i}.stderr") for i in range(collectors)]
    tail_out, tail_log = os.path.join(logs, f"{name}-tail.jsonl"), os.path.join(logs, f"{name}-tail.stderr")
    processes, collector_processes = [], []
    try:
        for i in range(collectors):
            shard = ["--shard", f"{i}/{collectors}"] if collectors > 1 else []
            p = subprocess.Popen(
                [args.binary, "--role", "collector", "--bind", control[i], "--publish", publish[i], "--log-format", "json",
                 "--max-streams", "4096", *shard, *SLOW],
                stdout=subprocess.DEVNULL, stderr=open(collector_logs[i], "w"))
            processes.append(p)
            collector_processes.append(p)
        for path, p in zip(collector_logs, collector_processes):
            measure.wait_for_line(path, "collector listening", p)
        tail = subprocess.Popen(
            [args.binary, "--role", "tail", "--collector", ";".join(control), "--events", "--log-level", "debug",
             "--log-format", "json"], stdout=open(tail_out, "w"), stderr=open(tail_log, "w"))
        processes.append(tail)
        # One collector: the tail subscribes to it; several: to each one that answers its hello.
        said = "tail subscribed" if collectors == 1 else "following a collector's results"
        deadline = time.monotonic() + 60
        while open(tail_log).read().count(said) < collectors:
            if time.monotonic() > deadline or tail.poll() is not None:
                raise RuntimeError(f"the tail did not follow every collector:\n{measure.tail(tail_log)}")
            time.sleep(0.05)
        cpu0 = [measure.cpu_seconds(p.pid) for p in collector_processes]
        generators = []
        started = time.monotonic()
        for k in range(args.shards):
            target = k % collectors
            generators.append(subprocess.Popen(
                [args.binary, "bench", "collector-load", "--collector", control[target], "--publish", publish[target],
                 "--shard", f"{k}/{args.shards}", "--streams", str(args.streams_per_shard), "--threads", str(args.threads),
                 "--frames", str(args.frames), "--faces", str(args.faces)],
                stdout=subprocess.PIPE, text=True))
        processes.extend(generators)
        for g in generators:
            if json.loads(g.stdout.readline()).get("event") != "sending":
                raise RuntimeError("a load generator did not start")
        reports = []
        for g in generators:
            reports.append(json.loads(g.stdout.readline() or "{}"))
            if g.wait(timeout=900) != 0:
                raise RuntimeError("a load generator failed")
        seconds = time.monotonic() - started
        cpu = sum(measure.cpu_seconds(p.pid) - c for p, c in zip(collector_processes, cpu0))
        # The tail may still be writing what it has queued: wait until its file stops growing.
        size, still = -1, time.monotonic()
        while time.monotonic() - still < 1.5:
            time.sleep(0.1)
            now = os.path.getsize(tail_out)
            if now != size:
                size, still = now, time.monotonic()
    finally:
        measure.stop(list(reversed(processes)), seconds=5)
    return analyse(collector_logs, tail_out, reports, seconds, cpu, collectors)


def analyse(collector_logs, tail_out, reports, seconds, cpu, collectors):
    streams, frames = args.shards * args.streams_per_shard, args.frames
    results = streams * frames
    problems, dropped = [], 0
    finished_by = {}
    for index, path in enumerate(collector_logs):
        with open(path) as f:
            for line in f:
                if '"stream finished"' not in line:
                    continue
                entry = json.loads(line)
                stream = entry["stream"]
                # Every frame accounted: processed, or dropped with a reason (a fake worker thread starved past the
                # collector's --max-delay drops its frame as timeout; --smoke waits long enough that none does).
                if int(entry["processed"]) + int(entry["dropped"]) != frames or (args.smoke and int(entry["dropped"])):
                    problems.append(f"{stream} finished at collector {index} incomplete: {entry}")
                dropped += int(entry["dropped"])
                finished_by.setdefault(stream, []).append(index)
    if len(finished_by) != streams:
        problems.append(f"{len(finished_by)} of {streams} streams finished")
    if collectors > 1:
        misplaced = [s for s, at in finished_by.items() if at != [owner(s, collectors)]]
        if misplaced:
            problems.append(f"{len(misplaced)} streams finished elsewhere than at their owner, e.g. {misplaced[:3]}")
    if args.smoke and sum(r.get("published", 0) for r in reports) != results:
        problems.append(f"the generators saw {sum(r.get('published', 0) for r in reports)} of {results} published")
    last, printed, untracked = {}, {}, 0
    with open(tail_out) as f:
        for text in f:
            line = json.loads(text)
            if "status" not in line:
                continue
            stream = line["stream"]
            if line["seq"] <= last.get(stream, -1):
                problems.append(f"{stream}: seq {line['seq']} after {last[stream]}")
            last[stream] = line["seq"]
            printed[stream] = printed.get(stream, 0) + 1
            if line["status"] != "processed" and (args.smoke or not line.get("reason")):
                problems.append(f"{stream} {line['seq']}: {line['status']} {line.get('reason')}")
            untracked += sum(1 for face in line["faces"] if "trackingID" not in face)
    if untracked:
        problems.append(f"{untracked} faces without a tracking ID")
    if len(printed) != streams:
        problems.append(f"the tail printed {len(printed)} of {streams} streams")
    lines = sum(printed.values())
    if args.smoke and lines != results:
        problems.append(f"the tail printed {lines} of {results} frames")
    return {"rate": results / seconds, "seconds": seconds, "cpu": 1000 * cpu / results, "lines": lines, "results": results,
            "streams_printed": len(printed), "generator_rates": sum(r.get("publishedRate", 0) for r in reports),
            "dropped": dropped, "problems": problems}


def main():
    if not os.path.isfile(args.binary):
        sys.exit(f"missing {args.binary} (swift build -c release --product facewire)")
    logs = tempfile.mkdtemp(prefix="bench-shards-")
    failures = 0
    streams = args.shards * args.streams_per_shard
    try:
        print(f"{args.shards} generators × {args.streams_per_shard} streams × {args.frames} results ({streams} streams, "
              f"{streams * args.frames:,} results), {args.threads} fake worker threads each, {args.faces} faces per result; "
              f"{os.cpu_count()} cores")
        print()
        print("| collectors | ordered results/s (all streams) | vs one collector | collectors' CPU ms/result | sum of generators' published/s "
              "| dropped (timeout) | streams the one tail printed | tail lines / results | in order, accounted, tracked, at the owner |")
        print("|---|---|---|---|---|---|---|---|---|")
        baseline = None
        for name, collectors in (("one", 1), ("shards", args.shards)):
            r = run(logs, name, collectors)
            baseline = baseline or r["rate"]
            failures += bool(r["problems"])
            verdict = "yes" if not r["problems"] else "NO: " + "; ".join(r["problems"][:3])
            label = "1" if collectors == 1 else f"{collectors} shards"
            print(f"| {label} | {r['rate']:,.0f} | {r['rate'] / baseline:.2f}× | {r['cpu']:.4f} | {r['generator_rates']:,.0f} "
                  f"| {r['dropped']:,} | {r['streams_printed']} of {streams} | {r['lines']:,} / {r['results']:,} | {verdict} |", flush=True)
    finally:
        if args.keep_logs:
            print(f"\nlogs: {logs}")
        else:
            shutil.rmtree(logs, ignore_errors=True)
    if failures:
        print(f"\n{failures} run(s) with problems", file=sys.stderr)
        sys.exit(1)
    print("\nevery stream complete at its owner, and printed in order and tracked by the one tail")


main()
