import FacewireVocabulary
import Foundation

/// Renders results-stream messages as one readable line each, for people watching a stream
/// (`facewire --role tail --format text`). JSON Lines (``JSONLines``) stays the format for programs.
///
/// ```
/// lobby     #142  ok    48 ms  2 faces  #1 ♥72 412,120 96×118 roll 3° yaw -5° pitch 4° smile eyes -/- q 0.82  #2 80,96 40×52 roll -1°
/// lobby     #143  DROP  timeout
/// lobby     #142  +face #3
/// lobby     -face #1 ♥72  seen in 140 frames, last #150
/// lobby     end   600 frames: 580 processed, 20 dropped, 1 late, 0 duplicates
/// lobby     reset tracking afresh from #151, 2 tracks ended
/// lobby     stats 5 s: 150 frames, 30 fps, 141 processed, 9 dropped (no-worker 6, timeout 3), 1 late, 0 duplicates, p50 48 ms, p99 112 ms
/// ```
///
/// Per face: the tracking ID (`#?` when untracked) and its heart rate in whole beats per minute (`♥72`) when the
/// collector reported one, the box (x,y width×height), roll, yaw and pitch in whole
/// degrees, `smile` when the smile classifier says so, the eyes as `open/closed` marks, image-left first (`o` open,
/// `-` closed), when the eye classifier ran, the expressions present (`brow-raise`, `mouth-open`, …), `smile ?` and
/// `eyes ?` when the face could not tell (SPEC 11.7), and the quality `q` with two decimals.
public enum TextLines {
    /// The stream column's width; longer names are printed whole.
    static let streamWidth = 9

    /// Any message of the stream as its line: a frame, an event or a stream end; `nil` for a heartbeat.
    public static func line(for message: StreamMessage) -> String? {
        switch message.body {
        case .frame(let frame): line(for: frame)
        case .event(let event): line(for: event, stream: message.stream)
        case .end(let summary): line(for: summary, stream: message.stream)
        case .reset(let reset):
            "\(column(message.stream)) reset tracking afresh from #\(reset.seq), "
                + (reset.endedTracks == 1 ? "1 track ended" : "\(reset.endedTracks) tracks ended")
        case .statistics(let statistics): line(for: statistics, stream: message.stream)
        case .none: nil
        }
    }

    /// One frame.
    public static func line(for frame: FrameResult) -> String {
        var out = "\(column(frame.stream)) #\(frame.seq)"
        switch frame.status {
        case .processed:
            out += "  ok"
        case .dropped:
            if frame.runLength > 1 {
                // A run: "#100…#1099511627875  DROP  no-worker  (1099511627776 frames)".
                let (last, overflow) = frame.seq.addingReportingOverflow(frame.runLength - 1)
                out += "…#\(overflow ? UInt64.max : last)"
                return out + "  DROP  \(frame.reason.isEmpty ? "-" : frame.reason)  (\(frame.runLength) frames)"
            }
            return out + "  DROP  \(frame.reason.isEmpty ? "-" : frame.reason)"
        case .error:
            return out + "  ERROR \(frame.reason.isEmpty ? "-" : frame.reason)"
        case .UNRECOGNIZED(let value):
            return out + "  status \(value) \(frame.reason)"
        }
        if frame.hasTimings { out += "  \(whole(frame.timings.totalMs)) ms" }
        out += frame.faces.count == 1 ? "  1 face" : "  \(frame.faces.count) faces"
        for face in frame.faces { out += "  " + describe(face) }
        return out
    }

    /// A face appearing or leaving; a face that leaves shows the last heart rate reported for it.
    public static func line(for event: FaceEvent, stream: String) -> String {
        switch event.kind {
        case .appeared: "\(column(stream)) #\(event.seq)  +face #\(event.trackingID)"
        default:
            "\(column(stream)) -face #\(event.trackingID)\(event.hasHeartRate ? heart(event.heartRate) : "")  "
                + "seen in \(event.trackingFrameCount) frames, last #\(event.seq)"
        }
    }

    /// The end of a stream, with its counts.
    public static func line(for summary: StreamSummary, stream: String) -> String {
        "\(column(stream)) end   \(summary.frames) frames: \(summary.processed) processed, \(summary.dropped) dropped, "
            + "\(summary.late) late, \(summary.duplicates) duplicates"
    }

    /// One statistics window.
    public static func line(for statistics: StreamStatisticsMessage, stream: String) -> String {
        let dropped = statistics.dropped.reduce(UInt64(0)) { $0 + $1.count }
        var out = "\(column(stream)) stats \(JSONLines.number(statistics.windowSeconds, 1)) s: \(statistics.frames) frames, "
        out += "\(JSONLines.number(statistics.fps, 1)) fps, \(statistics.processed) processed, \(dropped) dropped"
        if !statistics.dropped.isEmpty {
            out += " (" + statistics.dropped.map { "\($0.reason) \($0.count)" }.joined(separator: ", ") + ")"
        }
        out += ", \(statistics.late) late, \(statistics.duplicates) duplicates"
        if statistics.hasLatencyP50Ms { out += ", p50 \(whole(statistics.latencyP50Ms)) ms" }
        if statistics.hasLatencyP99Ms { out += ", p99 \(whole(statistics.latencyP99Ms)) ms" }
        return out
    }

    static func describe(_ face: WireFace) -> String {
        let b = face.bounds
        var out = face.trackingID == 0 ? "#?" : "#\(face.trackingID)"
        if face.hasHeartRate { out += heart(face.heartRate) }
        out += " \(whole(b.x)),\(whole(b.y)) \(whole(b.width))×\(whole(b.height))"
        if face.hasFaceAngle { out += " roll \(whole(face.faceAngle))°" }
        if face.hasYaw { out += " yaw \(whole(face.yaw))°" }
        if face.hasPitch { out += " pitch \(whole(face.pitch))°" }
        if face.hasSmileScore, face.hasSmile_p { out += " smile" }
        if face.hasLeftEyeClosedScore, face.hasRightEyeClosedScore {
            out += " eyes \(face.leftEyeClosed ? "-" : "o")/\(face.rightEyeClosed ? "-" : "o")"
        }
        // The expressions present (SPEC 11.8), by their command-line names; verdicts withheld (11.7) as `eyes ?`.
        for reading in face.expressions where reading.present {
            out += " " + (FacialAction(rawValue: reading.expression.rawValue)?.name ?? "expression\(reading.expression.rawValue)")
        }
        for name in face.withheldNames where WireFace.withholdable.contains(name) { out += " \(name) ?" }
        if face.hasQuality { out += " q \(JSONLines.number(face.quality, 2))" }
        return out
    }

    /// ` ♥72`: a heart rate in whole beats per minute.
    static func heart(_ rate: Facewire_V1_HeartRate) -> String { " ♥\(whole(rate.bpm))" }

    static func column(_ stream: String) -> String {
        stream.count >= streamWidth ? stream : stream + String(repeating: " ", count: streamWidth - stream.count)
    }

    /// A float rounded to a whole number; "?" for values that are not finite or beyond ±1e15 (never traps).
    static func whole(_ value: Float) -> String {
        value.isFinite && abs(value) < 1e15 ? String(Int64(value.rounded())) : "?"
    }
}
