import Foundation

/// Renders results-stream messages as one-line JSON objects, with Core Image's CIFaceFeature names.
///
/// Hand-written rather than `JSONEncoder`: the key order is fixed (stream, epoch, seq first, as a reader
/// scans them), numbers are rounded to what the measurement supports, and it is several times faster. Every line is
/// written straight into a ``JSONBuffer`` (bytes, no `String` per value); the `String` forms are for tests and
/// callers that want one.
public enum JSONLines {
    /// Any message of the stream as its line: a frame, an event or a stream end; `nil` for a heartbeat.
    public static func line(for message: StreamMessage) -> String? {
        var out = JSONBuffer()
        return write(message, into: &out) ? out.string : nil
    }

    /// Appends `message`'s line (without a newline) to `out`; false, with nothing written, for a heartbeat.
    @discardableResult
    public static func write(_ message: StreamMessage, into out: inout JSONBuffer) -> Bool {
        switch message.body {
        case .frame(let frame): write(frame, into: &out)
        case .event(let event): write(event, stream: message.stream, epoch: message.epoch, into: &out)
        case .end(let summary): write(summary, stream: message.stream, epoch: message.epoch, into: &out)
        case .reset(let reset): write(reset, stream: message.stream, epoch: message.epoch, into: &out)
        case .statistics(let statistics): write(statistics, stream: message.stream, epoch: message.epoch, into: &out)
        case .none: return false
        }
        return true
    }

    /// One frame: `{"stream":…,"epoch":…,"seq":…,"captureTime":…,"status":…,…,"faces":[…]}`; a dropped run has
    /// `"runLength"` after its reason (only when > 1).
    public static func line(for frame: FrameResult) -> String {
        rendered { write(frame, into: &$0) }
    }

    static func write(_ frame: FrameResult, into out: inout JSONBuffer) {
        out.append("{\"stream\":")
        out.append(quoted: frame.stream)
        field(",\"epoch\":", frame.epoch, into: &out)
        field(",\"seq\":", frame.seq, into: &out)
        if frame.captureTimeUs != 0 {
            out.append(",\"captureTime\":")
            out.append(seconds: frame.captureTimeUs)
        }
        if frame.hasMediaTimeUs {
            out.append(",\"mediaTime\":")
            out.append(seconds: frame.mediaTimeUs)
        }
        switch frame.status {
        case .processed: out.append(",\"status\":\"processed\"")
        case .dropped:
            out.append(",\"status\":\"dropped\",\"reason\":")
            out.append(quoted: frame.reason)
            // A run of dropped sequences: this line stands for seq ... seq + runLength - 1.
            if frame.runLength > 1 {
                field(",\"runLength\":", frame.runLength, into: &out)
            }
        case .error:
            out.append(",\"status\":\"error\",\"reason\":")
            out.append(quoted: frame.reason)
        case .UNRECOGNIZED(let value):
            out.append(",\"status\":\"unknown-")
            out.append(value)
            out.append("\",\"reason\":")
            out.append(quoted: frame.reason)
        }
        if frame.width != 0 || frame.height != 0 {
            field(",\"width\":", frame.width, into: &out)
            field(",\"height\":", frame.height, into: &out)
        }
        if !frame.worker.isEmpty {
            out.append(",\"worker\":")
            out.append(quoted: frame.worker)
        }
        if frame.hasTimings {
            let t = frame.timings
            out.append(",\"timings\":{\"queue\":")
            out.append(t.queueMs, decimals: 2)
            out.append(",\"decode\":")
            out.append(t.decodeMs, decimals: 2)
            out.append(",\"detect\":")
            out.append(t.detectMs, decimals: 2)
            if t.classifyMs != 0 {
                out.append(",\"classify\":")
                out.append(t.classifyMs, decimals: 2)
            }
            out.append(",\"total\":")
            out.append(t.totalMs, decimals: 2)
            out.append("}")
        }
        out.append(",\"faces\":[")
        for (index, face) in frame.faces.enumerated() {
            if index > 0 { out.append(",") }
            write(face, into: &out)
        }
        out.append("]}")
    }

    /// A face-appeared / face-left event: `{"stream":…,"epoch":…,"event":"faceAppeared",…}`; a face-left event ends
    /// with the track's last `"heartRate":{"bpm":…,"snr":…,"window":…}` when it had one.
    public static func line(for event: FaceEvent, stream: String, epoch: UInt64) -> String {
        rendered { write(event, stream: stream, epoch: epoch, into: &$0) }
    }

    static func write(_ event: FaceEvent, stream: String, epoch: UInt64, into out: inout JSONBuffer) {
        header(stream: stream, epoch: epoch, event: event.kind == .appeared ? "faceAppeared" : "faceLeft", into: &out)
        field(",\"seq\":", event.seq, into: &out)
        field(",\"trackingID\":", event.trackingID, into: &out)
        field(",\"trackingFrameCount\":", event.trackingFrameCount, into: &out)
        if event.hasHeartRate { write(heartRate: event.heartRate, into: &out) }
        out.append("}")
    }

    /// `,"heartRate":{"bpm":…,"snr":…,"window":…}`, each with at most 1 decimal.
    static func write(heartRate rate: Facewire_V1_HeartRate, into out: inout JSONBuffer) {
        field(",\"heartRate\":{\"bpm\":", rate.bpm, 1, into: &out)
        field(",\"snr\":", rate.snr, 1, into: &out)
        field(",\"window\":", rate.windowSeconds, 1, into: &out)
        out.append("}")
    }

    /// `,"<name>":[{"region":…,"r":…,"g":…,"b":…,"pixels":…},…]` (nothing when `samples` is empty): the raw skin
    /// colour (pulse classifier), 3 decimals, as a beat moves it by a fraction of a level.
    static func write(skin samples: [Facewire_V1_SkinSample], named name: String, into out: inout JSONBuffer) {
        guard !samples.isEmpty else { return }
        out.append(",\"")
        out.append(text: name)
        out.append("\":[")
        for (index, sample) in samples.enumerated() {
            if index > 0 { out.append(",") }
            switch sample.region {
            case .forehead: out.append("{\"region\":\"forehead\"")
            case .leftCheek: out.append("{\"region\":\"leftCheek\"")
            case .rightCheek: out.append("{\"region\":\"rightCheek\"")
            default: out.append("{\"region\":\"unknown\"")
            }
            field(",\"r\":", sample.r, 3, into: &out)
            field(",\"g\":", sample.g, 3, into: &out)
            field(",\"b\":", sample.b, 3, into: &out)
            field(",\"pixels\":", sample.pixels, into: &out)
            out.append("}")
        }
        out.append("]")
    }

    /// The end of a stream: `{"stream":…,"epoch":…,"event":"streamEnded","frames":…,…,"nextSeq":…}`.
    public static func line(for summary: StreamSummary, stream: String, epoch: UInt64) -> String {
        rendered { write(summary, stream: stream, epoch: epoch, into: &$0) }
    }

    static func write(_ summary: StreamSummary, stream: String, epoch: UInt64, into out: inout JSONBuffer) {
        header(stream: stream, epoch: epoch, event: "streamEnded", into: &out)
        field(",\"frames\":", summary.frames, into: &out)
        field(",\"processed\":", summary.processed, into: &out)
        field(",\"dropped\":", summary.dropped, into: &out)
        field(",\"late\":", summary.late, into: &out)
        field(",\"duplicates\":", summary.duplicates, into: &out)
        // Left out when the collector did not say (one before this field).
        if summary.nextSeq > 0 { field(",\"nextSeq\":", summary.nextSeq, into: &out) }
        out.append("}")
    }

    /// Tracking was reset: `{"stream":…,"epoch":…,"event":"trackingReset","seq":…,"endedTracks":…}`.
    public static func line(for reset: TrackingReset, stream: String, epoch: UInt64) -> String {
        rendered { write(reset, stream: stream, epoch: epoch, into: &$0) }
    }

    static func write(_ reset: TrackingReset, stream: String, epoch: UInt64, into out: inout JSONBuffer) {
        header(stream: stream, epoch: epoch, event: "trackingReset", into: &out)
        field(",\"seq\":", reset.seq, into: &out)
        field(",\"endedTracks\":", reset.endedTracks, into: &out)
        out.append("}")
    }

    /// One statistics window: `{"stream":…,"epoch":…,"event":"statistics","window":…,"frames":…,…}`; `dropped`
    /// maps reason codes to counts; the latencies are in milliseconds and absent without processed frames.
    public static func line(for statistics: StreamStatisticsMessage, stream: String, epoch: UInt64) -> String {
        rendered { write(statistics, stream: stream, epoch: epoch, into: &$0) }
    }

    static func write(_ statistics: StreamStatisticsMessage, stream: String, epoch: UInt64, into out: inout JSONBuffer) {
        header(stream: stream, epoch: epoch, event: "statistics", into: &out)
        out.append(",\"window\":")
        out.append(statistics.windowSeconds, decimals: 3)
        field(",\"frames\":", statistics.frames, into: &out)
        field(",\"processed\":", statistics.processed, into: &out)
        out.append(",\"dropped\":{")
        for (index, drop) in statistics.dropped.enumerated() {
            if index > 0 { out.append(",") }
            out.append(quoted: drop.reason)
            out.append(":")
            out.append(drop.count)
        }
        out.append("},\"late\":")
        out.append(statistics.late)
        field(",\"duplicates\":", statistics.duplicates, into: &out)
        out.append(",\"fps\":")
        out.append(statistics.fps, decimals: 2)
        if statistics.hasLatencyP50Ms {
            out.append(",\"latencyP50\":")
            out.append(statistics.latencyP50Ms, decimals: 1)
        }
        if statistics.hasLatencyP99Ms {
            out.append(",\"latencyP99\":")
            out.append(statistics.latencyP99Ms, decimals: 1)
        }
        field(",\"nextSeq\":", statistics.nextSeq, into: &out)
        out.append("}")
    }

    /// `{"stream":…,"epoch":…,"event":"<event>"` (the object stays open).
    private static func header(stream: String, epoch: UInt64, event: StaticString, into out: inout JSONBuffer) {
        out.append("{\"stream\":")
        out.append(quoted: stream)
        field(",\"epoch\":", epoch, into: &out)
        out.append(",\"event\":\"")
        out.append(event)
        out.append("\"")
    }

    static func faceObject(_ face: WireFace) -> String {
        rendered { write(face, into: &$0) }
    }


    static func field<T: BinaryInteger>(_ key: StaticString, _ value: T, into out: inout JSONBuffer) {
        out.append(key)
        out.append(value)
    }

    static func field(_ key: StaticString, _ value: Float, _ decimals: Int, into out: inout JSONBuffer) {
        out.append(key)
        out.append(value, decimals: decimals)
    }

    static func point(_ key: StaticString, _ p: WirePoint, into out: inout JSONBuffer) {
        out.append(key)
        out.append("{\"x\":")
        out.append(p.x, decimals: 1)
        out.append(",\"y\":")
        out.append(p.y, decimals: 1)
        out.append("}")
    }

    /// A finite number with at most `decimals` decimals and no trailing zeros; NaN and infinities become null.
    static func number(_ value: Float, _ decimals: Int) -> String {
        rendered { $0.append(value, decimals: decimals) }
    }

    /// C's `%.Nf` with the trailing zeros (and a bare point) cut and `-0` as `0`: the reference ``JSONBuffer``'s
    /// integer path matches, and its fallback for values beyond 2^53.
    static func formatted(_ value: Float, _ decimals: Int) -> String {
        var text = String(format: "%.\(decimals)f", Double(value))
        if text.contains(".") {
            while text.hasSuffix("0") { text.removeLast() }
            if text.hasSuffix(".") { text.removeLast() }
        }
        return text == "-0" ? "0" : text
    }

    /// Unix microseconds as seconds with six decimals.
    static func seconds(_ microseconds: Int64) -> String {
        rendered { $0.append(seconds: microseconds) }
    }

    /// A JSON string literal.
    public static func quoted(_ text: String) -> String {
        rendered { $0.append(quoted: text) }
    }

    /// What `write` puts into a fresh buffer, as a `String` (the forms tests and other callers use).
    private static func rendered(_ write: (inout JSONBuffer) -> Void) -> String {
        var out = JSONBuffer()
        write(&out)
        return out.string
    }
}
