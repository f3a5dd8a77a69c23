#!/usr/bin/env python3
"""Scale-out benchmark (issue 14): synthetic workers spread over four network namespaces ("hosts").

Usage (root, iproute2): benchmarks/bench-scale.py [--binary PATH] [--source DIR] [--workers 1,2,4,8,16]
                        [--pacing max,300] [--seconds 12] [--cameras 50] [--camera-fps 10] [--smoke]

Topology: a "switch" namespace holds a bridge; each host namespace has one veth (10.77.0.x/24) on it; nothing is
connected to the root namespace, so no packet leaves the machine. The hub (10.77.0.10) runs the collector, the
tail and the capture node(s): frames and results cross the bridge, as they would between machines, while the
capture node's control traffic and the tail stay on the hub's loopback. Hosts h1..h4 (10.77.0.11-14) run the
workers, round-robin: `--threads 1 --detector synthetic --synthetic-ms 50` (sleeps, no CPU), so a worker can do
at most 20 frames/s and every CPU cycle spent is the cluster's own machinery.

Runs, one table each:
1. One capture node playing the demo clip (looped) at `--fps max` and at a live `--fps 300`, through N workers.
2. Many cameras: `--cameras` capture nodes at `--camera-fps` each, through the largest N, once per capture
   `--max-age` (the default 2000 ms, and 150 ms: see BENCHMARKS.md for why it matters there).

Measured from the tail's JSON lines (read as they arrive): frames/s of the ordered stream over the steady part
(the first `--warmup` and last `--cooldown` seconds of lines left out; a dropped run counts its runLength),
p50/p99 of `timings.total` (capture to the collector's output) over the same part, the p99 of how late the synthetic
detector's 50 ms sleep ended (`timings.detect` - 50: the scheduler's delay on a busy machine, not the cluster's
doing; a late result also holds up the frames behind it at the collector), drops by reason, and checks
on the whole run: every (stream, epoch) starts at 0 and goes up by exactly 1 (in order, gap-free), ends where the
capture node says it stopped numbering, and its streamEnded summary adds up (processed + dropped = captured).
CPU: each process's utime + stime from /proc, sampled every 0.25 s, over the steady part, per frame (by role, the
workers summed), and how busy the whole machine was meanwhile (other users included) from /proc/stat.

--smoke runs a tiny version (N = 1, 2; 2 cameras; ~2 s each) and exits 1 if any stream is out of order, has a gap
or does not add up. Standard library only. Namespaces and processes are removed on exit (and leftovers of a
killed earlier run with the same --prefix at start).
"""
import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import netns  # benchmarks/netns.py: the namespaces, shared with fleet-sim.py
import lifeline  # noqa: E402  (benchmarks/lifeline.py; the script's folder is on sys.path)

lifeline.install()  # the processes this script starts end with it

parser = argparse.ArgumentParser()
parser.add_argument("--binary", default=".build/release/facewire")
cache = os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache"))
parser.add_argument("--source", default=os.path.join(cache, "facewire/demo/astronaut"))
parser.add_argument("--workers", default="1,2,4,8,16", help="worker counts, comma-separated")
parser.add_argument("--pacing", default="max,300", help="capture pacings (--fps values), comma-separated; empty: none")
parser.add_argument("--seconds", type=float, default=12, help="length of each single-camera run")
parser.add_argument("--synthetic-ms", type=int, default=50)
parser.add_argument("--cameras", type=int, default=50, help="capture nodes of the many-cameras run (0: skip it)")
parser.add_argument("--camera-fps", type=float, default=10)
parser.add_argument("--camera-seconds", type=float, default=20)
parser.add_argument("--camera-max-age", default="2000,150",
                    help="capture --max-age values (ms) of the many-cameras run, one row each, comma-separated")
parser.add_argument("--warmup", type=float, default=2, help="seconds of lines left out at the start")
parser.add_argument("--cooldown", type=float, default=1, help="seconds of lines left out at the end")
parser.add_argument("--prefix", default="fwbs-", help="namespace name prefix")
parser.add_argument("--keep-logs", action="store_true", help="keep the processes' logs (their directory is printed)")
parser.add_argument("--smoke", action="store_true", help="a tiny run that fails on any ordering or accounting problem")
args = parser.parse_args()
if args.smoke:
    args.workers, args.pacing, args.seconds, args.cameras, args.camera_seconds = "1,2", "max,300", 2, 2, 2
    args.camera_max_age = "2000"
    args.warmup, args.cooldown = 0.5, 0.2

IP = netns.IP
wait_until, machine_busy = netns.wait_until, netns.machine_busy
HUB = ("hub", "10.77.0.10")
HOSTS = [("h1", "10.77.0.11"), ("h2", "10.77.0.12"), ("h3", "10.77.0.13"), ("h4", "10.77.0.14")]
CONTROL, PUBLISH, CAPTURE_PORT = 7101, 7102, 7200
HZ = os.sysconf("SC_CLK_TCK")


# ---- network namespaces ------------------------------------------------------------------------------------------

def namespace(host):
    return args.prefix + host


def remove_namespaces():
    """Kills whatever runs in our namespaces (only ours: by prefix) and deletes them."""
    netns.remove_namespaces(args.prefix)


def create_network():
    netns.create_network(args.prefix, [HUB] + HOSTS)


# ---- processes ---------------------------------------------------------------------------------------------------

class Node:
    """One facewire process in a namespace (`ip netns exec` execs it: the pid is facewire's)."""

    def __init__(self, logs, name, host, arguments, read_stdout=False):
        self.name = name
        self.stderr_path = os.path.join(logs, name + ".stderr")
        self.stderr = open(self.stderr_path, "w")
        stdout = subprocess.PIPE if read_stdout else subprocess.DEVNULL
        self.process = subprocess.Popen(
            [IP, "netns", "exec", namespace(host), args.binary, *arguments, "--log-format", "json"],
            stdout=stdout, stderr=self.stderr, text=True)
        self.lines = []  # (arrival, parsed JSON)
        if read_stdout:
            self.reader = threading.Thread(target=self._read, daemon=True)
            self.reader.start()

    def _read(self):
        for line in self.process.stdout:
            self.lines.append((time.monotonic(), json.loads(line)))

    def log(self):
        with open(self.stderr_path) as f:
            return [json.loads(line) for line in f if line.startswith("{")]

    def cpu_seconds(self):
        """utime + stime of the process so far (None once it has been reaped)."""
        try:
            with open(f"/proc/{self.process.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / HZ
        except (FileNotFoundError, ProcessLookupError):
            return None

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.stderr.close()


def logged(node, message):
    return lambda: any(entry.get("message") == message for entry in node.log())


# ---- one run -----------------------------------------------------------------------------------------------------

def run_cluster(logs, cameras, workers, fps, frames_per_camera, max_age=2000):
    """Starts collector, tail, `cameras` capture nodes and `workers` workers; returns what was measured."""
    hub, hub_address = HUB
    control = f"tcp://{hub_address}:{CONTROL}"
    nodes = []
    try:
        collector = Node(logs, "collector", hub, [
            "--role", "collector", "--bind", f"tcp://*:{CONTROL}", "--publish", f"tcp://*:{PUBLISH}", "--stats-interval", "0"])
        nodes.append(collector)
        wait_until("the collector", logged(collector, "collector listening"), 30)
        tail = Node(logs, "tail", hub, ["--role", "tail", "--collector", control, "--events", "--log-level", "debug"], read_stdout=True)
        nodes.append(tail)
        wait_until("the tail's subscription", logged(tail, "tail subscribed"), 30)
        captures = []
        for index in range(cameras):
            port = CAPTURE_PORT + index
            stream = f"cam-{index:02d}" if cameras > 1 else f"scale-{workers}-{fps}"
            captures.append(Node(logs, f"capture-{index}", hub, [
                "--role", "capture", "--source", args.source, "--loop", "--frames", str(frames_per_camera),
                "--stream", stream, "--bind", f"tcp://*:{port}", "--advertise", f"tcp://{hub_address}:{port}",
                "--collector", control, "--fps", str(fps), "--stats-interval", "0", "--max-age", str(max_age)]))
        nodes.extend(captures)
        # Captures first: every worker's first hello is answered with all of them, so no worker joins late.
        announced = lambda: sum(1 for e in collector.log() if e.get("message") == "capture announced") >= cameras
        wait_until("the capture nodes' hellos", announced, 60)
        for index in range(workers):
            host = HOSTS[index % len(HOSTS)][0]
            nodes.append(Node(logs, f"worker-{index}", host, [
                "--role", "worker", "--collector", control, "--threads", "1", "--detector", "synthetic",
                "--synthetic-ms", str(args.synthetic_ms), "--id", f"w{index}"]))
        ended = lambda: sum(1 for _, line in tail.lines if line.get("event") == "streamEnded") >= cameras
        expected = frames_per_camera / (float(fps) if fps != "max" else workers * 1000 / args.synthetic_ms)
        samples = []  # (time, CPU seconds by role, machine busy and total ticks), for the steady part's CPU
        deadline = time.monotonic() + 3 * expected + 60
        while not ended():
            if time.monotonic() > deadline:
                raise RuntimeError("timed out waiting for every stream's end")
            cpu = {}
            for node in nodes:
                role = node.name.split("-")[0]
                cpu[role] = cpu.get(role, 0) + (node.cpu_seconds() or 0)
            samples.append((time.monotonic(), cpu, machine_busy()))
            time.sleep(0.25)
        captured = {}
        for capture in captures:
            for entry in capture.log():
                if entry.get("message") == "capture finished":
                    captured[entry["stream"]] = int(entry["frames"])
        if args.keep_logs:
            with open(os.path.join(logs, f"tail-{cameras}x{fps}-{workers}.jsonl"), "w") as f:
                f.writelines(f"{t:.6f} {json.dumps(line)}\n" for t, line in tail.lines)
        return {"lines": list(tail.lines), "samples": samples, "captured": captured}
    finally:
        for node in reversed(nodes):
            node.stop()


def analyse(run):
    """Steady-part throughput and latency, drops, and the order and accounting checks."""
    frames = [(t, line) for t, line in run["lines"] if "status" in line]
    ends = {(line["stream"], line["epoch"]): line for _, line in run["lines"] if line.get("event") == "streamEnded"}
    problems = []
    streams = {}
    for _, line in frames:
        key = (line["stream"], line["epoch"])
        expected = streams.get(key, 0)
        if line["seq"] != expected:
            problems.append(f"{key[0]}: seq {line['seq']} where {expected} was due")
        streams[key] = line["seq"] + line.get("runLength", 1)
    epochs = {}
    for stream, _ in streams:
        epochs[stream] = epochs.get(stream, 0) + 1
    for stream, count in epochs.items():
        if count != 1:
            problems.append(f"{stream}: {count} epochs")
    for stream, captured in run["captured"].items():
        published = [n for (s, _), n in streams.items() if s == stream]
        if published != [captured]:
            problems.append(f"{stream}: captured {captured}, published up to {published}")
    for (stream, _), end in ends.items():
        if end["processed"] + end["dropped"] != end["frames"] or end["frames"] != run["captured"].get(stream):
            problems.append(f"{stream}: summary {end} against {run['captured'].get(stream)} captured")
    for stream in run["captured"]:
        if not any(s == stream for s, _ in ends):
            problems.append(f"{stream}: no streamEnded")
    if not run["captured"]:
        problems.append("no capture node reported its frames")

    if not frames:
        return {"problems": ["no frame line"], "fps": 0, "processed_fps": 0, "p50": 0, "p99": 0, "overshoot": 0, "drops": "", "total": 0,
                "processed": 0, "streams": 0, "cpu_ms": {}, "busy": 0}
    start, end = frames[0][0] + args.warmup, frames[-1][0] - args.cooldown
    steady = [line for t, line in frames if start <= t <= end]
    count = sum(line.get("runLength", 1) for line in steady)
    processed = [line for line in steady if line["status"] == "processed"]
    latencies = sorted(line["timings"]["total"] for line in processed if "timings" in line)
    # How late the synthetic detector's sleep ended: the scheduler's delay, which no part of the cluster causes.
    overshoot = sorted(line["timings"]["detect"] - args.synthetic_ms for line in processed if "timings" in line)
    drops = {}
    for line in steady:
        if line["status"] != "processed":
            drops[line.get("reason", "?")] = drops.get(line.get("reason", "?"), 0) + line.get("runLength", 1)
    total = sum(line.get("runLength", 1) for _, line in frames)
    total_processed = sum(1 for _, line in frames if line["status"] == "processed")
    seconds = max(1e-9, end - start)
    # CPU over the steady part only (start-up, ~0.2 s of CPU per process, is left out): the samples around it.
    inside = [sample for sample in run["samples"] if start <= sample[0] <= end] or run["samples"][-2:]
    (t0, cpu0, busy0), (t1, cpu1, busy1) = inside[0], inside[-1]
    sampled = sum(line.get("runLength", 1) for t, line in frames if t0 <= t <= t1)
    return {
        "fps": count / seconds, "processed_fps": len(processed) / seconds,
        "p50": statistics.median(latencies) if latencies else float("nan"),
        "p99": latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))] if latencies else float("nan"),
        "overshoot": overshoot[min(len(overshoot) - 1, int(0.99 * len(overshoot)))] if overshoot else float("nan"),
        "drops": ", ".join(f"{reason} {n}" for reason, n in sorted(drops.items())) or "none",
        "total": total, "processed": total_processed, "problems": problems, "streams": len(streams),
        "cpu_ms": {role: 1000 * (cpu1[role] - cpu0.get(role, 0)) / max(1, sampled) for role in cpu1},
        "busy": (busy1[0] - busy0[0]) / max(1, busy1[1] - busy0[1]),
    }


def cpu_cell(result):
    c = result["cpu_ms"]
    return " / ".join(f"{c.get(role, 0):.2f}" for role in ("capture", "worker", "collector", "tail"))


def verdict(result):
    return "yes" if not result["problems"] else "NO: " + "; ".join(result["problems"][:3])


# ---- main --------------------------------------------------------------------------------------------------------

def main():
    if os.geteuid() != 0:
        sys.exit("bench-scale.py needs root (ip netns)")
    if not os.path.isfile(args.binary) or not os.path.isdir(args.source):
        sys.exit(f"missing {args.binary} or {args.source} (build the binary; scripts/setup.sh makes the demo clip)")
    logs = tempfile.mkdtemp(prefix="bench-scale-")
    failures = 0

    def interrupted(number, _frame):
        raise SystemExit(128 + number)

    signal.signal(signal.SIGTERM, interrupted)
    remove_namespaces()
    try:
        try:
            create_network()
        except RuntimeError as error:
            sys.exit(f"cannot build the network namespaces: {error}")
        worker_counts = [int(n) for n in args.workers.split(",")]
        print(f"source {args.source}; synthetic workers at {args.synthetic_ms} ms, 1 thread each, on 4 namespaces; "
              f"hub: collector, tail, capture; steady part = lines after {args.warmup:g} s and before the last {args.cooldown:g} s; "
              f"machine: {os.cpu_count()} cores")
        print()
        print("| workers | pacing | frames/s (ordered stream) | processed/s | ratio to N × 20 | latency p50 ms | latency p99 ms "
              "| sleep overshoot p99 ms | dropped (steady part) | processed / frames | in order, gap-free, adds up "
              "| CPU ms/frame capture / workers / collector / tail | machine busy |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for pacing in [p for p in args.pacing.split(",") if p]:
            for n in worker_counts:
                rate = n * 1000 / args.synthetic_ms if pacing == "max" else float(pacing)
                frames = max(20, int(rate * args.seconds))
                result = analyse(run_cluster(logs, 1, n, pacing, frames))
                failures += bool(result["problems"])
                label = "--fps max" if pacing == "max" else f"live {pacing} fps"
                print(f"| {n} | {label} | {result['fps']:.1f} | {result['processed_fps']:.1f} "
                      f"| {result['processed_fps'] / (n * 1000 / args.synthetic_ms):.2f} | {result['p50']:.1f} | {result['p99']:.1f} | {result['overshoot']:.1f} "
                      f"| {result['drops']} | {result['processed']} / {result['total']} | {verdict(result)} | {cpu_cell(result)} "
                      f"| {100 * result['busy']:.0f} % |", flush=True)
        if args.cameras > 0:
            n = max(worker_counts)
            frames = max(10, int(args.camera_fps * args.camera_seconds))
            print()
            print("| cameras × fps | workers | --max-age ms | frames/s (all streams) | processed/s | latency p50 ms | latency p99 ms "
                  "| sleep overshoot p99 ms | dropped (steady part) | processed / frames | streams in order, gap-free, adding up "
                  "| CPU ms/frame capture / workers / collector / tail | machine busy |")
            print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
            for max_age in [a for a in args.camera_max_age.split(",") if a]:
                result = analyse(run_cluster(logs, args.cameras, n, f"{args.camera_fps:g}", frames, max_age))
                failures += bool(result["problems"])
                print(f"| {args.cameras} × {args.camera_fps:g} | {n} | {max_age} | {result['fps']:.1f} | {result['processed_fps']:.1f} "
                      f"| {result['p50']:.1f} | {result['p99']:.1f} | {result['overshoot']:.1f} | {result['drops']} | {result['processed']} / {result['total']} "
                      f"| {result['streams'] if not result['problems'] else 0} of {args.cameras}: {verdict(result)} "
                      f"| {cpu_cell(result)} | {100 * result['busy']:.0f} % |", flush=True)
    finally:
        remove_namespaces()
        if args.keep_logs:
            print(f"\nlogs: {logs}")
        else:
            shutil.rmtree(logs, ignore_errors=True)
    if failures:
        print(f"\n{failures} run(s) out of order, with gaps or not adding up", file=sys.stderr)
        sys.exit(1)
    print("\nevery stream in order, gap-free, and adding up")


main()
