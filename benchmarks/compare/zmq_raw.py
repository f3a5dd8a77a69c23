#!/usr/bin/python3
"""Raw libzmq rates for benchmarks/bench-transport.py: the ceiling the transport of one machine allows, with pyzmq
(Debian's python3-zmq, on the system libzmq 4.3.4 that Facewire links too). One process per role, loopback TCP.

  zmq_raw.py pull   --messages N --warm W [--curve]      binds, prints "port P", then "warm" and "last" lines
  zmq_raw.py push   --connect EP --file F --messages N [--curve]
  zmq_raw.py router --messages N --warm W --dealers K --file F [--curve]
                                                          binds, prints "port P"; one message per READY (Facewire's
                                                          credit dialog without protobuf, collector or tail)
  zmq_raw.py dealer --connect EP [--curve]                READY, receive, READY, ... until an empty message

push-pull is a stream: PUSH keeps the pipe full (the figure in /work/shared/PLATFORM.md). router-dealer is the data
plane's dialog (SPEC 3.1): each message answers a READY, so with K dealers at most K messages are in flight and every
message costs a round trip. With --curve the binding side is a CURVE server; its key pair and the client's come in
the environment (FW_SERVER_PUBLIC, FW_SERVER_SECRET, FW_CLIENT_PUBLIC, FW_CLIENT_SECRET, Z85 text). There is no ZAP
handler, so the server accepts any client key: encryption, not authentication (Facewire also runs a ZAP handler,
once per connection, not per message).
"""
import argparse
import os
import sys

import zmq


def secure(socket, server):
    if server:
        socket.curve_server = True
        socket.curve_secretkey = os.environ["FW_SERVER_SECRET"].encode()
    else:
        socket.curve_serverkey = os.environ["FW_SERVER_PUBLIC"].encode()
        socket.curve_publickey = os.environ["FW_CLIENT_PUBLIC"].encode()
        socket.curve_secretkey = os.environ["FW_CLIENT_SECRET"].encode()


def say(text):
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def bind(socket, curve):
    if curve:
        secure(socket, server=True)
    port = socket.bind_to_random_port("tcp://127.0.0.1")
    say(f"port {port}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("role", choices=["pull", "push", "router", "dealer"])
    parser.add_argument("--connect")
    parser.add_argument("--file")
    parser.add_argument("--messages", type=int, default=0)
    parser.add_argument("--warm", type=int, default=0)
    parser.add_argument("--dealers", type=int, default=1)
    parser.add_argument("--curve", action="store_true")
    args = parser.parse_args()
    context = zmq.Context()
    payload = open(args.file, "rb").read() if args.file else b""

    if args.role == "pull":
        socket = context.socket(zmq.PULL)
        bind(socket, args.curve)
        for index in range(args.messages):
            socket.recv(copy=False)
            if index == args.warm:
                say("warm")
        say("last")
    elif args.role == "push":
        socket = context.socket(zmq.PUSH)
        if args.curve:
            secure(socket, server=False)
        socket.connect(args.connect)
        for _ in range(args.messages):
            socket.send(payload, copy=False)
    elif args.role == "router":
        socket = context.socket(zmq.ROUTER)
        socket.router_mandatory = 1
        bind(socket, args.curve)
        sent, ended = 0, set()
        while len(ended) < args.dealers:
            identity, _ready = socket.recv_multipart(copy=False)
            if sent < args.messages:
                socket.send_multipart([identity, payload], copy=False)
                if sent == args.warm:
                    say("warm")
                sent += 1
                if sent == args.messages:
                    say("last")
            else:
                socket.send_multipart([identity, b""])
                ended.add(identity.bytes)
    else:
        socket = context.socket(zmq.DEALER)
        if args.curve:
            secure(socket, server=False)
        socket.connect(args.connect)
        while True:
            socket.send(b"R")
            if len(socket.recv(copy=False)) == 0:
                break
    socket.close(linger=10000)
    context.term()


if __name__ == "__main__":
    main()
