import FacewireProtocol
import Testing
import FacewireViewCore

/// ``PreviewFrame`` takes hostile parts: wrong counts, a topic not its stream's, absurd sizes, garbage.
@Suite("Preview frames: parsed and checked")
struct PreviewFrameTests {
    static func parts(stream: String = "cam", topicStream: String? = nil, width: UInt32 = 640, height: UInt32 = 480) throws -> [[UInt8]] {
        var header = FrameHeader()
        header.version = 1
        header.stream = stream
        header.seq = 7
        header.width = width
        header.height = height
        return [Wire.topic(forStream: topicStream ?? stream), try header.serializedBytes(), [0xFF, 0xD8, 0xFF, 0xD9]]
    }

    @Test func aWellFormedPreviewParses() throws {
        let frame = try PreviewFrame(parts: Self.parts())
        #expect(frame.header.stream == "cam" && frame.header.seq == 7 && frame.jpeg == [0xFF, 0xD8, 0xFF, 0xD9])
    }

    @Test func malformedPreviewsAreRefusedWithoutTrapping() throws {
        let good = try Self.parts()
        let bad: [[[UInt8]]] = [
            [], [good[0]], Array(good[0...1]), good + [[1]],  // part counts
            try Self.parts(topicStream: "other"),  // another stream's topic
            [Array(good[0].dropLast())] + good[1...],  // topic without its 0x00
            try Self.parts(width: 0), try Self.parts(width: 8193), try Self.parts(height: .max),  // sizes
            [good[0], [0xFF, 0xFF, 0xFF], good[2]],  // not a header
            [good[0], good[1], []],  // no image
            [good[0], [UInt8](repeating: 0x08, count: Wire.maxHeaderBytes + 1), good[2]],  // oversized header
        ]
        for parts in bad {
            #expect(throws: ProtocolError.self) { try PreviewFrame(parts: parts) }
        }
        #expect(throws: ProtocolError.self) { try PreviewFrame(parts: Self.parts(stream: "bad stream")) }
    }
}
