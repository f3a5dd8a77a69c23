import FacewireProtocol
import FacewireVocabulary
import Foundation
import Testing

/// The proto's `Face` against the three places a face field lives (ARCHITECTURE.md, "A new face field"):
/// DetectedFace (the model), `WireFace(_:)` (model → wire) and the JSON Lines writer (wire → output). Each test reads
/// the fields from `protocol/facewire.proto` itself, so a field added there and forgotten in one of the places fails
/// here by name.
@Suite("A face's fields: every field of the proto's Face is mapped from the model and printed")
struct WireMappingTests {
    /// Set by the collector, never by the model: the track and its heart rate.
    static let setByCollector: Set<String> = ["tracking_id", "tracking_frame_count", "heart_rate"]
    /// Fields the JSON Lines format leaves out on purpose, with why (SPEC §12.1).
    static let notPrinted: [String: String] = [
        "nose": "the nose tip feeds yaw and the landmark list (scheme five); the output names the eyes and the mouth"
    ]
    /// Where a field's JSON key is not the field's name in lowerCamelCase.
    static let jsonKeys: [String: String] = [
        "left_eye": "leftEyePosition", "right_eye": "rightEyePosition", "mouth": "mouthPosition",
        "tracking_id": "trackingID",
    ]

    /// The fields of `message Face` in protocol/facewire.proto: (name, number), in file order.
    static func protoFaceFields() throws -> [(name: String, number: Int)] {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("protocol/facewire.proto")
        let text = try String(contentsOf: path, encoding: .utf8)
        let start = try #require(text.range(of: "\nmessage Face {"))
        let end = try #require(text.range(of: "\n}", range: start.upperBound..<text.endIndex))
        var fields: [(String, Int)] = []
        for line in text[start.upperBound..<end.lowerBound].split(separator: "\n") {
            let code = line.split(separator: "/", maxSplits: 1).first.map(String.init) ?? ""
            let words = code.split(whereSeparator: { $0 == " " || $0 == "=" || $0 == ";" }).map(String.init)
            // `[optional|repeated] Type name = N;` (enums and comments have no `=` followed by a number last).
            guard words.count >= 3, let number = Int(words[words.count - 1]), code.contains("=") else { continue }
            fields.append((words[words.count - 2], number))
        }
        return fields
    }

    /// The numbers of the top-level fields present in a serialized protobuf message (the wire format, read here
    /// independently of SwiftProtobuf).
    static func fieldNumbers(_ bytes: [UInt8]) throws -> Set<Int> {
        var numbers: Set<Int> = []
        var index = 0
        func varint() throws -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                try #require(index < bytes.count && shift < 64)
                let byte = bytes[index]
                index += 1
                value |= UInt64(byte & 0x7f) << shift
                if byte & 0x80 == 0 { return value }
                shift += 7
            }
        }
        while index < bytes.count {
            let key = try varint()
            numbers.insert(Int(key >> 3))
            switch key & 7 {
            case 0: _ = try varint()
            case 1: index += 8
            case 2: index += Int(try varint())
            case 5: index += 4
            default: Issue.record("wire type \(key & 7)"); return numbers
            }
        }
        return numbers
    }

    /// A face with every attribute the model has set, to values no default takes (flags true, scores non-zero).
    static var everything: DetectedFace {
        var face = DetectedFace(
            bounds: FaceRect(x: 10, y: 20, width: 30, height: 40), leftEye: FacePoint(x: 15, y: 30),
            rightEye: FacePoint(x: 35, y: 31), mouth: FacePoint(x: 25, y: 50), nose: FacePoint(x: 26, y: 40),
            confidence: 0.9,
            expression: FaceExpression(
                smileScore: 0.8, hasSmile: true, leftEyeClosedScore: 0.7, leftEyeClosed: true, rightEyeClosedScore: 0.6,
                rightEyeClosed: true, leftEyeOpenness: 0.2, rightEyeOpenness: 0.3))
        face.pitch = 4
        face.roll = 5
        face.faceAngle = 5
        face.quality = 0.5
        face.attributeSource = .mesh
        face.landmarks = FaceLandmarks(scheme: .mesh, points: (0..<468).map { FacePoint(x: Float($0), y: 1) })
        face.skin = [SkinSample(region: .leftCheek, r: 100, g: 90, b: 80, pixels: 50)]
        face.meshSkin = [SkinSample(region: .forehead, r: 120, g: 95, b: 85, pixels: 70)]
        face.withheld = 2
        face.actions = [ActionReading(action: .lipPucker, score: 75, present: true)]
        return face
    }

    @Test("every field of the proto's Face but the collector's is set from a DetectedFace")
    func everyFieldIsMapped() throws {
        let fields = try Self.protoFaceFields()
        #expect(fields.count >= 26, "protocol/facewire.proto's Face was not read: \(fields)")
        let wire = WireFace(Self.everything)
        let present = try Self.fieldNumbers(try wire.serializedBytes())
        for field in fields where !Self.setByCollector.contains(field.name) {
            #expect(present.contains(field.number), "Face.\(field.name) (\(field.number)) is not set by WireFace(DetectedFace)")
        }
        for field in fields where Self.setByCollector.contains(field.name) {
            #expect(!present.contains(field.number), "Face.\(field.name) is the collector's, yet the model sets it")
        }
    }

    @Test("the mapping keeps each value")
    func valuesAreKept() {
        let model = Self.everything
        let wire = WireFace(model)
        #expect(wire.bounds.x == model.bounds.x && wire.bounds.height == model.bounds.height)
        #expect(wire.leftEye.x == model.leftEye?.x && wire.rightEye.y == model.rightEye?.y)
        #expect(wire.mouth.x == model.mouth?.x && wire.nose.y == model.nose?.y)
        #expect(wire.faceAngle == model.faceAngle && wire.yaw == model.yaw && wire.pitch == model.pitch && wire.roll == model.roll)
        #expect(wire.confidence == model.confidence && wire.quality == model.quality)
        #expect(wire.smileScore == model.expression.smileScore && wire.hasSmile_p == model.expression.hasSmile)
        #expect(wire.leftEyeClosedScore == model.expression.leftEyeClosedScore && wire.leftEyeClosed)
        #expect(wire.rightEyeClosedScore == model.expression.rightEyeClosedScore && wire.rightEyeClosed)
        #expect(wire.leftEyeOpenness == model.expression.leftEyeOpenness && wire.rightEyeOpenness == model.expression.rightEyeOpenness)
        #expect(wire.attributeSource == .mesh && wire.landmarkScheme == .mesh && wire.landmarks.count == 936)
        #expect(wire.skin.count == 1 && wire.skin[0].region == .leftCheek && wire.skin[0].g == 90 && wire.skin[0].pixels == 50)
        #expect(wire.meshSkin.count == 1 && wire.meshSkin[0].region == .forehead && wire.meshSkin[0].r == 120
            && wire.meshSkin[0].pixels == 70)
        #expect(wire.withheld == 2)
        #expect(wire.expressions.count == 1 && wire.expressions[0].expression == .lipPucker && wire.expressions[0].score == 75
            && wire.expressions[0].present)
    }

    @Test("every field of the proto's Face is printed in the JSON Lines output")
    func everyFieldIsPrinted() throws {
        var wire = WireFace(Self.everything)
        wire.trackingID = 7
        wire.trackingFrameCount = 3
        wire.heartRate = .with {
            $0.bpm = 70
            $0.snr = 5
            $0.windowSeconds = 10
        }
        var frame = FrameResult()
        frame.stream = "s"
        frame.status = .processed
        frame.faces = [wire]
        let line = JSONLines.line(for: frame)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let face = try #require((object["faces"] as? [[String: Any]])?.first)
        for field in try Self.protoFaceFields() where Self.notPrinted[field.name] == nil {
            let key = Self.jsonKeys[field.name] ?? Self.lowerCamelCase(field.name)
            #expect(face[key] != nil, "Face.\(field.name) is not printed as \"\(key)\": \(face.keys.sorted())")
        }
    }

    static func lowerCamelCase(_ name: String) -> String {
        let words = name.split(separator: "_")
        return words.enumerated().map { $0.offset == 0 ? String($0.element) : $0.element.capitalized }.joined()
    }
}
