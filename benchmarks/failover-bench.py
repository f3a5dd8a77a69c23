#!/usr/bin/env python3
"""Collector failover (issue 29): kill -9 of the active collector, many times, under a fleet; and what replication costs.

Usage: benchmarks/failover-bench.py [--binary PATH] [--source DIR] [--streams 20] [--fps 10] [--kills 20]
                                    [--between 6] [--ttl 1] [--threads 8] [--synthetic-ms 20] [--json PATH]
       benchmarks/failover-bench.py --cost [--seconds 30] [--rounds 2] ...

Everything on loopback, real processes of the release binary, a real etcd (Debian's etcd-server, 1 s leases: its
--election-timeout is 500 ms). Two collectors `--election` in one group, `--election-ttl` `--ttl`; workers with the
synthetic detector (`--detector synthetic --synthetic-ms`: a fixed face per frame after that many ms, no CPU), so that
two cores carry 20 cameras and every frame has one face that never moves or leaves; `--streams` capture nodes (in 4
processes, `--loop --fps`) of a folder of JPEGs; one tail following both collectors (`--events`), its JSON lines read
from a file.

Kills: after a warm-up, the active collector is SIGKILLed; the standby takes over; the killed one is started again and
waits as the new standby until the active logs "standby attached"; `--between` seconds later the active is killed
again; `--kills` times. Measured from the tail's lines, per stream and per kill: the gap in capture time between the
last processed frame before the kill and the first after it (the stream's longest silence), then over all streams and
kills its p50, p99 and max; the frames dropped as `failover` (and by other reasons); and the checks: every seq of every
stream exactly once and in order, one tracking ID per stream (its face never leaves), no second faceAppeared, and the
tail's `messages_repeated` (republished messages kept out). Also the time from each kill to the new active's "active:
publishing" log line.

--cost: the same fleet without kills, for `--seconds`, alternately against one collector without `--election` and an
active+standby pair (`--rounds` each, interleaved): CPU (utime + stime from /proc) of each collector per result it
published, and the results/s. The difference is replication's cost per result.

Standard library only.
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
import time

from ports import free_ports
import lifeline  # noqa: E402  (benchmarks/lifeline.py; the script's folder is on sys.path)

lifeline.install()  # the processes this script starts end with it

ETCD = shutil.which("etcd") or "/usr/bin/etcd"


def parse_arguments(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    cache = os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache"))
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(here, "..", ".build", "release", "facewire"))
    parser.add_argument("--source", default=os.path.join(cache, "facewire/demo/astronaut"), help="a folder of JPEGs")
    parser.add_argument("--streams", type=int, default=20)
    parser.add_argument("--fps", type=float, default=10)
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--between", type=float, default=6, help="seconds between a standby's attachment and the next kill")
    parser.add_argument("--ttl", type=int, default=1)
    parser.add_argument("--threads", type=int, default=8, help="worker threads (2 processes)")
    parser.add_argument("--synthetic-ms", type=int, default=20)
    parser.add_argument("--warmup", type=float, default=5)
    parser.add_argument("--cost", action="store_true", help="measure replication's CPU cost instead of killing")
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--json", help="also write the figures here")
    parser.add_argument("--keep", action="store_true", help="keep the run's folder (logs, the tail's lines)")
    return parser.parse_args(argv)




class Node:
    """A child process; its stderr (JSON log lines) in a file read on demand."""

    def __init__(self, folder, name, command, stdout=None):
        self.name = name
        self.command = command
        self.log_path = os.path.join(folder, f"{name}.log")
        self.stderr = open(self.log_path, "a")
        self.process = subprocess.Popen(command, stdout=stdout or subprocess.DEVNULL, stderr=self.stderr)

    def lines(self):
        with open(self.log_path, errors="replace") as file:
            return [line for line in file]

    def logged(self, message):
        return sum(1 for line in self.lines() if message in line)

    def cpu_seconds(self):
        try:
            with open(f"/proc/{self.process.pid}/stat") as file:
                fields = file.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (FileNotFoundError, ProcessLookupError, IndexError):
            return None

    def stop(self, sig=signal.SIGTERM, timeout=10):
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.stderr.close()


def wait_until(condition, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise RuntimeError(f"timed out after {timeout} s waiting for {what}")


class Fleet:
    """etcd, a collector group (or one collector), workers, capture nodes and a tail."""

    def __init__(self, args, folder, election=True):
        self.args = args
        self.folder = folder
        self.nodes = []
        self.election = election
        self.etcd = None
        if election:
            client, peer = free_ports(2)
            self.etcd_url = f"127.0.0.1:{client}"
            self.etcd = subprocess.Popen([
                ETCD, "--name", "b0", "--data-dir", os.path.join(folder, "etcd"),
                "--listen-client-urls", f"http://127.0.0.1:{client}", "--advertise-client-urls", f"http://127.0.0.1:{client}",
                "--listen-peer-urls", f"http://127.0.0.1:{peer}", "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
                "--initial-cluster", f"b0=http://127.0.0.1:{peer}", "--initial-cluster-state", "new", "--unsafe-no-fsync",
                "--heartbeat-interval", "50", "--election-timeout", "500", "--logger", "zap", "--log-level", "error",
            ], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.members = []
        for _ in range(2 if election else 1):
            control, publish, replication = free_ports(3)
            self.members.append({"control": f"tcp://127.0.0.1:{control}", "publish": f"tcp://127.0.0.1:{publish}",
                                 "replication": f"tcp://127.0.0.1:{replication}"})
        self.collectors = [None] * len(self.members)
        self.starts = 0

    def collector_command(self, index):
        member = self.members[index]
        command = [self.args.binary, "--role", "collector", "--bind", member["control"], "--publish", member["publish"],
                   "--stats-interval", "5", "--max-delay", "500", "--log-format", "json"]
        if self.election:
            command += ["--election", f"etcd://{self.etcd_url}", "--election-ttl", str(self.args.ttl),
                        "--replication-bind", member["replication"], "--advertise-host", "127.0.0.1"]
        return command

    def start_collector(self, index):
        self.starts += 1
        node = Node(self.folder, f"collector{index}-{self.starts}", self.collector_command(index))
        self.collectors[index] = node
        self.nodes.append(node)
        return node

    def group(self):
        return ",".join(member["control"] for member in self.members)

    def start(self):
        if self.etcd:
            time.sleep(1.5)
        first = self.start_collector(0)
        wait_until(lambda: first.logged("collector listening") > 0 and (not self.election or first.logged("active: publishing") > 0),
                   30, "the first collector")
        if self.election:
            self.start_collector(1)
            wait_until(lambda: first.logged("standby attached") > 0, 30, "the standby")
        self.tail_path = os.path.join(self.folder, "tail.jsonl")
        self.tail_out = open(self.tail_path, "w")
        self.tail = Node(self.folder, "tail", [self.args.binary, "--role", "tail", "--collector", self.group(), "--events",
                                               "--log-format", "json"], stdout=self.tail_out)
        self.nodes.append(self.tail)
        per = self.args.threads // 2
        for index in range(2):
            self.nodes.append(Node(self.folder, f"worker{index}", [
                self.args.binary, "--role", "worker", "--collector", self.group(), "--threads", str(per),
                "--detector", "synthetic", "--synthetic-ms", str(self.args.synthetic_ms), "--log-format", "json", "--log-level", os.environ.get("FAILOVER_WORKER_LOG", "info")]))
        time.sleep(1)
        self.captures = []
        streams = [f"cam{index:03d}" for index in range(self.args.streams)]
        for index in range(4):
            pairs = [a for stream in streams[index::4] for a in ("--source", self.args.source, "--stream", stream)]
            node = Node(self.folder, f"capture{index}", [
                self.args.binary, "--role", "capture", *pairs, "--loop", "--fps", str(self.args.fps),
                "--bind", "tcp://127.0.0.1:*", "--collector", self.group(), "--log-format", "json"])
            self.captures.append(node)
            self.nodes.append(node)

    def active_index(self):
        """The collector that logged "active: publishing" last and still runs."""
        best = None
        for index, node in enumerate(self.collectors):
            if node is None or node.process.poll() is not None:
                continue
            times = [json.loads(line).get("timestamp", "") for line in node.lines() if "active: publishing" in line]
            if times and (best is None or times[-1] > best[1]):
                best = (index, times[-1])
        return best[0] if best else None

    def stop(self):
        for node in self.captures:
            node.stop()
        time.sleep(2)
        for node in self.nodes:
            node.stop()
        self.tail_out.close()
        if self.etcd:
            self.etcd.terminate()
            self.etcd.wait()


def read_tail(path):
    frames, events = {}, {}
    for line in open(path, errors="replace"):
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        key = (entry.get("stream"), entry.get("epoch"))
        if "event" in entry:
            events.setdefault(key, []).append(entry)
        elif "seq" in entry:
            frames.setdefault(key, []).append(entry)
    return frames, events


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round((len(ordered) - 1) * q)))] if ordered else None


def run_kills(args):
    folder = tempfile.mkdtemp(prefix="facewire-failover-")
    fleet = Fleet(args, folder)
    kills = []
    try:
        fleet.start()
        time.sleep(args.warmup)
        for number in range(args.kills):
            active = fleet.active_index()
            if active is None:
                raise RuntimeError("no active collector")
            other = 1 - active
            before = fleet.collectors[other].logged("active: publishing")
            at = time.time()
            fleet.collectors[active].process.kill()
            fleet.collectors[active].process.wait()
            wait_until(lambda: fleet.collectors[other].logged("active: publishing") > before, 30, "the takeover")
            taken = time.time() - at
            attached = fleet.collectors[other].logged("standby attached")
            fleet.start_collector(active)
            wait_until(lambda: fleet.collectors[other].logged("standby attached") > attached, 60, "the new standby")
            kills.append({"at": at, "takeover_s": taken})
            print(f"kill {number + 1}: collector {active} killed, {other} publishing after {taken:.2f} s", flush=True)
            time.sleep(args.between)
        time.sleep(2)
    finally:
        fleet.stop()
    frames, events = read_tail(fleet.tail_path)
    return analyse(args, frames, events, kills, fleet), folder


def analyse(args, frames, events, kills, fleet):
    problems, gaps, reasons, ids_per_stream, appeared_twice = [], [], {}, [], 0
    for (stream, epoch), lines in sorted(frames.items()):
        seqs = []
        for line in lines:
            run = line.get("runLength", 1) or 1
            seqs.extend(range(line["seq"], line["seq"] + run))
            if line["status"] != "processed":
                reasons[line.get("reason", "?")] = reasons.get(line.get("reason", "?"), 0) + run
        if seqs != list(range(seqs[0], seqs[0] + len(seqs))):
            problems.append(f"{stream}: seqs out of order, repeated or missing")
        processed = [line["captureTime"] for line in lines if line["status"] == "processed" and "captureTime" in line]
        for kill in kills:
            before = [t for t in processed if t <= kill["at"]]
            after = [t for t in processed if t > kill["at"]]
            if before and after:
                gaps.append(min(after) - max(before))
        ids = {face.get("trackingID") for line in lines for face in line.get("faces", []) if face.get("trackingID")}
        ids_per_stream.append(len(ids))
        appeared = [e.get("trackingID") for e in events.get((stream, epoch), []) if e.get("event") == "faceAppeared"]
        appeared_twice += len(appeared) - len(set(appeared))
    repeated = sum(1 for line in fleet.tail.lines() if "messages_repeated" in line)
    result = {
        "streams": len(frames), "kills": len(kills),
        "takeover_s": {"p50": percentile([k["takeover_s"] for k in kills], 0.5), "max": max((k["takeover_s"] for k in kills), default=None)},
        "gap_s": {"count": len(gaps), "p50": percentile(gaps, 0.5), "p99": percentile(gaps, 0.99), "max": max(gaps, default=None)},
        "dropped": reasons, "problems": problems,
        "tracking_ids_per_stream": {"min": min(ids_per_stream, default=0), "max": max(ids_per_stream, default=0)},
        "appeared_twice": appeared_twice,
    }
    return result


def run_cost(args):
    rows = []
    for round_number in range(args.rounds):
        for election in (False, True):
            folder = tempfile.mkdtemp(prefix="facewire-failover-cost-")
            fleet = Fleet(args, folder, election=election)
            try:
                fleet.start()
                time.sleep(args.warmup)
                cpu0 = [node.cpu_seconds() for node in fleet.collectors]
                lines0 = sum(1 for _ in open(fleet.tail_path))
                start = time.monotonic()
                time.sleep(args.seconds)
                elapsed = time.monotonic() - start
                cpu1 = [node.cpu_seconds() for node in fleet.collectors]
                lines1 = sum(1 for _ in open(fleet.tail_path))
            finally:
                fleet.stop()
            results = lines1 - lines0
            used = [b - a for a, b in zip(cpu0, cpu1)]
            row = {"round": round_number + 1, "mode": "active+standby" if election else "single",
                   "results_per_s": results / elapsed,
                   "active_us_per_result": used[0] / max(1, results) * 1e6,
                   "standby_us_per_result": (used[1] / max(1, results) * 1e6) if election else None}
            rows.append(row)
            print(json.dumps(row), flush=True)
            shutil.rmtree(folder, ignore_errors=True)
    return rows


def main():
    args = parse_arguments()
    if not os.path.exists(args.binary) or not os.path.isdir(args.source):
        sys.exit(f"missing {args.binary} or {args.source} (swift build -c release --product facewire; scripts/setup.sh makes the demo frames)")
    if not os.path.exists(ETCD):
        sys.exit("etcd is not installed (apt-get install etcd-server)")
    print(f"{args.streams} streams x {args.fps} fps, {args.threads} synthetic threads ({args.synthetic_ms} ms), lease {args.ttl} s", flush=True)
    if args.cost:
        rows = run_cost(args)
        for mode in ("single", "active+standby"):
            mine = [r for r in rows if r["mode"] == mode]
            print(f"{mode}: {statistics.mean(r['results_per_s'] for r in mine):.1f} results/s, active "
                  f"{statistics.mean(r['active_us_per_result'] for r in mine):.1f} us/result"
                  + (f", standby {statistics.mean(r['standby_us_per_result'] for r in mine):.1f} us/result" if mode != "single" else ""))
        figures = {"cost": rows}
    else:
        figures, folder = run_kills(args)
        print(json.dumps(figures, indent=1))
        if figures["problems"] or args.keep:
            print(f"logs and lines kept in {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)
    if args.json:
        with open(args.json, "w") as file:
            json.dump(figures, file, indent=1)


if __name__ == "__main__":
    main()
