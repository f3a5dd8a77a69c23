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
            "frame_settings", "frame_settings_no_classifiers", "frame_settings_empty", "frame_settings_unknown",
            "envelope_result_expression", "stream_frame_expression", "envelope_result_pulse", "stream_frame_pulse",
            "stream_event_left_heart_rate", "envelope_result_pulse_mesh",
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

    @Test func resultWithoutClassifiersHasNoExpressionFields() throws {
        // The vectors made before the classifiers existed decode with every new field absent or false.
        let envelope = try Envelope(part: try parts("envelope_result")[0])
        guard case .result(let result) = envelope.body else {
            Issue.record("not a result: \(envelope)")
            return
        }
        #expect(result.timings.classifyMs == 0)
        for face in result.faces {
            #expect(!face.hasYaw && !face.hasSmileScore && !face.hasLeftEyeClosedScore && !face.hasRightEyeClosedScore)
            #expect(!face.hasSmile_p && !face.leftEyeClosed && !face.rightEyeClosed)
        }
    }

    private func frameResult(_ name: String) throws -> FrameResult? {
        let wire = try parts(name)
        if name.hasPrefix("stream") {
            if case .frame(let frame) = try StreamMessage(parts: wire).body { return frame }
        } else if case .result(let result) = try Envelope(part: wire[0]).body {
            return result
        }
        Issue.record("\(name) holds no frame result")
        return nil
    }

    @Test(arguments: ["envelope_result_expression", "stream_frame_expression"])
    func expressionFields(_ name: String) throws {
        guard let result = try frameResult(name) else { return }
        #expect(result.timings.classifyMs == 4.5)
        #expect(result.faces.count == 3)

        // Every classifier ran.
        let all = result.faces[0]
        #expect(all.hasYaw && all.yaw == 12.5)
        #expect(all.hasSmileScore && all.smileScore == 0.8125 && all.hasSmile_p)
        #expect(all.hasLeftEyeClosedScore && all.leftEyeClosedScore == 0, "a score of 0.0 is present")
        #expect(!all.leftEyeClosed)
        #expect(all.hasRightEyeClosedScore && all.rightEyeClosedScore == 0.75 && all.rightEyeClosed)

        // Yaw 0 and a smile score present; the eyes-closed classifier did not run.
        let smile = result.faces[1]
        #expect(smile.hasYaw && smile.yaw == 0, "a yaw of 0.0 is present")
        #expect(smile.hasSmileScore && smile.smileScore == 0.25 && !smile.hasSmile_p)
        #expect(!smile.hasLeftEyeClosedScore && !smile.hasRightEyeClosedScore)
        #expect(!smile.leftEyeClosed && !smile.rightEyeClosed)

        // No landmarks: no yaw, no classifier.
        let bare = result.faces[2]
        #expect(!bare.hasYaw && !bare.hasSmileScore && !bare.hasLeftEyeClosedScore && !bare.hasRightEyeClosedScore)
        #expect(!bare.hasSmile_p && !bare.leftEyeClosed && !bare.rightEyeClosed)
    }

    @Test func theMeshForehead() throws {
        let result = try #require(try frameResult("envelope_result_pulse_mesh"))
        let face = try #require(result.faces.first)
        #expect(face.skin.count == 3, "the regions placed from the eyes stay")
        #expect(face.meshSkin.map(\.region) == [.forehead] && face.meshSkin[0].pixels == 2210)
        #expect(face.meshSkin[0].r == 168.25 && face.meshSkin[0].g == 120.5 && face.meshSkin[0].b == 97)
        // Field 29 (a two-byte key, ea 01), 20 bytes, after every other field of the face (a previous-version
        // decoder skips it as an unknown field).
        let bytes = hex(try parts("envelope_result_pulse_mesh").last!)
        #expect(bytes.contains("ea011408011500402843"))
    }

    @Test(arguments: ["envelope_result_pulse", "stream_frame_pulse"])
    func skinSamplesAndTheHeartRate(_ name: String) throws {
        guard let result = try frameResult(name) else { return }
        let face = try #require(result.faces.first)
        #expect(face.skin.map(\.region) == [.forehead, .leftCheek, .rightCheek])
        #expect(face.skin.map(\.pixels) == [1843, 612, 598])
        #expect(face.skin[0].r == 171.5 && face.skin[0].g == 122.25 && face.skin[0].b == 98.75)
        #expect(face.hasHeartRate == name.hasPrefix("stream"), "a worker never sets it; the collector does")
        let bytes = hex(try parts(name).last!)
        // Field 25 (a two-byte key, ca 01), 20 bytes: region 1, r 171.5, g 122.25, b 98.75, pixels 1843 (varint b3 0e).
        #expect(bytes.contains("ca011408011500802b431d0080f442250080c54228b30e"))
        if face.hasHeartRate {
            #expect(face.heartRate.bpm == 72.5 && face.heartRate.snr == 6.25 && face.heartRate.windowSeconds == 10)
            // Field 26 (d2 01), 15 bytes: bpm, snr, window_seconds.
            #expect(bytes.contains("d2010f0d00009142150000c8401d00002041"))
        }
    }

    @Test func aLeftEventCarriesTheTracksLastHeartRate() throws {
        let message = try StreamMessage(parts: try parts("stream_event_left_heart_rate"))
        guard case .event(let event) = message.body else {
            Issue.record("not an event: \(message)")
            return
        }
        #expect(event.kind == .left && event.hasHeartRate && event.heartRate.bpm == 72.5)
        // Field 5 (2a), 15 bytes, after tracking_frame_count.
        #expect(hex(try parts("stream_event_left_heart_rate")[1]).hasSuffix("2a0f0d00009142150000c8401d00002041"))
        let plain = try StreamMessage(parts: try parts("stream_event_left"))
        guard case .event(let without) = plain.body else {
            Issue.record("stream_event_left is not an event: \(plain)")
            return
        }
        #expect(without.kind == .left)
        #expect(!without.hasHeartRate, "a track that never reported a rate leaves without one")
    }

    @Test func zeroOptionalFloatsAreOnTheWire() throws {
        let bytes = hex(try parts("envelope_result_expression")[0])
        // Face 2: yaw (field 10, fixed32: key 0x55) = 0.0, written because it is optional.
        #expect(bytes.contains("5500000000"))
        // Face 1: has_smile (11) = true, smile_score (12) = 0.8125, right_eye_closed (14) = true,
        // left_eye_closed_score (15) = 0.0 (present), right_eye_closed_score (16, two-byte key) = 0.75.
        #expect(bytes.contains("5801650000503f70017d0000000085010000403f"))
        // Timings: detect_ms 12.25 then classify_ms (field 5, key 0x2d) 4.5.
        #expect(bytes.contains("1d000044412d00009040"))
    }

    @Test func settingsTravelInTheHeader() throws {
        let frame = try FrameMessage(parts: try parts("frame_settings"))
        #expect(frame.header.hasSettings)
        let settings = frame.header.settings
        #expect(settings.accuracy == .high)
        #expect(settings.minFace == 48)
        #expect(settings.maxFaces == 8)
        #expect(settings.faceMode == .large)
        #expect(settings.hasClassifiers && settings.classifiers == 1)
        // The header of seq 42 with field 11 appended: key 0x5a, 10 bytes.
        let plain = try parts("frame")[0]
        #expect(try parts("frame_settings")[0] == plain + [0x5a, 0x0a, 0x08, 0x02, 0x10, 0x30, 0x18, 0x08, 0x20, 0x02, 0x28, 0x01])
    }

    @Test func headerWithoutSettings() throws {
        let frame = try FrameMessage(parts: try parts("frame"))
        #expect(!frame.header.hasSettings)
        #expect(frame.header.settings == DetectionSettings(), "reads as every field unset")
        #expect(!frame.header.settings.hasClassifiers)
    }

    @Test func classifiersZeroIsPresentAndDiffersFromAbsent() throws {
        let none = try FrameMessage(parts: try parts("frame_settings_no_classifiers"))
        #expect(none.header.hasSettings)
        #expect(none.header.settings.hasClassifiers && none.header.settings.classifiers == 0)
        #expect(none.header.settings.accuracy == .unset && none.header.settings.faceMode == .unset)
        #expect(none.header.settings.minFace == 0 && none.header.settings.maxFaces == 0)
        #expect(hex(try parts("frame_settings_no_classifiers")[0]).hasSuffix("5a022800"))

        let empty = try FrameMessage(parts: try parts("frame_settings_empty"))
        #expect(empty.header.hasSettings && !empty.header.settings.hasClassifiers)
        #expect(hex(try parts("frame_settings_empty")[0]).hasSuffix("5a00"))

        // Clearing the field (absent: the worker's default) gives the empty settings' bytes.
        var cleared = none
        cleared.header.settings.clearClassifiers()
        #expect(try cleared.parts()[0] == (try parts("frame_settings_empty")[0]))
    }

    @Test func unknownSettingValuesAreKept() throws {
        // They decode (proto3 enums are open) and re-encode unchanged; refusing them is the worker's job.
        let frame = try FrameMessage(parts: try parts("frame_settings_unknown"))
        let settings = frame.header.settings
        #expect(settings.accuracy == .UNRECOGNIZED(3))
        #expect(settings.faceMode == .UNRECOGNIZED(7))
        #expect(settings.maxFaces == 300)
        #expect(settings.classifiers == 0x24)
        #expect(try frame.parts()[0] == (try parts("frame_settings_unknown")[0]))
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

    static func header() -> FrameHeader {
        var header = FrameHeader()
        header.version = Wire.version
        header.stream = stream
        header.epoch = epoch
        header.seq = 42
        header.captureTimeUs = captureTime
        header.width = 1280
        header.height = 720
        header.orientation = 6
        header.sentTimeUs = captureTime + 1433
        header.deadlineUs = captureTime + 2_000_000
        return header
    }

    @Test func frame() throws {
        let parts = try FrameMessage(header: Self.header(), jpeg: try file("frame_image.bin")).parts()
        #expect(parts == [try file("frame_header.bin"), try file("frame_image.bin")])
    }

    @Test func frameWithSettings() throws {
        var header = Self.header()
        header.settings.accuracy = .high
        header.settings.minFace = 48
        header.settings.maxFaces = 8
        header.settings.faceMode = .large
        header.settings.classifiers = 1 << 0  // bit 0: smile
        #expect(try header.serializedBytes() == (try file("frame_header_settings.bin")))

        header.settings = DetectionSettings()
        #expect(try header.serializedBytes() == (try file("frame_header_settings_empty.bin")), "present, empty")
        header.settings.classifiers = 0
        #expect(try header.serializedBytes() == (try file("frame_header_settings_no_classifiers.bin")), "0 is written")
        header.clearSettings()
        #expect(try header.serializedBytes() == (try file("frame_header.bin")))
    }

    @Test func helloCapture() throws {
        var hello = Hello()
        hello.role = .capture
        hello.nodeID = "cam-host:812"
        hello.stream = Self.stream
        hello.epoch = Self.epoch
        hello.frameEndpoint = "tcp://0.0.0.0:5555"
        hello.nextSeq = 42
        hello.dispatch = Wire.dispatchVersion
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

    /// The faces of `envelope_result_expression.bin`: every classifier; yaw 0 and smile only; none.
    static func expressionFaces() -> [WireFace] {
        var all = WireFace()
        all.bounds = .with {
            $0.x = 96
            $0.y = 320.5
            $0.width = 144
            $0.height = 176
        }
        all.leftEye = .with {
            $0.x = 140.25
            $0.y = 380
        }
        all.rightEye = .with {
            $0.x = 196.75
            $0.y = 382.5
        }
        all.mouth = .with {
            $0.x = 170
            $0.y = 452
        }
        all.faceAngle = 2.5
        all.confidence = 0.9375
        all.nose = .with {
            $0.x = 176
            $0.y = 418
        }
        all.yaw = 12.5
        all.hasSmile_p = true
        all.smileScore = 0.8125
        all.leftEyeClosedScore = 0
        all.rightEyeClosed = true
        all.rightEyeClosedScore = 0.75

        var smile = WireFace()
        smile.bounds = .with {
            $0.x = 600
            $0.y = 260
            $0.width = 96
            $0.height = 112
        }
        smile.leftEye = .with {
            $0.x = 628
            $0.y = 300
        }
        smile.rightEye = .with {
            $0.x = 668
            $0.y = 300
        }
        smile.mouth = .with {
            $0.x = 648
            $0.y = 344
        }
        smile.faceAngle = 0
        smile.confidence = 0.75
        smile.nose = .with {
            $0.x = 648
            $0.y = 322
        }
        smile.yaw = 0
        smile.smileScore = 0.25
        return [all, smile, bareFace()]
    }

    static func expressionResult() -> FrameResult {
        var result = FrameResult()
        result.stream = stream
        result.epoch = epoch
        result.seq = 44
        result.captureTimeUs = captureTime + 66_667
        result.status = .processed
        result.width = 720
        result.height = 1280
        result.worker = worker
        result.timings = .with {
            $0.queueMs = 1.25
            $0.decodeMs = 3.5
            $0.detectMs = 12.25
            $0.classifyMs = 4.5
        }
        result.faces = expressionFaces()
        return result
    }

    @Test func resultWithExpressions() throws {
        #expect(
            try Envelope(.result(Self.expressionResult())).serializedBytes() == (try file("envelope_result_expression.bin")))
    }

    @Test func streamFrameWithExpressions() throws {
        var result = Self.expressionResult()
        result.timings.totalMs = 42.75
        for (index, (id, count)) in [(UInt64(9), UInt32(3)), (10, 1), (8, 3)].enumerated() {
            result.faces[index].trackingID = id
            result.faces[index].trackingFrameCount = count
        }
        let parts = try StreamMessage(stream: Self.stream, epoch: Self.epoch, body: .frame(result)).parts()
        #expect(parts == [try file("topic_cam-1.bin"), try file("stream_frame_expression.bin")])
    }

    static func event(_ kind: FaceEvent.Kind, trackingID: UInt64, seq: UInt64, frames: UInt32) -> FaceEvent {
        var event = FaceEvent()
        event.kind = kind
        event.trackingID = trackingID
        event.seq = seq
        event.trackingFrameCount = frames
        return event
    }

    @Test func streamEventsAndEnd() throws {
        let appeared = Self.event(.appeared, trackingID: 8, seq: 42, frames: 1)
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

    static func point(_ x: Float, _ y: Float) -> WirePoint {
        .with {
            $0.x = x
            $0.y = y
        }
    }

    /// The result of `envelope_result_pulse.bin`: one face with the pulse classifier's three skin samples (the
    /// expression result's stream, worker and timings but for `classify_ms`).
    static func pulseResult() -> FrameResult {
        var face = WireFace()
        face.bounds = .with { ($0.x, $0.y, $0.width, $0.height) = (240, 300, 200, 240) }
        (face.leftEye, face.rightEye, face.mouth, face.nose) = (point(296, 392), point(384, 392), point(340, 480), point(340, 440))
        face.faceAngle = 0
        face.confidence = 0.9375
        face.yaw = 0
        let samples: [(Facewire_V1_SkinSample.Region, Float, Float, Float, UInt32)] = [
            (.forehead, 171.5, 122.25, 98.75, 1843), (.leftCheek, 165, 118.5, 95.25, 612), (.rightCheek, 166.75, 119, 96.5, 598),
        ]
        face.skin = samples.map { region, r, g, b, pixels in
            .with {
                $0.region = region
                ($0.r, $0.g, $0.b) = (r, g, b)
                $0.pixels = pixels
            }
        }
        var result = expressionResult()
        result.seq = 342
        result.captureTimeUs = captureTime + 10_000_000
        result.timings.classifyMs = 0.5
        result.faces = [face]
        return result
    }

    static let heartRate = Facewire_V1_HeartRate.with {
        $0.bpm = 72.5
        $0.snr = 6.25
        $0.windowSeconds = 10
    }

    @Test func pulseResultAndItsHeartRate() throws {
        #expect(try Envelope(.result(Self.pulseResult())).serializedBytes() == (try file("envelope_result_pulse.bin")))

        var published = Self.pulseResult()
        published.timings.totalMs = 41.5
        published.faces[0].trackingID = 11
        published.faces[0].trackingFrameCount = 301
        published.faces[0].heartRate = Self.heartRate
        #expect(
            try StreamMessage(stream: Self.stream, epoch: Self.epoch, body: .frame(published)).parts()
                == [try file("topic_cam-1.bin"), try file("stream_frame_pulse.bin")])

        var left = Self.event(.left, trackingID: 11, seq: 380, frames: 339)
        left.heartRate = Self.heartRate
        #expect(
            try StreamMessage(stream: Self.stream, epoch: Self.epoch, body: .event(left)).parts()
                == [try file("topic_cam-1.bin"), try file("stream_event_left_heart_rate.bin")])
    }

    @Test func heartbeat() throws {
        // What the collector publishes every 200 ms.
        #expect(
            try StreamMessage(stream: "", epoch: 0, body: nil).parts()
                == [try file("topic_heartbeat.bin"), try file("stream_heartbeat.bin")])
    }
}
