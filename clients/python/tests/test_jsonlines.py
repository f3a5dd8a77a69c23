"""The client's pure parts: SPEC 12's number and string rules, and what it does with hostile bytes."""
import os
import struct
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from facewire import facewire_pb2 as pb  # noqa: E402
from facewire.client import MAX_MESSAGE_BYTES, parse, read_key  # noqa: E402
from facewire.jsonlines import number, quoted, seconds  # noqa: E402


def f32(value):
    """The binary32 nearest `value`, as protobuf hands a float field over."""
    return struct.unpack("<f", struct.pack("<f", value))[0]


class Numbers(unittest.TestCase):
    def test_spec_examples(self):
        # SPEC 12.1: the exact binary32 value, rounded to nearest, ties to even.
        self.assertEqual(number(f32(0.15), 1), "0.2")
        self.assertEqual(number(f32(188.25), 1), "188.2")
        self.assertEqual(number(f32(0.9375), 3), "0.938")
        self.assertEqual(number(f32(160.0), 1), "160")
        self.assertEqual(number(f32(250.5), 1), "250.5")
        self.assertEqual(number(f32(1e30), 1), "1000000015047466219876688855040")

    def test_zero_nan_and_infinities(self):
        self.assertEqual(number(f32(-0.0), 1), "0")
        self.assertEqual(number(f32(-0.01), 1), "0")
        self.assertEqual(number(float("nan"), 3), "null")
        self.assertEqual(number(float("inf"), 1), "null")
        self.assertEqual(number(float("-inf"), 1), "null")

    def test_seconds(self):
        self.assertEqual(seconds(1732240001234567), "1732240001.234567")
        self.assertEqual(seconds(-1500000), "-1.500000")
        self.assertEqual(seconds(-5), "-0.000005")
        self.assertEqual(seconds(-(1 << 63)), "-9223372036854.775808")

    def test_strings(self):
        self.assertEqual(quoted('a"b\\c\n\r\t\x01\x7fé'), '"a\\"b\\\\c\\n\\r\\t\\u0001\x7fé"')


class HostileInput(unittest.TestCase):
    def test_garbage_other_versions_and_oversize_are_skipped(self):
        good = pb.StreamMessage(version=1, stream="s", epoch=1)
        good.frame.seq = 3
        self.assertEqual(parse([b"s\x00", good.SerializeToString()]).seq, 3)
        for parts in ([b"s\x00", b"\xff\xff\xff"], [b"s\x00"], [b"a", b"b", b"c"],
                      [b"s\x00", pb.StreamMessage(version=2, stream="s").SerializeToString()],
                      [b"\x00", pb.StreamMessage(version=1).SerializeToString()],  # a heartbeat
                      [b"s\x00", b"\x00" * (MAX_MESSAGE_BYTES + 1)]):
            self.assertIsNone(parse(parts), parts[:2])

    def test_absurd_values_print(self):
        message = pb.StreamMessage(version=1, stream="s", epoch=(1 << 64) - 1)
        frame = message.frame
        # A frame line takes its stream and epoch from the FrameResult (as the reference tail does).
        frame.stream, frame.epoch = "s", (1 << 64) - 1
        frame.seq, frame.capture_time_us, frame.status, frame.run_length = (1 << 64) - 1, -(1 << 63), 99, 1 << 40
        face = frame.faces.add()
        face.confidence = float("nan")
        face.landmarks.extend([1.0, 2.0, 3.0])  # an odd last value is not printed
        face.tracking_id = (1 << 64) - 1
        line = parse([b"s\x00", message.SerializeToString()]).json()
        self.assertIn('"epoch":18446744073709551615,"seq":18446744073709551615', line)
        self.assertIn('"status":"unknown-99","reason":""', line)
        self.assertIn('"confidence":null', line)
        self.assertIn('"landmarks":[[1,2]]', line)

    def test_hostile_welcomes_are_refused_not_raised(self):
        from facewire.client import Client
        client = Client(collector="tcp://10.0.0.1:5556")

        def welcome(endpoint):
            envelope = pb.Envelope(version=1)
            envelope.welcome.publish_endpoint = endpoint
            return envelope.SerializeToString()

        self.assertEqual(client._endpoint_from(welcome("tcp://*:5557")), "tcp://10.0.0.1:5557")
        for endpoint in ("tcp://h:99999", "tcp://h:-1", "tcp://h:x", "", "ipc:///tmp/s", "tcp://h:1" + "0" * 5000,
                         "tcp://[::1"):
            self.assertIsNone(client._endpoint_from(welcome(endpoint)), endpoint[:40])
        self.assertIsNone(client._endpoint_from(b"\xff\x00garbage"))
        self.assertIsNone(client._endpoint_from(pb.Envelope(version=2).SerializeToString()))

    def test_key_files(self):
        import tempfile
        with tempfile.NamedTemporaryFile("w", suffix=".key", delete=False) as handle:
            handle.write('# comment\npublic-key = "' + "a" * 40 + '"\nsecret-key = "short"\n')
        try:
            self.assertEqual(read_key(handle.name, "public-key"), b"a" * 40)
            with self.assertRaises(ValueError):
                read_key(handle.name, "secret-key")
        finally:
            os.unlink(handle.name)


if __name__ == "__main__":
    unittest.main()
