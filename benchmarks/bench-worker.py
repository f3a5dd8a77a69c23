#!/usr/bin/env python3
"""Benchmark: a worker's throughput per core next to the detector alone, on the same frames.

Usage: benchmarks/bench-worker.py [--binary PATH] [--source PATH] [--frames N] [--runs N] [-- DETECTOR OPTIONS...]

Three figures, each in frames per second per core (frames / CPU seconds, user + system):
  detector alone   `facewire detect` in one process on one thread: read the JPEG, decode, detect, classify, print.
                   CPU time of the whole process (os.wait4).
  analysis only    the same work measured inside the worker: 1000 / mean(decode + detect + classify ms) from the
                   stream's per-frame timings. No sockets, no protobuf, no threads but the analysing one.
  worker process   `facewire --role local --workers 1 --threads 1 --fps max`: frames the worker processed / CPU
                   seconds of the worker process (every thread: ZeroMQ's I/O thread, the analysing thread, the
                   control loop), sampled from /proc every 50 ms until the stream ends.
The overhead of the worker is 1 - worker / detector alone. Other options after `--` go to both commands (for
example `-- --model ../shared/data/models/face_detection_yunet_2022mar.onnx`). Standard library only; Linux.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
import lifeline  # noqa: E402  (benchmarks/lifeline.py; the script's folder is on sys.path)

lifeline.install()  # the processes this script starts end with it

parser = argparse.ArgumentParser()
parser.add_argument("--binary", default=".build/release/facewire")
cache = os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache"))
parser.add_argument("--source", default=os.path.join(cache, "facewire/demo/astronaut"))
parser.add_argument("--frames", type=int, default=600)
parser.add_argument("--runs", type=int, default=3, help="runs of each command; the median is reported")
parser.add_argument("extra", nargs="*", help="options for both commands (after --)")
args = parser.parse_args()
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """utime + stime of a live process, in seconds (None once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICKS
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return None


def children(pid):
    result = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                result += [int(c) for c in handle.read().split()]
    except FileNotFoundError:
        pass
    return result


def command_line(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().split(b"\0")
    except FileNotFoundError:
        return []


def detector_alone():
    command = [args.binary, "detect", "--source", args.source, "--loop", "--frames", str(args.frames)] + args.extra
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    lines = sum(1 for _ in process.stdout)
    _, status, usage = os.wait4(process.pid, 0)
    if status != 0 or lines != args.frames:
        sys.exit(f"failed: {' '.join(command)} (status {status}, {lines} lines)")
    return lines / (usage.ru_utime + usage.ru_stime)


def worker_process():
    command = [args.binary, "--role", "local", "--workers", "1", "--threads", "1", "--fps", "max", "--source",
               args.source, "--loop", "--frames", str(args.frames)] + args.extra
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    worker_cpu = {}
    done = threading.Event()

    def sample():
        while not done.is_set():
            for child in children(process.pid):
                if b"worker" in command_line(child):
                    seconds = cpu_seconds(child)
                    if seconds is not None:
                        worker_cpu[child] = seconds
            time.sleep(0.05)

    sampler = threading.Thread(target=sample)
    sampler.start()
    processed, analysis_ms = 0, []
    for line in process.stdout:
        frame = json.loads(line)
        if frame.get("status") == "processed":
            processed += 1
            t = frame["timings"]
            analysis_ms.append(t.get("decode", 0) + t.get("detect", 0) + t.get("classify", 0))
    done.set()
    sampler.join()
    if process.wait() != 0 or len(worker_cpu) != 1:
        sys.exit(f"failed: {' '.join(command)} (workers seen: {len(worker_cpu)})")
    return processed / next(iter(worker_cpu.values())), 1000 / statistics.mean(analysis_ms), processed


alone, inside, worker = [], [], []
for run in range(args.runs):
    alone.append(detector_alone())
    w, a, processed = worker_process()
    worker.append(w)
    inside.append(a)
    print(f"run {run + 1}: detector alone {alone[-1]:.1f}, analysis only {inside[-1]:.1f}, worker process {w:.1f} "
          f"frames/s per core ({processed} frames processed)", file=sys.stderr, flush=True)
a, i, w = statistics.median(alone), statistics.median(inside), statistics.median(worker)
print(f"source {args.source}, {args.frames} frames, options {' '.join(args.extra) or '(defaults)'}, "
      f"median of {args.runs} runs")
print("| figure | frames/s per core |")
print("|---|---|")
print(f"| detector alone (`facewire detect`, whole process) | {a:.1f} |")
print(f"| analysis only (decode + detect + classify, timed in the worker) | {i:.1f} |")
print(f"| worker process (`--role local`, worker CPU time) | {w:.1f} |")
print(f"| worker vs detector alone | {100 * (w / a - 1):+.1f} % |")
print(f"| worker vs analysis only | {100 * (w / i - 1):+.1f} % |")
