"""Free loopback TCP ports for the benchmarks' processes (standard library only)."""
import socket


def free_ports(count):
    """`count` distinct ports free on 127.0.0.1 now (bound together, then released)."""
    sockets = [socket.socket() for _ in range(count)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports
