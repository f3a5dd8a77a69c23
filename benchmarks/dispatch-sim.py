#!/usr/bin/env python3
"""A discrete-event model of frame dispatch, to compare dispatch protocols before building one (issue 28).

usage: dispatch-sim.py [--cameras 100] [--fps 10] [--threads 32] [--service-ms 50] [--latency-ms 0.1]
                       [--black-holes 0] [--seconds 30] [--protocol all]

It models capture nodes with a leaky one-frame queue (a newer frame replaces a held one, which is dropped at the
source as no-worker), worker threads that take `--service-ms` a frame, and a one-way message latency. It counts
messages, not their CPU cost. Protocols:

* credits   today's FWP v1: every thread holds a credit at every capture node and renews it at the node it got a
            frame from once that frame is done; a node sends a frame to its oldest credit. In overload a thread is
            handed frames by several nodes and they queue at the thread, past the point where they could be dropped
            at their source.
* rotate    a thread holds one credit at a time and offers it to the capture nodes in turn; a node without a frame
            keeps the credit until one comes (the thread is parked there).
* broker    a thread tells the collector it is idle (its result says so); a node with a frame and no request
            outstanding asks the collector for a thread; the collector pairs them (the stream waiting longest first,
            or by weight) and tells the node which thread to send to. Frames wait only at their source. The collector
            also sees which thread holds which frame: a thread that says it is idle again without a result is
            ejected after two such strikes and probed with one frame after a backoff.

A black-hole thread answers nothing but says it is idle at once (in `credits` and `rotate`: it renews its credit
at once). Prints, per protocol: frames offered, processed (and the ratio to capacity), latency p50/p99 (capture to
result), drops by reason, each stream's share of processed frames (min / mean), messages per processed frame.
"""
import argparse
import heapq
import random
from collections import deque

parser = argparse.ArgumentParser()
parser.add_argument("--cameras", type=int, default=100)
parser.add_argument("--fps", type=float, default=10)
parser.add_argument("--threads", type=int, default=32)
parser.add_argument("--service-ms", type=float, default=50)
parser.add_argument("--latency-ms", type=float, default=0.1)
parser.add_argument("--max-age-ms", type=float, default=2000, help="a frame older than this at a worker is dropped stale")
parser.add_argument("--black-holes", type=int, default=0)
parser.add_argument("--seconds", type=float, default=30)
parser.add_argument("--seed", type=int, default=1)
parser.add_argument("--protocol", default="all", help="credits, rotate, broker or all")
args = parser.parse_args()

S = args.service_ms / 1000
D = args.latency_ms / 1000
MAX_AGE = args.max_age_ms / 1000


class Sim:
    def __init__(self, protocol):
        self.protocol = protocol
        self.rng = random.Random(args.seed)
        self.events = []
        self.counter = 0
        self.now = 0.0
        self.messages = 0
        self.latencies = []
        self.processed = [0] * args.cameras
        self.drops = {}
        self.offered = 0
        self.held = [None] * args.cameras          # capture time of the held frame
        self.bad = set(range(args.black_holes))    # black-hole thread ids
        self.busy = [False] * args.threads
        self.queue = [deque() for _ in range(args.threads)]  # frames waiting at a thread (credits)
        # credits: per node, thread ids holding a credit, oldest first
        self.credits = [deque() for _ in range(args.cameras)]
        # rotate: the node each thread is parked at
        self.next_node = [self.rng.randrange(args.cameras) for _ in range(args.threads)]
        # broker
        self.idle = deque()
        self.requests = deque()                    # nodes waiting for a thread, in the order they asked
        self.requested = [False] * args.cameras
        self.assigned = {}                         # thread -> outstanding frames without a result
        self.strikes = [0] * args.threads
        self.ejected_until = [0.0] * args.threads
        self.ejections = 0

    def at(self, time, kind, *data):
        self.counter += 1
        heapq.heappush(self.events, (time, self.counter, kind, data))

    def send(self, delay_kind, *data):
        self.messages += 1
        self.at(self.now + D, delay_kind, *data)

    def drop(self, reason, count=1):
        self.drops[reason] = self.drops.get(reason, 0) + count

    # ---- common ----
    def start(self):
        for node in range(args.cameras):
            self.at(self.rng.uniform(0, 1 / args.fps), "frame", node)
        for thread in range(args.threads):
            self.thread_idle(thread, first=True)
        while self.events:
            time, _, kind, data = heapq.heappop(self.events)
            if time > args.seconds:
                break
            self.now = time
            getattr(self, "on_" + kind)(*data)

    def on_frame(self, node):
        self.at(self.now + 1 / args.fps, "frame", node)
        self.offered += 1
        if self.held[node] is not None:
            self.drop("no-worker")
        self.held[node] = self.now
        self.node_has_frame(node)

    def on_deliver(self, thread, node, captured):
        """A frame arrives at a thread."""
        if thread in self.bad:
            self.drop("timeout (black hole)")
            self.thread_idle(thread, after=node)
            return
        if self.busy[thread]:
            self.queue[thread].append((node, captured))
            return
        self.run(thread, node, captured)

    def run(self, thread, node, captured):
        if self.now - captured > MAX_AGE:
            self.drop("stale")
            self.send("result", thread, node, captured, False)
            self.next_job(thread, node)
            return
        self.busy[thread] = True
        self.at(self.now + S, "done", thread, node, captured)

    def on_done(self, thread, node, captured):
        self.busy[thread] = False
        self.send("result", thread, node, captured, True)
        self.next_job(thread, node)

    def next_job(self, thread, node):
        if self.queue[thread]:
            self.renew(thread, node)
            self.run(thread, *self.queue[thread].popleft())
        else:
            self.thread_idle(thread, after=node)

    def on_result(self, thread, node, captured, processed):
        if processed:
            self.processed[node] += 1
            self.latencies.append(self.now - captured)
        if self.protocol == "broker":
            self.assigned[thread] = max(0, self.assigned.get(thread, 0) - 1)
            self.strikes[thread] = 0
            self.broker_idle(thread)

    # ---- protocol hooks ----
    def thread_idle(self, thread, first=False, after=None):
        if self.protocol == "credits":
            if first:
                # Threads start at different moments: their first Readys reach the nodes in a different order.
                for node in range(args.cameras):
                    self.messages += 1
                    self.at(self.rng.uniform(0, 0.05) + D, "ready", thread, node)
            else:
                self.send("ready", thread, after)
        elif self.protocol == "rotate":
            node = self.next_node[thread]
            self.next_node[thread] = (node + 1) % args.cameras
            self.send("ready", thread, node)
        else:
            if first or thread in self.bad:
                self.send("broker_ready", thread)
            # otherwise the result itself says idle

    def renew(self, thread, node):
        if self.protocol == "credits":
            self.send("ready", thread, node)

    def on_ready(self, thread, node):
        if self.held[node] is not None:
            captured, self.held[node] = self.held[node], None
            self.send("deliver", thread, node, captured)
        else:
            self.credits[node].append(thread)

    def node_has_frame(self, node):
        if self.protocol in ("credits", "rotate"):
            if self.credits[node]:
                thread = self.credits[node].popleft()
                captured, self.held[node] = self.held[node], None
                self.send("deliver", thread, node, captured)
        elif not self.requested[node]:
            self.requested[node] = True
            self.send("request", node)

    # ---- broker ----
    def on_broker_ready(self, thread):
        if self.assigned.get(thread, 0) > 0:
            # Idle again without a result for what it was given: a strike; two eject it for a backoff.
            self.strikes[thread] += 1
            self.assigned[thread] = 0
            if self.strikes[thread] >= 2:
                self.ejections += 1
                self.ejected_until[thread] = self.now + min(30, 2 ** self.strikes[thread])
                self.at(self.ejected_until[thread], "readmit", thread)
                return
        self.broker_idle(thread)

    def on_readmit(self, thread):
        self.broker_idle(thread)

    def broker_idle(self, thread):
        if self.now < self.ejected_until[thread]:
            return
        if self.requests:
            self.assign(self.requests.popleft(), thread)
        else:
            self.idle.append(thread)

    def on_request(self, node):
        while self.idle:
            thread = self.idle.popleft()
            if self.now >= self.ejected_until[thread]:
                self.assign(node, thread)
                return
        self.requests.append(node)

    def assign(self, node, thread):
        self.assigned[thread] = self.assigned.get(thread, 0) + 1
        self.send("assigned", node, thread)

    def on_assigned(self, node, thread):
        self.requested[node] = False
        if self.held[node] is None:
            self.send("broker_ready", thread)  # nothing to send after all: the thread is idle again
            self.assigned[thread] -= 1
            return
        captured, self.held[node] = self.held[node], None
        self.send("deliver", thread, node, captured)

    def report(self):
        processed = sum(self.processed)
        capacity = (args.threads - args.black_holes) / S * args.seconds
        lat = sorted(self.latencies)
        p = lambda q: 1000 * lat[min(len(lat) - 1, int(q * len(lat)))] if lat else float("nan")
        mean = processed / args.cameras
        drops = ", ".join(f"{k} {v}" for k, v in sorted(self.drops.items())) or "none"
        print(f"| {self.protocol} | {self.offered} | {processed} | {processed / min(capacity, self.offered):.2f} | {p(0.5):.1f} | {p(0.99):.1f} "
              f"| {drops} | {min(self.processed) / mean if mean else 0:.2f} | {self.messages / max(processed, 1):.1f} |")


print(f"{args.cameras} cameras × {args.fps:g} fps, {args.threads} threads × {args.service_ms:g} ms "
      f"({args.black_holes} black holes), one-way latency {args.latency_ms:g} ms, max age {args.max_age_ms:g} ms, {args.seconds:g} s")
print()
print("| protocol | offered | processed | / min(capacity, offered) | p50 ms | p99 ms | drops | least-served / mean | messages per processed frame |")
print("|---|---|---|---|---|---|---|---|---|")
for protocol in (["credits", "rotate", "broker"] if args.protocol == "all" else [args.protocol]):
    sim = Sim(protocol)
    sim.start()
    sim.report()
