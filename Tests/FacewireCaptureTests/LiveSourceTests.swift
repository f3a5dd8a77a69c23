import FacewireImage
import FacewireRuntime
import Foundation
import Testing

@testable import FacewireCapture
@testable import FacewireCaptureCore
@testable import FacewireTesting

@Suite("MJPEGSplitter (motion-JPEG byte streams)")
struct MJPEGSplitterTests {
    static func frames(_ count: Int) throws -> [[UInt8]] {
        let encoder = try JPEGEncoder()
        return try (0..<count).map { index in
            try encoder.encode(SimulatedV4L2.pattern(index: index, width: 64, height: 48), quality: 80)
        }
    }

    @Test("back-to-back JPEGs come out whole, however the bytes are chunked", arguments: [1, 7, 1000, 1 << 20])
    func chunking(chunk: Int) throws {
        let frames = try Self.frames(6)
        let stream = frames.flatMap { $0 }
        var splitter = MJPEGSplitter()
        var out: [[UInt8]] = []
        var offset = 0
        while offset < stream.count {
            out += splitter.append(stream[offset..<min(stream.count, offset + chunk)])
            offset += chunk
        }
        #expect(out == frames)
        #expect(splitter.skippedBytes == 0)
        #expect(splitter.pendingBytes == 0)
    }

    @Test("bytes between images are skipped and counted; a torn image is dropped and the next one found")
    func garbageAndTornImages() throws {
        let frames = try Self.frames(3)
        let noise: [UInt8] = Array("noise".utf8) + [0xFF, 0x00, 0x12]
        let torn = Array(frames[1].prefix(frames[1].count / 2))
        var splitter = MJPEGSplitter()
        let out = splitter.append(noise + frames[0] + noise + torn + frames[2])
        #expect(out == [frames[0], frames[2]])
        #expect(splitter.skippedBytes >= 2 * noise.count)
    }

    @Test("an image larger than the limit is dropped and counted, and the next one still comes out")
    func oversized() throws {
        let frames = try Self.frames(2)
        // frames[0] with a 4000-byte comment segment: over the limit.
        let comment: [UInt8] = [0xFF, 0xFE, 0x0F, 0xA2] + [UInt8](repeating: 0x41, count: 4000)
        let big = [0xFF, 0xD8] + comment + frames[0].dropFirst(2)
        var splitter = MJPEGSplitter(maxFrameBytes: frames[1].count + 100)
        let out = splitter.append(big + frames[1])
        #expect(out == [frames[1]])
        #expect(splitter.oversizedFrames == 1)
    }
}

@Suite("RateLimit (--max-fps)")
struct RateLimitTests {
    /// Frames at `fps` with up to 3 ms of jitter for `seconds`; the kept capture times.
    static func kept(fps: Double, max: Double, seconds: Double) -> [Int64] {
        var limit = RateLimit(maxFPS: max)
        var out: [Int64] = []
        for index in 0..<Int(fps * seconds) {
            let time = Int64(Double(index) / fps * 1e6) + Int64((index * 7919) % 3000)  // up to 3 ms of jitter
            if limit.keep(timeMicroseconds: time) { out.append(time) }
        }
        return out
    }

    @Test("a 30 fps source limited to N keeps N per second, evenly", arguments: [5.0, 7.0, 10.0, 12.5])
    func rate(max: Double) {
        let times = Self.kept(fps: 30, max: max, seconds: 20)
        let rate = Double(times.count - 1) / (Double(times.last! - times.first!) / 1e6)
        #expect(abs(rate - max) <= 0.5, "kept \(rate) per second with --max-fps \(max)")
        #expect(rate <= max + 0.05)
    }

    @Test("a limit above the source's rate keeps every frame")
    func aboveTheSourceRate() {
        #expect(Self.kept(fps: 30, max: 60, seconds: 5).count == 150)
    }

    @Test("after a gap the schedule restarts instead of bursting")
    func gap() {
        var limit = RateLimit(maxFPS: 5)
        let decisions = [0, 10_000_000, 10_033_000, 10_100_000, 10_200_000].map { limit.keep(timeMicroseconds: $0) }
        // The first frame, the first after ten seconds, then the next one a period (200 ms) later.
        #expect(decisions == [true, true, false, false, true])
    }

    @Test("a capture time far back (a clock set back, an odd timestamp) restarts the schedule instead of stopping it")
    func clockGoesBack() {
        var limit = RateLimit(maxFPS: 5)
        let decisions = [Int64.max, 10_000_000, 10_100_000, 10_200_000, Int64.min, 0, 200_000].map { limit.keep(timeMicroseconds: $0) }
        #expect(decisions == [true, true, false, true, true, true, true])
    }
}

/// A source that produces its next frame (1, 2, ...; then the end) only when the test opens the gate, and says
/// when it is asked for one: the test decides what the reading thread sees, without sleeps.
final class GatedSource: FrameSource, @unchecked Sendable {
    let count: Int
    let asked = DispatchSemaphore(value: 0)
    let gate = DispatchSemaphore(value: 0)
    private var produced = 0
    var description: String { "gated" }
    var nominalFPS: Double? { nil }

    init(count: Int) { self.count = count }

    func next() throws -> SourceFrame? {
        asked.signal()
        gate.wait()
        guard produced < count else { return nil }
        produced += 1
        return SourceFrame(jpeg: [UInt8(produced)], width: 1, height: 1, orientation: .up, reencoded: false)
    }
}

@Suite("LatestFrameSource (network streams read continuously)")
struct LatestFrameSourceTests {
    @Test("a slow reader gets the newest frame; the replaced ones are counted; the end comes through")
    func newestFrames() throws {
        let counters = Counters()
        let source = GatedSource(count: 6)
        let live = LatestFrameSource(wrapping: source, counters: counters)
        source.asked.wait()  // the reading thread waits for the first frame
        /// Lets the source produce `count` frames and waits until the reading thread has stored the last of them.
        func deliver(_ count: Int) {
            for _ in 0..<count {
                source.gate.signal()
                source.asked.wait()
            }
        }
        var taken: [UInt8] = []
        func take() throws {
            #expect(try live.waitForFrame(timeoutMilliseconds: 10_000))
            let frame = try #require(try live.next())
            #expect(frame.captureTimeUs != nil, "stamped as it was read")
            taken.append(frame.jpeg[0])
        }
        deliver(3)
        try take()
        deliver(1)
        try take()
        deliver(2)
        try take()
        #expect(taken == [3, 4, 6], "the newest frame each time")
        #expect(counters.value("frames_replaced_at_source") == 3, "1, 2 and 5 were replaced before they were taken")
        source.gate.signal()  // the end of the source
        #expect(try live.waitForFrame(timeoutMilliseconds: 10_000))
        #expect(try live.next() == nil)
    }

    @Test("a source that fails passes its error on")
    func failure() throws {
        final class Failing: FrameSource {
            var description: String { "failing" }
            var nominalFPS: Double? { nil }
            func next() throws -> SourceFrame? { throw FrameSourceError(.readFailed, "boom") }
        }
        let live = LatestFrameSource(wrapping: Failing())
        #expect(try live.waitForFrame(timeoutMilliseconds: 2000))
        let error = try #require(throws: FrameSourceError.self) { try live.next() }
        #expect(error.code == .readFailed)
    }
}
