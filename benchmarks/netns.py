"""Network namespaces as hosts, for the benchmarks that run a cluster across them (bench-scale.py, fleet-sim.py).

A "switch" namespace (`<prefix>sw`) holds a bridge; each host namespace (`<prefix><name>`) has one veth (`eth0`, its
address /24) on it. Every link is made inside the switch namespace with the host end moved straight into the host:
nothing is connected to the root namespace, so no packet leaves the machine. Needs root and iproute2. Standard library
only.
"""
import os
import re
import shutil
import signal
import subprocess
import time

IP = shutil.which("ip") or "/usr/sbin/ip"


def ip(*arguments, check=True):
    """Runs `ip ARGUMENTS`; its stdout (a RuntimeError with its stderr if it fails and `check`)."""
    result = subprocess.run([IP, *arguments], capture_output=True, text=True)
    if check and result.returncode != 0:
        raise RuntimeError(f"ip {' '.join(arguments)}: {result.stderr.strip()}")
    return result.stdout


def remove_namespaces(prefix, names=r"\S*"):
    """Kills whatever runs in our namespaces and deletes them. Only ours: `prefix` followed by a name matching the
    regular expression `names` (so that a run with prefix fwfs- can leave fwfs-smoke-hub alone)."""
    ours = re.compile(re.escape(prefix) + names)
    for line in ip("netns", "list", check=False).splitlines():
        name = line.split(" ")[0]
        if not ours.fullmatch(name):
            continue
        for pid in ip("netns", "pids", name, check=False).split():
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
        ip("netns", "del", name, check=False)


def create_network(prefix, hosts):
    """The switch and one namespace per (name, address) in `hosts`, each on the bridge."""
    switch = prefix + "sw"
    ip("netns", "add", switch)
    ip("netns", "exec", switch, IP, "link", "set", "lo", "up")
    ip("netns", "exec", switch, IP, "link", "add", "br0", "type", "bridge")
    ip("netns", "exec", switch, IP, "link", "set", "br0", "up")
    for host, address in hosts:
        ns = prefix + host
        ip("netns", "add", ns)
        ip("netns", "exec", ns, IP, "link", "set", "lo", "up")
        ip("netns", "exec", switch, IP, "link", "add", f"p-{host}", "type", "veth", "peer", "name", "eth0", "netns", ns)
        ip("netns", "exec", switch, IP, "link", "set", f"p-{host}", "master", "br0")
        ip("netns", "exec", switch, IP, "link", "set", f"p-{host}", "up")
        ip("netns", "exec", ns, IP, "addr", "add", f"{address}/24", "dev", "eth0")
        ip("netns", "exec", ns, IP, "link", "set", "eth0", "up")


def wait_until(what, predicate, timeout, interval=0.05):
    """Polls `predicate` until it holds; a RuntimeError naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(interval)


def machine_busy():
    """(busy, total) jiffies of the whole machine so far, from /proc/stat: the difference of two samples gives how
    busy it was in between."""
    with open("/proc/stat") as f:
        values = [int(v) for v in f.readline().split()[1:]]
    idle = values[3] + values[4]
    return sum(values) - idle, sum(values)
