import Testing

@testable import FacewireProtocol

@Suite("Text lines")
struct TextLinesTests {
    static func frame(faces: [WireFace]) -> FrameResult {
        var frame = FrameResult()
        frame.stream = "lobby"
        frame.seq = 142
        frame.status = .processed
        frame.timings = .with { $0.totalMs = 48.4 }
        frame.faces = faces
        return frame
    }

    @Test func processedFrameSummarisesEveryFace() {
        var smiling = JSONLinesTests.face(tracked: true)
        smiling.yaw = -5.4
        smiling.hasSmile_p = true
        smiling.smileScore = 0.91
        smiling.leftEyeClosed = false
        smiling.leftEyeClosedScore = 0.1
        smiling.rightEyeClosed = true
        smiling.rightEyeClosedScore = 0.8
        let untracked = JSONLinesTests.face(tracked: false)
        let line = TextLines.line(for: Self.frame(faces: [smiling, untracked]))
        #expect(line == "lobby     #142  ok  48 ms  2 faces  #7 413,188 160×192 roll -5° yaw -5° smile eyes o/-  #? 413,188 160×192 roll -5°")
    }

    @Test func pitchAndQualityFollowTheEyes() {
        var face = JSONLinesTests.face(tracked: true)
        face.yaw = 2
        face.pitch = -11.6
        face.quality = 0.816
        face.leftEyeClosedScore = 0.1
        face.rightEyeClosedScore = 0.2
        let line = TextLines.line(for: Self.frame(faces: [face]))
        #expect(line == "lobby     #142  ok  48 ms  1 face  #7 413,188 160×192 roll -5° yaw 2° pitch -12° eyes o/o q 0.82")
    }

    @Test func aFaceShowsItsHeartRateBesideItsTrackingID() {
        var face = JSONLinesTests.face(tracked: true)
        face.heartRate = .with {
            $0.bpm = 84.4
            $0.snr = 5
            $0.windowSeconds = 10
        }
        var absurd = JSONLinesTests.face(tracked: false)
        absurd.heartRate.bpm = .infinity
        let line = TextLines.line(for: Self.frame(faces: [face, absurd, JSONLinesTests.face(tracked: true)]))
        #expect(line == "lobby     #142  ok  48 ms  3 faces  #7 ♥84 413,188 160×192 roll -5°  #? ♥? 413,188 160×192 roll -5°  #7 413,188 160×192 roll -5°")
    }

    @Test func oneFaceNoFacesDroppedAndErrors() {
        #expect(TextLines.line(for: Self.frame(faces: [])).hasSuffix("ok  48 ms  0 faces"))
        #expect(TextLines.line(for: Self.frame(faces: [JSONLinesTests.face(tracked: true)])).contains("  1 face  #7 "))
        var dropped = FrameResult()
        dropped.stream = "a-very-long-stream-name"
        dropped.seq = 9
        dropped.status = .dropped
        dropped.reason = "timeout"
        #expect(TextLines.line(for: dropped) == "a-very-long-stream-name #9  DROP  timeout")
        dropped.status = .error
        dropped.reason = "bad jpeg"
        #expect(TextLines.line(for: dropped) == "a-very-long-stream-name #9  ERROR bad jpeg")
    }

    @Test func eventsAndTheEndOfAStream() {
        var event = FaceEvent()
        event.kind = .appeared
        event.trackingID = 3
        event.seq = 142
        event.trackingFrameCount = 1
        #expect(TextLines.line(for: event, stream: "lobby") == "lobby     #142  +face #3")
        event.kind = .left
        event.seq = 150
        event.trackingFrameCount = 140
        #expect(TextLines.line(for: event, stream: "lobby") == "lobby     -face #3  seen in 140 frames, last #150")
        event.heartRate.bpm = 71.6
        #expect(TextLines.line(for: event, stream: "lobby") == "lobby     -face #3 ♥72  seen in 140 frames, last #150", "its last rate")
        var summary = StreamSummary()
        summary.frames = 600
        summary.processed = 580
        summary.dropped = 20
        summary.late = 1
        #expect(TextLines.line(for: summary, stream: "lobby") == "lobby     end   600 frames: 580 processed, 20 dropped, 1 late, 0 duplicates")
    }

    @Test func resetAndStatistics() {
        var reset = TrackingReset()
        reset.seq = 151
        reset.endedTracks = 2
        #expect(TextLines.line(for: StreamMessage(stream: "lobby", epoch: 1, body: .reset(reset)))
            == "lobby     reset tracking afresh from #151, 2 tracks ended")
        reset.endedTracks = 1
        #expect(TextLines.line(for: StreamMessage(stream: "lobby", epoch: 1, body: .reset(reset)))
            == "lobby     reset tracking afresh from #151, 1 track ended")
        #expect(TextLines.line(for: JSONLinesTests.statistics(latency: true), stream: "lobby")
            == "lobby     stats 5 s: 150 frames, 30 fps, 141 processed, 9 dropped (no-worker 6, timeout 3), 1 late, 0 duplicates, p50 49 ms, p99 113 ms")
        var idle = StreamStatisticsMessage()
        idle.windowSeconds = 4.96
        #expect(TextLines.line(for: idle, stream: "lobby") == "lobby     stats 5 s: 0 frames, 0 fps, 0 processed, 0 dropped, 0 late, 0 duplicates")
    }

    @Test func aDroppedRunShowsItsRangeAndLength() {
        var frame = FrameResult()
        frame.stream = "lobby"
        frame.seq = 100
        frame.status = .dropped
        frame.reason = "no-worker"
        frame.runLength = 1 << 40
        #expect(TextLines.line(for: frame) == "lobby     #100…#1099511627875  DROP  no-worker  (1099511627776 frames)")
        frame.runLength = 1
        #expect(TextLines.line(for: frame) == "lobby     #100  DROP  no-worker")
    }

    @Test func absurdTimingsNeverTrap() {
        for value: Float in [.infinity, -.infinity, .nan, 1e30, -1e30] {
            var frame = Self.frame(faces: [])
            frame.timings.totalMs = value
            #expect(TextLines.line(for: frame) == "lobby     #142  ok  ? ms  0 faces")
        }
    }
}
