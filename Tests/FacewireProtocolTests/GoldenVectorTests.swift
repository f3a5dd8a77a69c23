import FacewireProtocol
import Foundation
import Testing

/// A vector decoded with the Swift framing code, by its kind.
private enum Decoded {
    case frame(FrameMessage)
    case ready(Ready)
    case envelope(Envelope)
    case stream(StreamMessage)

    /// Decodes `parts` the way the receiving node does.
    init(_ kind: Vector.Kind, parts: [[UInt8]]) throws {
        switch kind {
        case .frame: self = .frame(try FrameMessage(parts: parts))
        case .ready: self = .ready(try Ready(part: try Self.single(parts)))
        case .envelope: self = .envelope(try Envelope(part: try Self.single(parts)))
        case .stream: self = .stream(try StreamMessage(parts: parts))
        }
    }

    private static func single(_ parts: [[UInt8]]) throws -> [UInt8] {
        guard parts.count == 1 else { throw ProtocolError(.malformed, "\(parts.count) parts for a one-part message") }
        return parts[0]
    }

    var fields: JSONValue {
        switch self {
        case .frame(let frame): MessageFields.of(frame)
        case .ready(let ready): MessageFields.of(ready)
        case .envelope(let envelope): MessageFields.of(envelope)
        case .stream(let message): MessageFields.of(message)
        }
    }

    /// The message parts the Swift encoder produces for the decoded message.
    func encoded() throws -> [[UInt8]] {
        switch self {
        case .frame(let frame): try frame.parts()
        case .ready(let ready): [try ready.serializedBytes()]
        case .envelope(let envelope): [try envelope.serializedBytes()]
        case .stream(let message): try message.parts()
        }
    }
}

@Suite("Golden vectors")
struct GoldenVectorTests {
    @Test func catalogueIsReadableAndMatchesTheFiles() throws {
        let vectors = try GoldenVectors.load()
        #expect(vectors.count == GoldenVectors.all.count)
        #expect(Set(vectors.map(\.name)).count == vectors.count, "vector names are unique")
        let required: Set<String> = [
            "frame", "ready", "envelope_hello_capture", "envelope_result", "envelope_skipped", "envelope_end",
            "stream_frame", "stream_event", "stream_end", "stream_heartbeat", "bad_version", "truncated", "bad_stream_id",
        ]
        #expect(required.isSubset(of: Set(vectors.map(\.name))))

        var referenced = Set<String>()
        for vector in vectors {
            #expect(vector.parts.count == vector.hex.count, "\(vector.name)")
            #expect(vector.valid == (vector.expect != nil) && vector.valid == (vector.error == nil), "\(vector.name)")
            for (file, expectedHex) in zip(vector.parts, vector.hex) {
                referenced.insert(file)
                #expect(hex(try GoldenVectors.bytes(file)) == expectedHex, "\(vector.name): \(file)")
            }
        }
        let onDisk = try FileManager.default.contentsOfDirectory(atPath: GoldenVectors.directory.path)
            .filter { $0.hasSuffix(".bin") }
        #expect(Set(onDisk) == referenced, "every .bin file belongs to a vector")
    }

    @Test(arguments: GoldenVectors.valid)
    func decodesToTheExpectedFields(_ vector: Vector) throws {
        let expected = try #require(vector.expect)
        let decoded = try Decoded(vector.kind, parts: try vector.partBytes())
        #expect(decoded.fields.differences(from: expected) == [])
    }

    @Test(arguments: GoldenVectors.valid)
    func swiftReencodesToTheSameBytes(_ vector: Vector) throws {
        let parts = try vector.partBytes()
        let decoded = try Decoded(vector.kind, parts: parts)
        let encoded = try decoded.encoded()
        // The Python encoder writes canonical proto3 (field order, defaults omitted, unknown fields last),
        // which is what SwiftProtobuf writes too: byte equality holds for every valid vector.
        #expect(encoded.map(hex) == parts.map(hex))
        let again = try Decoded(vector.kind, parts: encoded)
        #expect(again.fields == decoded.fields)
    }

    @Test(arguments: GoldenVectors.invalid)
    func isRejectedWithTheRightCode(_ vector: Vector) throws {
        let expected = try #require(Self.codes[vector.error ?? ""], "unknown error code \(vector.error ?? "nil")")
        let parts = try vector.partBytes()
        let error = #expect(throws: ProtocolError.self) { _ = try Decoded(vector.kind, parts: parts) }
        #expect(error?.code == expected, "\(error?.description ?? "no error")")
    }

    @Test(arguments: GoldenVectors.valid.filter { $0.kind == .stream })
    func streamTopicIsTheStreamIDAndAZeroByte(_ vector: Vector) throws {
        let parts = try vector.partBytes()
        let message = try StreamMessage(parts: parts)
        #expect(parts[0] == Wire.topic(forStream: message.stream))
        #expect(parts[0].last == 0)
    }

    static let codes: [String: ProtocolError.Code] = [
        "malformed": .malformed,
        "unsupportedVersion": .unsupportedVersion,
        "invalidStream": .invalidStream,
        "tooLarge": .tooLarge,
        "missingBody": .missingBody,
    ]
}

/// Specific properties of particular vectors, spelled out.
@Suite("Golden vectors, in detail")
struct GoldenVectorDetailTests {
    private func parts(_ name: String) throws -> [[UInt8]] {
        let vector = try #require(GoldenVectors.all.first { $0.name == name }, "no vector \(name)")
        return try vector.partBytes()
    }

    @Test func resultFacesWithAndWithoutLandmarks() throws {
        let envelope = try Envelope(part: try parts("envelope_result")[0])
        guard case .result(let result) = envelope.body else {
            Issue.record("not a result: \(envelope)")
            return
        }
        #expect(result.status == .processed)
        #expect(result.faces.count == 2)
        let full = result.faces[0]
        #expect(full.hasLeftEye && full.hasRightEye && full.hasMouth && full.hasNose)
        #expect(full.hasFaceAngle && full.faceAngle == -4.5)
        #expect(full.nose.x == 0 && full.nose.y == 290.5, "a present point may hold a zero coordinate")
        let bare = result.faces[1]
        #expect(bare.hasBounds && bare.bounds.x == 0 && bare.bounds.y == 1000)
        #expect(!bare.hasLeftEye && !bare.hasRightEye && !bare.hasMouth && !bare.hasNose && !bare.hasFaceAngle)
        #expect(bare.trackingID == 0, "workers do not track; the collector sets tracking ids")
    }

    @Test func faceAngleZeroIsPresent() throws {
        let message = try StreamMessage(parts: try parts("stream_frame"))
        guard case .frame(let frame) = message.body else {
            Issue.record("not a frame: \(message)")
            return
        }
        #expect(frame.faces[0].hasFaceAngle)
        #expect(frame.faces[0].faceAngle == 0)
        #expect(frame.faces[0].trackingID == 7 && frame.faces[0].trackingFrameCount == 12)
        #expect(frame.timings.totalMs == 40.5)
    }

    @Test func heartbeatHasAnEmptyTopicAndNoBody() throws {
        let wire = try parts("stream_heartbeat")
        #expect(wire == [[0x00], [0x08, 0x01]])
        let message = try StreamMessage(parts: wire)
        #expect(message.body == nil)
        #expect(message.stream.isEmpty)
    }

    @Test func appearedEventIsTheDefaultKind() throws {
        let message = try StreamMessage(parts: try parts("stream_event"))
        guard case .event(let event) = message.body else {
            Issue.record("not an event: \(message)")
            return
        }
        #expect(event.kind == .appeared)
        // Field 5 (event), 6 bytes: tracking_id 8, seq 42, tracking_frame_count 1; kind 0 is not on the wire.
        #expect(hex(try parts("stream_event")[1]).hasSuffix("2a061008182a2001"))
    }

    @Test func unknownFieldsAreIgnoredAndKept() throws {
        let plain = try FrameMessage(parts: try parts("frame"))
        let extended = try FrameMessage(parts: try parts("frame_unknown_field"))
        #expect(MessageFields.of(extended.header) == MessageFields.of(plain.header))
        // SwiftProtobuf keeps what it does not know and writes it back (a relay loses nothing).
        #expect(try extended.parts()[0] == (try parts("frame_unknown_field")[0]))
    }

    @Test func negativeCaptureTimeIsATenByteVarint() throws {
        let frame = try FrameMessage(parts: try parts("frame_minimal"))
        #expect(frame.header.captureTimeUs == -1_500_000)
        #expect(frame.header.epoch == 0 && frame.header.seq == 0 && frame.header.orientation == 0)
        // version, stream "A", then field 5 as 10 varint bytes.
        #expect(hex(try parts("frame_minimal")[0]) == "080112014128a0b9a4ffffffffffff01")
    }
}

/// Messages built from scratch in Swift, compared with the bytes of the independent Python encoder.
@Suite("Swift encoder against the golden vectors")
struct SwiftEncoderTests {
    static let stream = "cam-1"
    static let epoch: UInt64 = 1_732_240_000_000_000
    static let captureTime: Int64 = 1_732_240_001_234_567
    static let worker = "gpu-host:4242/t0"

    private func file(_ name: String) throws -> [UInt8] { try GoldenVectors.bytes(name) }

    @Test func ready() throws {
        #expect(try Ready(worker: Self.worker).serializedBytes() == (try file("ready.bin")))
    }

    @Test func frame() throws {
        var header = FrameHeader()
        header.version = Wire.version
        header.stream = Self.stream
        header.epoch = Self.epoch
        header.seq = 42
        header.captureTimeUs = Self.captureTime
        header.width = 1280
        header.height = 720
        header.orientation = 6
        header.sentTimeUs = Self.captureTime + 1433
        header.deadlineUs = Self.captureTime + 2_000_000
        let parts = try FrameMessage(header: header, jpeg: try file("frame_image.bin")).parts()
        #expect(parts == [try file("frame_header.bin"), try file("frame_image.bin")])
    }

    @Test func helloCapture() throws {
        var hello = Hello()
        hello.role = .capture
        hello.nodeID = "cam-host:812"
        hello.stream = Self.stream
        hello.epoch = Self.epoch
        hello.frameEndpoint = "tcp://0.0.0.0:5555"
        hello.nextSeq = 42
        #expect(try Envelope(.hello(hello)).serializedBytes() == (try file("envelope_hello_capture.bin")))
    }

    static func fullFace() -> WireFace {
        var face = WireFace()
        face.bounds = .with {
            $0.x = 412.5
            $0.y = 188.25
            $0.width = 160
            $0.height = 192
        }
        face.leftEye = .with {
            $0.x = 452
            $0.y = 250.5
        }
        face.rightEye = .with {
            $0.x = 532
            $0.y = 244
        }
        face.mouth = .with {
            $0.x = 492.75
            $0.y = 330
        }
        face.faceAngle = -4.5
        face.confidence = 0.96875
        face.nose = .with { $0.y = 290.5 }
        return face
    }

    static func bareFace() -> WireFace {
        var face = WireFace()
        face.bounds = .with {
            $0.y = 1000
            $0.width = 48
            $0.height = 48
        }
        face.confidence = 0.5
        return face
    }

    static func result() -> FrameResult {
        var result = FrameResult()
        result.stream = stream
        result.epoch = epoch
        result.seq = 42
        result.captureTimeUs = captureTime
        result.status = .processed
        result.width = 720
        result.height = 1280
        result.worker = worker
        result.timings = .with {
            $0.queueMs = 1.5
            $0.decodeMs = 3.25
            $0.detectMs = 12.75
        }
        result.faces = [fullFace(), bareFace()]
        return result
    }

    @Test func resultWithTwoFaces() throws {
        #expect(try Envelope(.result(Self.result())).serializedBytes() == (try file("envelope_result.bin")))
    }

    @Test func skippedAndEnd() throws {
        var skipped = Skipped()
        skipped.stream = Self.stream
        skipped.epoch = Self.epoch
        skipped.firstSeq = 43
        skipped.count = 5
        skipped.reason = "no-worker"
        skipped.captureTimeUs = Self.captureTime + 33_333
        #expect(try Envelope(.skipped(skipped)).serializedBytes() == (try file("envelope_skipped.bin")))

        var end = StreamEnd()
        end.stream = Self.stream
        end.epoch = Self.epoch
        end.nextSeq = 100
        #expect(try Envelope(.end(end)).serializedBytes() == (try file("envelope_end.bin")))
    }

    @Test func streamFrame() throws {
        var result = Self.result()
        result.timings.totalMs = 40.5
        result.faces[0].faceAngle = 0
        result.faces[0].trackingID = 7
        result.faces[0].trackingFrameCount = 12
        result.faces[1].trackingID = 8
        result.faces[1].trackingFrameCount = 1
        let parts = try StreamMessage(stream: Self.stream, epoch: Self.epoch, body: .frame(result)).parts()
        #expect(parts == [try file("topic_cam-1.bin"), try file("stream_frame.bin")])
    }

    @Test func streamEventsAndEnd() throws {
        var appeared = FaceEvent()
        appeared.kind = .appeared
        appeared.trackingID = 8
        appeared.seq = 42
        appeared.trackingFrameCount = 1
        #expect(
            try StreamMessage(stream: Self.stream, epoch: Self.epoch, body: .event(appeared)).parts()
                == [try file("topic_cam-1.bin"), try file("stream_event.bin")])

        var summary = StreamSummary()
        summary.frames = 100
        summary.processed = 93
        summary.dropped = 7
        summary.late = 2
        summary.duplicates = 1
        #expect(
            try StreamMessage(stream: Self.stream, epoch: Self.epoch, body: .end(summary)).parts()
                == [try file("topic_cam-1.bin"), try file("stream_end.bin")])
    }

    @Test func heartbeat() throws {
        // What the collector publishes every 200 ms.
        #expect(
            try StreamMessage(stream: "", epoch: 0, body: nil).parts()
                == [try file("topic_heartbeat.bin"), try file("stream_heartbeat.bin")])
    }
}
