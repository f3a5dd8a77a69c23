#!/usr/bin/env python3
"""Writes the Facewire v1 golden test vectors (protocol/vectors/*.bin and vectors.json).

This is an INDEPENDENT encoder: plain Python 3 standard library, protobuf wire format written by
hand from the encoding rules (varints, zig-zag-free two's complement int64, little-endian fixed32
floats, length-delimited strings and messages). It does not use protoc, the protobuf package or
anything generated from facewire.proto, so a decoder that agrees with these bytes agrees with the
protobuf specification, not merely with itself.

Canonical proto3 encoding is used throughout (what protoc-generated encoders emit):
  * fields in increasing field-number order, a oneof member at its own field number;
  * scalar fields with implicit presence are omitted when they hold their default (0, 0.0, "");
  * `optional` scalars (Face.face_angle, Face.yaw, the Face.*_score fields,
    DetectionSettings.classifiers) and sub-messages are written when present, even when they hold
    only defaults (an empty sub-message is `tag 00`, an optional 0 is its key and a zero value);
  * repeated fields are written element by element, in order (Face.skin: one sub-message each);
  * unknown fields (only in the *_unknown_field vector) come last.
So a canonical encoder (SwiftProtobuf, protoc's C++/Python encoders) re-encodes every valid vector
to the same bytes.

Usage: python3 make_vectors.py        (writes next to this file; deterministic, run it again freely)

vectors.json format: {"vectors": [ {name, kind, parts, hex, valid, expect | error, note} ]}
  kind   "frame" (FrameMessage: [FrameHeader][JPEG]), "ready", "envelope" (one part),
         "stream" ([topic][StreamMessage])
  parts  the .bin files of the ZeroMQ message parts, in order; hex: the same bytes in hex
  expect the decoded message: proto field names; every scalar field listed (defaults included);
         every repeated field listed ([] when empty);
         a sub-message or optional field key only when present; enums by their proto names (a
         value the schema does not name, by its number); bools as JSON true / false; a oneof
         member under its field name. For "frame" also "image_size".
  error  for invalid vectors: the ProtocolError code a v1 decoder reports
         (malformed, unsupportedVersion, invalidStream, tooLarge, missingBody).
All integers in the vectors are below 2**53, so every JSON reader holds them exactly; all floats
are exactly representable as IEEE-754 binary32.
"""

import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

# Wire types.
VARINT, FIXED64, LEN, FIXED32 = 0, 1, 2, 5


def varint(value):
    """Base-128 varint of an unsigned 64-bit value (negative int64 is first taken modulo 2**64)."""
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


def key(field, wire_type):
    return varint((field << 3) | wire_type)


def f_uint(field, value, always=False):
    """uint32 / uint64 / int64 / enum: varint, omitted when 0 unless `always` (unknown-field tests)."""
    if value == 0 and not always:
        return b""
    return key(field, VARINT) + varint(value)


def f_float(field, value, present=False):
    """float: fixed32 little-endian; omitted when +0.0 unless it has explicit presence."""
    packed = struct.pack("<f", value)
    if struct.unpack("<f", packed)[0] != value:
        raise ValueError(f"{value} is not exactly representable as binary32")
    if packed == b"\x00\x00\x00\x00" and not present:
        return b""
    return key(field, FIXED32) + packed


def f_bool(field, value):
    """bool: varint 1, omitted when false (implicit presence)."""
    return f_uint(field, 1 if value else 0)


def f_bytes(field, data, present=False):
    """Length-delimited: strings (UTF-8), bytes, and sub-messages (present=True writes even b"")."""
    if not data and not present:
        return b""
    return key(field, LEN) + varint(len(data)) + data


def f_string(field, text):
    return f_bytes(field, text.encode("utf-8"))


def f_message(field, encoded):
    return f_bytes(field, encoded, present=True)


# ---------------------------------------------------------------------------------------------
# Encoders, one per message, taking the same dicts that go into vectors.json as "expect".
# Field numbers are those of protocol/facewire.proto (package facewire.v1).
# ---------------------------------------------------------------------------------------------

ROLE = {"ROLE_UNSPECIFIED": 0, "ROLE_CAPTURE": 1, "ROLE_WORKER": 2, "ROLE_TAIL": 3, "ROLE_VIEW": 4}
COLLECTOR_ROLE = {"COLLECTOR_ROLE_SINGLE": 0, "COLLECTOR_ROLE_ACTIVE": 1, "COLLECTOR_ROLE_STANDBY": 2}
STATUS = {"FRAME_STATUS_PROCESSED": 0, "FRAME_STATUS_DROPPED": 1, "FRAME_STATUS_ERROR": 2}
KIND = {"KIND_APPEARED": 0, "KIND_LEFT": 1}
REGION = {"REGION_UNSPECIFIED": 0, "REGION_FOREHEAD": 1, "REGION_LEFT_CHEEK": 2, "REGION_RIGHT_CHEEK": 3}
ACCURACY = {"ACCURACY_UNSET": 0, "ACCURACY_LOW": 1, "ACCURACY_HIGH": 2}
FACE_MODE = {"FACE_MODE_UNSET": 0, "FACE_MODE_SMALL": 1, "FACE_MODE_LARGE": 2}


def enum(table, value):
    """An enum by its proto name, or (a value the schema does not name) by its number."""
    return value if isinstance(value, int) else table[value]


def enc_ready(m):
    return f_uint(1, m["version"]) + f_string(2, m["worker"])


def enc_detection_settings(m):
    out = (
        f_uint(1, enum(ACCURACY, m["accuracy"]))
        + f_uint(2, m["min_face"])
        + f_uint(3, m["max_faces"])
        + f_uint(4, enum(FACE_MODE, m["face_mode"]))
    )
    if "classifiers" in m:  # optional uint32: written when present, 0 included
        out += f_uint(5, m["classifiers"], always=True)
    return out


def enc_frame_header(m):
    out = (
        f_uint(1, m["version"])
        + f_string(2, m["stream"])
        + f_uint(3, m["epoch"])
        + f_uint(4, m["seq"])
        + f_uint(5, m["capture_time_us"])
        + f_uint(6, m["width"])
        + f_uint(7, m["height"])
        + f_uint(8, m["orientation"])
        + f_uint(9, m["sent_time_us"])
        + f_uint(10, m["deadline_us"])
    )
    if "settings" in m:
        out += f_message(11, enc_detection_settings(m["settings"]))
    if "media_time_us" in m:  # optional int64: written when present, 0 included
        out += f_uint(12, m["media_time_us"], always=True)
    return out


def enc_point(m):
    return f_float(1, m["x"]) + f_float(2, m["y"])


def enc_rect(m):
    return f_float(1, m["x"]) + f_float(2, m["y"]) + f_float(3, m["width"]) + f_float(4, m["height"])


def enc_skin_sample(m):
    return (
        f_uint(1, enum(REGION, m["region"]))
        + f_float(2, m["r"])
        + f_float(3, m["g"])
        + f_float(4, m["b"])
        + f_uint(5, m["pixels"])
    )


def enc_heart_rate(m):
    return f_float(1, m["bpm"]) + f_float(2, m["snr"]) + f_float(3, m["window_seconds"])


def enc_face(m):
    out = b""
    if "bounds" in m:
        out += f_message(1, enc_rect(m["bounds"]))
    for field, name in ((2, "left_eye"), (3, "right_eye"), (4, "mouth")):
        if name in m:
            out += f_message(field, enc_point(m[name]))
    if "face_angle" in m:
        out += f_float(5, m["face_angle"], present=True)
    out += f_float(6, m["confidence"])
    out += f_uint(7, m["tracking_id"])
    out += f_uint(8, m["tracking_frame_count"])
    if "nose" in m:
        out += f_message(9, enc_point(m["nose"]))
    if "yaw" in m:
        out += f_float(10, m["yaw"], present=True)
    out += f_bool(11, m["has_smile"])
    if "smile_score" in m:
        out += f_float(12, m["smile_score"], present=True)
    out += f_bool(13, m["left_eye_closed"])
    out += f_bool(14, m["right_eye_closed"])
    for field, name in ((15, "left_eye_closed_score"), (16, "right_eye_closed_score")):
        if name in m:
            out += f_float(field, m[name], present=True)
    for sample in m["skin"]:  # fields 25 and 26 have two-byte keys (ca 01, d2 01)
        out += f_message(25, enc_skin_sample(sample))
    if "heart_rate" in m:
        out += f_message(26, enc_heart_rate(m["heart_rate"]))
    out += f_uint(27, m.get("withheld", 0))  # two-byte key d8 01
    for reading in m.get("expressions", []):  # field 28, key e2 01
        out += f_message(28, f_uint(1, EXPRESSIONS[reading["expression"]]) + f_float(2, reading["score"]) + f_bool(3, reading["present"]))
    for sample in m.get("mesh_skin", []):  # field 29, key ea 01
        out += f_message(29, enc_skin_sample(sample))
    return out


EXPRESSIONS = {"EXPRESSION_UNSPECIFIED": 0, "EXPRESSION_BROW_RAISE": 1, "EXPRESSION_BROW_FURROW": 2, "EXPRESSION_MOUTH_OPEN": 3,
               "EXPRESSION_EYE_WIDEN": 4, "EXPRESSION_LIP_PUCKER": 5, "EXPRESSION_LIP_CORNER_DEPRESSOR": 6}


def enc_timings(m):
    return (
        f_float(1, m["queue_ms"])
        + f_float(2, m["decode_ms"])
        + f_float(3, m["detect_ms"])
        + f_float(4, m["total_ms"])
        + f_float(5, m["classify_ms"])
    )


def enc_frame_result(m):
    out = (
        f_string(1, m["stream"])
        + f_uint(2, m["epoch"])
        + f_uint(3, m["seq"])
        + f_uint(4, m["capture_time_us"])
        + f_uint(5, STATUS[m["status"]])
        + f_string(6, m["reason"])
        + f_uint(7, m["width"])
        + f_uint(8, m["height"])
        + f_string(9, m["worker"])
    )
    if "timings" in m:
        out += f_message(10, enc_timings(m["timings"]))
    for face in m["faces"]:
        out += f_message(11, enc_face(face))
    out += f_uint(12, m.get("run_length", 0))
    if "media_time_us" in m:  # optional int64: written when present, 0 included
        out += f_uint(13, m["media_time_us"], always=True)
    return out


def enc_hello(m):
    return (
        f_uint(1, ROLE[m["role"]])
        + f_string(2, m["node_id"])
        + f_string(3, m["stream"])
        + f_uint(4, m["epoch"])
        + f_string(5, m["frame_endpoint"])
        + f_uint(6, m["next_seq"])
        + f_string(7, m.get("curve_public_key", ""))
        + f_string(8, m.get("preview_endpoint", ""))
        + f_uint(9, m.get("dispatch", 0))
    )


def enc_dispatch_request(m):
    out = f_string(1, m["stream"]) + f_uint(2, m["epoch"]) + f_uint(3, m["wanted"]) + f_uint(4, m["assignments_seen"])
    for name in m["returned"]:
        out += f_bytes(5, name.encode("utf-8"), present=True)
    for name in m["unreachable"]:
        out += f_bytes(6, name.encode("utf-8"), present=True)
    return out + f_float(7, m["weight"])


def enc_assignment(m):
    return f_string(1, m["worker"]) + f_uint(2, m["number"])


def enc_idle(m):
    return f_string(1, m["worker"]) + f_uint(2, m["frames_received"])


def enc_capture_info(m):
    return (
        f_string(1, m["stream"])
        + f_uint(2, m["epoch"])
        + f_string(3, m["frame_endpoint"])
        + f_string(4, m.get("curve_public_key", ""))
        + f_string(5, m.get("preview_endpoint", ""))
    )


def enc_welcome(m):
    out = b""
    for capture in m["captures"]:
        out += f_message(1, enc_capture_info(capture))
    out += f_string(2, m["publish_endpoint"])
    # Failover (SPEC 18.2); absent from a single collector's Welcome.
    if "role" in m:
        out += f_uint(3, enum(COLLECTOR_ROLE, m["role"])) + f_uint(4, m["leader_epoch"]) + f_string(5, m["active_endpoint"])
    # Shards (SPEC 19); absent from an unsharded collector's Welcome.
    if "shard_count" in m:
        out += f_uint(6, m["shard"]) + f_uint(7, m["shard_count"])
    return out


def enc_skipped(m):
    return (
        f_string(1, m["stream"])
        + f_uint(2, m["epoch"])
        + f_uint(3, m["first_seq"])
        + f_uint(4, m["count"])
        + f_string(5, m["reason"])
        + f_uint(6, m["capture_time_us"])
    )


def enc_stream_end(m):
    return f_string(1, m["stream"]) + f_uint(2, m["epoch"]) + f_uint(3, m["next_seq"])


def enc_reset(m):
    return f_string(1, m["stream"]) + f_string(2, m["request_id"])


def enc_reset_reply(m):
    out = f_string(1, m["request_id"])
    for stream in m["streams"]:
        out += f_bytes(2, stream.encode("utf-8"), present=True)  # repeated: every element is written
    return out


ENVELOPE_BODY = (
    (2, "hello", enc_hello),
    (3, "welcome", enc_welcome),
    (4, "result", enc_frame_result),
    (5, "skipped", enc_skipped),
    (6, "end", enc_stream_end),
    (7, "reset", enc_reset),
    (8, "reset_reply", enc_reset_reply),
    (9, "request", enc_dispatch_request),
    (10, "assignment", enc_assignment),
    (11, "idle", enc_idle),
)


def enc_envelope(m):
    out = f_uint(1, m["version"])
    for field, name, encoder in ENVELOPE_BODY:
        if name in m:
            out += f_message(field, encoder(m[name]))
    return out


def enc_face_event(m):
    out = (
        f_uint(1, KIND[m["kind"]])
        + f_uint(2, m["tracking_id"])
        + f_uint(3, m["seq"])
        + f_uint(4, m["tracking_frame_count"])
    )
    if "heart_rate" in m:
        out += f_message(5, enc_heart_rate(m["heart_rate"]))
    return out


def enc_stream_summary(m):
    return (
        f_uint(1, m["frames"])
        + f_uint(2, m["processed"])
        + f_uint(3, m["dropped"])
        + f_uint(4, m["errors"])
        + f_uint(5, m["late"])
        + f_uint(6, m["duplicates"])
        + f_uint(7, m["next_seq"])
    )


def enc_tracking_reset(m):
    return f_uint(1, m["seq"]) + f_uint(2, m["ended_tracks"])


def enc_drop_count(m):
    return f_string(1, m["reason"]) + f_uint(2, m["count"])


def enc_stream_statistics(m):
    out = f_float(1, m["window_seconds"]) + f_uint(2, m["frames"]) + f_uint(3, m["processed"])
    for entry in m["dropped"]:
        out += f_message(4, enc_drop_count(entry))
    out += f_uint(5, m["late"]) + f_uint(6, m["duplicates"]) + f_float(7, m["fps"])
    if "latency_p50_ms" in m:
        out += f_float(8, m["latency_p50_ms"], present=True)
    if "latency_p99_ms" in m:
        out += f_float(9, m["latency_p99_ms"], present=True)
    return out + f_uint(10, m["next_seq"])


STREAM_BODY = (
    (4, "frame", enc_frame_result),
    (5, "event", enc_face_event),
    (6, "end", enc_stream_summary),
    (7, "reset", enc_tracking_reset),
    (8, "statistics", enc_stream_statistics),
)


def enc_stream_message(m):
    out = f_uint(1, m["version"]) + f_string(2, m["stream"]) + f_uint(3, m["epoch"])
    for field, name, encoder in STREAM_BODY:
        if name in m:
            out += f_message(field, encoder(m[name]))
    # Failover (SPEC 18.3); absent from a single collector's messages.
    return out + f_uint(9, m.get("publication", 0)) + f_uint(10, m.get("leader_epoch", 0))


def topic(stream):
    """The PUB topic of a stream: its id followed by one 0x00 byte."""
    return stream.encode("utf-8") + b"\x00"


# ---------------------------------------------------------------------------------------------
# The vectors.
# ---------------------------------------------------------------------------------------------

STREAM = "cam-1"
EPOCH = 1732240000000000  # Unix µs, 2024-11-22T01:46:40Z: the capture node started then
CAPTURE_TIME = 1732240001234567
WORKER = "gpu-host:4242/t0"

# A stand-in for the JPEG part: SOI, a COM segment, EOI. Decoders of the framing never look inside.
IMAGE = bytes.fromhex("ffd8fffe0005466177ffd9")

HEADER = {
    "version": 1,
    "stream": STREAM,
    "epoch": EPOCH,
    "seq": 42,
    "capture_time_us": CAPTURE_TIME,
    "width": 1280,
    "height": 720,
    "orientation": 6,
    "sent_time_us": CAPTURE_TIME + 1433,
    "deadline_us": CAPTURE_TIME + 2_000_000,
}

# The stream's detection settings (capture started with --accuracy high --face-mode large
# --min-face 48 --max-faces 8 --classifiers smile).
SETTINGS = {"accuracy": "ACCURACY_HIGH", "min_face": 48, "max_faces": 8, "face_mode": "FACE_MODE_LARGE", "classifiers": 1}
# classifiers present and 0: run no classifier (absent would mean the worker's default).
SETTINGS_NO_CLASSIFIERS = {"accuracy": "ACCURACY_UNSET", "min_face": 0, "max_faces": 0, "face_mode": "FACE_MODE_UNSET", "classifiers": 0}
# Present, every field unset: the worker's defaults, exactly as without settings.
SETTINGS_EMPTY = {"accuracy": "ACCURACY_UNSET", "min_face": 0, "max_faces": 0, "face_mode": "FACE_MODE_UNSET"}
# Values v1 does not define: they decode (proto3 enums are open), but a worker cannot honour them.
SETTINGS_UNKNOWN = {"accuracy": 3, "min_face": 0, "max_faces": 300, "face_mode": 7, "classifiers": 0x24}

HEADER_MINIMAL = {
    "version": 1,
    "stream": "A",
    "epoch": 0,
    "seq": 0,
    "capture_time_us": -1_500_000,  # int64 before 1970: a ten-byte varint
    "width": 0,
    "height": 0,
    "orientation": 0,
    "sent_time_us": 0,
    "deadline_us": 0,
}

FACE_FULL = {
    "bounds": {"x": 412.5, "y": 188.25, "width": 160.0, "height": 192.0},
    "left_eye": {"x": 452.0, "y": 250.5},
    "right_eye": {"x": 532.0, "y": 244.0},
    "mouth": {"x": 492.75, "y": 330.0},
    "face_angle": -4.5,
    "confidence": 0.96875,
    "tracking_id": 0,
    "tracking_frame_count": 0,
    "nose": {"x": 0.0, "y": 290.5},  # x = 0.0: the point is present, its x field is not on the wire
    "has_smile": False,  # no classifier ran: every score absent, every flag false
    "left_eye_closed": False,
    "right_eye_closed": False,
    "skin": [],
}

FACE_BOUNDS_ONLY = {
    "bounds": {"x": 0.0, "y": 1000.0, "width": 48.0, "height": 48.0},
    "confidence": 0.5,
    "tracking_id": 0,
    "tracking_frame_count": 0,
    "has_smile": False,
    "left_eye_closed": False,
    "right_eye_closed": False,
    "skin": [],
}

RESULT = {
    "stream": STREAM,
    "epoch": EPOCH,
    "seq": 42,
    "capture_time_us": CAPTURE_TIME,
    "status": "FRAME_STATUS_PROCESSED",
    "reason": "",
    "width": 720,  # upright: orientation 6 turns the 1280x720 stored frame
    "height": 1280,
    "worker": WORKER,
    "timings": {"queue_ms": 1.5, "decode_ms": 3.25, "detect_ms": 12.75, "total_ms": 0.0, "classify_ms": 0.0},
    "faces": [FACE_FULL, FACE_BOUNDS_ONLY],
}


def tracked(face, tracking_id, count):
    face = dict(face)
    face["tracking_id"] = tracking_id
    face["tracking_frame_count"] = count
    return face


STREAM_RESULT = dict(RESULT)
STREAM_RESULT["timings"] = {"queue_ms": 1.5, "decode_ms": 3.25, "detect_ms": 12.75, "total_ms": 40.5, "classify_ms": 0.0}
STREAM_RESULT["faces"] = [
    tracked(dict(FACE_FULL, face_angle=0.0), 7, 12),  # face_angle 0.0 present: written explicitly
    tracked(FACE_BOUNDS_ONLY, 8, 1),
]

# Every classifier ran (classifiers = smile | eyes). The left eye's score is 0.0: an optional field, so
# it is on the wire (key 0x7d and four zero bytes) although its value is the default.
FACE_EXPRESSIVE = {
    "bounds": {"x": 96.0, "y": 320.5, "width": 144.0, "height": 176.0},
    "left_eye": {"x": 140.25, "y": 380.0},
    "right_eye": {"x": 196.75, "y": 382.5},
    "mouth": {"x": 170.0, "y": 452.0},
    "face_angle": 2.5,
    "confidence": 0.9375,
    "tracking_id": 0,
    "tracking_frame_count": 0,
    "nose": {"x": 176.0, "y": 418.0},
    "yaw": 12.5,
    "has_smile": True,
    "smile_score": 0.8125,
    "left_eye_closed": False,
    "right_eye_closed": True,
    "left_eye_closed_score": 0.0,
    "right_eye_closed_score": 0.75,
    "skin": [],
}

# Looking straight ahead (yaw 0.0, present), not smiling (score present, flag false and so absent on
# the wire); the eyes-closed classifier did not run on this face (no eye scores).
FACE_SMILE_ONLY = {
    "bounds": {"x": 600.0, "y": 260.0, "width": 96.0, "height": 112.0},
    "left_eye": {"x": 628.0, "y": 300.0},
    "right_eye": {"x": 668.0, "y": 300.0},
    "mouth": {"x": 648.0, "y": 344.0},
    "face_angle": 0.0,
    "confidence": 0.75,
    "tracking_id": 0,
    "tracking_frame_count": 0,
    "nose": {"x": 648.0, "y": 322.0},
    "yaw": 0.0,
    "has_smile": False,
    "smile_score": 0.25,
    "left_eye_closed": False,
    "right_eye_closed": False,
    "skin": [],
}

RESULT_EXPRESSION = {
    "stream": STREAM,
    "epoch": EPOCH,
    "seq": 44,
    "capture_time_us": CAPTURE_TIME + 66_667,
    "status": "FRAME_STATUS_PROCESSED",
    "reason": "",
    "width": 720,
    "height": 1280,
    "worker": WORKER,
    "timings": {"queue_ms": 1.25, "decode_ms": 3.5, "detect_ms": 12.25, "total_ms": 0.0, "classify_ms": 4.5},
    "faces": [FACE_EXPRESSIVE, FACE_SMILE_ONLY, FACE_BOUNDS_ONLY],
}

STREAM_RESULT_EXPRESSION = dict(RESULT_EXPRESSION)
STREAM_RESULT_EXPRESSION["timings"] = dict(RESULT_EXPRESSION["timings"], total_ms=42.75)
STREAM_RESULT_EXPRESSION["faces"] = [
    tracked(FACE_EXPRESSIVE, 9, 3),
    tracked(FACE_SMILE_ONLY, 10, 1),
    tracked(FACE_BOUNDS_ONLY, 8, 3),
]

# The pulse classifier ran (classifiers bit 4): the mean colour of the forehead and both cheeks, each with the skin
# pixels it averaged (SPEC 11.5). Facing the camera like FACE_SMILE_ONLY (face_angle and yaw 0.0), but no smile
# classifier. A worker never sets heart_rate; the collector adds it (STREAM_RESULT_PULSE).
FACE_PULSE = dict(
    FACE_SMILE_ONLY,
    bounds={"x": 240.0, "y": 300.0, "width": 200.0, "height": 240.0},
    left_eye={"x": 296.0, "y": 392.0},
    right_eye={"x": 384.0, "y": 392.0},
    mouth={"x": 340.0, "y": 480.0},
    nose={"x": 340.0, "y": 440.0},
    confidence=0.9375,
    skin=[
        {"region": "REGION_FOREHEAD", "r": 171.5, "g": 122.25, "b": 98.75, "pixels": 1843},
        {"region": "REGION_LEFT_CHEEK", "r": 165.0, "g": 118.5, "b": 95.25, "pixels": 612},
        {"region": "REGION_RIGHT_CHEEK", "r": 166.75, "g": 119.0, "b": 96.5, "pixels": 598},
    ],
)
del FACE_PULSE["smile_score"]

# Ten seconds after seq 42, where the face's track began: a full window of skin samples. The timings are the
# expression result's but for classify_ms.
RESULT_PULSE = dict(
    RESULT_EXPRESSION,
    seq=342,
    capture_time_us=CAPTURE_TIME + 10_000_000,
    timings=dict(RESULT_EXPRESSION["timings"], classify_ms=0.5),
    faces=[FACE_PULSE],
)

# The same, measured on the face mesh too (SPEC 11.5): the forehead the mesh outlines, in mesh_skin.
RESULT_PULSE_MESH = dict(RESULT_PULSE, faces=[dict(FACE_PULSE, mesh_skin=[
    {"region": "REGION_FOREHEAD", "r": 168.25, "g": 120.5, "b": 97.0, "pixels": 2210},
])])

# What the collector publishes once the track's estimate is trustworthy: the same face, tracked, with heart_rate.
HEART_RATE = {"bpm": 72.5, "snr": 6.25, "window_seconds": 10.0}
STREAM_RESULT_PULSE = dict(RESULT_PULSE)
STREAM_RESULT_PULSE["timings"] = dict(RESULT_PULSE["timings"], total_ms=41.5)
STREAM_RESULT_PULSE["faces"] = [dict(tracked(FACE_PULSE, 11, 301), heart_rate=HEART_RATE)]

DROPPED_RESULT = {
    "stream": STREAM,
    "epoch": EPOCH,
    "seq": 43,
    "capture_time_us": 0,
    "status": "FRAME_STATUS_DROPPED",
    "reason": "timeout",
    "width": 0,
    "height": 0,
    "worker": "",
    "faces": [],
}


def stream_message(body_name, body, stream=STREAM, epoch=EPOCH, version=1):
    return {"version": version, "stream": stream, "epoch": epoch, body_name: body}


VECTORS = []


def add(name, kind, parts, expect=None, error=None, note=None):
    """parts: list of (file name, bytes)."""
    entry = {"name": name, "kind": kind, "parts": [p[0] for p in parts], "hex": [p[1].hex() for p in parts]}
    entry["valid"] = error is None
    if error is None:
        entry["expect"] = expect
    else:
        entry["error"] = error
    if note:
        entry["note"] = note
    VECTORS.append((entry, parts))


IMAGE_PART = ("frame_image.bin", IMAGE)

# --- valid ---------------------------------------------------------------------------------------

add(
    "frame",
    "frame",
    [("frame_header.bin", enc_frame_header(HEADER)), IMAGE_PART],
    expect={"header": HEADER, "image_size": len(IMAGE)},
    note="capture -> worker, as the worker's DEALER receives it (the capture's ROUTER strips the routing id)",
)
add(
    "frame_minimal",
    "frame",
    [("frame_header_minimal.bin", enc_frame_header(HEADER_MINIMAL)), IMAGE_PART],
    expect={"header": HEADER_MINIMAL, "image_size": len(IMAGE)},
    note="zero fields are absent on the wire; a negative int64 is a ten-byte varint",
)
unknown = enc_frame_header(HEADER) + f_uint(100, 5, always=True) + f_string(101, "from v1.1")
add(
    "frame_unknown_field",
    "frame",
    [("frame_header_unknown_field.bin", unknown), IMAGE_PART],
    expect={"header": HEADER, "image_size": len(IMAGE)},
    note="fields 100 (varint) and 101 (string) are unknown to v1: receivers MUST ignore them",
)
for name, file_name, settings, note in (
    (
        "frame_settings",
        "frame_header_settings.bin",
        SETTINGS,
        "frame_header.bin followed by field 11 (DetectionSettings, 10 bytes): every setting given",
    ),
    (
        "frame_settings_no_classifiers",
        "frame_header_settings_no_classifiers.bin",
        SETTINGS_NO_CLASSIFIERS,
        "classifiers present and 0 (5a 02 28 00): no classifier runs; the other settings are the worker's",
    ),
    (
        "frame_settings_empty",
        "frame_header_settings_empty.bin",
        SETTINGS_EMPTY,
        "settings present but empty (5a 00): the same as no settings, every field is the worker's default",
    ),
    (
        "frame_settings_unknown",
        "frame_header_settings_unknown.bin",
        SETTINGS_UNKNOWN,
        "accuracy 3, face mode 7, classifier bits 2 and 5, max_faces 300: decodes (enums are open), but a "
        "worker MUST answer it with FRAME_STATUS_ERROR (SPEC 11.4)",
    ),
):
    header = dict(HEADER, settings=settings)
    add(
        name,
        "frame",
        [(file_name, enc_frame_header(header)), IMAGE_PART],
        expect={"header": header, "image_size": len(IMAGE)},
        note=note,
    )
add(
    "frame_media_time",
    "frame",
    [("frame_header_media_time.bin", enc_frame_header(dict(HEADER, media_time_us=0))), IMAGE_PART],
    expect={"header": dict(HEADER, media_time_us=0), "image_size": len(IMAGE)},
    note="a file's first frame: media_time_us present and 0 (field 12, 60 00), unlike an absent one (a live source)",
)
add(
    "ready",
    "ready",
    [("ready.bin", enc_ready({"version": 2, "worker": WORKER}))],
    expect={"version": 2, "worker": WORKER},
    note="worker thread -> capture: attach (dispatch protocol 2; DEALER side, the capture's ROUTER prepends the routing id)",
)

HELLO_CAPTURE = {
    "role": "ROLE_CAPTURE",
    "node_id": "cam-host:812",
    "stream": STREAM,
    "epoch": EPOCH,
    "frame_endpoint": "tcp://0.0.0.0:5555",
    "next_seq": 42,
    "curve_public_key": "",
    "preview_endpoint": "",
    "dispatch": 2,
}
CURVE_KEY = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"  # the public key of the CURVE example in the ZeroMQ guide
HELLO_CAPTURE_CURVE = dict(HELLO_CAPTURE, curve_public_key=CURVE_KEY)
HELLO_CAPTURE_PREVIEW = dict(HELLO_CAPTURE, preview_endpoint="tcp://0.0.0.0:5565")
HELLO_WORKER = {
    "role": "ROLE_WORKER", "node_id": "gpu-host:4242", "stream": "", "epoch": 0, "frame_endpoint": "", "next_seq": 0,
    "curve_public_key": "", "preview_endpoint": "", "dispatch": 2,
}
HELLO_TAIL = {
    "role": "ROLE_TAIL", "node_id": "laptop:9001", "stream": "", "epoch": 0, "frame_endpoint": "", "next_seq": 0,
    "curve_public_key": "", "preview_endpoint": "", "dispatch": 0,
}
HELLO_VIEW = dict(HELLO_TAIL, role="ROLE_VIEW", node_id="wall-screen:77")
WELCOME = {
    "captures": [
        {"stream": STREAM, "epoch": EPOCH, "frame_endpoint": "tcp://10.0.0.21:5555", "curve_public_key": "",
         "preview_endpoint": "tcp://10.0.0.21:5565"},
        {
            "stream": "door.cam_2",
            "epoch": 1732239000000000,
            "frame_endpoint": "tcp://10.0.0.22:5555",
            "curve_public_key": CURVE_KEY,
            "preview_endpoint": "",
        },
    ],
    "publish_endpoint": "tcp://0.0.0.0:5557",
}
SKIPPED = {
    "stream": STREAM,
    "epoch": EPOCH,
    "first_seq": 43,
    "count": 5,
    "reason": "no-worker",
    "capture_time_us": CAPTURE_TIME + 33_333,
}
END = {"stream": STREAM, "epoch": EPOCH, "next_seq": 100}

for name, body_name, body in (
    ("envelope_hello_capture", "hello", HELLO_CAPTURE),
    ("envelope_hello_capture_curve", "hello", HELLO_CAPTURE_CURVE),
    ("envelope_hello_capture_preview", "hello", HELLO_CAPTURE_PREVIEW),
    ("envelope_hello_capture_dispatch_1", "hello", dict(HELLO_CAPTURE, dispatch=0)),
    ("envelope_hello_worker", "hello", HELLO_WORKER),
    ("envelope_hello_tail", "hello", HELLO_TAIL),
    ("envelope_hello_view", "hello", HELLO_VIEW),
    ("envelope_welcome", "welcome", WELCOME),
    # A failover group's standby names the active (SPEC 18.2).
    ("envelope_welcome_standby", "welcome", {
        "captures": [], "publish_endpoint": "tcp://10.0.0.6:5557", "role": "COLLECTOR_ROLE_STANDBY",
        "leader_epoch": 4711, "active_endpoint": "tcp://10.0.0.5:5556",
    }),
    # The active of shard 2 of 4 (SPEC 19.2).
    ("envelope_welcome_shard", "welcome", {
        "captures": [], "publish_endpoint": "tcp://10.0.0.7:5557", "role": "COLLECTOR_ROLE_ACTIVE",
        "leader_epoch": 812, "active_endpoint": "", "shard": 2, "shard_count": 4,
    }),
    ("envelope_result", "result", RESULT),
    ("envelope_result_expression", "result", RESULT_EXPRESSION),
    ("envelope_result_pulse", "result", RESULT_PULSE),
    ("envelope_result_pulse_mesh", "result", RESULT_PULSE_MESH),
    ("envelope_skipped", "skipped", SKIPPED),
    ("envelope_end", "end", END),
    ("envelope_reset", "reset", {"stream": STREAM, "request_id": "r-1"}),
    ("envelope_reset_all", "reset", {"stream": "", "request_id": ""}),
    ("envelope_reset_reply", "reset_reply", {"request_id": "r-1", "streams": [STREAM, "lobby"]}),
    ("envelope_reset_reply_none", "reset_reply", {"request_id": "r-1", "streams": []}),
    ("envelope_request", "request", {
        "stream": STREAM, "epoch": EPOCH, "wanted": 1, "assignments_seen": 7, "returned": [WORKER],
        "unreachable": ["gpu-host:4242/t3"], "weight": 2.0,
    }),
    ("envelope_request_idle", "request", {
        "stream": STREAM, "epoch": EPOCH, "wanted": 0, "assignments_seen": 8, "returned": [], "unreachable": [], "weight": 0.0,
    }),
    ("envelope_assignment", "assignment", {"worker": WORKER, "number": 8}),
    ("envelope_idle", "idle", {"worker": WORKER, "frames_received": 12}),
):
    message = {"version": 1, body_name: body}
    add(name, "envelope", [(name + ".bin", enc_envelope(message))], expect=message)

TOPIC_PART = ("topic_cam-1.bin", topic(STREAM))

for name, message in (
    ("stream_frame", stream_message("frame", STREAM_RESULT)),
    ("stream_frame_expression", stream_message("frame", STREAM_RESULT_EXPRESSION)),
    ("stream_frame_pulse", stream_message("frame", STREAM_RESULT_PULSE)),
    ("stream_frame_dropped", stream_message("frame", DROPPED_RESULT)),
    # Brow raise and mouth open asked for (SPEC 11.8): brow raise present at 87.5, mouth open absent at 12.25.
    ("stream_frame_expressions", stream_message("frame", dict(STREAM_RESULT, faces=[tracked(dict(FACE_BOUNDS_ONLY, expressions=[
        {"expression": "EXPRESSION_BROW_RAISE", "score": 87.5, "present": True},
        {"expression": "EXPRESSION_MOUTH_OPEN", "score": 12.25, "present": False}]), 8, 1)]))),
    # A face too dark to read (SPEC 11.7): smile and eyes withheld, bits 0 and 1 (field 27, d8 01 03).
    ("stream_frame_withheld", stream_message("frame", dict(STREAM_RESULT, faces=[tracked(dict(FACE_BOUNDS_ONLY, withheld=3), 8, 1)]))),
    # A file's frame 361 (30 fps), 12.033333 s into its timeline: media_time_us is field 13 (68 b5 ba de 05).
    ("stream_frame_media_time", stream_message("frame", dict(STREAM_RESULT, media_time_us=12_033_333))),
    # A run of dropped sequences longer than --max-pending: one message for seq 100 ... 100 + 2^40 - 1.
    ("stream_frame_dropped_run", stream_message("frame", dict(DROPPED_RESULT, seq=100, reason="no-worker", run_length=1 << 40))),
    (
        "stream_event",
        stream_message("event", {"kind": "KIND_APPEARED", "tracking_id": 8, "seq": 42, "tracking_frame_count": 1}),
    ),
    (
        "stream_event_left",
        stream_message("event", {"kind": "KIND_LEFT", "tracking_id": 3, "seq": 41, "tracking_frame_count": 57}),
    ),
    (
        "stream_event_left_heart_rate",
        stream_message(
            "event",
            {"kind": "KIND_LEFT", "tracking_id": 11, "seq": 380, "tracking_frame_count": 339, "heart_rate": HEART_RATE},
        ),
    ),
    (
        "stream_end",
        stream_message(
            "end", {"frames": 100, "processed": 93, "dropped": 7, "errors": 0, "late": 2, "duplicates": 1, "next_seq": 0}
        ),
    ),
    # The summary names the sequence after its last line (a collector before next_seq leaves it 0, as above).
    (
        "stream_end_next_seq",
        stream_message(
            "end", {"frames": 100, "processed": 93, "dropped": 7, "errors": 0, "late": 2, "duplicates": 1, "next_seq": 1100}
        ),
    ),
    ("stream_reset", stream_message("reset", {"seq": 120, "ended_tracks": 2})),
    # A failover group's message: numbered per (stream, epoch), with the publishing active's epoch (SPEC 18.3).
    (
        "stream_event_numbered",
        dict(stream_message("event", {"kind": "KIND_APPEARED", "tracking_id": 8, "seq": 42, "tracking_frame_count": 1}),
             publication=97, leader_epoch=4711),
    ),
    (
        "stream_statistics",
        stream_message(
            "statistics",
            {
                "window_seconds": 5.0,
                "frames": 150,
                "processed": 141,
                "dropped": [{"reason": "no-worker", "count": 6}, {"reason": "timeout", "count": 3}],
                "late": 1,
                "duplicates": 0,
                "fps": 30.0,
                "latency_p50_ms": 48.5,
                "latency_p99_ms": 112.25,
                "next_seq": 1200,
            },
        ),
    ),
    (
        "stream_statistics_idle",
        stream_message(
            "statistics",
            {
                "window_seconds": 5.0,
                "frames": 0,
                "processed": 0,
                "dropped": [],
                "late": 0,
                "duplicates": 0,
                "fps": 0.0,
                "next_seq": 1200,
            },
        ),
    ),
):
    add(name, "stream", [TOPIC_PART, (name + ".bin", enc_stream_message(message))], expect=message)

add(
    "stream_heartbeat",
    "stream",
    [("topic_heartbeat.bin", topic("")), ("stream_heartbeat.bin", enc_stream_message({"version": 1, "stream": "", "epoch": 0}))],
    expect={"version": 1, "stream": "", "epoch": 0},
    note="sent by the collector every 200 ms: empty topic (one 0x00) and a StreamMessage without a body",
)

# --- invalid -------------------------------------------------------------------------------------

add(
    "bad_version",
    "frame",
    [("bad_version.bin", enc_frame_header(dict(HEADER, version=2))), IMAGE_PART],
    error="unsupportedVersion",
    note="a FrameHeader with version 2",
)
add(
    "frame_no_version",
    "frame",
    [("frame_header_no_version.bin", enc_frame_header(dict(HEADER, version=0))), IMAGE_PART],
    error="unsupportedVersion",
    note="version absent (0): rejected like any other version but 1",
)
add(
    "bad_stream_id",
    "frame",
    [("bad_stream_id.bin", enc_frame_header(dict(HEADER, stream="cam 1/../x"))), IMAGE_PART],
    error="invalidStream",
    note="space and slash are outside [A-Za-z0-9._-]",
)
add(
    "bad_stream_id_long",
    "frame",
    [("bad_stream_id_long.bin", enc_frame_header(dict(HEADER, stream="c" * 65))), IMAGE_PART],
    error="invalidStream",
    note="65 bytes: one more than the limit",
)
add(
    "bad_stream_id_empty",
    "frame",
    [("bad_stream_id_empty.bin", enc_frame_header(dict(HEADER, stream=""))), IMAGE_PART],
    error="invalidStream",
    note="the stream field absent: the empty id is invalid",
)
add(
    "frame_empty_image",
    "frame",
    [("frame_header.bin", enc_frame_header(HEADER)), ("empty.bin", b"")],
    error="malformed",
    note="the image part is empty",
)
add(
    "frame_one_part",
    "frame",
    [("frame_header.bin", enc_frame_header(HEADER))],
    error="malformed",
    note="a frame message has exactly two parts",
)
big = enc_frame_header(HEADER) + f_bytes(15, b"\x00" * 4096)
add(
    "header_too_large",
    "frame",
    [("header_too_large.bin", big), IMAGE_PART],
    error="tooLarge",
    note=f"a {len(big)}-byte header part (limit 4096); checked before parsing",
)
envelope_result = enc_envelope({"version": 1, "result": RESULT})
add(
    "truncated",
    "envelope",
    [("truncated.bin", envelope_result[:-10])],
    error="malformed",
    note="envelope_result.bin without its last 10 bytes: a length prefix runs past the end",
)
add(
    "garbage",
    "envelope",
    [("garbage.bin", b"\xff\xff\xff\xff")],
    error="malformed",
    note="0xff is field 31 with wire type 7, which does not exist",
)
add(
    "envelope_no_body",
    "envelope",
    [("envelope_no_body.bin", enc_envelope({"version": 1}))],
    error="missingBody",
)
add(
    "envelope_bad_version",
    "envelope",
    [("envelope_bad_version.bin", enc_envelope({"version": 2, "end": END}))],
    error="unsupportedVersion",
)
add(
    "ready_bad_version",
    "ready",
    [("ready_bad_version.bin", enc_ready({"version": 1, "worker": WORKER}))],
    error="unsupportedVersion",
    note="dispatch protocol 1's Ready (a credit): a capture node of protocol 2 refuses it, counted by name (SPEC 3.4)",
)
SUMMARY_ONE = {"frames": 1, "processed": 1, "dropped": 0, "errors": 0, "late": 0, "duplicates": 0, "next_seq": 0}
add(
    "stream_bad_version",
    "stream",
    [TOPIC_PART, ("stream_bad_version.bin", enc_stream_message(stream_message("end", SUMMARY_ONE, version=2)))],
    error="unsupportedVersion",
)


def main():
    written = {}
    for entry, parts in VECTORS:
        for file_name, data in parts:
            if written.get(file_name, data) != data:
                raise SystemExit(f"{file_name}: two vectors disagree on its bytes")
            written[file_name] = data
    for old in os.listdir(HERE):
        if old.endswith(".bin") and old not in written:
            os.remove(os.path.join(HERE, old))
    for file_name, data in sorted(written.items()):
        with open(os.path.join(HERE, file_name), "wb") as f:
            f.write(data)
    catalogue = {
        "protocol": "facewire.v1",
        "generator": "protocol/vectors/make_vectors.py",
        "vectors": [entry for entry, _ in VECTORS],
    }
    with open(os.path.join(HERE, "vectors.json"), "w", encoding="utf-8") as f:
        json.dump(catalogue, f, indent=2, ensure_ascii=False)
        f.write("\n")
    print(f"wrote {len(written)} .bin files and vectors.json ({len(VECTORS)} vectors)")


if __name__ == "__main__":
    main()
