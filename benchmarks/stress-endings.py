#!/usr/bin/env python3
"""Repeats the two endings where frames used to vanish, under load, and counts every frame.

usage: stress-endings.py [--binary .build/debug/facewire] [--bounded 1000] [--restarts 1000] [--busy 1] [--smoke]

* bounded: `facewire --role local --frames 5 --fps max` on a folder, again and again. Every run must print 5 frame
  lines in order and a streamEnded summary equal to them. (A capture node that exited while libzmq still held its
  last frame and its StreamEnd lost both, about one run in a hundred under load.)
* restarts: one collector (`--max-delay 4000`: a frame can take two service times), a tail and a worker with four
  slow synthetic threads (1.5 s a frame) stay up; a capture node is started,
  SIGKILLed after a random 0.2-1.2 s while frames are at the workers, and started again, over and over. Every epoch
  must come out ordered and gap-free from 0 and be summarised once with a summary equal to its lines, and the
  collector must refuse no result as late (an epoch superseded by a restart takes its frames still in flight).

`--busy N` runs N busy loops beside it (the load). Prints the counts; exits 1 if any frame is unaccounted.
"""
import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from ports import free_ports
import lifeline  # noqa: E402  (benchmarks/lifeline.py; the script's folder is on sys.path)

lifeline.install()  # the processes this script starts end with it

parser = argparse.ArgumentParser()
parser.add_argument("--binary", default=".build/debug/facewire")
parser.add_argument("--source", default=os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
                                                     "facewire/demo/astronaut"))
parser.add_argument("--bounded", type=int, default=1000, help="bounded runs through local")
parser.add_argument("--restarts", type=int, default=1000, help="capture node kills and restarts")
parser.add_argument("--busy", type=int, default=1, help="busy loops beside the runs")
parser.add_argument("--seed", type=int, default=1)
parser.add_argument("--smoke", action="store_true", help="20 of each")
args = parser.parse_args()
if args.smoke:
    args.bounded, args.restarts = min(args.bounded, 20), min(args.restarts, 20)
random.seed(args.seed)
binary = os.path.abspath(args.binary)




def check_epoch(lines, summary):
    """Problems of one (stream, epoch): ordered, gap-free from 0, summary equal to its lines."""
    problems = []
    expected = 0
    for line in lines:
        if line["seq"] != expected:
            problems.append(f"seq {line['seq']} where {expected} was due")
            break
        expected = line["seq"] + line.get("runLength", 1)
    if summary is None:
        problems.append("no streamEnded")
    elif summary["frames"] != expected or summary["processed"] + summary["dropped"] != summary["frames"]:
        problems.append(f"summary {summary} against {expected} lines")
    return problems, expected


def bounded(runs, work):
    frames = os.path.join(work, "frames")
    os.makedirs(frames, exist_ok=True)
    names = sorted(n for n in os.listdir(args.source) if n.endswith(".jpg"))[:5]
    for index, name in enumerate(names):
        shutil.copy(os.path.join(args.source, name), os.path.join(frames, f"frame-{index:04d}.jpg"))
    bad = 0
    accounted = 0
    started = time.monotonic()
    for run in range(runs):
        out = subprocess.run([binary, "--role", "local", "--source", frames, "--fps", "max", "--frames", "5", "--workers", "2",
                              "--detector", "synthetic", "--synthetic-ms", "5", "--events", "--log-level", "warning"],
                             capture_output=True, text=True, timeout=120)
        lines = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
        frame_lines = [line for line in lines if "status" in line]
        ends = [line for line in lines if line.get("event") == "streamEnded"]
        problems, count = check_epoch(frame_lines, ends[-1] if ends else None)
        if out.returncode != 0 or count != 5 or problems:
            bad += 1
            print(f"bounded run {run}: exit {out.returncode}, {count} of 5 frames: {problems}", flush=True)
        else:
            accounted += 5
    return {"runs": runs, "bad": bad, "frames accounted": accounted, "unaccounted": 5 * runs - accounted,
            "seconds": time.monotonic() - started}


def restarts(count, work):
    control, publish = free_ports(2)
    control, publish = f"tcp://127.0.0.1:{control}", f"tcp://127.0.0.1:{publish}"
    logs = open(os.path.join(work, "restarts.log"), "w")
    collector_log_path = os.path.join(work, "collector.log")
    collector_log_file = open(collector_log_path, "w")
    collector = subprocess.Popen([binary, "--role", "collector", "--bind", control, "--publish", publish, "--max-delay", "4000"],
                                 stdout=logs, stderr=collector_log_file)
    tail_path = os.path.join(work, "tail.jsonl")
    tail = subprocess.Popen([binary, "--role", "tail", "--collector", control, "--stream", "cam", "--events"],
                            stdout=open(tail_path, "w"), stderr=logs)
    # 1.5 s a frame: frames are still at the threads when the restarted node's first hello opens the new epoch.
    worker = subprocess.Popen([binary, "--role", "worker", "--collector", control, "--threads", "4", "--detector", "synthetic",
                               "--synthetic-ms", "1500"], stdout=logs, stderr=logs)
    time.sleep(2)
    started = time.monotonic()
    try:
        for run in range(count):
            port = free_ports(1)[0]
            capture = subprocess.Popen([binary, "--role", "capture", "--source", args.source, "--loop", "--stream", "cam",
                                        "--bind", f"tcp://127.0.0.1:{port}", "--collector", control, "--fps", "30"],
                                       stdout=logs, stderr=subprocess.PIPE, text=True)
            # Killed a random 0.2-1.2 s after it starts sending (its first log line), while frames are at workers; its
            # log is not read further (a capture node at info level writes a few lines only).
            capture.stderr.readline()
            time.sleep(random.uniform(0.2, 1.2))
            capture.send_signal(signal.SIGKILL)
            capture.wait()
            capture.stderr.close()
        # The last epoch is superseded by nothing: a clean node with a bounded source ends the stream.
        port = free_ports(1)[0]
        subprocess.run([binary, "--role", "capture", "--source", args.source, "--stream", "cam", "--frames", "10",
                        "--bind", f"tcp://127.0.0.1:{port}", "--collector", control, "--fps", "max"],
                       stdout=logs, stderr=logs, timeout=120)
        time.sleep(10)  # the last epochs' frames in flight come back, and a superseded epoch waits --max-delay after them
    finally:
        for process in (worker, tail):
            process.send_signal(signal.SIGTERM)
        collector.send_signal(signal.SIGTERM)
        collector.wait(timeout=30)
        collector_log = open(collector_log_path).read()
        tail.wait(timeout=30)
        tail_out = open(tail_path).read()
        worker.wait(timeout=30)
    lines = [json.loads(line) for line in tail_out.splitlines() if line.startswith("{")]
    epochs = {}
    summaries = {}
    for line in lines:
        if "status" in line:
            epochs.setdefault(line["epoch"], []).append(line)
        elif line.get("event") == "streamEnded":
            summaries.setdefault(line["epoch"], []).append(line)
    bad = 0
    frames = 0
    superseded = 0
    for epoch in sorted(set(epochs) | set(summaries)):
        ends = summaries.get(epoch, [])
        problems, lines_count = check_epoch(epochs.get(epoch, []), ends[0] if len(ends) == 1 else None)
        if len(ends) > 1:
            problems.append(f"{len(ends)} summaries")
        frames += lines_count
        superseded += sum(line.get("runLength", 1) for line in epochs.get(epoch, []) if line.get("reason") == "superseded")
        if problems:
            bad += 1
            order = sorted(set(epochs) | set(summaries)).index(epoch)
            seen = epochs.get(epoch, [])
            print(f"epoch {epoch} ({order + 1} of {len(set(epochs) | set(summaries))}, {len(seen)} lines, last "
                  f"{seen[-1] if seen else None}): {problems}", flush=True)
    stopped = [line for line in collector_log.splitlines() if "collector stopped" in line]
    counters = stopped[-1] if stopped else "(no final counters)"
    late = re.findall(r"(?:late_after_end|results_late|stale_epoch)=\d+", counters)
    return {"restarts": count, "epochs": len(set(epochs) | set(summaries)), "epochs with problems": bad,
            "frames accounted": frames, "superseded drops": superseded, "results refused as late": late or "none",
            "seconds": time.monotonic() - started}


busy = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(args.busy)]
work = tempfile.mkdtemp(prefix="stress-endings-")
failed = False
try:
    if args.bounded:
        result = bounded(args.bounded, work)
        print("bounded endings:", result, flush=True)
        failed |= result["bad"] > 0
    if args.restarts:
        result = restarts(args.restarts, work)
        print("epoch switches:", result, flush=True)
        failed |= result["epochs with problems"] > 0 or result["results refused as late"] != "none"
finally:
    for process in busy:
        process.kill()
    if failed is False or not os.environ.get("KEEP"):
        shutil.rmtree(work, ignore_errors=True)
    else:
        print("kept", work)
sys.exit(1 if failed else 0)
