#!/usr/bin/env python3
"""Fleet simulation (issue 28): a hundred capture nodes into 32 synthetic worker threads, over network namespaces.

Usage (root, iproute2): benchmarks/fleet-sim.py [--binary PATH] [--source DIR] [--scenarios overload,under,black-holes,restarts]
                        [--seconds 40] [--cameras 100] [--fps 10] [--under-fps 5] [--threads 32] [--workers-procs 8]
                        [--black-holes 5] [--restart-every 30] [--capture-procs 20] [--capture-hosts 4] [--worker-hosts 4]
                        [--start staggered|together] [--stagger 1] [--json PATH] [--smoke]

Topology: as bench-scale.py's. A "switch" namespace holds a bridge; each host namespace has one veth (10.77.0.x/24) on
it; nothing is connected to the root namespace, so no packet leaves the machine. The hub (10.77.0.10) runs the
collector (default --max-delay) and one tail, whose JSON lines go to a file the script reads as they are written.
Capture hosts c1..cN (10.77.0.21...) run `--cameras` capture nodes between them in `--capture-procs` processes,
round-robin, each process several nodes (`--role capture --loop --fps F --bind tcp://<host address>:*` and a `--source
DIR --stream camNNN` pair per node: each node its own socket, epoch and control connection, as if on its own), so
frames, hellos and results all cross the bridge. (One process per camera, `--capture-procs 100`, does not fit two
cores: 100 Swift processes kept the machine 83 % busy and the dispatch round trips slow; BENCHMARKS.md.) Worker hosts w1..wM (10.77.0.11...) run `--workers-procs` worker processes, round-robin,
sharing `--threads` threads between them (`--detector synthetic --synthetic-ms 50`: each thread sleeps 50 ms a frame,
no CPU, so it does at most 20 frames/s; 32 threads are 640 frames/s). A hundred Swift processes are a lot for a small
machine: each process's RSS and how busy the machine was are printed, so that the reader can judge the figures.

Scenarios, one table row each:
1. overload: 100 capture nodes x 10 fps (1,000 frames/s offered) into 32 threads (640/s).
2. under: 100 x `--under-fps` 5 (500/s) into the same 32 threads.
3. black-holes: overload with `--black-holes` 5 of the 32 threads black holes (27 real threads, 540/s). A black hole
   is played by this script (pyzmq needed; without it the row says skipped): per thread a DEALER to each capture node
   the collector's Welcome lists, Ready{version 2} to each every 1 s, Idle to the collector every 1 s and right after
   each frame it receives, and never a result. The collector should eject them (its "worker thread ejected from
   dispatch" log lines are counted per thread) and a swallowed frame drops as `timeout`.
4. restarts: overload, every capture process SIGKILLed and started again (same streams, new epochs) once every
   `--restart-every` 30 s, staggered so that the restarts are spread evenly over the run. A killed epoch has no
   StreamEnd from its node: the collector ends it as superseded (SPEC 9.6).

Start (`--start`): by default the workers first, then the capture processes at random moments over `--stagger` 1 s
(seeded), so that the cameras' frame times fall at random phases, as independent cameras' do. `--start together`
starts the capture nodes first; every one then waits for a worker, and the workers' arrival starts every camera's
timeline within a few dispatch rounds: the cameras stay phase-locked, in bursts of 32 frames (a cold start of a whole
fleet, the worst case for latency under capacity).

Measured from the tail's lines (by arrival; the steady part leaves out the first `--warmup` seconds after everything
started and the last `--cooldown` seconds before the capture nodes are stopped; a dropped run counts its runLength):
processed frames/s and its fraction of min(offered, capacity of the real threads); each stream's processed frames/s
(least-served, mean, and their ratio); p50/p99 of `timings.total` (capture to the collector's output) over processed
frames; drops by reason. Checked on the whole run, per (stream, epoch): every seq from 0 to the end appears exactly
once, in order (processed or dropped), exactly one streamEnded whose summary equals the lines, and, for an epoch whose
node was stopped cleanly (SIGTERM at the end), the end is where the node says it stopped numbering. Violations and the
frames they leave unaccounted must be 0. For a killed epoch the seqs the stream never reported are counted: those the
collector dropped as `superseded` (numbered, announced in a hello, never sent) and an estimate, from the frame rate
and the time of the kill, of those numbered after the node's last word (unknowable to anyone; an estimate +-1).
CPU: each process's utime + stime from /proc, sampled every 0.5 s, over the steady part, in cores by role (a killed
process keeps its last sample), and how busy the whole machine was meanwhile from /proc/stat; RSS per process by role
(the largest seen, sampled every 2 s) and the machine's least MemAvailable. Then the acceptance lines of issue 28.

--smoke runs a tiny version (6 cameras x 5 fps into 4 threads for ~6 s on two capture hosts, one restart) and exits
1 if any stream is out of order, has a gap or does not add up (as every run does). Standard library only (pyzmq only
for the black holes, imported by the agent this script starts in a worker namespace). Namespaces and processes are
removed on exit (and leftovers of a killed earlier run with the same --prefix at start).
"""
import argparse
import importlib.util
import json
import math
import os
import random
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import netns  # benchmarks/netns.py: the namespaces, shared with bench-scale.py
import lifeline  # noqa: E402  (benchmarks/lifeline.py; the script's folder is on sys.path)

lifeline.install()  # the processes this script starts end with it

SCRIPT = os.path.abspath(__file__)
IP = netns.IP
wait_until, machine_busy = netns.wait_until, netns.machine_busy
HUB = ("hub", "10.77.0.10")
CONTROL, PUBLISH = 5556, 5557
HZ = os.sysconf("SC_CLK_TCK")
SCENARIO_NAMES = ("overload", "under", "black-holes", "restarts")
LABELS = {"overload": "overload", "under": "under capacity", "black-holes": "black holes", "restarts": "restarts",
          "smoke": "smoke"}
PYZMQ_SKIP = "skipped: needs pyzmq (pip install pyzmq)"

args = None


def parse_arguments(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", default=".build/release/facewire")
    cache = os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache"))
    parser.add_argument("--source", default=os.path.join(cache, "facewire/demo/astronaut"), help="a folder of JPEGs")
    parser.add_argument("--scenarios", default=",".join(SCENARIO_NAMES), help="comma-separated, run in this order")
    parser.add_argument("--seconds", type=float, default=40, help="length of each scenario, from the workers' start")
    parser.add_argument("--warmup", type=float, default=5, help="seconds after the workers start left out of the steady part")
    parser.add_argument("--cooldown", type=float, default=1, help="seconds before the capture nodes stop left out")
    parser.add_argument("--cameras", type=int, default=100, help="capture nodes")
    parser.add_argument("--fps", type=float, default=10, help="each camera's rate: overload, black holes, restarts")
    parser.add_argument("--under-fps", type=float, default=5, help="each camera's rate under capacity")
    parser.add_argument("--threads", type=int, default=32, help="synthetic worker threads in all, black holes included")
    parser.add_argument("--workers-procs", type=int, default=8, help="worker processes sharing the real threads")
    parser.add_argument("--synthetic-ms", type=int, default=50)
    parser.add_argument("--black-holes", type=int, default=5, help="threads of the 32 that black-hole (black-holes scenario)")
    parser.add_argument("--restart-every", type=float, default=30, help="seconds between restarts of one capture node")
    parser.add_argument("--start", choices=("staggered", "together"), default="staggered",
                        help="staggered: workers first, then the capture processes at random moments over --stagger "
                             "seconds, so that the cameras' frame times are spread as independent cameras' are; together: "
                             "the capture nodes first, all waiting for the workers, whose arrival then starts every "
                             "camera's timeline within a few dispatch rounds (phase-locked cameras, a cold start)")
    parser.add_argument("--stagger", type=float, default=1.0, help="seconds over which --start staggered starts the captures")
    parser.add_argument("--capture-procs", type=int, default=20, help="processes the capture nodes share (restarted whole)")
    parser.add_argument("--capture-hosts", type=int, default=4, help="namespaces the capture processes are spread over")
    parser.add_argument("--worker-hosts", type=int, default=4, help="namespaces the workers are spread over")
    parser.add_argument("--prefix", default="fwfs-", help="namespace name prefix")
    parser.add_argument("--json", metavar="PATH", help="also write every number to this JSON file")
    parser.add_argument("--keep-logs", action="store_true", help="keep the processes' logs (their directory is printed)")
    parser.add_argument("--smoke", action="store_true",
                        help="a tiny run (6 cameras x 5 fps into 4 threads, ~6 s, one restart) that fails on any accounting problem")
    # The black-hole agent: this script again, started by itself inside a worker namespace.
    parser.add_argument("--black-hole-agent", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--agent-collector", help=argparse.SUPPRESS)
    parser.add_argument("--agent-ids", default="", help=argparse.SUPPRESS)
    parsed = parser.parse_args(argv)
    if parsed.smoke:
        parsed.scenarios, parsed.cameras, parsed.fps, parsed.threads, parsed.workers_procs = "smoke", 6, 5, 4, 2
        parsed.seconds, parsed.warmup, parsed.cooldown, parsed.capture_hosts, parsed.capture_procs = 6, 1.5, 0.5, 2, 3
    return parsed


# ---- protobuf by hand (field numbers from protocol/facewire.proto; see protocol/vectors/make_vectors.py) ----------

ROLE_WORKER, DISPATCH = 2, 2


def varint(value):
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def f_uint(field, value):
    return b"" if value == 0 else varint(field << 3) + varint(value)


def f_bytes(field, data, present=False):
    return b"" if not data and not present else varint((field << 3) | 2) + varint(len(data)) + data


def f_string(field, text):
    return f_bytes(field, text.encode("utf-8"))


def envelope(field, body):
    """Envelope{version 1, <body at `field`>}."""
    return f_uint(1, 1) + f_bytes(field, body, present=True)


def encode_hello_worker(node_id):
    return envelope(2, f_uint(1, ROLE_WORKER) + f_string(2, node_id) + f_uint(9, DISPATCH))


def encode_idle(worker, frames_received):
    return envelope(11, f_string(1, worker) + f_uint(2, frames_received))


def encode_ready(worker):
    return f_uint(1, DISPATCH) + f_string(2, worker)


def read_varint(data, index):
    value, shift = 0, 0
    while True:
        if index >= len(data) or shift > 63:
            raise ValueError("truncated varint")
        byte = data[index]
        index += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, index


def decode_fields(data):
    """[(field, wire type, value)]: varints as int, length-delimited as bytes, fixed as bytes."""
    fields, index = [], 0
    while index < len(data):
        key, index = read_varint(data, index)
        field, wire_type = key >> 3, key & 7
        if wire_type == 0:
            value, index = read_varint(data, index)
        elif wire_type == 2:
            length, index = read_varint(data, index)
            if index + length > len(data):
                raise ValueError("length past the end")
            value, index = data[index:index + length], index + length
        elif wire_type in (1, 5):
            size = 8 if wire_type == 1 else 4
            if index + size > len(data):
                raise ValueError("fixed value past the end")
            value, index = data[index:index + size], index + size
        else:
            raise ValueError(f"wire type {wire_type}")
        fields.append((field, wire_type, value))
    return fields


def welcome_endpoints(message):
    """The frame endpoints a Welcome envelope lists, or None when the message is not a version-1 Welcome."""
    try:
        fields = decode_fields(message)
        if not any(f == 1 and t == 0 and v == 1 for f, t, v in fields):
            return None
        bodies = [v for f, t, v in fields if f == 3 and t == 2]
        if not bodies:
            return None
        endpoints = set()
        for field, wire_type, value in decode_fields(bodies[-1]):
            if field == 1 and wire_type == 2:
                for f, t, v in decode_fields(value):
                    if f == 3 and t == 2 and v:
                        endpoints.add(v.decode("utf-8"))
        return endpoints
    except (ValueError, UnicodeDecodeError):
        return None


# ---- the black-hole agent (runs inside a worker namespace) -------------------------------------------------------

def black_hole_agent():
    """Black-hole threads `<id>/t0`: attach to every capture node, say Idle, swallow every frame, never answer.
    On SIGTERM prints {"received": {thread: frames}, "idles": {thread: Idles sent}} as one JSON line."""
    try:
        import zmq
    except ImportError:
        sys.exit("the black-hole agent needs pyzmq (pip install pyzmq)")
    threads = [f"{identifier}/t0" for identifier in args.agent_ids.split(",") if identifier]
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    signal.signal(signal.SIGINT, lambda *_: stopping.append(True))
    context = zmq.Context()
    context.set(zmq.MAX_SOCKETS, 65536)

    def dealer(endpoint):
        socket = context.socket(zmq.DEALER)
        socket.setsockopt(zmq.LINGER, 0)
        socket.connect(endpoint)
        return socket

    def send(socket, data):
        try:
            socket.send(data, zmq.NOBLOCK)
        except zmq.ZMQError:
            pass  # queue full or peer gone: a real thread loses it too

    control = dealer(args.agent_collector)
    results = {thread: dealer(args.agent_collector) for thread in threads}  # each thread's "results" connection
    hello = encode_hello_worker(f"blackhole-{os.getpid()}")
    ready = {thread: encode_ready(thread) for thread in threads}
    captures = {}  # endpoint -> {thread: socket}
    owner = {}  # capture socket -> thread
    received = {thread: 0 for thread in threads}
    idles = {thread: 0 for thread in threads}
    last_idle = {thread: 0.0 for thread in threads}
    poller = zmq.Poller()
    poller.register(control, zmq.POLLIN)
    last_hello = last_ready = 0.0

    def say_idle(thread):
        send(results[thread], encode_idle(thread, received[thread]))
        idles[thread] += 1
        last_idle[thread] = time.monotonic()

    while not stopping:
        now = time.monotonic()
        if now - last_hello >= 1:
            send(control, hello)
            last_hello = now
        if now - last_ready >= 1:
            for sockets in captures.values():
                for thread, socket in sockets.items():
                    send(socket, ready[thread])
            last_ready = now
        if captures:
            for thread in threads:
                if now - last_idle[thread] >= 1:
                    say_idle(thread)
        try:
            events = dict(poller.poll(100))
        except zmq.ZMQError:
            continue
        if control in events:
            while True:
                try:
                    message = control.recv(zmq.NOBLOCK)
                except zmq.Again:
                    break
                listed = welcome_endpoints(message)
                if listed is None:
                    continue
                for endpoint in sorted(listed - captures.keys()):
                    captures[endpoint] = {}
                    for thread in threads:
                        socket = dealer(endpoint)
                        captures[endpoint][thread] = socket
                        owner[socket] = thread
                        poller.register(socket, zmq.POLLIN)
                        send(socket, ready[thread])
                for endpoint in sorted(captures.keys() - listed):
                    for socket in captures.pop(endpoint).values():
                        poller.unregister(socket)
                        del owner[socket]
                        socket.close(0)
        for socket in events:
            thread = owner.get(socket)
            if thread is None:
                continue
            while True:
                try:
                    socket.recv_multipart(zmq.NOBLOCK)
                except zmq.Again:
                    break
                received[thread] += 1
                say_idle(thread)  # idle again at once, without a result: the black hole's signature
    print(json.dumps({"received": received, "idles": idles}), flush=True)
    for socket in list(owner) + list(results.values()) + [control]:
        socket.close(0)
    context.term()


# ---- network namespaces ------------------------------------------------------------------------------------------

def namespace(host):
    return args.prefix + host


def worker_hosts():
    return [(f"w{i + 1}", f"10.77.0.{11 + i}") for i in range(args.worker_hosts)]


def capture_hosts():
    return [(f"c{i + 1}", f"10.77.0.{21 + i}") for i in range(args.capture_hosts)]


def remove_namespaces():
    """Only ours: the prefix followed by one of the names this script gives (so that a run with prefix fwfs- leaves
    fwfs-smoke-hub alone)."""
    netns.remove_namespaces(args.prefix, r"(sw|hub|w\d+|c\d+)")


def create_network():
    netns.create_network(args.prefix, [HUB] + worker_hosts() + capture_hosts())


# ---- processes ---------------------------------------------------------------------------------------------------

class Node:
    """One process in a namespace (`ip netns exec` execs it: the pid is the program's)."""

    def __init__(self, logs, name, host, command, stdout=None):
        self.name = name
        self.role = name.split("-")[0]
        self.stderr_path = os.path.join(logs, name + ".stderr")
        self.stderr = open(self.stderr_path, "w")
        self.started_wall = time.time()
        self.killed_wall = None
        self.last_cpu = 0.0
        self.max_rss_kb = 0
        self.process = subprocess.Popen([IP, "netns", "exec", namespace(host), *command],
                                        stdout=subprocess.DEVNULL if stdout is None else stdout, stderr=self.stderr, text=True)

    def log(self):
        entries = []
        with open(self.stderr_path) as f:
            for line in f:
                if line.startswith("{"):
                    try:
                        entries.append(json.loads(line))
                    except ValueError:
                        pass  # a line still being written
        return entries

    def alive(self):
        return self.process.returncode is None and self.process.poll() is None

    def refresh(self, memory=False):
        """Reads utime + stime (and, with `memory`, the RSS) from /proc; a process that is gone keeps its last figures."""
        if not self.alive():
            return 0
        try:
            with open(f"/proc/{self.process.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            self.last_cpu = (int(fields[11]) + int(fields[12])) / HZ
            if not memory:
                return 0
            with open(f"/proc/{self.process.pid}/status") as f:
                rss = next((int(line.split()[1]) for line in f if line.startswith("VmRSS:")), 0)
            self.max_rss_kb = max(self.max_rss_kb, rss)
            return rss
        except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
            return 0

    def kill(self):
        self.refresh()
        self.killed_wall = time.time()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        self.process.wait()
        self.stderr.close()


def facewire(logs, name, host, arguments, stdout=None):
    return Node(logs, name, host, [args.binary, *arguments, "--log-format", "json"], stdout)


def stop_all(nodes, timeout=10):
    """SIGTERM to every node still running, then waits for them all (SIGKILL for those still up at `timeout`)."""
    for node in nodes:
        node.refresh()
        if node.process.poll() is None:
            node.process.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + timeout
    for node in nodes:
        try:
            node.process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            node.process.kill()
            node.process.wait()
        if not node.stderr.closed:
            node.stderr.close()


def logged(node, message, count=1):
    return lambda: sum(1 for entry in node.log() if entry.get("message") == message) >= count


def meminfo(key):
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def split(total, parts):
    """`total` as `parts` near-equal positive counts (fewer parts when total < parts)."""
    parts = max(1, min(parts, total))
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


class TailFile(threading.Thread):
    """Follows the tail's output file, stamping each complete line with its arrival (monotonic) and keeping what the
    analysis needs: frame lines as tuples, streamEnded lines, and the (stream, epoch) pairs seen and ended."""

    def __init__(self, path):
        super().__init__(daemon=True)
        self.path = path
        self.frames = []  # (arrival, stream, epoch, seq, status, reason, runLength, worker, total ms, captureTime)
        self.ends = []  # (arrival, stream, epoch, frames, processed, dropped)
        self.keys = set()
        self.ended = set()
        self.malformed = 0
        self.finished = threading.Event()

    def run(self):
        with open(self.path) as f:
            pending = ""
            while True:
                chunk = f.readline()
                if chunk:
                    pending += chunk
                    if pending.endswith("\n"):
                        self.take(time.monotonic(), pending)
                        pending = ""
                    continue
                if self.finished.is_set():
                    return
                time.sleep(0.05)

    def take(self, arrival, text):
        try:
            line = json.loads(text)
        except ValueError:
            self.malformed += 1
            return
        if "status" in line:
            key = (line["stream"], line["epoch"])
            timings = line.get("timings", {})
            service = timings["decode"] + timings["detect"] if "decode" in timings and "detect" in timings else None
            self.frames.append((arrival, key[0], key[1], line["seq"], line["status"], line.get("reason", ""),
                                line.get("runLength", 1), line.get("worker", ""), timings.get("total"), line.get("captureTime"),
                                timings.get("queue"), service))
            self.keys.add(key)
        elif line.get("event") == "streamEnded":
            key = (line["stream"], line["epoch"])
            self.ends.append((arrival, key[0], key[1], line["frames"], line["processed"], line["dropped"]))
            self.ended.add(key)


# ---- one scenario ------------------------------------------------------------------------------------------------

def scenario_spec(name):
    spec = {"name": name, "cameras": args.cameras, "fps": args.fps, "threads": args.threads, "black_holes": 0,
            "restart_every": None, "restarts": []}
    if name == "under":
        spec["fps"] = args.under_fps
    elif name == "black-holes":
        spec["black_holes"] = args.black_holes
    elif name == "restarts":
        spec["restart_every"] = args.restart_every
        # Process i restarts at (i + 1/2) / processes of the period, then every period: spread evenly over the run. None
        # in the last 2 s, so that each restarted node has numbered frames before the end.
        processes = min(args.capture_procs, args.cameras)
        for index in range(processes):
            offset = args.restart_every * (index + 0.5) / processes
            while offset < args.seconds - 2:
                spec["restarts"].append((offset, index))
                offset += args.restart_every
    elif name == "smoke":
        spec["restart_every"] = args.seconds / 2
        spec["restarts"] = [(args.seconds / 2, 0)]
    spec["restarts"].sort()
    return spec


def run_scenario(logs, spec):
    """Starts collector, tail, capture nodes, workers (and black holes); runs `--seconds`; returns what was seen."""
    run_logs = os.path.join(logs, spec["name"])
    os.makedirs(run_logs, exist_ok=True)
    cameras, fps = spec["cameras"], spec["fps"]
    control = f"tcp://{HUB[1]}:{CONTROL}"
    hosts = capture_hosts()
    nodes = []  # every process of the run, for CPU, memory and the clean-up
    captures = {}  # capture process index -> its current process
    generation = {}
    follower = None
    tail_output = None
    # Cameras dealt round-robin to the processes (each a node of its own inside).
    processes = min(args.capture_procs, cameras)
    streams_of = [[f"cam{camera:03d}" for camera in range(index, cameras, processes)] for index in range(processes)]

    def start_capture(index):
        generation[index] = generation.get(index, -1) + 1
        host, address = hosts[index % len(hosts)]
        pairs = [argument for stream in streams_of[index] for argument in ("--source", args.source, "--stream", stream)]
        node = facewire(run_logs, f"capture-p{index:02d}-{generation[index]}", host, [
            "--role", "capture", *pairs, "--loop", "--fps", f"{fps:g}",
            "--collector", control, "--bind", f"tcp://{address}:*", "--stats-interval", "0", "--preview-fps", "0"])
        node.streams = streams_of[index]
        node.frames = {}
        captures[index] = node
        nodes.append(node)
        return node

    try:
        # Open (stream, epoch) pairs: the streams, and superseded epochs while they finish.
        cap = max(1024, 4 * cameras)
        collector = facewire(run_logs, "collector", "hub", [
            "--role", "collector", "--bind", f"tcp://*:{CONTROL}", "--publish", f"tcp://*:{PUBLISH}", "--stats-interval", "0",
            "--max-streams", str(cap), "--max-captures", str(cap)])
        nodes.append(collector)
        wait_until("the collector", logged(collector, "collector listening"), 30)
        tail_path = os.path.join(run_logs, "tail.jsonl")
        tail_output = open(tail_path, "w")
        tail = facewire(run_logs, "tail", "hub", ["--role", "tail", "--collector", control, "--events", "--log-level", "debug"],
                        stdout=tail_output)
        nodes.append(tail)
        follower = TailFile(tail_path)
        follower.start()
        wait_until("the tail's subscription", logged(tail, "tail subscribed"), 30)
        def start_captures():
            if args.start == "together":
                for index in range(processes):
                    start_capture(index)
            else:
                # A timed node's timeline starts when its first frame is sent: with the workers already there, at its
                # start (plus discovery), so random start moments give the cameras random phases.
                moments = sorted((rng.uniform(0, args.stagger), index) for index in range(processes))
                begin = time.monotonic()
                for moment, index in moments:
                    time.sleep(max(0.0, begin + moment - time.monotonic()))
                    start_capture(index)
            wait_until("the capture nodes' hellos", logged(collector, "capture announced", cameras), 60 + 2 * cameras)

        rng = random.Random(28)
        # Together: captures first, so that every worker's first hello is answered with all of them.
        if args.start == "together":
            start_captures()
        real = spec["threads"] - spec["black_holes"]
        workers = worker_hosts()
        # A worker keeps a restarted node's old endpoint for 30 s after the collector stops listing it: room for 3 each.
        max_captures = 3 * cameras + 16
        worker_nodes = []
        for index, threads in enumerate(split(real, args.workers_procs)):
            worker_nodes.append(facewire(run_logs, f"worker-{index}", workers[index % len(workers)][0], [
                "--role", "worker", "--collector", control, "--threads", str(threads), "--detector", "synthetic",
                "--synthetic-ms", str(args.synthetic_ms), "--id", f"w{index}", "--max-captures", str(max_captures)]))
        nodes.extend(worker_nodes)
        agents = []
        if spec["black_holes"]:
            identifiers = [f"bh{k}" for k in range(spec["black_holes"])]
            for index, (host, _) in enumerate(workers):
                mine = identifiers[index::len(workers)]
                if mine:
                    agents.append(Node(run_logs, f"blackhole-{index}", host, [
                        sys.executable, SCRIPT, "--black-hole-agent", "--agent-collector", control,
                        "--agent-ids", ",".join(mine)], stdout=subprocess.PIPE))
            nodes.extend(agents)
        if args.start == "staggered":
            for worker in worker_nodes:
                wait_until("the workers", logged(worker, "worker running"), 60)
            start_captures()

        started = time.monotonic()
        stop_at = started + args.seconds
        pending = list(spec["restarts"])
        samples = []  # (time, CPU seconds by role, machine busy and total ticks)
        memory = []  # (time, RSS of all live processes in kB, MemAvailable kB)
        next_sample = next_memory = started
        restarts = 0
        while True:
            now = time.monotonic()
            if now >= stop_at:
                break
            while pending and started + pending[0][0] <= now:
                _, index = pending.pop(0)
                captures[index].kill()
                start_capture(index)
                restarts += 1
            if now >= next_memory:
                rss = sum(node.refresh(memory=True) for node in nodes)
                memory.append((now, rss, meminfo("MemAvailable")))
                next_memory += 2
            if now >= next_sample:
                cpu = {}
                for node in nodes:
                    node.refresh()
                    cpu[node.role] = cpu.get(node.role, 0) + node.last_cpu
                samples.append((now, cpu, machine_busy()))
                next_sample += 0.5
            time.sleep(max(0.0, min(0.05, next_sample - time.monotonic())))
        steady = (started + args.warmup, stop_at - args.cooldown)

        # The end: every capture node stops cleanly (its StreamEnd says where it stopped numbering).
        final = list(captures.values())
        stop_all(final, timeout=20)
        for node in nodes:
            if node.role == "capture" and node.killed_wall is None:
                node.frames = {e.get("stream"): int(e["frames"]) for e in node.log() if e.get("message") == "capture finished"}

        def all_ended():
            ended = set(follower.ended)  # a copy: the follower thread adds to it
            if not set(follower.keys) <= ended:
                return False
            return all(any(s == stream and e / 1e6 >= node.started_wall - 0.05 for s, e in ended)
                       for node in final for stream in node.streams if node.frames.get(stream))

        # A superseded epoch waits --max-delay (1 s) after its last input; ends come within seconds.
        deadline = time.monotonic() + 30
        while not all_ended() and time.monotonic() < deadline:
            time.sleep(0.2)
        agent_reports = {}
        stop_all(agents)
        for agent in agents:
            for line in (agent.process.stdout.read() or "").splitlines():
                try:
                    report = json.loads(line)
                except ValueError:
                    continue
                for thread, count in report.get("received", {}).items():
                    agent_reports[thread] = {"frames_swallowed": count, "idles": report.get("idles", {}).get(thread, 0)}
        stop_all([n for n in nodes if n.role == "worker"])
        stop_all([tail])
        follower.finished.set()
        follower.join(timeout=30)
        stop_all([collector])
        collector_log = collector.log()
        ejections, readmissions = {}, {}
        for entry in collector_log:
            if entry.get("message") == "worker thread ejected from dispatch":
                ejections[entry.get("worker", "?")] = ejections.get(entry.get("worker", "?"), 0) + 1
            elif entry.get("message", "").startswith("worker thread readmitted"):
                readmissions[entry.get("worker", "?")] = readmissions.get(entry.get("worker", "?"), 0) + 1
        stopped = [e for e in collector_log if e.get("message") == "collector stopped"]
        counters = {}
        if stopped:
            for name, value in re.findall(r"(\S+)=(\d+)", stopped[-1].get("counters", "")):
                counters[name] = int(value)
        return {
            "spec": spec, "frames": list(follower.frames), "ends": list(follower.ends), "malformed": follower.malformed,
            "steady": steady, "samples": samples, "memory": memory, "restarts": restarts,
            "captures": [{"stream": stream, "started": n.started_wall, "killed": n.killed_wall, "frames": n.frames.get(stream)}
                         for n in nodes if n.role == "capture" for stream in n.streams],
            "rss": {role: [n.max_rss_kb for n in nodes if n.role == role and n.max_rss_kb]
                    for role in ("capture", "worker", "collector", "tail", "blackhole")},
            "agents": agent_reports, "ejections": ejections, "readmissions": readmissions, "counters": counters,
        }
    finally:
        stop_all([n for n in nodes if n.process.returncode is None], timeout=5)
        if follower is not None:
            follower.finished.set()
        if tail_output is not None:
            tail_output.close()


# ---- analysis ----------------------------------------------------------------------------------------------------

def percentile(ordered, q):
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def check_accounting(run):
    """Per (stream, epoch): in order and gap-free from 0, one streamEnded equal to the lines, and the end where a
    cleanly stopped node says it stopped numbering. Returns the problems, the frames they leave unaccounted, and
    what the killed epochs did not report."""
    fps = run["spec"]["fps"]
    lines, summaries = {}, {}
    for frame in run["frames"]:
        lines.setdefault((frame[1], frame[2]), []).append(frame)
    for end in run["ends"]:
        summaries.setdefault((end[1], end[2]), []).append(end)
    by_stream = {}
    for capture in run["captures"]:
        by_stream.setdefault(capture["stream"], []).append(capture)
    problems, unaccounted = [], 0
    killed = {"epochs": 0, "superseded": 0, "never_reported_estimate": 0}
    matched = set()
    for key in sorted(set(lines) | set(summaries)):
        stream, epoch = key
        label = f"{stream} epoch {epoch}"
        expected = 0
        counts = {"processed": 0, "dropped": 0, "error": 0}
        superseded = 0
        for frame in lines.get(key, []):
            seq, run_length = frame[3], frame[6]
            if seq != expected:
                problems.append(f"{label}: seq {seq} where {expected} was due")
                unaccounted += seq - expected if seq > expected else min(run_length, expected - seq)
            expected = max(expected, seq + run_length)
            counts[frame[4] if frame[4] in counts else "error"] += run_length
            if frame[5] == "superseded":
                superseded += run_length
        ends = summaries.get(key, [])
        if len(ends) != 1:
            problems.append(f"{label}: {len(ends)} streamEnded lines")
        if ends:
            _, _, _, frames, processed, dropped = ends[0]
            if frames != expected or processed != counts["processed"] or dropped != counts["dropped"] \
                    or processed + dropped + counts["error"] != frames:
                problems.append(f"{label}: summary frames {frames} processed {processed} dropped {dropped} against lines "
                                f"{expected} ({counts['processed']} processed, {counts['dropped']} dropped, {counts['error']} errors)")
                unaccounted += abs(frames - expected)
        # The process whose epoch this is: the last one started before the epoch (epoch = its start, Unix µs).
        owners = [c for c in by_stream.get(stream, []) if c["started"] - 0.05 <= epoch / 1e6]
        owner = max(owners, key=lambda c: c["started"]) if owners else None
        if owner is None:
            problems.append(f"{label}: no capture node of this run started it")
        elif owner["killed"] is None:
            matched.add(id(owner))
            if owner["frames"] is None:
                problems.append(f"{label}: its node did not log where it stopped")
            elif owner["frames"] != expected:
                problems.append(f"{label}: the node numbered {owner['frames']}, the stream has {expected}")
                unaccounted += abs(owner["frames"] - expected)
        else:
            killed["epochs"] += 1
            killed["superseded"] += superseded
            # Numbered by the kill, from the frame rate: seq n was captured at about c0 + n / fps.
            starts = [frame[9] - frame[3] / fps for frame in lines.get(key, []) if frame[9] is not None]
            c0 = min(starts) if starts else epoch / 1e6
            numbered = math.floor((owner["killed"] - c0) * fps) + 1 if owner["killed"] >= c0 else 0
            killed["never_reported_estimate"] += max(0, numbered - expected)
    for capture in run["captures"]:
        if capture["killed"] is None and capture["frames"] and id(capture) not in matched:
            problems.append(f"{capture['stream']}: its last node numbered {capture['frames']} frames; no line of its epoch")
            unaccounted += capture["frames"]
    if not run["frames"]:
        problems.append("no frame line")
    if run["malformed"]:
        problems.append(f"{run['malformed']} tail lines not JSON")
    return problems, unaccounted, killed, len(set(lines) | set(summaries))


def analyse(run):
    spec = run["spec"]
    rate = 1000 / args.synthetic_ms
    offered = spec["cameras"] * spec["fps"]
    capacity = (spec["threads"] - spec["black_holes"]) * rate
    start, end = run["steady"]
    seconds = max(1e-9, end - start)
    steady = [frame for frame in run["frames"] if start <= frame[0] <= end]
    processed = [frame for frame in steady if frame[4] == "processed"]
    latencies = sorted(frame[8] for frame in processed if frame[8] is not None)
    per_stream = {f"cam{index:03d}": 0 for index in range(spec["cameras"])}
    for frame in processed:
        per_stream[frame[1]] = per_stream.get(frame[1], 0) + 1
    stream_rates = [count / seconds for count in per_stream.values()]
    mean_rate = statistics.mean(stream_rates) if stream_rates else 0

    def drops(frames):
        counted = {}
        for frame in frames:
            if frame[4] != "processed":
                reason = frame[5].split(":")[0] or frame[4]
                counted[reason] = counted.get(reason, 0) + frame[6]
        return dict(sorted(counted.items()))

    problems, unaccounted, killed, epochs = check_accounting(run)
    # CPU over the steady part: from the last sample at or before its start to the first at or after its end.
    samples = run["samples"]
    cores, busy = {}, float("nan")
    if len(samples) >= 2:
        (t0, cpu0, busy0) = ([s for s in samples if s[0] <= start] or samples[:1])[-1]
        (t1, cpu1, busy1) = ([s for s in samples if s[0] >= end] or samples[-1:])[0]
        cores = {role: (cpu1[role] - cpu0.get(role, 0)) / max(1e-9, t1 - t0) for role in cpu1}
        busy = (busy1[0] - busy0[0]) / max(1, busy1[1] - busy0[1])
    rss = {role: {"processes": len(values), "mean_mb": statistics.mean(values) / 1024, "max_mb": max(values) / 1024}
           for role, values in run["rss"].items() if values}
    timeout_steady = drops(steady).get("timeout", 0)
    # Where a thread's time goes under overload (every thread wanted all the time): its cycle, threads / processed
    # per second, is its service (decode + the synthetic sleep, which ends late on a busy machine) plus the gap between
    # its result and its next frame (Idle to the collector, Assignment to the node, the frame to the thread).
    services = [frame[11] for frame in processed if frame[11] is not None]
    queues = sorted(frame[10] for frame in processed if frame[10] is not None)
    service_ms = statistics.mean(services) if services else float("nan")
    real_threads = spec["threads"] - spec["black_holes"]
    cycle_ms = real_threads * 1000 / max(1e-9, len(processed) / seconds)
    result = {
        "scenario": spec["name"], "cameras": spec["cameras"], "fps": spec["fps"], "threads": spec["threads"],
        "black_holes": spec["black_holes"], "restart_every_s": spec["restart_every"],
        "offered_fps": offered, "capacity_fps": capacity, "steady_seconds": seconds,
        "frames_fps": sum(frame[6] for frame in steady) / seconds,
        "processed_fps": len(processed) / seconds,
        "fraction_of_capacity": len(processed) / seconds / max(1e-9, min(offered, capacity)),
        "stream_min_fps": min(stream_rates) if stream_rates else 0, "stream_mean_fps": mean_rate,
        "stream_min_over_mean": (min(stream_rates) / mean_rate) if mean_rate else 0,
        "latency_p50_ms": percentile(latencies, 0.5), "latency_p99_ms": percentile(latencies, 0.99),
        "latency_max_ms": latencies[-1] if latencies else float("nan"),
        "dropped_steady": drops(steady), "dropped_run": drops(run["frames"]),
        "frames_run": sum(frame[6] for frame in run["frames"]),
        "processed_run": sum(1 for frame in run["frames"] if frame[4] == "processed"),
        "epochs": epochs, "restarts": run["restarts"], "killed_epochs": killed["epochs"],
        "superseded_drops": killed["superseded"], "never_reported_estimate": killed["never_reported_estimate"],
        "violations": len(problems), "unaccounted_frames": unaccounted, "problems": problems[:50],
        "cpu_cores": cores, "machine_busy": busy, "rss": rss,
        "rss_total_peak_mb": max((m[1] for m in run["memory"]), default=0) / 1024,
        "mem_available_min_mb": min((m[2] for m in run["memory"]), default=0) / 1024,
        "ejections": run["ejections"], "readmissions": run["readmissions"],
        "service_ms_mean": service_ms, "thread_cycle_ms": cycle_ms, "gap_ms": cycle_ms - service_ms,
        "queue_ms_p50": percentile(queues, 0.5), "queue_ms_p99": percentile(queues, 0.99),
        "queue_ms_mean": statistics.mean(queues) if queues else float("nan"),
        "fraction_of_served_capacity": len(processed) / seconds / max(1e-9, min(offered, real_threads * 1000 / service_ms))
        if services else float("nan"),
        "collector_dispatch_counters": {k: v for k, v in run["counters"].items() if k.startswith("dispatch_")},
    }
    if spec["black_holes"]:
        result["black_hole_threads"] = {
            thread: dict(report, ejected=run["ejections"].get(thread, 0)) for thread, report in sorted(run["agents"].items())}
        result["timeout_drops_steady"] = timeout_steady
        result["timeout_drops_run"] = result["dropped_run"].get("timeout", 0)
    return result


# ---- report ------------------------------------------------------------------------------------------------------

HEADER = ("| scenario | cameras × fps → threads | offered /s | processed /s | of min(offered, capacity) "
          "| per-stream processed /s least / mean (ratio) | latency p50 / p99 ms | dropped (steady part) | epochs (restarts) "
          "| violations (frames unaccounted) | CPU cores capture / workers / collector / tail | RSS MB per process capture / worker / collector "
          "| machine busy |")


def setup_cell(spec):
    cell = f"{spec['cameras']} × {spec['fps']:g} → {spec['threads'] - spec['black_holes']}"
    if spec["black_holes"]:
        cell += f" + {spec['black_holes']} black holes"
    if spec["restart_every"]:
        cell += f", each process restarted every {spec['restart_every']:g} s" if spec["name"] != "smoke" else ", one restart"
    return cell


def row(result, spec):
    c, r = result["cpu_cores"], result["rss"]
    memory = " / ".join(f"{r[role]['mean_mb']:.0f}" if role in r else "-" for role in ("capture", "worker", "collector"))
    drops = ", ".join(f"{reason} {n}" for reason, n in result["dropped_steady"].items()) or "none"
    accounting = f"{result['violations']} ({result['unaccounted_frames']})"
    if result["problems"]:
        accounting += ": " + "; ".join(result["problems"][:2])
    return (f"| {LABELS[spec['name']]} | {setup_cell(spec)} | {result['offered_fps']:g} | {result['processed_fps']:.1f} "
            f"| {result['fraction_of_capacity']:.2f} of {min(result['offered_fps'], result['capacity_fps']):g} "
            f"| {result['stream_min_fps']:.2f} / {result['stream_mean_fps']:.2f} ({result['stream_min_over_mean']:.2f}) "
            f"| {result['latency_p50_ms']:.1f} / {result['latency_p99_ms']:.1f} | {drops} "
            f"| {result['epochs']} ({result['restarts']}) | {accounting} "
            f"| {' / '.join(f'{c.get(role, 0):.2f}' for role in ('capture', 'worker', 'collector', 'tail'))} "
            f"| {memory} "
            f"| {100 * result['machine_busy']:.0f} % |")


def details(result, spec):
    lines = []
    rss = result["rss"]
    memory = ", ".join(f"{role} {v['processes']} × mean {v['mean_mb']:.0f} / max {v['max_mb']:.0f} MB" for role, v in rss.items())
    lines.append(f"- {LABELS[spec['name']]}: RSS {memory}; all processes at most {result['rss_total_peak_mb']:.0f} MB at once, "
                 f"MemAvailable at least {result['mem_available_min_mb']:.0f} MB; CPU cores "
                 + ", ".join(f"{role} {v:.2f}" for role, v in sorted(result["cpu_cores"].items()))
                 + f"; latency max {result['latency_max_ms']:.1f} ms; whole run {result['processed_run']} processed of "
                 f"{result['frames_run']} frames, dropped " + (", ".join(f"{k} {v}" for k, v in result["dropped_run"].items()) or "none"))
    if spec["black_holes"]:
        holes = "; ".join(f"{thread} swallowed {v['frames_swallowed']} frames, ejected {v['ejected']} times"
                          for thread, v in result["black_hole_threads"].items()) or "no report from the agents"
        lines.append(f"- black holes: {holes}; `timeout` drops {result['timeout_drops_run']} in the run, "
                     f"{result['timeout_drops_steady']} in the steady part")
    real_ejections = {w: n for w, n in result["ejections"].items() if not w.startswith("bh")}
    if real_ejections:
        lines.append(f"- {LABELS[spec['name']]}: real worker threads ejected: "
                     + ", ".join(f"{w} {n}×" for w, n in sorted(real_ejections.items())))
    if spec["restart_every"]:
        lines.append(f"- {LABELS[spec['name']]}: {result['restarts']} restarts, {result['epochs']} epochs, {result['killed_epochs']} "
                     f"killed epochs; seqs they never reported: {result['superseded_drops']} dropped as `superseded` (announced in "
                     f"a hello, never sent), about {result['never_reported_estimate']} numbered after their node's last word (estimate)")
    if result["offered_fps"] > result["capacity_fps"]:
        lines.append(f"- {LABELS[spec['name']]}: a thread's cycle {result['thread_cycle_ms']:.1f} ms = service (decode + synthetic "
                     f"sleep, as it ended) {result['service_ms_mean']:.1f} ms + gap to its next frame {result['gap_ms']:.1f} ms; "
                     f"capture → worker mean {result['queue_ms_mean']:.2f}, p50 {result['queue_ms_p50']:.2f} / p99 {result['queue_ms_p99']:.2f} ms; processed "
                     f"{result['fraction_of_served_capacity']:.2f} of the capacity the threads' actual service times give")
    counters = result["collector_dispatch_counters"]
    if counters:
        keys = ("dispatch_assignments", "dispatch_strikes", "dispatch_threads_ejected", "dispatch_idle_without_result",
                "dispatch_assignment_timeouts", "dispatch_assignments_undelivered", "dispatch_assignments_unreachable")
        lines.append(f"- {LABELS[spec['name']]}: collector " + ", ".join(f"{k} {counters[k]}" for k in keys if k in counters))
    return lines


def acceptance(results):
    lines = []
    ok = lambda passed: "met" if passed else "NOT met"
    if "overload" in results:
        r = results["overload"]
        target = min(r["offered_fps"], r["capacity_fps"])
        bound = args.synthetic_ms + 1000 / r["fps"] + 50
        lines.append(f"- overload: processed {r['processed_fps']:.1f}/s ≥ 0.95 × {target:g} = {0.95 * target:.1f}: {ok(r['processed_fps'] >= 0.95 * target)}")
        lines.append(f"- overload: p99 {r['latency_p99_ms']:.1f} ms ≤ {args.synthetic_ms} + {1000 / r['fps']:g} + 50 = {bound:g} ms: "
                     f"{ok(r['latency_p99_ms'] <= bound)}")
        lines.append(f"- overload: least-served stream {r['stream_min_fps']:.2f}/s ≥ 0.8 × mean {r['stream_mean_fps']:.2f}/s: "
                     f"{ok(r['stream_min_fps'] >= 0.8 * r['stream_mean_fps'])}")
    if "under" in results:
        r = results["under"]
        dropped = sum(r["dropped_steady"].values())
        bound = args.synthetic_ms + 20
        lines.append(f"- under capacity: {dropped} dropped in the steady part (0 wanted): {ok(dropped == 0)}")
        lines.append(f"- under capacity: p99 {r['latency_p99_ms']:.1f} ms ≤ {bound} ms: {ok(r['latency_p99_ms'] <= bound)}")
    if "black-holes" in results:
        r = results["black-holes"]
        target = min(r["offered_fps"], r["capacity_fps"])
        lines.append(f"- black holes: processed {r['processed_fps']:.1f}/s ≥ 0.9 × {target:g} = {0.9 * target:.1f}: "
                     f"{ok(r['processed_fps'] >= 0.9 * target)}")
    if "restarts" in results:
        r = results["restarts"]
        lines.append(f"- restarts: {r['violations']} violations, {r['unaccounted_frames']} frames unaccounted (0 wanted): "
                     f"{ok(r['violations'] == 0)}")
    return lines


def json_safe(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


# ---- main --------------------------------------------------------------------------------------------------------

def raise_file_limit():
    """A worker thread holds a socket per capture node (and per restarted node's old endpoint for 30 s): more
    descriptors than the usual 1,024. Children inherit the raised limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 65536 if hard == resource.RLIM_INFINITY else min(hard, 65536)
    if soft != resource.RLIM_INFINITY and soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))


def main():
    if os.geteuid() != 0:
        sys.exit("fleet-sim.py needs root (ip netns)")
    names = [n for n in args.scenarios.split(",") if n]
    unknown = [n for n in names if n not in SCENARIO_NAMES + ("smoke",)]
    if unknown:
        sys.exit(f"unknown scenario(s) {', '.join(unknown)}: use {', '.join(SCENARIO_NAMES)}")
    jpegs = sorted(n for n in os.listdir(args.source) if n.lower().endswith((".jpg", ".jpeg"))) if os.path.isdir(args.source) else []
    if not os.path.isfile(args.binary) or not jpegs:
        sys.exit(f"missing {args.binary} or JPEGs in {args.source} (build the binary; scripts/setup.sh makes the demo clip)")
    if not 1 <= args.capture_hosts <= 40 or not 1 <= args.worker_hosts <= 9:
        sys.exit("--capture-hosts must be 1...40 and --worker-hosts 1...9 (addresses 10.77.0.21-60 and .11-19)")
    if args.black_holes >= args.threads and "black-holes" in names:
        sys.exit("--black-holes must leave at least one real thread")
    if args.capture_procs < 1 or (args.cameras + args.capture_procs - 1) // args.capture_procs > 256:
        sys.exit("--capture-procs must be at least 1, with at most 256 capture nodes per process")
    if args.cameras < 1 or args.cameras > 1000 or args.threads < 1 or args.workers_procs < 1:
        sys.exit("--cameras must be 1...1000 (stream ids cam000...), --threads and --workers-procs at least 1")
    have_zmq = importlib.util.find_spec("zmq") is not None
    raise_file_limit()
    threads_per_process = max(split(args.threads, args.workers_procs))
    if threads_per_process * args.cameras * (2 if "restarts" in names else 1) > 900:
        print(f"warning: {threads_per_process} threads per worker process × {args.cameras} capture nodes come near libzmq's "
              f"default of 1,023 sockets per process; use more --workers-procs", file=sys.stderr)
    logs = tempfile.mkdtemp(prefix="fleet-sim-")
    results, specs = {}, {}
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
        jpeg_bytes = statistics.mean(os.path.getsize(os.path.join(args.source, n)) for n in jpegs)
        print(f"source {args.source} ({len(jpegs)} JPEGs, mean {jpeg_bytes / 1024:.0f} KiB); {args.cameras} capture nodes in "
              f"{min(args.capture_procs, args.cameras)} processes on {args.capture_hosts} namespaces, {args.threads} synthetic {args.synthetic_ms} ms threads "
              f"({args.workers_procs} worker processes) on {args.worker_hosts}, collector and tail on the hub; "
              f"steady part = {args.warmup:g} s after the workers start to {args.cooldown:g} s before the end of "
              f"{args.seconds:g} s; machine: {os.cpu_count()} cores, {meminfo('MemTotal') / 1024 ** 2:.1f} GiB")
        print()
        print(HEADER)
        print("|" + "---|" * HEADER.count(" | ") + "---|")
        notes = []
        for name in names:
            spec = scenario_spec(name)
            specs[name] = spec
            if spec["black_holes"] and not have_zmq:
                print(f"| {LABELS[name]} | {setup_cell(spec)} | {PYZMQ_SKIP} |" + " |" * (HEADER.count(" | ") - 2), flush=True)
                results[name] = {"scenario": name, "skipped": PYZMQ_SKIP}
                continue
            result = analyse(run_scenario(logs, spec))
            results[name] = result
            failures += bool(result["problems"])
            print(row(result, spec), flush=True)
            notes.extend(details(result, spec))
        if notes:
            print()
            print("\n".join(notes))
        accepted = acceptance({n: r for n, r in results.items() if "skipped" not in r})
        if accepted:
            print("\nacceptance (issue 28):")
            print("\n".join(accepted))
        if args.json:
            with open(args.json, "w") as f:
                json.dump(json_safe({"machine": {"cores": os.cpu_count(), "mem_total_mb": meminfo("MemTotal") / 1024},
                                     "options": {k: v for k, v in vars(args).items() if not k.startswith("agent") and k != "black_hole_agent"},
                                     "scenarios": results}), f, indent=2)
                f.write("\n")
    finally:
        remove_namespaces()
        if args.keep_logs:
            print(f"\nlogs: {logs}")
        else:
            shutil.rmtree(logs, ignore_errors=True)
    if failures:
        print(f"\n{failures} scenario(s) with a stream out of order, with gaps or not adding up", file=sys.stderr)
        sys.exit(1)
    print("\nevery stream in order, gap-free, and adding up")


if __name__ == "__main__":
    args = parse_arguments()
    if args.black_hole_agent:
        black_hole_agent()
    else:
        main()
