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

    @Test("random inputs of every size up to 300 bytes")
    func randomInputs() {
        var generator = SystemRandomNumberGenerator()
        for size in 0...300 {
            for _ in 0..<5 { Self.run((0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }) }
        }
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
