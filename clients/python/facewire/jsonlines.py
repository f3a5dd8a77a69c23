"""The JSON Lines a `facewire tail` prints (protocol/SPEC.md 12), from the same messages: key order, omitted keys and
number formatting as specified, so a program gets byte for byte what the reference tail writes."""
import math
from decimal import ROUND_HALF_EVEN, Context, Decimal

from . import facewire_pb2 as pb

# Enough digits for any binary32 (at most 39 integer digits) and any decimals asked: Decimal's default 28 is not.
_CONTEXT = Context(prec=80, rounding=ROUND_HALF_EVEN)
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def quoted(text):
    """A JSON string: `"`, `\\`, newline, return and tab escaped, other characters below U+0020 as \\u00xx."""
    out = ['"']
    for char in text:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif ord(char) < 0x20:
            out.append("\\u%04x" % ord(char))
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def number(value, decimals):
    """The exact value of a binary32 (as protobuf hands it over) rounded to nearest, ties to even, at `decimals`;
    trailing zeros and point removed, no exponent, `0` for anything rounding to zero, `null` for NaN and infinities."""
    if math.isnan(value) or math.isinf(value):
        return "null"
    text = format(Decimal(value).quantize(Decimal(1).scaleb(-decimals), context=_CONTEXT), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def seconds(microseconds):
    """Unix microseconds as seconds with exactly six decimals."""
    sign = "-" if microseconds < 0 else ""
    whole, fraction = divmod(abs(microseconds), 1_000_000)
    return f"{sign}{whole}.{fraction:06d}"


def _point(key, point):
    return f',"{key}":{{"x":{number(point.x, 1)},"y":{number(point.y, 1)}}}'


def _heart_rate(rate):
    return f',"heartRate":{{"bpm":{number(rate.bpm, 1)},"snr":{number(rate.snr, 1)},"window":{number(rate.window_seconds, 1)}}}'


_REGIONS = {pb.SkinSample.REGION_FOREHEAD: "forehead", pb.SkinSample.REGION_LEFT_CHEEK: "leftCheek",
            pb.SkinSample.REGION_RIGHT_CHEEK: "rightCheek"}


def face_object(face):
    b = face.bounds
    out = [f'{{"bounds":{{"x":{number(b.x, 1)},"y":{number(b.y, 1)},"width":{number(b.width, 1)},'
           f'"height":{number(b.height, 1)}}}']
    for key, field in (("leftEyePosition", "left_eye"), ("rightEyePosition", "right_eye"), ("mouthPosition", "mouth")):
        if face.HasField(field):
            out.append(_point(key, getattr(face, field)))
    for key in ("face_angle", "yaw", "pitch", "roll"):
        if face.HasField(key):
            name = "faceAngle" if key == "face_angle" else key
            out.append(f',"{name}":{number(getattr(face, key), 1)}')
    out.append(f',"confidence":{number(face.confidence, 3)}')
    if face.HasField("quality"):
        out.append(f',"quality":{number(face.quality, 3)}')
    source = {pb.ATTRIBUTE_SOURCE_MESH: "mesh", pb.ATTRIBUTE_SOURCE_LANDMARKS: "landmarks"}.get(face.attribute_source)
    if source:
        out.append(f',"attributeSource":"{source}"')
    if face.HasField("smile_score"):
        out.append(f',"hasSmile":{str(face.has_smile).lower()},"smileScore":{number(face.smile_score, 3)}')
    for side in ("left", "right"):
        if face.HasField(f"{side}_eye_closed_score"):
            closed = str(getattr(face, f"{side}_eye_closed")).lower()
            out.append(f',"{side}EyeClosed":{closed},"{side}EyeClosedScore":'
                       f'{number(getattr(face, f"{side}_eye_closed_score"), 3)}')
    for side in ("left", "right"):
        if face.HasField(f"{side}_eye_openness"):
            out.append(f',"{side}EyeOpenness":{number(getattr(face, f"{side}_eye_openness"), 3)}')
    if len(face.expressions):
        keys = {1: "browRaise", 2: "browFurrow", 3: "mouthOpen", 4: "eyeWiden", 5: "lipPucker", 6: "lipCornerDepressor"}
        readings = [f'"{keys.get(r.expression, f"expression{r.expression}")}":{{"score":{number(r.score, 1)},'
                    f'"present":{str(r.present).lower()}}}' for r in face.expressions]
        out.append(',"expressions":{' + ",".join(readings) + "}")
    if face.withheld:
        names = ["smile", "eyes", "pose", "quality", "pulse"]
        withheld = [names[bit] if bit < len(names) else f"bit{bit}" for bit in range(32) if face.withheld >> bit & 1]
        out.append(',"withheld":[' + ",".join(f'"{name}"' for name in withheld) + "]")
    if face.HasField("heart_rate"):
        out.append(_heart_rate(face.heart_rate))
    if len(face.skin):
        samples = [f'{{"region":"{_REGIONS.get(s.region, "unknown")}","r":{number(s.r, 3)},"g":{number(s.g, 3)},'
                   f'"b":{number(s.b, 3)},"pixels":{s.pixels}}}' for s in face.skin]
        out.append(',"skin":[' + ",".join(samples) + "]")
    if len(face.landmarks):
        scheme = "mesh" if face.landmark_scheme == pb.LANDMARK_SCHEME_MESH else "five"
        values = face.landmarks
        pairs = [f"[{number(values[i], 1)},{number(values[i + 1], 1)}]" for i in range(0, len(values) - 1, 2)]
        out.append(f',"landmarkScheme":"{scheme}","landmarks":[' + ",".join(pairs) + "]")
    if face.tracking_id != 0:
        out.append(f',"trackingID":{face.tracking_id},"trackingFrameCount":{face.tracking_frame_count}')
    out.append("}")
    return "".join(out)


_STATUS = {pb.FRAME_STATUS_PROCESSED: "processed", pb.FRAME_STATUS_DROPPED: "dropped", pb.FRAME_STATUS_ERROR: "error"}


def frame_line(frame):
    out = [f'{{"stream":{quoted(frame.stream)},"epoch":{frame.epoch},"seq":{frame.seq}']
    if frame.capture_time_us != 0:
        out.append(f',"captureTime":{seconds(frame.capture_time_us)}')
    if frame.HasField("media_time_us"):
        out.append(f',"mediaTime":{seconds(frame.media_time_us)}')
    status = _STATUS.get(frame.status, f"unknown-{frame.status}")
    out.append(f',"status":"{status}"')
    if status != "processed":
        out.append(f',"reason":{quoted(frame.reason)}')
        if status == "dropped" and frame.run_length > 1:
            out.append(f',"runLength":{frame.run_length}')
    if frame.width != 0 or frame.height != 0:
        out.append(f',"width":{frame.width},"height":{frame.height}')
    if frame.worker:
        out.append(f',"worker":{quoted(frame.worker)}')
    if frame.HasField("timings"):
        t = frame.timings
        out.append(f',"timings":{{"queue":{number(t.queue_ms, 2)},"decode":{number(t.decode_ms, 2)},'
                   f'"detect":{number(t.detect_ms, 2)}')
        if t.classify_ms != 0:
            out.append(f',"classify":{number(t.classify_ms, 2)}')
        out.append(f',"total":{number(t.total_ms, 2)}}}')
    out.append(',"faces":[' + ",".join(face_object(face) for face in frame.faces) + "]}")
    return "".join(out)


def _header(message, event):
    return f'{{"stream":{quoted(message.stream)},"epoch":{message.epoch},"event":"{event}"'


def line(message):
    """A `StreamMessage`'s line (no newline), or None for a heartbeat or a body this client does not know."""
    body = message.WhichOneof("body")
    if body == "frame":
        return frame_line(message.frame)
    if body == "event":
        event = message.event
        kind = "faceAppeared" if event.kind == pb.FaceEvent.KIND_APPEARED else "faceLeft"
        text = (_header(message, kind) + f',"seq":{event.seq},"trackingID":{event.tracking_id},'
                f'"trackingFrameCount":{event.tracking_frame_count}')
        if event.HasField("heart_rate"):
            text += _heart_rate(event.heart_rate)
        return text + "}"
    if body == "end":
        s = message.end
        text = (_header(message, "streamEnded") + f',"frames":{s.frames},"processed":{s.processed},'
                f'"dropped":{s.dropped},"late":{s.late},"duplicates":{s.duplicates}')
        if s.next_seq > 0:
            text += f',"nextSeq":{s.next_seq}'
        return text + "}"
    if body == "reset":
        return _header(message, "trackingReset") + f',"seq":{message.reset.seq},"endedTracks":{message.reset.ended_tracks}}}'
    if body == "statistics":
        s = message.statistics
        dropped = ",".join(f"{quoted(d.reason)}:{d.count}" for d in s.dropped)
        text = (_header(message, "statistics") + f',"window":{number(s.window_seconds, 3)},"frames":{s.frames},'
                f'"processed":{s.processed},"dropped":{{{dropped}}},"late":{s.late},"duplicates":{s.duplicates},'
                f'"fps":{number(s.fps, 2)}')
        if s.HasField("latency_p50_ms"):
            text += f',"latencyP50":{number(s.latency_p50_ms, 1)}'
        if s.HasField("latency_p99_ms"):
            text += f',"latencyP99":{number(s.latency_p99_ms, 1)}'
        return text + f',"nextSeq":{s.next_seq}}}'
    return None
