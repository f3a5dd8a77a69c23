import FacewireProtocol
import Foundation

/// Renders results-stream messages as one-line JSON objects, with Core Image's CIFaceFeature names.
///
/// Hand-written rather than `JSONEncoder`: the key order is fixed (stream, epoch, seq first, as a reader
/// scans them), numbers are rounded to what the measurement supports, and it is several times faster.
public enum JSONLines {
    /// Any message of the stream as its line: a frame, an event or a stream end; `nil` for a heartbeat.
    public static func line(for message: StreamMessage) -> String? {
        switch message.body {
        case .frame(let frame): line(for: frame)
        case .event(let event): line(for: event, stream: message.stream, epoch: message.epoch)
        case .end(let summary): line(for: summary, stream: message.stream, epoch: message.epoch)
        case .reset(let reset): line(for: reset, stream: message.stream, epoch: message.epoch)
        case .statistics(let statistics): line(for: statistics, stream: message.stream, epoch: message.epoch)
        case .none: nil
        }
    }

    /// One frame: `{"stream":…,"epoch":…,"seq":…,"captureTime":…,"status":…,…,"faces":[…]}`; a dropped run has
    /// `"runLength"` after its reason (only when > 1).
    public static func line(for frame: FrameResult) -> String {
        var out = "{"
        out += "\"stream\":\(quoted(frame.stream)),\"epoch\":\(frame.epoch),\"seq\":\(frame.seq)"
        if frame.captureTimeUs != 0 {
            out += ",\"captureTime\":\(seconds(frame.captureTimeUs))"
        }
        switch frame.status {
        case .processed: out += ",\"status\":\"processed\""
        case .dropped:
            out += ",\"status\":\"dropped\",\"reason\":\(quoted(frame.reason))"
            // A run of dropped sequences: this line stands for seq ... seq + runLength - 1.
            if frame.runLength > 1 { out += ",\"runLength\":\(frame.runLength)" }
        case .error: out += ",\"status\":\"error\",\"reason\":\(quoted(frame.reason))"
        case .UNRECOGNIZED(let value): out += ",\"status\":\"unknown-\(value)\",\"reason\":\(quoted(frame.reason))"
        }
        if frame.width != 0 || frame.height != 0 {
            out += ",\"width\":\(frame.width),\"height\":\(frame.height)"
        }
        if !frame.worker.isEmpty {
            out += ",\"worker\":\(quoted(frame.worker))"
        }
        if frame.hasTimings {
            let t = frame.timings
            out += ",\"timings\":{\"queue\":\(number(t.queueMs, 2)),\"decode\":\(number(t.decodeMs, 2)),"
            out += "\"detect\":\(number(t.detectMs, 2)),"
            if t.classifyMs != 0 { out += "\"classify\":\(number(t.classifyMs, 2))," }
            out += "\"total\":\(number(t.totalMs, 2))}"
        }
        out += ",\"faces\":["
        for (index, face) in frame.faces.enumerated() {
            if index > 0 { out += "," }
            out += faceObject(face)
        }
        out += "]}"
        return out
    }

    /// A face-appeared / face-left event: `{"stream":…,"epoch":…,"event":"faceAppeared",…}`.
    public static func line(for event: FaceEvent, stream: String, epoch: UInt64) -> String {
        let name = event.kind == .appeared ? "faceAppeared" : "faceLeft"
        return "{\"stream\":\(quoted(stream)),\"epoch\":\(epoch),\"event\":\"\(name)\",\"seq\":\(event.seq),"
            + "\"trackingID\":\(event.trackingID),\"trackingFrameCount\":\(event.trackingFrameCount)}"
    }

    /// The end of a stream: `{"stream":…,"epoch":…,"event":"streamEnded","frames":…,…}`.
    public static func line(for summary: StreamSummary, stream: String, epoch: UInt64) -> String {
        "{\"stream\":\(quoted(stream)),\"epoch\":\(epoch),\"event\":\"streamEnded\",\"frames\":\(summary.frames),"
            + "\"processed\":\(summary.processed),\"dropped\":\(summary.dropped),\"late\":\(summary.late),"
            + "\"duplicates\":\(summary.duplicates)}"
    }

    /// Tracking was reset: `{"stream":…,"epoch":…,"event":"trackingReset","seq":…,"endedTracks":…}`.
    public static func line(for reset: TrackingReset, stream: String, epoch: UInt64) -> String {
        "{\"stream\":\(quoted(stream)),\"epoch\":\(epoch),\"event\":\"trackingReset\",\"seq\":\(reset.seq),"
            + "\"endedTracks\":\(reset.endedTracks)}"
    }

    /// One statistics window: `{"stream":…,"epoch":…,"event":"statistics","window":…,"frames":…,…}`; `dropped`
    /// maps reason codes to counts; the latencies are in milliseconds and absent without processed frames.
    public static func line(for statistics: StreamStatisticsMessage, stream: String, epoch: UInt64) -> String {
        var out = "{\"stream\":\(quoted(stream)),\"epoch\":\(epoch),\"event\":\"statistics\","
        out += "\"window\":\(number(statistics.windowSeconds, 3)),\"frames\":\(statistics.frames),"
        out += "\"processed\":\(statistics.processed),\"dropped\":{"
        out += statistics.dropped.map { "\(quoted($0.reason)):\($0.count)" }.joined(separator: ",")
        out += "},\"late\":\(statistics.late),\"duplicates\":\(statistics.duplicates),\"fps\":\(number(statistics.fps, 2))"
        if statistics.hasLatencyP50Ms { out += ",\"latencyP50\":\(number(statistics.latencyP50Ms, 1))" }
        if statistics.hasLatencyP99Ms { out += ",\"latencyP99\":\(number(statistics.latencyP99Ms, 1))" }
        return out + ",\"nextSeq\":\(statistics.nextSeq)}"
    }

    static func faceObject(_ face: WireFace) -> String {
        let b = face.bounds
        var out = "{\"bounds\":{\"x\":\(number(b.x, 1)),\"y\":\(number(b.y, 1)),"
        out += "\"width\":\(number(b.width, 1)),\"height\":\(number(b.height, 1))}"
        if face.hasLeftEye { out += ",\"leftEyePosition\":\(point(face.leftEye))" }
        if face.hasRightEye { out += ",\"rightEyePosition\":\(point(face.rightEye))" }
        if face.hasMouth { out += ",\"mouthPosition\":\(point(face.mouth))" }
        if face.hasFaceAngle { out += ",\"faceAngle\":\(number(face.faceAngle, 1))" }
        if face.hasYaw { out += ",\"yaw\":\(number(face.yaw, 1))" }
        if face.hasPitch { out += ",\"pitch\":\(number(face.pitch, 1))" }
        if face.hasRoll { out += ",\"roll\":\(number(face.roll, 1))" }
        out += ",\"confidence\":\(number(face.confidence, 3))"
        if face.hasQuality { out += ",\"quality\":\(number(face.quality, 3))" }
        switch face.attributeSource {
        case .mesh: out += ",\"attributeSource\":\"mesh\""
        case .landmarks: out += ",\"attributeSource\":\"landmarks\""
        case .none, .UNRECOGNIZED: break
        }
        if face.hasSmileScore {
            out += ",\"hasSmile\":\(face.hasSmile_p),\"smileScore\":\(number(face.smileScore, 3))"
        }
        if face.hasLeftEyeClosedScore {
            out += ",\"leftEyeClosed\":\(face.leftEyeClosed),\"leftEyeClosedScore\":\(number(face.leftEyeClosedScore, 3))"
        }
        if face.hasRightEyeClosedScore {
            out += ",\"rightEyeClosed\":\(face.rightEyeClosed),\"rightEyeClosedScore\":\(number(face.rightEyeClosedScore, 3))"
        }
        if face.hasLeftEyeOpenness { out += ",\"leftEyeOpenness\":\(number(face.leftEyeOpenness, 3))" }
        if face.hasRightEyeOpenness { out += ",\"rightEyeOpenness\":\(number(face.rightEyeOpenness, 3))" }
        if !face.landmarks.isEmpty {
            out += face.landmarkScheme == .mesh ? ",\"landmarkScheme\":\"mesh\"" : ",\"landmarkScheme\":\"five\""
            out += ",\"landmarks\":["
            var index = 0
            let values = face.landmarks
            while index + 1 < values.count {
                if index > 0 { out += "," }
                out += "[\(number(values[index], 1)),\(number(values[index + 1], 1))]"
                index += 2
            }
            out += "]"
        }
        if face.trackingID != 0 {
            out += ",\"trackingID\":\(face.trackingID),\"trackingFrameCount\":\(face.trackingFrameCount)"
        }
        out += "}"
        return out
    }

    static func point(_ p: WirePoint) -> String {
        "{\"x\":\(number(p.x, 1)),\"y\":\(number(p.y, 1))}"
    }

    /// A finite number with at most `decimals` decimals and no trailing zeros; NaN and infinities become null.
    ///
    /// C's `%.*f` straight into a stack buffer: the same digits as `String(format:)` (which hands `%f` to the C
    /// library too, after building a format string and a CFString), at a fraction of the cost. A line has ~20
    /// numbers per face; `String(format:)` made them most of the tail's 0.08 ms per line (BENCHMARKS.md).
    static func number(_ value: Float, _ decimals: Int) -> String {
        guard value.isFinite else { return "null" }
        // |Float| < 3.5e38: at most 39 integer digits, a sign, a point and `decimals` (0...9) digits.
        let precision = Int32(min(max(decimals, 0), 9))
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { buffer in
            let written = withVaList([precision, Double(value)]) { arguments in
                buffer.withMemoryRebound(to: CChar.self) { vsnprintf($0.baseAddress, 64, "%.*f", arguments) }
            }
            var end = Int(min(max(written, 0), 63))
            if buffer[0..<end].contains(UInt8(ascii: ".")) {
                while end > 0, buffer[end - 1] == UInt8(ascii: "0") { end -= 1 }
                if end > 0, buffer[end - 1] == UInt8(ascii: ".") { end -= 1 }
            }
            if end == 2, buffer[0] == UInt8(ascii: "-"), buffer[1] == UInt8(ascii: "0") { return "0" }
            return String(decoding: UnsafeBufferPointer(rebasing: buffer[0..<end]), as: UTF8.self)
        }
    }

    /// Unix microseconds as seconds with six decimals.
    static func seconds(_ microseconds: Int64) -> String {
        let sign = microseconds < 0 ? "-" : ""
        let magnitude = microseconds.magnitude
        let fraction = String(magnitude % 1_000_000)
        return "\(sign)\(magnitude / 1_000_000).\(String(repeating: "0", count: 6 - fraction.count))\(fraction)"
    }

    /// A JSON string literal.
    public static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    out += String(format: "\\u%04x", scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
