"""Free loopback TCP ports for the benchmarks' processes (standard library only)."""
import random
import socket


def ephemeral_low():
    """The lowest port the kernel hands out for outgoing connections (32768 when it cannot be read)."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_ports(count):
    """`count` distinct ports free on 127.0.0.1 now (bound together, then released), chosen below the kernel's
    ephemeral range: a port the kernel picked itself could be handed to some process's outgoing connection (every
    ZeroMQ connect takes one) before our process binds it."""
    low, high = 10000, ephemeral_low()
    sockets = []
    try:
        for _ in range(64 * count):
            if len(sockets) == count:
                break
            s = socket.socket()
            try:
                s.bind(("127.0.0.1", random.randrange(low, high) if high > low + count else 0))
                sockets.append(s)
            except OSError:
                s.close()
        while len(sockets) < count:  # the range is crowded: take what the kernel gives
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()
