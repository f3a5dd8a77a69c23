"""Follows a Facewire collector's results stream, as `facewire --role tail` does (protocol/SPEC.md 4.3, 7.4, 15.2).

    for item in facewire.Client("tcp://collector:5556", streams=["lobby"]):
        if isinstance(item, facewire.Frame):
            print(item.seq, [face.tracking_id for face in item.faces])

One collector (not yet a failover group or shards: SPEC 18, 19). Values from the network are checked: a message
that does not parse, has another version, or no body is skipped (a heartbeat), never raised.
"""
import asyncio
import os
import socket
import time
from dataclasses import dataclass, field
from typing import Any, Iterator, List, Optional
from urllib.parse import urlsplit

import zmq
import zmq.asyncio

from . import facewire_pb2 as pb
from .jsonlines import line as json_line

MAX_MESSAGE_BYTES = 1 << 20  # SPEC 14.1: a results-stream or control message


@dataclass
class Item:
    """One message of the stream; `message` is the protobuf StreamMessage it came from."""
    stream: str
    epoch: int
    message: Any = field(repr=False)

    def json(self) -> str:
        """The line `facewire tail` prints for it (SPEC 12), without the newline."""
        return json_line(self.message)


@dataclass
class Frame(Item):
    seq: int = 0
    status: str = "processed"  # processed, dropped, error (unknown values: unknown-N)
    reason: str = ""
    faces: List[Any] = field(default_factory=list)  # protobuf Face messages (SPEC 11.2)
    capture_time: Optional[float] = None  # Unix seconds
    media_time: Optional[float] = None  # seconds on the source's own timeline (files, folders; SPEC 6.1)


@dataclass
class FaceAppeared(Item):
    seq: int = 0
    tracking_id: int = 0


@dataclass
class FaceLeft(Item):
    seq: int = 0
    tracking_id: int = 0
    tracking_frame_count: int = 0
    heart_rate_bpm: Optional[float] = None


@dataclass
class StreamEnded(Item):
    frames: int = 0
    processed: int = 0
    dropped: int = 0


@dataclass
class TrackingReset(Item):
    seq: int = 0
    ended_tracks: int = 0


@dataclass
class Statistics(Item):
    fps: float = 0.0


_STATUS = {pb.FRAME_STATUS_PROCESSED: "processed", pb.FRAME_STATUS_DROPPED: "dropped", pb.FRAME_STATUS_ERROR: "error"}


def parse(parts) -> Optional[Item]:
    """A results-stream message ([topic, StreamMessage]) as an Item; None for a heartbeat or anything malformed."""
    if len(parts) != 2 or len(parts[1]) > MAX_MESSAGE_BYTES:
        return None
    message = pb.StreamMessage()
    try:
        message.ParseFromString(bytes(parts[1]))
    except Exception:  # noqa: BLE001 - a hostile or broken message is skipped, whatever the parser raises
        return None
    if message.version != 1:
        return None
    body = message.WhichOneof("body")
    common = dict(stream=message.stream, epoch=message.epoch, message=message)
    if body == "frame":
        f = message.frame
        return Frame(seq=f.seq, status=_STATUS.get(f.status, f"unknown-{f.status}"), reason=f.reason,
                     faces=list(f.faces), capture_time=f.capture_time_us / 1e6 if f.capture_time_us else None,
                     media_time=f.media_time_us / 1e6 if f.HasField("media_time_us") else None, **common)
    if body == "event":
        e = message.event
        if e.kind == pb.FaceEvent.KIND_APPEARED:
            return FaceAppeared(seq=e.seq, tracking_id=e.tracking_id, **common)
        return FaceLeft(seq=e.seq, tracking_id=e.tracking_id, tracking_frame_count=e.tracking_frame_count,
                        heart_rate_bpm=e.heart_rate.bpm if e.HasField("heart_rate") else None, **common)
    if body == "end":
        s = message.end
        return StreamEnded(frames=s.frames, processed=s.processed, dropped=s.dropped, **common)
    if body == "reset":
        return TrackingReset(seq=message.reset.seq, ended_tracks=message.reset.ended_tracks, **common)
    if body == "statistics":
        return Statistics(fps=message.statistics.fps, **common)
    return None


def read_key(path: str, name: str) -> bytes:
    """`name` ("public-key" or "secret-key") from a `facewire keygen` file: a Z85 key of 40 characters."""
    with open(path) as handle:
        for text in handle:
            key, _, value = text.partition("=")
            if key.strip() == name:
                value = value.strip().strip('"')
                if len(value) != 40:
                    raise ValueError(f"{path}: {name} is not a 40-character Z85 key")
                return value.encode()
    raise ValueError(f"{path} has no {name}")


def _topic(stream: str) -> bytes:
    return stream.encode() + b"\x00"


class Client:
    """Subscribes to a collector's results. `collector`: its control endpoint (the results endpoint is asked with a
    Hello, SPEC 7.4); or `publish`: the results endpoint directly. `streams`: only these (default: all). CURVE (SPEC
    15.2): `curve_secret_key` (this client's .key file from `facewire keygen`) and `curve_server_key` (the collector's
    .pub file). Iterate it (`for item in client`) or, in asyncio, `async for item in client.aiter()`."""

    def __init__(self, collector: Optional[str] = None, publish: Optional[str] = None, streams=(),
                 curve_secret_key: Optional[str] = None, curve_server_key: Optional[str] = None,
                 hello_timeout: float = 30.0, on_subscribed=None):
        if (collector is None) == (publish is None):
            raise ValueError("give exactly one of collector and publish")
        if (curve_secret_key is None) != (curve_server_key is None):
            raise ValueError("CURVE needs both curve_secret_key and curve_server_key")
        self.collector, self.publish, self.streams = collector, publish, list(streams)
        self.hello_timeout = hello_timeout
        # Called once, at the first message (a heartbeat counts): the subscription has reached the collector, and
        # nothing published from then on is missed (ZeroMQ drops what is published before).
        self.on_subscribed = on_subscribed
        self.curve = None
        if curve_secret_key:
            self.curve = (read_key(curve_secret_key, "public-key"), read_key(curve_secret_key, "secret-key"),
                          read_key(curve_server_key, "public-key"))

    def _secure(self, sock):
        sock.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE_BYTES + 4096)
        if self.curve:
            sock.curve_publickey, sock.curve_secretkey, sock.curve_serverkey = self.curve

    def _hello(self) -> bytes:
        envelope = pb.Envelope(version=1)
        envelope.hello.role = pb.ROLE_TAIL
        envelope.hello.node_id = f"{socket.gethostname()}:{os.getpid()}-python"
        return envelope.SerializeToString()

    def _endpoint_from(self, reply) -> Optional[str]:
        envelope = pb.Envelope()
        try:
            envelope.ParseFromString(bytes(reply))
        except Exception:  # noqa: BLE001
            return None
        if envelope.version != 1 or envelope.WhichOneof("body") != "welcome":
            return None
        endpoint = envelope.welcome.publish_endpoint
        try:
            parts = urlsplit(endpoint)
            port = parts.port  # raises ValueError for a port out of range or not a number
        except ValueError:
            return None
        if parts.scheme != "tcp" or not port or len(endpoint) > 1024:
            return None
        if parts.hostname in ("*", "0.0.0.0", "::", None):
            host = urlsplit(self.collector).hostname
            return f"tcp://{host}:{port}"
        return endpoint

    def _subscribe(self, sub):
        self._secure(sub)
        sub.setsockopt(zmq.RCVHWM, 100_000)
        if self.streams:
            sub.setsockopt(zmq.SUBSCRIBE, b"\x00")
            for stream in self.streams:
                sub.setsockopt(zmq.SUBSCRIBE, _topic(stream))
        else:
            sub.setsockopt(zmq.SUBSCRIBE, b"")

    def resolve(self, context) -> str:
        """The results endpoint: `publish`, or the collector's answer to a Hello said every second."""
        if self.publish:
            return self.publish
        dealer = context.socket(zmq.DEALER)
        try:
            dealer.setsockopt(zmq.LINGER, 0)
            self._secure(dealer)
            dealer.connect(self.collector)
            deadline, next_hello = time.monotonic() + self.hello_timeout, 0.0
            while time.monotonic() < deadline:
                if time.monotonic() >= next_hello:
                    dealer.send(self._hello())
                    next_hello = time.monotonic() + 1.0
                if dealer.poll(200):
                    endpoint = self._endpoint_from(dealer.recv())
                    if endpoint:
                        return endpoint
            raise TimeoutError(f"no Welcome from {self.collector} within {self.hello_timeout} s")
        finally:
            dealer.close()

    def _received(self, parts) -> Optional[Item]:
        """One message off the SUB socket: the first (a heartbeat counts) calls on_subscribed; then parse()."""
        if not self._live:
            self._live = True
            if self.on_subscribed:
                self.on_subscribed()
        return parse(parts)

    def __iter__(self) -> Iterator[Item]:
        context = zmq.Context()
        sub = context.socket(zmq.SUB)
        try:
            self._subscribe(sub)
            sub.connect(self.resolve(context))
            self._live = False
            while True:
                item = self._received(sub.recv_multipart())
                if item is not None:
                    yield item
        finally:
            sub.close(linger=0)
            context.term()

    async def aiter(self):
        """The same items from an asyncio program (zmq.asyncio; the Hello exchange runs in a thread)."""
        context = zmq.asyncio.Context()
        sub = context.socket(zmq.SUB)
        try:
            self._subscribe(sub)
            plain = zmq.Context()
            try:
                endpoint = await asyncio.get_running_loop().run_in_executor(None, self.resolve, plain)
            finally:
                plain.term()
            sub.connect(endpoint)
            self._live = False
            while True:
                item = self._received(await sub.recv_multipart())
                if item is not None:
                    yield item
        finally:
            sub.close(linger=0)
            context.term()
