#!/usr/bin/python3
"""What the live-view preview costs the capture node (issue 15, acceptance 4): CPU and peak memory of a capture process
with no preview socket, with one but no viewer, and with one viewer.

Usage: benchmarks/bench-preview.py [--binary PATH] [--source DIR] [--fps 30] [--seconds 20] [--rounds 5]
                                [--preview-fps 10] [--smoke]

Each run: a collector, one worker (`--detector noop`, 2 threads, so that no frame waits for a worker) and a capture
node reading --source in a loop at --fps for --seconds worth of frames (`--frames`), on TCP loopback. Configurations:
  off          --preview-fps 0: no preview socket at all
  no viewer    --preview-fps P: the socket is bound and announced, nobody subscribes
  one viewer   --preview-fps P and a SUB in this script subscribed to the stream's topic before the capture starts;
               it checks every message (3 parts, the topic, seq increasing, the JPEG decodes) as it comes
Measured for the capture process only:
  steady CPU   utime + stime from /proc/PID/stat, sampled every 100 ms, from --warmup seconds after the start to
               the last sample before the exit, per frame at the fixed --fps (every frame is sent: checked)
  whole run    utime + stime at its exit (os.wait4), start-up included, per frame handed to a worker
  peak RSS     ru_maxrss at its exit (VmHWM): mostly shared libraries' pages, which vary with the page cache
  peak anon    the largest RssAnon (heap and other private memory) of the 100 ms samples: what the node allocates
The configurations alternate within each round, in a rotating order, and each figure is the median over the rounds;
the ratio is the median's against "off". The machine is noisy: read the ratios with the spread (min-max) beside them.

Accounting (every run; exit 1 on a problem): frames_sent = the frames asked for; no preview counter without a
viewer; with one, the viewer received, in order, what the capture node counted as sent (preview_frames_sent), less
what the lossy preview may lose (a full subscriber queue; the last message when the node exits with linger 0).
--smoke: a tiny run of each configuration (no timing judged). Needs python3 with zmq and cv2 (/usr/bin/python3 on
Debian: python3-zmq, python3-opencv); Linux.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import zmq

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "compare"))
import measure  # noqa: E402  (the benchmarks' shared process helpers)
from ports import free_ports  # noqa: E402
import lifeline  # noqa: E402  (benchmarks/lifeline.py; the script's folder is on sys.path)

lifeline.install()  # the processes this script starts end with it

try:
    import cv2
    import numpy
except ImportError:  # the JPEG check is skipped, said in the output
    cv2 = None

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
cache = os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache"))


def default_binary():
    for build in ("release", "debug"):
        path = os.path.join(ROOT, ".build", build, "facewire")
        if os.access(path, os.X_OK):
            return path
    return os.path.join(ROOT, ".build/release/facewire")


parser = argparse.ArgumentParser()
parser.add_argument("--binary", default=default_binary(), help="default: .build/release/facewire, else debug")
parser.add_argument("--source", default=os.path.join(cache, "facewire/demo/astronaut"))
parser.add_argument("--fps", type=float, default=30, help="the capture node's --fps")
parser.add_argument("--seconds", type=float, default=30, help="frames per run = fps × seconds")
parser.add_argument("--warmup", type=float, default=5, help="seconds of each run left out of the steady CPU figure")
parser.add_argument("--rounds", type=int, default=5)
parser.add_argument("--preview-fps", type=float, default=10)
parser.add_argument("--keep-logs", action="store_true")
parser.add_argument("--smoke", action="store_true", help="one short round of each configuration")
args = parser.parse_args()
if args.smoke:
    args.fps, args.seconds, args.rounds, args.warmup = 20, 2, 1, 0.5
FRAMES = max(1, int(args.fps * args.seconds))
STREAM = "preview-bench"
TOPIC = STREAM.encode() + b"\0"
CONFIGS = ["off", "no viewer", "one viewer"]


TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """utime + stime of a live process (every thread), from /proc/PID/stat; None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICKS
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return None


def anonymous_kib(pid):
    """RssAnon of a live process in KiB, from /proc/PID/status; None once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            line = next((l for l in f if l.startswith("RssAnon:")), None)
        return int(line.split()[1]) if line else None
    except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
        return None


class Sampler(threading.Thread):
    """(seconds since start, CPU seconds) of a process every 100 ms while it lives, and its largest RssAnon."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.samples, self.start_time, self.peak_anon_kib = pid, [], time.monotonic(), 0
        self.start()

    def run(self):
        while True:
            value = cpu_seconds(self.pid)
            anon = anonymous_kib(self.pid)
            if value is None:
                return
            self.samples.append((time.monotonic() - self.start_time, value))
            self.peak_anon_kib = max(self.peak_anon_kib, anon or 0)
            time.sleep(0.1)

    def steady(self, warmup):
        """CPU seconds per second from `warmup` to the last sample, and that span."""
        later = [sample for sample in self.samples if sample[0] >= warmup]
        if len(later) < 2 or later[-1][0] - later[0][0] <= 0:
            return None, 0
        span = later[-1][0] - later[0][0]
        return (later[-1][1] - later[0][1]) / span, span


def counters(log):
    """The counters of the capture node's last line ("capture finished ... counters=name=value ...")."""
    line = next((l for l in reversed(log.splitlines()) if "capture finished" in l), "")
    return {name: int(value) for name, value in re.findall(r"\b([a-z_][a-z0-9_-]*)=(\d+)\b", line)}


class Viewer(threading.Thread):
    """A SUB on the capture node's preview socket that checks and counts what it receives."""

    def __init__(self, context, endpoint):
        super().__init__(daemon=True)
        self.sub = context.socket(zmq.SUB)
        self.sub.setsockopt(zmq.MAXMSGSIZE, 16 << 20)
        self.sub.setsockopt(zmq.SUBSCRIBE, TOPIC)
        self.sub.connect(endpoint)
        self.received, self.problems, self.last_seq, self.decoded = 0, [], None, 0
        self.done = threading.Event()

    @staticmethod
    def seq_of(header):
        """FrameHeader field 4 (seq, varint), read without a protobuf library."""
        i = 0
        while i < len(header):
            key, i = varint(header, i)
            if key is None:
                return None
            field, kind = key >> 3, key & 7
            if kind == 0:
                value, i = varint(header, i)
                if field == 4:
                    return value
            elif kind == 2:
                length, i = varint(header, i)
                i += length
            elif kind == 1:
                i += 8
            elif kind == 5:
                i += 4
            else:
                return None
        return 0  # absent: seq 0

    def run(self):
        poller = zmq.Poller()
        poller.register(self.sub, zmq.POLLIN)
        while not self.done.is_set():
            if not poller.poll(100):
                continue
            parts = self.sub.recv_multipart()
            self.received += 1
            if len(parts) != 3 or parts[0] != TOPIC:
                self.problems.append(f"message {self.received}: {len(parts)} parts, topic {parts[0][:70]!r}")
                continue
            seq = self.seq_of(parts[1])
            if seq is None or (self.last_seq is not None and seq <= self.last_seq):
                self.problems.append(f"seq {seq} after {self.last_seq}")
            self.last_seq = seq
            # Decode a sample (every 10th): the check is the same, the viewer's CPU stays small.
            if cv2 is not None and self.received % 10 == 1:
                image = cv2.imdecode(numpy.frombuffer(parts[2], dtype=numpy.uint8), cv2.IMREAD_COLOR)
                if image is None:
                    self.problems.append(f"seq {seq}: the JPEG does not decode")
                else:
                    self.decoded += 1

    def finish(self):
        time.sleep(0.3)  # what is still in flight on loopback
        self.done.set()
        self.join()
        self.sub.close(linger=0)


def run(config, directory, context):
    ports = free_ports(4)
    control, publish = f"tcp://127.0.0.1:{ports[0]}", f"tcp://127.0.0.1:{ports[1]}"
    frames_at, preview_at = f"tcp://127.0.0.1:{ports[2]}", f"tcp://127.0.0.1:{ports[3]}"
    logs = {name: os.path.join(directory, f"{name}.log") for name in ("collector", "worker", "capture")}
    processes = []

    def start(name, arguments):
        with open(logs[name], "w") as log:
            process = subprocess.Popen([args.binary] + arguments, stdout=subprocess.DEVNULL, stderr=log)
        processes.append(process)
        return process

    viewer = None
    try:
        collector = start("collector", ["--role", "collector", "--bind", control, "--publish", publish])
        measure.wait_for_line(logs["collector"], "collector listening", collector)
        worker = start("worker", ["--role", "worker", "--collector", control, "--threads", "2", "--detector", "noop",
                                  "--capture", frames_at])
        measure.wait_for_line(logs["worker"], "worker running", worker)
        preview = ["--preview-fps", "0"] if config == "off" else \
            ["--preview-fps", str(args.preview_fps), "--preview-bind", preview_at]
        if config == "one viewer":
            viewer = Viewer(context, preview_at)
            viewer.start()
        capture = start("capture", ["--role", "capture", "--source", args.source, "--loop", "--stream", STREAM,
                                    "--bind", frames_at, "--collector", control, "--fps", str(args.fps), "--frames",
                                    str(FRAMES)] + preview)
        sampler = Sampler(capture.pid)
        _, status, usage = os.wait4(capture.pid, 0)
        sampler.join()
        capture.returncode = status
        if viewer:
            viewer.finish()
        with open(logs["capture"], errors="replace") as f:
            log = f.read()
        if status != 0:
            sys.exit(f"{config}: the capture node failed (status {status}):\n{log[-2000:]}")
    finally:
        measure.stop(list(reversed(processes)))
    found = counters(log)
    sent = found.get("frames_sent", 0)
    problems = []
    if sent != FRAMES:
        problems.append(f"frames_sent {sent}, not {FRAMES} (dropped at source: {found.get('frames_dropped_at_source', 0)})")
    previewed = found.get("preview_frames_sent", 0)
    if config != "one viewer" and any(name.startswith("preview_") for name in found):
        problems.append("preview counters without a viewer: " + ", ".join(f"{k}={v}" for k, v in found.items() if k.startswith("preview_")))
    if viewer:
        problems += viewer.problems[:5]
        if previewed == 0:
            problems.append("nothing previewed to the viewer")
        # The preview is lossy by design: a message can be dropped for a subscriber whose queue is full, and the
        # last one may still be queued when the node exits (linger 0). More than sent, or most lost, is a problem.
        if not previewed // 2 <= viewer.received <= previewed:
            problems.append(f"the viewer received {viewer.received} messages, the capture node sent {previewed}")
    rate, span = sampler.steady(args.warmup)
    if rate is None:
        problems.append(f"too few CPU samples after {args.warmup} s ({len(sampler.samples)} in all)")
    if problems:
        sys.exit(f"{config}: " + "; ".join(problems) + f"\n(logs in {directory})")
    return {
        "steady_ms_per_frame": rate * 1000 / args.fps,
        "steady_span": span,
        "cpu_ms_per_frame": (usage.ru_utime + usage.ru_stime) * 1000 / sent,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_rss_mib": usage.ru_maxrss / 1024,
        "peak_anon_mib": sampler.peak_anon_kib / 1024,
        "previewed": previewed,
        "received": viewer.received if viewer else 0,
        "lost": previewed - viewer.received if viewer else 0,
        "decoded": viewer.decoded if viewer else 0,
        "dropped_rate": found.get("preview_dropped_rate", 0),
    }


def main():
    if not os.access(args.binary, os.X_OK):
        sys.exit(f"no facewire binary at {args.binary}: build it (swift build -c release) or pass --binary")
    if not os.path.isdir(args.source):
        sys.exit(f"no footage at {args.source}: run scripts/setup.sh, or pass --source DIR (JPEG files)")
    directory = tempfile.mkdtemp(prefix="bench-preview-")
    context = zmq.Context()
    results = {config: [] for config in CONFIGS}
    build = "release" if "/release/" in os.path.realpath(args.binary) else "debug" if "/debug/" in os.path.realpath(args.binary) else "?"
    print(f"binary {args.binary} ({build}), source {args.source}, --fps {args.fps:g}, {FRAMES} frames a run, "
          f"--preview-fps {args.preview_fps:g}, {args.rounds} rounds", flush=True)
    for round_index in range(args.rounds):
        order = CONFIGS[round_index % 3:] + CONFIGS[:round_index % 3]
        for config in order:
            result = run(config, directory, context)
            results[config].append(result)
            print(f"round {round_index + 1} {config}: steady {result['steady_ms_per_frame']:.3f} ms CPU/frame "
                  f"(over {result['steady_span']:.1f} s), whole run {result['cpu_ms_per_frame']:.3f}, "
                  f"{result['peak_rss_mib']:.1f} MiB peak RSS, {result['peak_anon_mib']:.2f} MiB peak anon"
                  + (f", {result['previewed']} previewed, {result['received']} received" if config == "one viewer" else ""),
                  file=sys.stderr, flush=True)
    context.term()

    def median(config, key):
        return statistics.median(r[key] for r in results[config])

    def spread(config, key, digits):
        values = [r[key] for r in results[config]]
        return f"{min(values):.{digits}f}–{max(values):.{digits}f}"

    base = {key: median("off", key) for key in ("steady_ms_per_frame", "cpu_ms_per_frame", "peak_rss_mib", "peak_anon_mib")}

    def ratio(value, key):
        return f"{value / base[key]:.3f}" if base[key] > 0 else "–"

    print()
    print("| configuration | steady CPU ms/frame (median) | min–max | vs off | whole run CPU ms/frame | vs off | "
          "peak RSS MiB (median) | min–max | vs off | peak anon MiB (median) | min–max | vs off | previewed/run |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for config in CONFIGS:
        steady, whole, rss, anon = (median(config, key) for key in ("steady_ms_per_frame", "cpu_ms_per_frame", "peak_rss_mib", "peak_anon_mib"))
        print(f"| {config} | {steady:.3f} | {spread(config, 'steady_ms_per_frame', 3)} | {ratio(steady, 'steady_ms_per_frame')} | "
              f"{whole:.3f} | {ratio(whole, 'cpu_ms_per_frame')} | {rss:.1f} | {spread(config, 'peak_rss_mib', 1)} | "
              f"{ratio(rss, 'peak_rss_mib')} | {anon:.2f} | {spread(config, 'peak_anon_mib', 2)} | {ratio(anon, 'peak_anon_mib')} | "
              f"{median(config, 'previewed'):.0f} |")
    viewer_runs = results["one viewer"]
    print()
    print(f"accounting: every run sent its {FRAMES} frames to the worker; no preview traffic without a viewer; the "
          f"viewer received the previewed messages in order ({sum(r['received'] for r in viewer_runs)} of "
          f"{sum(r['previewed'] for r in viewer_runs)} sent, {sum(r['lost'] for r in viewer_runs)} lost in flight or at "
          f"the high-water mark; {sum(r['decoded'] for r in viewer_runs)} JPEGs decoded"
          + ("" if cv2 is not None else ", decoding skipped: no cv2") + ")")
    extra = median("one viewer", "steady_ms_per_frame") - base["steady_ms_per_frame"]
    idle = median("no viewer", "steady_ms_per_frame") - base["steady_ms_per_frame"]
    previewed = median("one viewer", "previewed")
    print(f"steady CPU against off: no viewer {idle:+.3f} ms per frame; one viewer {extra:+.3f} ms per frame captured, "
          f"{extra * args.fps / args.preview_fps:+.3f} ms per frame previewed ({previewed:.0f} previewed of {FRAMES} a run), "
          f"{extra * args.fps / 10:+.2f} % of a core")
    if args.keep_logs:
        print(f"logs: {directory}")
    else:
        shutil.rmtree(directory, ignore_errors=True)


def varint(data, i):
    value, shift = 0, 0
    while i < len(data):
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, i
        shift += 7
    return None, i


if __name__ == "__main__":
    main()
