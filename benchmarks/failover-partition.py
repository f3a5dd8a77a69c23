#!/usr/bin/env python3
"""Collector failover under a partition (issue 29, SPEC 18.1): the active collector loses etcd but not its clients.

Usage (root, iproute2, etcd-server): benchmarks/failover-partition.py [--binary PATH] [--source DIR] [--streams 6]
                                     [--fps 10] [--ttl 1] [--cut 8] [--heal 6] [--rounds 2] [--prefix fwfp-] [--smoke]

Network namespaces on one bridge (benchmarks/netns.py; nothing touches the root namespace): `e` (10.78.0.2) runs etcd,
`a` (10.78.0.3) and `b` (10.78.0.4) a collector each (`--election`, `--election-ttl --ttl`), `c` (10.78.0.5) the
clients: a worker (synthetic detector), `--streams` capture nodes at `--fps`, and a tail following both collectors.

Each round: after `--cut` seconds, the active's route to etcd becomes a blackhole (`ip route add blackhole
10.78.0.2/32` in its namespace): it can no longer renew its lease, but it still reaches the other collector and
every client, which keep sending it results: the case where two collectors could both believe they are active. After
`--heal` seconds the route comes back; the isolated collector must then follow the new active as a standby.

Checked, from both sides' outputs (each collector's `--output` file, written as it publishes, its size sampled every
20 ms from this script; the namespaces share one clock): the isolated collector's file stops growing before the other
one's starts (no moment where both publish), and the isolated one logs that it stood down within its lease of the
cut. From the tail: every seq of every stream exactly once and in order, every drop with a reason. Exit 1 on any
violation. --smoke: one round, 3 streams.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import netns  # benchmarks/netns.py
import lifeline  # noqa: E402  (benchmarks/lifeline.py; the script's folder is on sys.path)

lifeline.install()  # the processes this script starts end with it

ETCD = shutil.which("etcd") or "/usr/bin/etcd"
HOSTS = [("e", "10.78.0.2"), ("a", "10.78.0.3"), ("b", "10.78.0.4"), ("c", "10.78.0.5")]
ADDRESS = dict(HOSTS)


def parse_arguments(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    cache = os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache"))
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(here, "..", ".build", "release", "facewire"))
    parser.add_argument("--source", default=os.path.join(cache, "facewire/demo/astronaut"), help="a folder of JPEGs")
    parser.add_argument("--streams", type=int, default=6)
    parser.add_argument("--fps", type=float, default=10)
    parser.add_argument("--ttl", type=int, default=1)
    parser.add_argument("--cut", type=float, default=8, help="seconds before each partition")
    parser.add_argument("--heal", type=float, default=6, help="seconds each partition lasts")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--prefix", default="fwfp-")
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args(argv)
    if args.smoke:
        args.rounds, args.streams, args.cut, args.heal = 1, 3, 6, 5
    return args


def ns(host):
    return args.prefix + host


class Node:
    def __init__(self, folder, name, host, command, stdout=None):
        self.name = name
        self.log_path = os.path.join(folder, f"{name}.log")
        self.stderr = open(self.log_path, "a")
        self.process = subprocess.Popen([netns.IP, "netns", "exec", ns(host), *command],
                                        stdout=stdout or subprocess.DEVNULL, stderr=self.stderr)

    def entries(self):
        out = []
        for line in open(self.log_path, errors="replace"):
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                pass
        return out

    def logged(self, message):
        return [e for e in self.entries() if e.get("message") == message]

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.stderr.close()


class Growth:
    """When each file grew, sampled every 20 ms (wall-clock seconds)."""

    def __init__(self, paths):
        self.paths = paths
        self.times = {path: [] for path in paths}
        self.sizes = {path: 0 for path in paths}
        self.running = True
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while self.running:
            now = time.time()
            for path in self.paths:
                try:
                    size = os.path.getsize(path)
                except OSError:
                    continue
                if size > self.sizes[path]:
                    self.sizes[path] = size
                    self.times[path].append(now)
            time.sleep(0.02)

    def stop(self):
        self.running = False
        self.thread.join()


def log_time(entry):
    # JSON log "time": 2026-11-27T15:22:56.196Z (UTC).
    import datetime
    return datetime.datetime.strptime(entry["time"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc).timestamp()


def main():
    global args
    args = parse_arguments()
    if os.geteuid() != 0 or not os.path.exists(ETCD) or not os.path.exists(args.binary) or not os.path.isdir(args.source):
        sys.exit("needs root, etcd-server, the binary and a folder of JPEGs")
    folder = tempfile.mkdtemp(prefix="facewire-partition-")
    netns.remove_namespaces(args.prefix)
    netns.create_network(args.prefix, HOSTS)
    nodes, problems = [], []
    try:
        etcd = subprocess.Popen([netns.IP, "netns", "exec", ns("e"), ETCD, "--name", "p0", "--data-dir", os.path.join(folder, "etcd"),
                                 "--listen-client-urls", "http://10.78.0.2:2379", "--advertise-client-urls", "http://10.78.0.2:2379",
                                 "--listen-peer-urls", "http://10.78.0.2:2380", "--initial-advertise-peer-urls", "http://10.78.0.2:2380",
                                 "--initial-cluster", "p0=http://10.78.0.2:2380", "--initial-cluster-state", "new", "--unsafe-no-fsync",
                                 "--heartbeat-interval", "50", "--election-timeout", "500", "--logger", "zap", "--log-level", "error"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1.5)
        outputs = {host: os.path.join(folder, f"out-{host}.jsonl") for host in ("a", "b")}
        collectors = {}
        for host in ("a", "b"):
            address = ADDRESS[host]
            collectors[host] = Node(folder, f"collector-{host}", host, [
                args.binary, "--role", "collector", "--bind", f"tcp://{address}:5556", "--publish", f"tcp://{address}:5557",
                "--replication-bind", f"tcp://{address}:5558", "--advertise-host", address, "--election", "etcd://10.78.0.2:2379",
                "--election-ttl", str(args.ttl), "--stats-interval", "0", "--max-delay", "500", "--output", outputs[host],
                "--log-format", "json"])
            nodes.append(collectors[host])
            netns.wait_until(f"collector {host}", lambda: collectors[host].logged("collector listening"), 30)
            time.sleep(1)
        netns.wait_until("a standby attached", lambda: any(c.logged("standby attached") for c in collectors.values()), 30)
        group = "tcp://10.78.0.3:5556,tcp://10.78.0.4:5556"
        tail_path = os.path.join(folder, "tail.jsonl")
        tail_out = open(tail_path, "w")
        nodes.append(Node(folder, "tail", "c", [args.binary, "--role", "tail", "--collector", group, "--log-format", "json"], stdout=tail_out))
        nodes.append(Node(folder, "worker", "c", [args.binary, "--role", "worker", "--collector", group, "--threads", "4", "--detector",
                                                  "synthetic", "--synthetic-ms", "20", "--log-format", "json"]))
        time.sleep(1)
        pairs = [a for index in range(args.streams) for a in ("--source", args.source, "--stream", f"cam{index:02d}")]
        capture = Node(folder, "capture", "c", [args.binary, "--role", "capture", *pairs, "--loop", "--fps", str(args.fps), "--bind",
                                                "tcp://10.78.0.5:*", "--collector", group, "--log-format", "json"])
        nodes.append(capture)
        growth = Growth(list(outputs.values()))
        rounds = []
        for number in range(args.rounds):
            time.sleep(args.cut)
            active = next((h for h, c in collectors.items()
                           if c.logged("active: publishing") and (not c.logged("standing down: stopped publishing")
                                                                  or log_time(c.logged("active: publishing")[-1]) > log_time(c.logged("standing down: stopped publishing")[-1]))),
                          None)
            if active is None:
                problems.append(f"round {number + 1}: no active collector")
                break
            other = "b" if active == "a" else "a"
            takeovers = len(collectors[other].logged("active: publishing"))
            downs = len(collectors[active].logged("standing down: stopped publishing"))
            cut = time.time()
            netns.ip("netns", "exec", ns(active), netns.IP, "route", "add", "blackhole", "10.78.0.2/32")
            netns.wait_until("the takeover", lambda: len(collectors[other].logged("active: publishing")) > takeovers, 30)
            time.sleep(args.heal)
            netns.ip("netns", "exec", ns(active), netns.IP, "route", "del", "blackhole", "10.78.0.2/32")
            healed = time.time()
            netns.wait_until("the isolated collector to stand by", lambda: len(collectors[active].logged("standing down: stopped publishing")) > downs, 30)
            attached = len(collectors[other].logged("standby attached"))
            netns.wait_until("it to follow the new active", lambda: len(collectors[other].logged("standby attached")) > attached, 60)
            down_at = log_time(collectors[active].logged("standing down: stopped publishing")[downs])
            took_at = log_time(collectors[other].logged("active: publishing")[takeovers])
            isolated_last = max((t for t in growth.times[outputs[active]] if t < healed), default=0)
            other_first = min((t for t in growth.times[outputs[other]] if t > cut), default=float("inf"))
            row = {"round": number + 1, "isolated": active, "stood_down_after_s": round(down_at - cut, 3),
                   "takeover_after_s": round(took_at - cut, 3), "isolated_last_write_after_s": round(isolated_last - cut, 3),
                   "other_first_write_after_s": round(other_first - cut, 3)}
            rounds.append(row)
            print(json.dumps(row), flush=True)
            if not isolated_last < other_first:
                problems.append(f"round {number + 1}: both published at once ({row})")
            if down_at - cut > args.ttl + 0.1:
                problems.append(f"round {number + 1}: the isolated active stood down {down_at - cut:.2f} s after the cut, beyond its lease")
            if down_at > took_at:
                problems.append(f"round {number + 1}: the other took over before the isolated one stood down")
        time.sleep(2)
        capture.stop()
        time.sleep(3)
        growth.stop()
        for node in nodes:
            node.stop()
        tail_out.close()
        etcd.terminate()
        etcd.wait()
        problems += check_tail(tail_path)
    finally:
        for node in nodes:
            if node.process.poll() is None:
                node.process.kill()
        netns.remove_namespaces(args.prefix)
    if problems:
        print("PROBLEMS:\n" + "\n".join(problems) + f"\n(logs in {folder})")
        sys.exit(1)
    print("no moment where both collectors published; every stream in order, every seq once, every drop with a reason")
    shutil.rmtree(folder, ignore_errors=True)


def check_tail(path):
    problems, streams = [], {}
    for line in open(path, errors="replace"):
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if "seq" in entry and "status" in entry:
            streams.setdefault((entry["stream"], entry["epoch"]), []).append(entry)
    if not streams:
        problems.append("the tail printed no frame")
    for (stream, epoch), lines in sorted(streams.items()):
        seqs = []
        for line in lines:
            seqs.extend(range(line["seq"], line["seq"] + (line.get("runLength", 1) or 1)))
            if line["status"] != "processed" and not line.get("reason"):
                problems.append(f"{stream}: seq {line['seq']} dropped without a reason")
        if seqs != list(range(seqs[0], seqs[0] + len(seqs))):
            problems.append(f"{stream}/{epoch}: seqs out of order, repeated or missing")
    return problems


if __name__ == "__main__":
    main()
