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
}
