import FacewireImage
import FacewireRuntime
import Foundation
import Testing

@testable import FacewireCapture

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
}

/// A source that produces a numbered frame every `interval` seconds, `count` of them.
final class TickingSource: FrameSource {
    let count: Int
    let interval: Double
    private(set) var produced = 0
    var description: String { "ticking" }
    var nominalFPS: Double? { 1 / interval }

    init(count: Int, interval: Double) {
        self.count = count
        self.interval = interval
    }

    func next() throws -> SourceFrame? {
        guard produced < count else { return nil }
        Thread.sleep(forTimeInterval: interval)
        produced += 1
        return SourceFrame(jpeg: [UInt8(produced)], width: 1, height: 1, orientation: .up, reencoded: false)
    }
}

/// A source that hands out numbered frames only when the test lets it: ``produce(_:)`` returns once the reader
/// holds them (it has asked for the frame after them), so what the reader may have replaced is exact.
final class GatedSource: FrameSource, @unchecked Sendable {
    private let condition = NSCondition()
    private var allowed = 0
    private var requested = 0
    private var ended = false
    var description: String { "gated" }
    var nominalFPS: Double? { nil }

    func next() throws -> SourceFrame? {
        condition.withLock {
            requested += 1
            condition.broadcast()
            while allowed < requested, !ended { condition.wait() }
            guard allowed >= requested else { return nil }
            return SourceFrame(jpeg: [UInt8(truncatingIfNeeded: requested)], width: 1, height: 1, orientation: .up, reencoded: false)
        }
    }

    /// Lets `count` more frames out and waits until the reader has taken all of them (asked for the next).
    func produce(_ count: Int) throws {
        let deadline = Date().addingTimeInterval(10)
        try condition.withLock {
            allowed += count
            condition.broadcast()
            while requested <= allowed {
                guard condition.wait(until: deadline) else { throw FrameSourceError(.readFailed, "the reader never came back") }
            }
        }
    }

    /// Ends the source after the frames already let out.
    func finish() {
        condition.withLock {
            ended = true
            condition.broadcast()
        }
    }
}

@Suite("LatestFrameSource (network streams read continuously)")
struct LatestFrameSourceTests {
    @Test("a slow reader gets the newest frames, in order; the replaced ones are counted; the end comes through")
    func newestFrames() throws {
        let counters = Counters()
        let live = LatestFrameSource(wrapping: TickingSource(count: 40, interval: 0.005), counters: counters)
        var taken: [UInt8] = []
        while try live.waitForFrame(timeoutMilliseconds: 1000), let frame = try live.next() {
            taken.append(frame.jpeg[0])
            #expect(frame.captureTimeUs != nil)
            Thread.sleep(forTimeInterval: 0.02)  // four source frames per frame taken
        }
        #expect(taken == taken.sorted() && Set(taken).count == taken.count, "\(taken)")
        #expect(taken.last == 40, "the last frame is never lost: \(taken)")
        #expect(Int(counters.value("frames_replaced_at_source")) == 40 - taken.count)
        // How many were replaced depends on the machine's timing: printed, not asserted (replacement itself is
        // asserted exactly by `replacement` below).
        print("LatestFrameSource: a reader 4× slower than the source took \(taken.count) of 40 frames")
    }

    @Test("frames not taken are replaced by the newest, counted, never reordered; the end follows the last frame")
    func replacement() throws {
        let counters = Counters()
        let source = GatedSource()
        let live = LatestFrameSource(wrapping: source, counters: counters)
        defer { live.close() }
        // Three frames arrive before the reader looks: it gets the third, the first two were replaced.
        try source.produce(3)
        #expect(try live.next()?.jpeg == [3])
        #expect(counters.value("frames_replaced_at_source") == 2)
        // One frame, one read: nothing replaced.
        try source.produce(1)
        #expect(try live.next()?.jpeg == [4])
        #expect(counters.value("frames_replaced_at_source") == 2)
        // Two more, then the end: the newest frame still comes out before the end.
        try source.produce(2)
        source.finish()
        #expect(try live.waitForFrame(timeoutMilliseconds: 10_000))
        #expect(try live.next()?.jpeg == [6])
        #expect(try live.next() == nil, "the end comes after the last frame")
        #expect(counters.value("frames_replaced_at_source") == 3)
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
