import FacewireImage
import Foundation
import Testing

@testable import FacewireFuzzing

/// The fuzz targets on the golden vectors and on pseudo-random and mutated inputs, in the normal test run: the
/// parsers must neither crash nor break the promises the targets check. (The long coverage-guided run is fuzz/.)
@Suite("Fuzz targets (short, deterministic)")
struct FuzzTargetsTests {
    static let vectors = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("protocol/vectors")

    static func run(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { FuzzTargets.run($0) }
    }

    @Test("every golden vector, through every parser, whole and mutated")
    func vectors() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.vectors.path).filter { $0.hasSuffix(".bin") }
        #expect(files.count > 40)
        var state: UInt64 = 1
        for file in files {
            let data = Array(try Data(contentsOf: Self.vectors.appendingPathComponent(file)))
            for selector in UInt8(0)..<5 {
                Self.run([selector] + data)
                Self.run([selector, 7] + data)
                for _ in 0..<20 where !data.isEmpty {
                    // Flip a pseudo-random byte, or cut the input short.
                    state = state &* 6364136223846793005 &+ 1442695040888963407
                    var mutated = data
                    let position = Int(state >> 33) % mutated.count
                    if state & 1 == 0 { mutated[position] ^= UInt8(truncatingIfNeeded: state >> 8) } else { mutated.removeSubrange(position...) }
                    Self.run([selector] + mutated)
                }
            }
        }
    }

    /// Every code a target may reject an input with: the parsers' named codes (ProtocolError for targets 0–2,
    /// ImageError for 3, MJPEG defects for 4). Anything else (`unnamed: …`) is a rejection nobody can count.
    static let namedCodes: [Set<String>] = [
        ["malformed", "unsupportedVersion", "invalidStream", "tooLarge", "missingBody"],
        ["malformed", "unsupportedVersion", "invalidStream", "tooLarge", "missingBody"],
        ["malformed", "unsupportedVersion", "invalidStream", "tooLarge", "missingBody"],
        ["notJPEG", "truncated", "tooLarge", "invalidHeader", "decodeFailed", "resourceFailed"],
        ["not-jpeg", "truncated", "malformed", "unsupported", "wrong-size"],
    ]

    static func outcome(_ bytes: [UInt8]) -> FuzzTargets.Outcome {
        bytes.withUnsafeBufferPointer { FuzzTargets.outcome($0) }
    }

    @Test("pseudo-random inputs of every size up to 300 bytes: each is accepted or rejected with a named code")
    func randomInputs() {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15  // fixed: a failure names an input that can be replayed
        var rejections: [Int: Set<String>] = [:]
        for size in 0...300 {
            for round in 0..<5 {
                var input = (0..<size).map { _ in
                    state = state &* 6364136223846793005 &+ 1442695040888963407
                    return UInt8(truncatingIfNeeded: state >> 56)
                }
                if size > 0 { input[0] = UInt8(round) }  // every target gets every size
                let outcome = Self.outcome(input)
                let target = size > 0 ? Int(input[0] % 5) : -1
                switch outcome {
                case .empty:
                    #expect(size == 0 || (target == 0 && size == 1), "only an input without a payload is empty: \(input)")
                case .accepted:
                    break
                case .rejected(let code):
                    #expect(target >= 0 && Self.namedCodes[target].contains(code), "target \(target) rejected \(input) with \(code)")
                    rejections[target, default: []].insert(code)
                }
            }
        }
        // Random bytes are almost never valid: each target must have refused some, by name.
        for target in 0..<5 { #expect(!(rejections[target] ?? []).isEmpty, "target \(target) refused nothing") }
        #expect(rejections[1]?.contains("malformed") == true)
        #expect(rejections[3]?.contains("notJPEG") == true)
        #expect(rejections[4]?.contains("not-jpeg") == true)
    }

    struct Vector: Decodable {
        var name: String
        var kind: String
        var parts: [String]
        var valid: Bool
        var error: String?
    }

    struct Vectors: Decodable { var vectors: [Vector] }

    @Test("the golden vectors through the targets: the valid ones are accepted, the others refused with their code")
    func goldenOutcomes() throws {
        let list = try JSONDecoder().decode(Vectors.self, from: Data(contentsOf: Self.vectors.appendingPathComponent("vectors.json")))
        var checked = 0
        for vector in list.vectors {
            let parts = try vector.parts.map { Array(try Data(contentsOf: Self.vectors.appendingPathComponent($0))) }
            let outcome: FuzzTargets.Outcome
            switch vector.kind {
            case "frame": outcome = FuzzTargets.frameMessage(parts: parts)
            case "envelope": outcome = Self.outcome([1] + parts[0])
            case "stream": outcome = Self.outcome([2] + parts[0] + parts[1])
            default: continue
            }
            #expect(outcome == (vector.valid ? .accepted : .rejected(vector.error ?? "?")), "\(vector.name): \(outcome)")
            checked += 1
        }
        #expect(checked > 40)
    }

    /// JPEGs of different sizes, as libturbojpeg writes them.
    static func jpegs() throws -> [(bytes: [UInt8], width: Int, height: Int)] {
        let encoder = try JPEGEncoder()
        return try [(16, 8), (24, 40), (64, 32), (8, 96), (120, 72), (33, 17)].map { width, height in
            var image = PixelImage(width: width, height: height, format: .bgr)
            for index in image.bytes.indices { image.bytes[index] = UInt8(truncatingIfNeeded: index * 7) }
            return (try encoder.encode(image), width, height)
        }
    }

    @Test("real JPEGs are accepted by the JPEG targets")
    func jpegSeeds() throws {
        for jpeg in try Self.jpegs() {
            #expect(Self.outcome([3] + jpeg.bytes) == .accepted)
            #expect(Self.outcome([4] + jpeg.bytes) == .accepted)
        }
    }

    /// With one libturbojpeg handle shared by the targets (as before), this crashed with SIGSEGV in two runs of
    /// two; a handle per call has no shared state.
    @Test("the JPEG header target from many threads at once: each reads its own image's size")
    func jpegHeadersInParallel() async throws {
        let jpegs = try Self.jpegs()
        let wrong = await withTaskGroup(of: Int.self) { group in
            for thread in 0..<8 {
                group.addTask {
                    var wrong = 0
                    for round in 0..<20000 {
                        let jpeg = jpegs[(thread + round) % jpegs.count]
                        let header = try? FuzzTargets.jpegHeader(jpeg.bytes)
                        if header?.width != jpeg.width || header?.height != jpeg.height { wrong += 1 }
                    }
                    return wrong
                }
            }
            return await group.reduce(0, +)
        }
        #expect(wrong == 0, "\(wrong) headers read wrong while threads shared the decoder")
    }
}
