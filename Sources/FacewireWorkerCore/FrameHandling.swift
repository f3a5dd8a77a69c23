import FacewireDetection
import FacewireProtocol
import FacewireVocabulary

/// A worker's per-frame decisions, without sockets or clocks: parse and check the frame message, decide whether it
/// is stale, compute its timings, run the injected analysis and build the ``FrameResult`` (SPEC §11).
///
/// Every header field is a hostile value: whatever its value, ``handle(parts:at:analyze:)`` returns a
/// defined outcome (processed, dropped "stale", error with a reason, or malformed and not answered) and never traps.
/// Oddities are counted by name in the outcome's counts.
public struct FrameHandling: Sendable {
    /// The image analysis: JPEG, EXIF orientation (0...8), options → faces. ``FrameAnalyzer`` in production; tests
    /// inject their own.
    public typealias Analyze = (_ jpeg: [UInt8], _ orientation: Int, _ options: AnalysisOptions) throws -> FrameAnalysis

    /// The longest queue time a worker believes (1 day, in µs): a larger or negative one says the clocks or the
    /// header are wrong, and is reported as 0 (`frames_implausible_time`).
    public static let maxPlausibleQueueUs: Int64 = 86_400_000_000

    /// What became of one frame message: the shared ``Effects`` shape with the worker's actions (counters such as
    /// `frames_received`, `frames_processed`, `frames_stale`, in order).
    public typealias Outcome = Effects<WorkerAction>

    /// The analysis options for frames whose header leaves a setting unset.
    public var defaults: AnalysisOptions
    /// The detection thread's id, written into every result.
    public var workerID: String

    public init(defaults: AnalysisOptions = AnalysisOptions(), workerID: String) {
        self.defaults = defaults
        self.workerID = workerID
    }

    /// Handles the parts of one message from a capture node received at `now`.
    public func handle(parts: [[UInt8]], at now: Instant, analyze: Analyze) -> Outcome {
        let frame: FrameMessage
        do {
            frame = try FrameMessage(parts: parts)
        } catch {
            let protocolError = error as? ProtocolError ?? ProtocolError(.malformed, "\(error)")
            var outcome = Outcome()
            outcome.count("frames_malformed")
            outcome.count("frames_rejected_\(protocolError.code)")
            outcome.act(.reject(protocolError))
            return outcome
        }
        var outcome = handle(frame, at: now, analyze: analyze)
        outcome.counts.insert(.init("frames_received"), at: 0)
        return outcome
    }

    /// Handles a parsed frame received at `now` (its wall time is what deadlines and queue times are measured by).
    public func handle(_ frame: FrameMessage, at now: Instant, analyze: Analyze) -> Outcome {
        let receivedAtUs = now.wallUs
        let header = frame.header
        var counters: [String] = []
        var result = FrameResult()
        result.stream = header.stream
        result.epoch = header.epoch
        result.seq = header.seq
        result.captureTimeUs = header.captureTimeUs
        if header.hasMediaTimeUs { result.mediaTimeUs = header.mediaTimeUs }
        result.worker = workerID
        result.width = header.width
        result.height = header.height
        // width/height are informational (the JPEG's own size is used); an impossible one is only noted.
        if header.width == 0 || header.height == 0 || header.width > 8192 || header.height > 8192 {
            counters.append("frames_implausible_size")
        }
        var timings = FrameTimings()
        switch Self.queueMicroseconds(receivedAtUs: receivedAtUs, sentTimeUs: header.sentTimeUs, captureTimeUs: header.captureTimeUs) {
        case .some(let queued): timings.queueMs = Float(queued) / 1000
        case .none: counters.append("frames_implausible_time")
        }
        // Any deadline is honoured as is: int64.max is never stale, a negative one always is; 0 means none.
        if header.deadlineUs != 0, receivedAtUs > header.deadlineUs {
            result.status = .dropped
            result.reason = "stale"
            result.timings = timings
            counters.append("frames_stale")
            return Self.outcome(result, counters)
        }
        let options: AnalysisOptions
        do {
            options = header.hasSettings ? try defaults.applying(header.settings) : defaults
        } catch {
            return Self.failed(result, timings, reason: "\(error)", counters + ["frames_failed", "frames_failed_settings"])
        }
        guard header.orientation <= 8 else {
            let reason = DetectionError(
                .invalidImage, "orientation \(header.orientation) is not an EXIF orientation (1...8, or 0 for unknown)")
            return Self.failed(result, timings, reason: "\(reason)", counters + ["frames_failed", "frames_failed_orientation"])
        }
        do {
            let analysis = try analyze(frame.jpeg, Int(header.orientation), options)
            result.status = .processed
            result.width = UInt32(clamping: analysis.width)
            result.height = UInt32(clamping: analysis.height)
            timings.decodeMs = Self.milliseconds(analysis.decodeMilliseconds)
            timings.detectMs = Self.milliseconds(analysis.detectMilliseconds)
            timings.classifyMs = Self.milliseconds(analysis.classifyMilliseconds)
            result.faces = analysis.faces.map(WireFace.init)
            if let score = analysis.trackScore { result.trackScore = score }
            counters.append("frames_processed")
        } catch {
            return Self.failed(result, timings, reason: "\(error)", counters + ["frames_failed", "frames_failed_image"])
        }
        result.timings = timings
        return Self.outcome(result, counters)
    }

    /// The frame's queue time in µs: receive time − `sent_time_us` (or − `capture_time_us` when 0); 0 when both are
    /// absent; nil when it is not plausible (overflow, negative or over ``maxPlausibleQueueUs``).
    public static func queueMicroseconds(receivedAtUs: Int64, sentTimeUs: Int64, captureTimeUs: Int64) -> Int64? {
        let sent = sentTimeUs != 0 ? sentTimeUs : captureTimeUs
        guard sent != 0 else { return 0 }
        let (queued, overflow) = receivedAtUs.subtractingReportingOverflow(sent)
        guard !overflow, (0...maxPlausibleQueueUs).contains(queued) else { return nil }
        return queued
    }

    /// Whole nanoseconds for a duration in milliseconds, only when finite and in 0...1 day (0 otherwise):
    /// `Int64(Double)` traps on inf, NaN and out-of-range values.
    public static func nanoseconds(milliseconds: Float) -> Int64 {
        let value = Double(milliseconds) * 1e6
        guard value.isFinite, value >= 0, value <= 86_400e9 else { return 0 }
        return Int64(value)
    }

    /// A stage time from the analysis as a wire float: a non-finite or negative one is 0.
    static func milliseconds(_ value: Double) -> Float {
        value.isFinite && value >= 0 ? Float(value) : 0
    }

    private static func failed(_ result: FrameResult, _ timings: FrameTimings, reason: String, _ counters: [String]) -> Outcome {
        var result = result
        result.status = .error
        result.reason = reason
        result.timings = timings
        return Self.outcome(result, counters)
    }

    private static func outcome(_ result: FrameResult, _ counters: [String]) -> Outcome {
        var outcome = Outcome()
        for name in counters { outcome.count(name) }
        outcome.act(.reply(result))
        return outcome
    }
}

/// What a worker does with one frame message besides counting.
public enum WorkerAction: Sendable {
    /// Send this result to the collector.
    case reply(FrameResult)
    /// The message was rejected (no trustworthy header, so no stream to answer): log it, rate-limited.
    case reject(ProtocolError)
}

extension Effects where Action == WorkerAction {
    /// The result to send; nil for a malformed message.
    public var result: FrameResult? { actions.lazy.compactMap { if case .reply(let result) = $0 { result } else { nil } }.first }
    /// Why the message was rejected, when it was.
    public var rejection: ProtocolError? { actions.lazy.compactMap { if case .reject(let error) = $0 { error } else { nil } }.first }
}
