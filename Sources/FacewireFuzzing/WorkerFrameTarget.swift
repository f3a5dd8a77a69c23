import FacewireDetection
import FacewireImage
import FacewireProtocol
import FacewireWorkerCore
import FacewireVocabulary

/// Structure-aware fuzzing of a worker's per-frame handling (``FrameHandling``): the fuzzer's bytes become a
/// sequence of frame messages whose headers are well-formed with hostile numeric fields (``HostileMessages``), with
/// a real small JPEG, random bytes or a missing part behind them, received at hostile wall times.
///
/// The image analysis is injected: it reads the JPEG's header with libturbojpeg (real, and cheap enough for a
/// fuzzer) and reports stage times the fuzzer chooses (NaN, infinities, negatives included). Besides not trapping,
/// the handling must keep the promises of SPEC §11.6, checked with preconditions:
/// - a frame that parses is answered, echoing its stream, epoch and sequence; one that does not is not answered and
///   its rejection is named;
/// - a frame is dropped as `stale` exactly when it has a deadline and arrived after it;
/// - an orientation above 8 is an error, never an analysis;
/// - every timing on the wire is finite and not negative.
public enum WorkerFrameTarget {
    /// Frames per input.
    static let maxFrames = 64

    /// Small real JPEGs (grey and colour, odd sizes), made once.
    static let images: [[UInt8]] = {
        guard let encoder = try? JPEGEncoder() else { return [] }
        return [(8, 8, PixelImage.Format.grey), (33, 17, .bgr), (64, 48, .bgr)].compactMap { width, height, format in
            var image = PixelImage(width: width, height: height, format: format)
            for index in image.bytes.indices { image.bytes[index] = UInt8(truncatingIfNeeded: index &* 37) }
            return try? encoder.encode(image, quality: 80)
        }
    }()

    /// What the frames of one input became (the suite checks that the generator reaches every kind).
    public struct Tally: Sendable, Equatable {
        public var rejected = 0, processed = 0, stale = 0, errors = 0

        public static func += (a: inout Tally, b: Tally) {
            a.rejected += b.rejected
            a.processed += b.processed
            a.stale += b.stale
            a.errors += b.errors
        }
    }

    @discardableResult
    public static func run(_ bytes: [UInt8]) -> Tally {
        var tally = Tally()
        var input = FuzzReader(bytes)
        let handling = FrameHandling(workerID: "fuzz/t0")
        // A decoder per run: a libturbojpeg handle must not be shared between threads (tests run in parallel).
        guard let decoder = try? JPEGDecoder() else { return tally }
        for _ in 0..<maxFrames where !input.isAtEnd {
            let now = input.int64(near: 1_764_000_000_000_000)
            let header = HostileMessages.frameHeader(&input, wallNow: now)
            guard let headerBytes = try? header.serializedBytes() as [UInt8] else { continue }
            var image: [UInt8]
            switch input.below(4) {
            case 0: image = (0..<input.below(64)).map { _ in input.byte() }
            default: image = images.isEmpty ? [0xFF, 0xD8] : images[input.below(images.count)]
            }
            if input.byte() % 8 == 0, !image.isEmpty { image[input.below(image.count)] ^= input.byte() }
            let parts = input.byte() % 16 == 0 ? [headerBytes] : [headerBytes, image]
            let stageTimes = (Double(input.float()), Double(input.float()), Double(input.float()))

            let outcome = handling.handle(parts: parts, at: Instant(monotonicNs: 0, wallUs: now)) { jpeg, orientation, _ in
                precondition((0...8).contains(orientation), "analysis asked for orientation \(orientation)")
                let size = try decoder.readHeader(jpeg)
                return FrameAnalysis(
                    width: size.width, height: size.height, faces: [], decodeMilliseconds: stageTimes.0,
                    detectMilliseconds: stageTimes.1, classifyMilliseconds: stageTimes.2)
            }

            guard let result = outcome.result else {
                precondition(outcome.rejection != nil, "a frame neither answered nor rejected by name")
                precondition(outcome.countedNames.contains { $0.hasPrefix("frames_rejected_") })
                tally.rejected += 1
                continue
            }
            precondition(parts.count == 2, "a \(parts.count)-part message was answered")
            precondition(
                result.stream == header.stream && result.epoch == header.epoch && result.seq == header.seq,
                "the result does not echo its frame")
            let timings = [result.timings.queueMs, result.timings.decodeMs, result.timings.detectMs, result.timings.classifyMs]
            precondition(timings.allSatisfy { $0.isFinite && $0 >= 0 }, "timings \(timings)")
            _ = FrameHandling.nanoseconds(milliseconds: result.timings.queueMs)
            let stale = header.deadlineUs != 0 && now > header.deadlineUs
            precondition((result.status == .dropped) == stale, "stale is \(stale) but the status is \(result.status)")
            if stale { precondition(result.reason == "stale") }
            if !stale, header.orientation > 8 { precondition(result.status == .error, "orientation \(header.orientation) analysed") }
            if result.status == .error { precondition(!result.reason.isEmpty, "an error without a reason") }
            switch result.status {
            case .processed: tally.processed += 1
            case .dropped: tally.stale += 1
            default: tally.errors += 1
            }
        }
        return tally
    }
}
