#!/usr/bin/env python3
"""Collector capacity (issue 14): results per second one collector orders, tracks and publishes, at 1, 10 and 100
streams, and the CPU it spends per result; next to the raw libzmq message rate measured in the same run.

Usage: benchmarks/bench-collector.py [--binary PATH] [--streams 1,10,100] [--threads 16] [--results 300000]
                                  [--faces 2] [--smoke]

On TCP loopback: a collector, a tail (JSON Lines, with --events, written to a file), and `facewire bench
collector-load`, a test tool that plays one fake capture node per stream (hello every second, StreamEnd at the end)
and `--threads` fake worker threads sending valid, pre-encoded processed results with `--faces` drifting faces each
(so tracking works), as fast as the collector takes them. It reports its own send rate and how often a send found
the pipe full ("backpressure": near 1 means the collector set the pace, not the generator).

Figures: "results/s" is the collector's own rate, from the emission time of each published frame (`captureTime` +
`timings.total`, the collector's wall clock when it published it) over the middle 80 % of the frames; "tail lines/s"
is how fast the tail wrote them (its file, read as it grows); CPU is utime + stime from /proc over the run, per
result. Every stream is checked: in order, gap-free, all processed, faces tracked. Raw libzmq: `facewire bench
zmq-rate`, one PUSH to one PULL over TCP loopback (two threads), small messages and 40 KB ones.

--smoke runs a tiny version and exits 1 if a stream is out of order, incomplete or untracked. Standard library only.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "compare"))
import measure  # noqa: E402  (the benchmarks' shared process helpers)
from ports import free_ports  # noqa: E402
import lifeline  # noqa: E402  (benchmarks/lifeline.py; the script's folder is on sys.path)

lifeline.install()  # the processes this script starts end with it

parser = argparse.ArgumentParser()
parser.add_argument("--binary", default=".build/release/facewire")
parser.add_argument("--streams", default="1,10,100", help="stream counts, comma-separated")
parser.add_argument("--threads", type=int, default=16, help="fake worker threads")
parser.add_argument("--results", type=int, default=300_000, help="results per run (spread over the streams)")
parser.add_argument("--faces", type=int, default=2)
parser.add_argument("--raw-messages", type=int, default=2_000_000, help="messages of the small raw libzmq measurement")
parser.add_argument("--small-bytes", type=int, default=0, help="size of the small raw messages (0: a result's size)")
parser.add_argument("--keep-logs", action="store_true")
parser.add_argument("--smoke", action="store_true", help="a tiny run that fails on any ordering or tracking problem")
args = parser.parse_args()
if args.smoke:
    args.streams, args.threads, args.results, args.raw_messages = "1,10", 4, 2000, 20_000
# --smoke requires every frame processed. On a loaded machine (the test suite runs it beside the heavy tests) a fake
# worker thread can stall past the collector's default 1 s wait for a missing frame, which then drops it as
# `timeout`, correctly but by timing; the smoke run waits 30 s, so only a real loss or reordering fails it.
SMOKE_COLLECTOR = ["--max-delay", "30000"] if args.smoke else []


def raw_rate(messages, size):
    out = subprocess.run([args.binary, "bench", "zmq-rate", "--messages", str(messages), "--bytes", str(size)],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)["rate"]


def wait_for_log(path, message, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(path) as f:
            if any(message in line for line in f):
                return
        time.sleep(0.05)
    raise RuntimeError(f"timed out waiting for '{message}' in {path}")


def run(logs, streams):
    control, publish = free_ports(2)
    collector_log = os.path.join(logs, f"collector-{streams}.stderr")
    tail_out = os.path.join(logs, f"tail-{streams}.jsonl")
    tail_log = os.path.join(logs, f"tail-{streams}.stderr")
    processes = []
    try:
        collector = subprocess.Popen(
            [args.binary, "--role", "collector", "--bind", f"tcp://127.0.0.1:{control}", "--publish", f"tcp://127.0.0.1:{publish}",
             "--log-format", "json", *SMOKE_COLLECTOR], stdout=subprocess.DEVNULL, stderr=open(collector_log, "w"))
        processes.append(collector)
        wait_for_log(collector_log, "collector listening")
        tail = subprocess.Popen(
            [args.binary, "--role", "tail", "--collector", f"tcp://127.0.0.1:{control}", "--events", "--log-level", "debug",
             "--log-format", "json"], stdout=open(tail_out, "w"), stderr=open(tail_log, "w"))
        processes.append(tail)
        wait_for_log(tail_log, "tail subscribed")
        frames = max(1, args.results // streams)
        load = subprocess.Popen(
            [args.binary, "bench", "collector-load", "--collector", f"tcp://127.0.0.1:{control}",
             "--publish", f"tcp://127.0.0.1:{publish}", "--streams", str(streams),
             "--threads", str(args.threads), "--frames", str(frames), "--faces", str(args.faces)],
            stdout=subprocess.PIPE, text=True)
        processes.append(load)
        if json.loads(load.stdout.readline()).get("event") != "sending":
            raise RuntimeError("the load generator did not start")
        cpu0 = {name: measure.cpu_seconds(p.pid) for name, p in (("collector", collector), ("tail", tail))}
        # The tail's file as it grows: newlines counted on the raw bytes (no parsing meanwhile). The generator ends
        # once its own subscriber saw every stream's summary: the collector's work is done then; the tail may still
        # be writing what it has queued.
        samples, lines, grown, cpu = [], 0, time.monotonic(), {}
        deadline = time.monotonic() + 600
        with open(tail_out, "rb") as f:
            while time.monotonic() < deadline:
                time.sleep(0.05)
                count = f.read().count(b"\n")
                now = time.monotonic()
                if count:
                    lines, grown = lines + count, now
                    samples.append((now, lines))
                if "collector" not in cpu and load.poll() is not None:
                    cpu["collector"] = measure.cpu_seconds(collector.pid) - cpu0["collector"]
                if "collector" in cpu and now - grown > 1.0:
                    break
        cpu["tail"] = measure.cpu_seconds(tail.pid) - cpu0["tail"]
        report = json.loads(load.stdout.readline() or "{}")
        if load.wait(timeout=30) != 0:
            raise RuntimeError("the load generator failed")
    finally:
        measure.stop(list(reversed(processes)), seconds=5)
    return analyse(tail_out, collector_log, streams, frames, samples, cpu, report)


def analyse(tail_out, collector_log, streams, frames, samples, cpu, report):
    """The collector's own account (every stream processed in full, nothing late), then the tail's lines: in
    order per stream and tracked. A tail slower than the collector misses frames (its PUB queue overflows: SPEC 4.3,
    counted as frames_missed and printed as dropped `missed`, which are not counted as printed); only --smoke, too
    small for that, requires every line."""
    problems, last_seq, untracked, lines = [], {}, 0, 0
    with open(collector_log) as f:
        finished = [json.loads(line) for line in f if '"stream finished"' in line]
    complete = [e for e in finished if int(e["processed"]) == frames and int(e["dropped"]) == 0 and int(e["late"]) == 0]
    if len(complete) != streams:
        problems.append(f"the collector finished {len(complete)} of {streams} streams complete: {finished[:2]}")
    if report.get("published") != streams * frames:
        problems.append(f"the generator saw {report.get('published')} of {streams * frames} frames published")
    with open(tail_out) as f:
        for text in f:
            line = json.loads(text)
            if "status" not in line:
                continue
            stream = line["stream"]
            if line["seq"] <= last_seq.get(stream, -1):
                problems.append(f"{stream}: seq {line['seq']} after {last_seq[stream]}")
            last_seq[stream] = line["seq"] + line.get("runLength", 1) - 1
            if line.get("reason") == "missed":
                continue
            lines += 1
            if line["status"] != "processed":
                problems.append(f"{stream} {line['seq']}: {line['status']} {line.get('reason')}")
            untracked += sum(1 for face in line["faces"] if "trackingID" not in face)
    if untracked:
        problems.append(f"{untracked} faces without a tracking ID")
    if args.smoke and lines != streams * frames:
        problems.append(f"the tail printed {lines} of {streams * frames} frames")
    tail_rate = (samples[-1][1] - samples[0][1]) / (samples[-1][0] - samples[0][0]) if len(samples) > 2 else float("nan")
    results = streams * frames
    return {"streams": streams, "rate": report.get("publishedRate", float("nan")), "tail_rate": tail_rate,
            "send_rate": report.get("rate", float("nan")), "waited": report.get("waited", float("nan")),
            "bytes": report.get("meanBytes", 0), "lines": lines, "expected": results,
            "cpu": {"collector": 1000 * cpu.get("collector", 0) / results, "tail": 1000 * cpu["tail"] / max(1, lines),
                    "load": 1000 * report.get("cpuSeconds", 0) / results},
            "problems": problems}


def main():
    if not os.path.isfile(args.binary):
        sys.exit(f"missing {args.binary} (swift build -c release --product facewire)")
    logs = tempfile.mkdtemp(prefix="bench-collector-")
    failures, sizes = 0, [0]
    try:
        small = args.small_bytes or 230
        raw_small = raw_rate(args.raw_messages, small)
        raw_large = raw_rate(max(1000, args.raw_messages // 20), 40960)
        print(f"raw libzmq, one PUSH → one PULL over tcp loopback (facewire bench zmq-rate): {raw_small:,.0f} msgs/s of {small} B, "
              f"{raw_large:,.0f} msgs/s of 40 KB; {args.threads} fake worker threads, {args.faces} faces per result, "
              f"{args.results:,} results per row; {os.cpu_count()} cores")
        print()
        print("| streams | results/s (collector) | collector CPU ms/result | tail lines/s | tail CPU ms/line | generator sent/s "
              "| generator waited | generator CPU ms/result | printed by the tail / sent | in order, processed, tracked | vs raw libzmq small msgs |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for streams in [int(s) for s in args.streams.split(",")]:
            r = run(logs, streams)
            sizes.append(r["bytes"])
            failures += bool(r["problems"])
            verdict = "yes" if not r["problems"] else "NO: " + "; ".join(r["problems"][:3])
            print(f"| {streams} | {r['rate']:,.0f} | {r['cpu']['collector']:.4f} | {r['tail_rate']:,.0f} | {r['cpu']['tail']:.4f} "
                  f"| {r['send_rate']:,.0f} | {r['waited']:.0%} | {r['cpu']['load']:.4f} | {r['lines']:,} / {r['expected']:,} | {verdict} "
                  f"| {r['rate'] / raw_small:.1%} |", flush=True)
    finally:
        if args.keep_logs:
            print(f"\nlogs: {logs}")
        else:
            shutil.rmtree(logs, ignore_errors=True)
    if failures:
        print(f"\n{failures} run(s) out of order, incomplete or untracked", file=sys.stderr)
        sys.exit(1)
    print(f"\nevery stream in order, processed and tracked; a result is {sizes[-1]:.0f} B on the wire (Envelope)")


main()
