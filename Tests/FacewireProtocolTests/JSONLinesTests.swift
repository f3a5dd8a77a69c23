import Foundation
import Testing

@testable import FacewireProtocol

/// Parses one line with Foundation's JSONSerialization (a reader other than our writer).
private func parse(_ line: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
    #expect(!line.contains("\n"), "one line", sourceLocation: sourceLocation)
    let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
    return try #require(object as? [String: Any], "not a JSON object: \(line)", sourceLocation: sourceLocation)
}

/// A JSON number as a Double (JSONSerialization hands out NSNumber; be lenient about Swift numbers too).
private func double(_ value: Any?) -> Double? {
    switch value {
    case let number as NSNumber: number.doubleValue
    case let number as Double: number
    case let number as Int: Double(number)
    default: nil
    }
}

private func object(_ value: Any?) -> [String: Any]? { value as? [String: Any] }

@Suite("JSON Lines")
struct JSONLinesTests {
    static func face(tracked: Bool) -> WireFace {
        var face = WireFace()
        face.bounds = .with {
            $0.x = 412.5
            $0.y = 188.3125
            $0.width = 160
            $0.height = 192.04
        }
        face.leftEye = .with {
            $0.x = 452
            $0.y = 250.5
        }
        face.rightEye = .with {
            $0.x = 532
            $0.y = 244
        }
        face.mouth = .with {
            $0.x = 492.75
            $0.y = 330
        }
        face.nose = .with {
            $0.x = 490
            $0.y = 290
        }
        face.faceAngle = -4.5
        face.confidence = 0.875
        if tracked {
            face.trackingID = 7
            face.trackingFrameCount = 12
        }
        return face
    }

    static func processed() -> FrameResult {
        var frame = FrameResult()
        frame.stream = "cam-1"
        frame.epoch = 1_732_240_000_000_000
        frame.seq = 42
        frame.captureTimeUs = 1_732_240_001_234_567
        frame.status = .processed
        frame.width = 720
        frame.height = 1280
        frame.worker = "gpu-host:4242/t0"
        frame.timings = .with {
            $0.queueMs = 1.5
            $0.decodeMs = 3.25
            $0.detectMs = 12.75
            $0.totalMs = 40.5
        }
        var bare = WireFace()
        bare.bounds = .with {
            $0.x = 0
            $0.y = 1000
            $0.width = 48
            $0.height = 48
        }
        bare.confidence = 0.5
        frame.faces = [face(tracked: true), bare]
        return frame
    }

    @Test func processedFrameHasExactlyTheDocumentedKeys() throws {
        let line = JSONLines.line(for: Self.processed())
        let json = try parse(line)
        #expect(
            Set(json.keys)
                == ["stream", "epoch", "seq", "captureTime", "status", "width", "height", "worker", "timings", "faces"])
        #expect(json["stream"] as? String == "cam-1")
        #expect(double(json["epoch"]) == 1_732_240_000_000_000)
        #expect(double(json["seq"]) == 42)
        #expect(line.contains("\"captureTime\":1732240001.234567,"), "Unix seconds with six decimals")
        #expect(json["status"] as? String == "processed")
        #expect(double(json["width"]) == 720 && double(json["height"]) == 1280)
        #expect(json["worker"] as? String == "gpu-host:4242/t0")
        let timings = try #require(object(json["timings"]))
        #expect(Set(timings.keys) == ["queue", "decode", "detect", "total"])
        #expect(double(timings["queue"]) == 1.5)
        #expect(double(timings["decode"]) == 3.25)
        #expect(double(timings["detect"]) == 12.75)
        #expect(double(timings["total"]) == 40.5)
        // Key order is fixed: stream, epoch, seq first.
        #expect(line.hasPrefix("{\"stream\":\"cam-1\",\"epoch\":1732240000000000,\"seq\":42,"))
    }

    @Test func faceKeysAndValues() throws {
        let json = try parse(JSONLines.line(for: Self.processed()))
        let faces = try #require(json["faces"] as? [Any])
        #expect(faces.count == 2)

        let full = try #require(object(faces[0]))
        #expect(
            Set(full.keys)
                == [
                    "bounds", "leftEyePosition", "rightEyePosition", "mouthPosition", "faceAngle", "confidence",
                    "trackingID", "trackingFrameCount",
                ])
        let bounds = try #require(object(full["bounds"]))
        #expect(Set(bounds.keys) == ["x", "y", "width", "height"])
        #expect(double(bounds["x"]) == 412.5)
        #expect(double(bounds["y"]) == 188.3, "one decimal")
        #expect(double(bounds["width"]) == 160)
        #expect(double(bounds["height"]) == 192)
        let left = try #require(object(full["leftEyePosition"]))
        #expect(Set(left.keys) == ["x", "y"])
        #expect(double(left["x"]) == 452 && double(left["y"]) == 250.5)
        let right = try #require(object(full["rightEyePosition"]))
        #expect(double(right["x"]) == 532 && double(right["y"]) == 244)
        let mouth = try #require(object(full["mouthPosition"]))
        #expect(double(mouth["x"]) == 492.8 && double(mouth["y"]) == 330)
        #expect(double(full["faceAngle"]) == -4.5)
        #expect(double(full["confidence"]) == 0.875)
        #expect(double(full["trackingID"]) == 7)
        #expect(double(full["trackingFrameCount"]) == 12)

        // No landmarks, no angle, not tracked: those keys are absent, not null.
        let bare = try #require(object(faces[1]))
        #expect(Set(bare.keys) == ["bounds", "confidence"])
        #expect(double(object(bare["bounds"])?["x"]) == 0)
    }

    @Test func noseIsNotPrinted() {
        // The schema carries a nose point; the JSON Lines format has no key for it (CIFaceFeature has none).
        #expect(!JSONLines.line(for: Self.processed()).contains("nose"))
    }

    @Test func faceAngleZeroIsPrintedWhenPresent() throws {
        var face = WireFace()
        face.faceAngle = 0
        face.confidence = 1
        let json = try parse(JSONLines.faceObject(face))
        #expect(double(json["faceAngle"]) == 0)
        #expect(double(json["confidence"]) == 1)
        #expect(Set(json.keys) == ["bounds", "faceAngle", "confidence"], "bounds is always printed")
    }

    /// A face on which every classifier ran, with a yaw.
    static func expressive() -> WireFace {
        var face = WireFace()
        face.bounds = .with {
            $0.x = 96
            $0.y = 320.5
            $0.width = 144
            $0.height = 176
        }
        face.faceAngle = 2.5
        face.yaw = -30.25
        face.confidence = 0.9375
        face.hasSmile_p = true
        face.smileScore = 0.8125
        face.leftEyeClosed = false
        face.leftEyeClosedScore = 0
        face.rightEyeClosed = true
        face.rightEyeClosedScore = 0.75
        face.trackingID = 9
        face.trackingFrameCount = 3
        return face
    }

    @Test func yawAndClassifierKeysInOrder() throws {
        let object = JSONLines.faceObject(Self.expressive())
        // yaw after faceAngle; each flag and its score after confidence; tracking last. Ties round to even.
        #expect(
            object
                == #"{"bounds":{"x":96,"y":320.5,"width":144,"height":176},"faceAngle":2.5,"yaw":-30.2,"confidence":0.938,"hasSmile":true,"smileScore":0.812,"leftEyeClosed":false,"leftEyeClosedScore":0,"rightEyeClosed":true,"rightEyeClosedScore":0.75,"trackingID":9,"trackingFrameCount":3}"#
        )
        let json = try parse(object)
        #expect(json["hasSmile"] as? Bool == true)
        #expect(json["leftEyeClosed"] as? Bool == false)
        #expect(json["rightEyeClosed"] as? Bool == true)
        #expect(double(json["smileScore"]) == 0.812)
        #expect(double(json["leftEyeClosedScore"]) == 0, "a score of 0 is printed: the classifier ran")
        #expect(double(json["rightEyeClosedScore"]) == 0.75)
        #expect(double(json["yaw"]) == -30.2)
    }

    @Test func yawZeroIsPrintedWhenPresentAndAbsentOtherwise() throws {
        var face = WireFace()
        face.confidence = 1
        #expect(try parse(JSONLines.faceObject(face))["yaw"] == nil)
        face.yaw = 0
        let json = try parse(JSONLines.faceObject(face))
        #expect(double(json["yaw"]) == 0)
        #expect(Set(json.keys) == ["bounds", "yaw", "confidence"])
        face.yaw = 12.34
        #expect(JSONLines.faceObject(face).contains("\"yaw\":12.3,"), "one decimal")
    }

    @Test func poseOpennessQualitySourceAndLandmarks() throws {
        var face = WireFace()
        face.confidence = 1
        face.yaw = -10
        face.pitch = 7.25
        face.roll = -3.5
        face.quality = 0.6875
        face.attributeSource = .mesh
        face.leftEyeOpenness = 0.125
        face.rightEyeOpenness = 0
        face.landmarkScheme = .five
        face.landmarks = [1, 2, 3, 4, 5.25, 6, 7, 8, 9, 10]
        let text = JSONLines.faceObject(face)
        #expect(
            text
                == #"{"bounds":{"x":0,"y":0,"width":0,"height":0},"yaw":-10,"pitch":7.2,"roll":-3.5,"confidence":1,"quality":0.688,"attributeSource":"mesh","leftEyeOpenness":0.125,"rightEyeOpenness":0,"landmarkScheme":"five","landmarks":[[1,2],[3,4],[5.2,6],[7,8],[9,10]]}"#
        )
        let json = try parse(text)
        let points = try #require(json["landmarks"] as? [[Any]])
        #expect(points.count == 5)
        #expect(double(points[2][0]) == 5.2)
        face.attributeSource = .landmarks
        face.landmarks = [1, 2, 3]
        face.landmarkScheme = .mesh
        let odd = try parse(JSONLines.faceObject(face))
        #expect(odd["attributeSource"] as? String == "landmarks")
        #expect((odd["landmarks"] as? [[Any]])?.count == 1, "an odd value at the end is not printed")
        #expect(odd["landmarkScheme"] as? String == "mesh")
    }

    @Test func classifierFlagsWithoutTheirScoresAreNotPrinted() throws {
        // A flag is only meaningful next to its score; without the score the classifier did not run.
        var face = WireFace()
        face.confidence = 0.5
        face.hasSmile_p = true
        face.leftEyeClosed = true
        face.rightEyeClosed = true
        let json = try parse(JSONLines.faceObject(face))
        #expect(Set(json.keys) == ["bounds", "confidence"])
    }

    @Test func eachClassifierPrintsIndependently() throws {
        var smile = WireFace()
        smile.smileScore = 0.25
        #expect(
            JSONLines.faceObject(smile)
                == #"{"bounds":{"x":0,"y":0,"width":0,"height":0},"confidence":0,"hasSmile":false,"smileScore":0.25}"#)

        var left = WireFace()
        left.leftEyeClosedScore = 0.9
        left.leftEyeClosed = true
        let leftJSON = try parse(JSONLines.faceObject(left))
        #expect(Set(leftJSON.keys) == ["bounds", "confidence", "leftEyeClosed", "leftEyeClosedScore"])
        #expect(leftJSON["leftEyeClosed"] as? Bool == true)
        #expect(double(leftJSON["leftEyeClosedScore"]) == 0.9)

        var right = WireFace()
        right.rightEyeClosedScore = 0.0004
        let rightJSON = try parse(JSONLines.faceObject(right))
        #expect(Set(rightJSON.keys) == ["bounds", "confidence", "rightEyeClosed", "rightEyeClosedScore"])
        #expect(rightJSON["rightEyeClosed"] as? Bool == false)
        #expect(double(rightJSON["rightEyeClosedScore"]) == 0, "three decimals")
    }

    @Test func classifyTimingOnlyWhenNonZero() throws {
        var frame = Self.processed()
        #expect(!JSONLines.line(for: frame).contains("classify"), "0: the classifiers did not run")
        frame.timings.classifyMs = 4.567
        let line = JSONLines.line(for: frame)
        #expect(line.contains(#""timings":{"queue":1.5,"decode":3.25,"detect":12.75,"classify":4.57,"total":40.5}"#))
        let timings = try #require(object(try parse(line)["timings"]))
        #expect(Set(timings.keys) == ["queue", "decode", "detect", "classify", "total"])
        #expect(double(timings["classify"]) == 4.57)
    }

    @Test func droppedFrameFromTheCollector() throws {
        var frame = FrameResult()
        frame.stream = "cam-1"
        frame.epoch = 9
        frame.seq = 43
        frame.status = .dropped
        frame.reason = "timeout"
        let line = JSONLines.line(for: frame)
        let json = try parse(line)
        #expect(Set(json.keys) == ["stream", "epoch", "seq", "status", "reason", "faces"])
        #expect(json["status"] as? String == "dropped")
        #expect(json["reason"] as? String == "timeout")
        #expect((json["faces"] as? [Any])?.isEmpty == true)
        #expect(line == "{\"stream\":\"cam-1\",\"epoch\":9,\"seq\":43,\"status\":\"dropped\",\"reason\":\"timeout\",\"faces\":[]}")
    }

    @Test func staleFrameFromAWorker() throws {
        var frame = FrameResult()
        frame.stream = "cam-1"
        frame.epoch = 9
        frame.seq = 44
        frame.captureTimeUs = 1_000_000
        frame.status = .dropped
        frame.reason = "stale"
        frame.width = 1280
        frame.height = 720
        frame.worker = "w/t1"
        frame.timings = .with { $0.queueMs = 2100 }
        let json = try parse(JSONLines.line(for: frame))
        #expect(json["reason"] as? String == "stale")
        #expect(double(json["captureTime"]) == 1)
        let timings = try #require(object(json["timings"]))
        #expect(double(timings["queue"]) == 2100)
        #expect(double(timings["decode"]) == 0 && double(timings["detect"]) == 0 && double(timings["total"]) == 0)
    }

    @Test func errorFrameCarriesItsReason() throws {
        var frame = FrameResult()
        frame.stream = "s"
        frame.seq = 1
        frame.status = .error
        frame.reason = "notJPEG: data (4 bytes) does not start with a JPEG SOI marker"
        frame.worker = "w/t0"
        let json = try parse(JSONLines.line(for: frame))
        #expect(json["status"] as? String == "error")
        #expect(json["reason"] as? String == frame.reason)
        #expect(Set(json.keys) == ["stream", "epoch", "seq", "status", "reason", "worker", "faces"])
    }

    @Test func unknownStatusIsNamedAndKeepsItsReason() throws {
        var frame = FrameResult()
        frame.stream = "s"
        frame.status = FrameStatus(rawValue: 7) ?? .processed
        frame.reason = "future"
        let json = try parse(JSONLines.line(for: frame))
        #expect(json["status"] as? String == "unknown-7")
        #expect(json["reason"] as? String == "future")
    }

    @Test func sizeIsPrintedWhenEitherSideIsKnown() throws {
        var frame = FrameResult()
        frame.stream = "s"
        frame.width = 640
        let json = try parse(JSONLines.line(for: frame))
        #expect(double(json["width"]) == 640)
        #expect(double(json["height"]) == 0)
    }

    @Test func stringsAreEscaped() throws {
        let nasty = "q\"b\\s/n\nr\rt\tbell\u{07}nul\u{00}us\u{1F}del\u{7F} é 😀 \u{2028}"
        var frame = FrameResult()
        frame.stream = "s"
        frame.status = .error
        frame.reason = nasty
        frame.worker = nasty
        let line = JSONLines.line(for: frame)
        let json = try parse(line)
        #expect(json["reason"] as? String == nasty)
        #expect(json["worker"] as? String == nasty)
        #expect(line.contains(#"q\"b\\s/n\nr\rt\tbell\u0007nul\u0000us\u001fdel"#))
        // Above U+001F nothing is escaped: DEL, é, the emoji and U+2028 are written as UTF-8.
        #expect(line.contains("del\u{7F} é 😀 \u{2028}"))
    }

    @Test(arguments: [
        ("", "\"\""), ("a", "\"a\""), ("\"", #""\"""#), ("\\", #""\\""#), ("\u{01}", #""\u0001""#),
        ("\u{1F}", #""\u001f""#), ("\u{20}", "\" \""),
    ])
    func quoted(_ text: String, _ expected: String) {
        #expect(JSONLines.quoted(text) == expected)
    }

    @Test(arguments: [
        (Float.nan, 2, "null"), (Float.infinity, 2, "null"), (-Float.infinity, 1, "null"),
        (Float(0), 2, "0"), (-Float(0), 2, "0"), (Float(-0.04), 1, "0"), (Float(1), 2, "1"), (Float(2.5), 2, "2.5"),
        (Float(1234.5678), 2, "1234.57"), (Float(-7.25), 1, "-7.2"), (Float(-7.3), 1, "-7.3"), (Float(0.875), 3, "0.875"),
        (Float(100), 1, "100"), (Float(0.0004), 3, "0"), (Float(16_777_216), 1, "16777216"),
    ])
    func number(_ value: Float, _ decimals: Int, _ expected: String) {
        #expect(JSONLines.number(value, decimals) == expected)
    }

    /// The byte writer's integer rounding against C's `%.Nf` (the reference it replaced) on values of every
    /// magnitude, exact ties (which C rounds to even) and values past 2^53 (the fallback).
    @Test func numbersMatchTheCLibrary() {
        var generator = SystemRandomNumberGenerator()
        var values: [Float] = [0.05, 0.15, 0.25, 0.35, 2.5, 3.5, -2.5, 0.125, 0.375, -0.0625, 1e-7, -1e-7,
                               .greatestFiniteMagnitude, -.greatestFiniteMagnitude, 9.1e15, 1e13, .leastNonzeroMagnitude]
        for decimals in 0...3 {
            let scale = Float([1, 10, 100, 1000][decimals])
            for k in -2000...2000 { values.append((Float(k) + 0.5) / scale) }
        }
        for _ in 0..<20_000 {
            let magnitude = Float.random(in: -8...12, using: &generator)
            values.append(Float.random(in: -1...1, using: &generator) * powf(10, magnitude))
        }
        var mismatches: [String] = []
        for value in values {
            for decimals in 0...3 where JSONLines.number(value, decimals) != JSONLines.formatted(value, decimals) {
                mismatches.append("\(value) .\(decimals): \(JSONLines.number(value, decimals)) vs \(JSONLines.formatted(value, decimals))")
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) differ, e.g. \(mismatches.prefix(5))")
    }

    @Test func integersOfEveryWidth() {
        var out = JSONBuffer()
        out.append(Int64.min)
        out.append(",")
        out.append(UInt64.max)
        out.append(",")
        out.append(Int32(-7))
        out.append(",")
        out.append(0)
        out.append(",")
        out.append(true)
        #expect(out.string == "-9223372036854775808,18446744073709551615,-7,0,true")
    }

    /// `number` formats with C's `%.*f` directly; it must give exactly what the `String(format:)` version gave, for
    /// every magnitude a Float can hold (the largest included) and every precision the lines use.
    @Test func numberMatchesStringFormat() {
        func reference(_ value: Float, _ decimals: Int) -> String {
            var text = String(format: "%.\(decimals)f", Double(value))
            if text.contains(".") {
                while text.hasSuffix("0") { text.removeLast() }
                if text.hasSuffix(".") { text.removeLast() }
            }
            return text == "-0" ? "0" : text
        }
        var rng = SystemRandomNumberGenerator()
        var values: [Float] = [.greatestFiniteMagnitude, -.greatestFiniteMagnitude, .leastNonzeroMagnitude, 0.05, 0.15, 188.25, -0.005]
        for _ in 0..<3000 {
            values.append(Float(bitPattern: UInt32.random(in: 0...UInt32.max, using: &rng)))
            values.append(Float.random(in: -70_000...70_000, using: &rng))
            values.append(Float.random(in: -2...2, using: &rng))
        }
        for value in values where value.isFinite {
            for decimals in 1...3 {
                #expect(JSONLines.number(value, decimals) == reference(value, decimals), "\(value) at \(decimals)")
            }
        }
    }

    @Test func nonFiniteNumbersBecomeNull() throws {
        var frame = Self.processed()
        frame.timings.queueMs = .nan
        frame.timings.totalMs = .infinity
        frame.faces[0].confidence = -.infinity
        frame.faces[0].bounds.x = .nan
        let json = try parse(JSONLines.line(for: frame))
        let timings = try #require(object(json["timings"]))
        #expect(timings["queue"] is NSNull)
        #expect(timings["total"] is NSNull)
        let face = try #require(object((json["faces"] as? [Any])?.first))
        #expect(face["confidence"] is NSNull)
        #expect(object(face["bounds"])?["x"] is NSNull)
    }

    @Test(arguments: [
        (Int64(0), "0.000000"), (Int64(1), "0.000001"), (Int64(-1), "-0.000001"), (Int64(999_999), "0.999999"),
        (Int64(1_000_000), "1.000000"), (Int64(-1_500_000), "-1.500000"),
        (Int64(1_732_240_001_234_567), "1732240001.234567"),
        (Int64.max, "9223372036854.775807"), (Int64.min, "-9223372036854.775808"),
    ])
    func captureTimeSeconds(_ microseconds: Int64, _ expected: String) {
        #expect(JSONLines.seconds(microseconds) == expected)
    }

    @Test func captureTimeKey() throws {
        var frame = FrameResult()
        frame.stream = "s"
        #expect(try parse(JSONLines.line(for: frame))["captureTime"] == nil, "0 means unknown: no key")
        frame.captureTimeUs = -1_500_000
        let line = JSONLines.line(for: frame)
        #expect(line.contains("\"captureTime\":-1.500000,"))
        #expect(double(try parse(line)["captureTime"]) == -1.5)
    }

    @Test func largeIntegersArePrintedInFull() {
        var frame = FrameResult()
        frame.stream = "s"
        frame.epoch = .max
        frame.seq = .max - 1
        let line = JSONLines.line(for: frame)
        #expect(line.contains("\"epoch\":18446744073709551615,\"seq\":18446744073709551614"))
    }

    @Test func eventLines() throws {
        var event = FaceEvent()
        event.kind = .appeared
        event.trackingID = 8
        event.seq = 42
        event.trackingFrameCount = 1
        let appeared = JSONLines.line(for: event, stream: "cam-1", epoch: 9)
        #expect(
            appeared
                == "{\"stream\":\"cam-1\",\"epoch\":9,\"event\":\"faceAppeared\",\"seq\":42,\"trackingID\":8,\"trackingFrameCount\":1}")
        let json = try parse(appeared)
        #expect(Set(json.keys) == ["stream", "epoch", "event", "seq", "trackingID", "trackingFrameCount"])

        event.kind = .left
        event.seq = 57
        event.trackingFrameCount = 16
        let left = try parse(JSONLines.line(for: event, stream: "cam-1", epoch: 9))
        #expect(left["event"] as? String == "faceLeft")
        #expect(double(left["seq"]) == 57)
        #expect(double(left["trackingFrameCount"]) == 16)
        #expect(left["heartRate"] == nil, "a track that never reported a rate")

        // The track's last reported heart rate ends a faceLeft line. Ties round to even (72.25 -> 72.2), as in 12.1.
        event.heartRate = .with {
            $0.bpm = 72.25
            $0.snr = 6.5
            $0.windowSeconds = 10
        }
        let rated = JSONLines.line(for: event, stream: "cam-1", epoch: 9)
        #expect(rated == #"{"stream":"cam-1","epoch":9,"event":"faceLeft","seq":57,"trackingID":8,"trackingFrameCount":16,"heartRate":{"bpm":72.2,"snr":6.5,"window":10}}"#)
        #expect(Set(try parse(rated).keys) == ["stream", "epoch", "event", "seq", "trackingID", "trackingFrameCount", "heartRate"])
        event.heartRate.bpm = .nan
        #expect(JSONLines.line(for: event, stream: "cam-1", epoch: 9).contains(#""heartRate":{"bpm":null,"#))
    }

    @Test func goldenLeftEventWithAHeartRateRendersAsALine() throws {
        let vector = try #require(GoldenVectors.all.first { $0.name == "stream_event_left_heart_rate" })
        let message = try StreamMessage(parts: try vector.partBytes())
        #expect(JSONLines.line(for: message) == #"{"stream":"cam-1","epoch":1732240000000000,"event":"faceLeft","seq":380,"trackingID":11,"trackingFrameCount":339,"heartRate":{"bpm":72.5,"snr":6.2,"window":10}}"#)
        let frame = try #require(GoldenVectors.all.first { $0.name == "stream_frame_pulse" })
        let line = try #require(JSONLines.line(for: try StreamMessage(parts: try frame.partBytes())))
        #expect(line.contains(#""heartRate":{"bpm":72.5,"snr":6.2,"window":10}"#), "a face prints its rate as the event does")
    }

    @Test func mediaTimeFollowsTheCaptureTimeWhenPresentZeroIncluded() throws {
        let vector = try #require(GoldenVectors.all.first { $0.name == "stream_frame_media_time" })
        let line = try #require(JSONLines.line(for: try StreamMessage(parts: try vector.partBytes())))
        #expect(line.contains(#""captureTime":1732240001.234567,"mediaTime":12.033333,"status":"processed""#))
        var frame = FrameResult()
        frame.stream = "cam-1"
        #expect(!JSONLines.line(for: frame).contains("mediaTime"), "absent: a live source")
        frame.mediaTimeUs = 0
        #expect(JSONLines.line(for: frame).contains(#","mediaTime":0.000000,"#), "present and 0: a file's first frame")
    }

    @Test func expressionsPrintInWireOrderWithTheirScores() throws {
        let vector = try #require(GoldenVectors.all.first { $0.name == "stream_frame_expressions" })
        let line = try #require(JSONLines.line(for: try StreamMessage(parts: try vector.partBytes())))
        #expect(line.contains(#""expressions":{"browRaise":{"score":87.5,"present":true},"mouthOpen":{"score":12.2,"present":false}}"#), "ties to even: \(line)")
        let message = try StreamMessage(parts: try vector.partBytes())
        guard case .frame(let frame)? = message.body else { Issue.record("not a frame"); return }
        #expect(TextLines.line(for: frame).contains(" brow-raise"), "the text tail names the expressions present")
        #expect(!TextLines.line(for: frame).contains("mouth-open"))
    }

    @Test func withheldVerdictsAreListedByName() throws {
        let vector = try #require(GoldenVectors.all.first { $0.name == "stream_frame_withheld" })
        let line = try #require(JSONLines.line(for: try StreamMessage(parts: try vector.partBytes())))
        #expect(line.contains(#""confidence":0.5,"withheld":["smile","eyes"],"trackingID":8"#), "\(line)")
        var face = WireFace()
        face.withheld = 1 << 7 | 1 << 4
        var frame = FrameResult()
        frame.faces = [face]
        #expect(JSONLines.line(for: frame).contains(#""withheld":["pulse","bit7"]"#))
        #expect(!TextLines.line(for: frame).contains(" ?"), "the text tail marks only what a worker may withhold")
        frame.faces[0].withheld = 3
        #expect(TextLines.line(for: frame).contains(" smile ? eyes ?"), "\(TextLines.line(for: frame))")
    }

    static func statistics(latency: Bool) -> StreamStatisticsMessage {
        var statistics = StreamStatisticsMessage()
        statistics.windowSeconds = 5.0
        statistics.frames = 150
        statistics.processed = 141
        statistics.dropped = [("no-worker", UInt64(6)), ("timeout", UInt64(3))].map {
            var count = DropCount()
            count.reason = $0.0
            count.count = $0.1
            return count
        }
        statistics.late = 1
        statistics.fps = 30
        if latency {
            statistics.latencyP50Ms = 48.5
            statistics.latencyP99Ms = 112.75
        }
        statistics.nextSeq = 1200
        return statistics
    }

    @Test func statisticsLine() throws {
        let line = JSONLines.line(for: Self.statistics(latency: true), stream: "cam-1", epoch: 9)
        #expect(
            line
                == "{\"stream\":\"cam-1\",\"epoch\":9,\"event\":\"statistics\",\"window\":5,\"frames\":150,\"processed\":141,"
                + "\"dropped\":{\"no-worker\":6,\"timeout\":3},\"late\":1,\"duplicates\":0,\"fps\":30,\"latencyP50\":48.5,"
                + "\"latencyP99\":112.8,\"nextSeq\":1200}"
        )
        // Without processed frames there is no latency, and an empty window still parses.
        var idle = StreamStatisticsMessage()
        idle.windowSeconds = 5
        let idleLine = JSONLines.line(for: idle, stream: "cam-1", epoch: 9)
        #expect(!idleLine.contains("latency"))
        for text in [line, idleLine] {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
            #expect(object["dropped"] is [String: Any])
        }
        let message = StreamMessage(stream: "cam-1", epoch: 9, body: .statistics(Self.statistics(latency: true)))
        #expect(JSONLines.line(for: message) == line)
    }

    @Test func trackingResetLine() {
        var reset = TrackingReset()
        reset.seq = 120
        reset.endedTracks = 2
        #expect(
            JSONLines.line(for: StreamMessage(stream: "cam-1", epoch: 9, body: .reset(reset)))
                == "{\"stream\":\"cam-1\",\"epoch\":9,\"event\":\"trackingReset\",\"seq\":120,\"endedTracks\":2}")
    }

    @Test func endLine() throws {
        var summary = StreamSummary()
        summary.frames = 100
        summary.processed = 93
        summary.dropped = 7
        summary.errors = 3
        summary.late = 2
        summary.duplicates = 1
        let line = JSONLines.line(for: summary, stream: "cam-1", epoch: 9)
        #expect(
            line
                == "{\"stream\":\"cam-1\",\"epoch\":9,\"event\":\"streamEnded\",\"frames\":100,\"processed\":93,\"dropped\":7,\"late\":2,\"duplicates\":1}"
        )
        let json = try parse(line)
        #expect(Set(json.keys) == ["stream", "epoch", "event", "frames", "processed", "dropped", "late", "duplicates"])
        // The sequence after the last line, when the collector names it.
        summary.nextSeq = 1100
        #expect(JSONLines.line(for: summary, stream: "cam-1", epoch: 9).hasSuffix(",\"duplicates\":1,\"nextSeq\":1100}"))
    }

    @Test func goldenStreamFrameRendersAsALine() throws {
        // The decoded golden vector, end to end: bytes -> StreamMessage -> JSON line.
        let vector = try #require(GoldenVectors.all.first { $0.name == "stream_frame" })
        let message = try StreamMessage(parts: try vector.partBytes())
        guard case .frame(let frame) = message.body else {
            Issue.record("not a frame")
            return
        }
        let line = JSONLines.line(for: frame)
        // The example line of REFERENCE-NODES.md §8.1 (SPEC.md 17 points there). Ties round to even (188.25 -> 188.2, 492.75 -> 492.8).
        #expect(line == #"{"stream":"cam-1","epoch":1732240000000000,"seq":42,"captureTime":1732240001.234567,"status":"processed","width":720,"height":1280,"worker":"gpu-host:4242/t0","timings":{"queue":1.5,"decode":3.25,"detect":12.75,"total":40.5},"faces":[{"bounds":{"x":412.5,"y":188.2,"width":160,"height":192},"leftEyePosition":{"x":452,"y":250.5},"rightEyePosition":{"x":532,"y":244},"mouthPosition":{"x":492.8,"y":330},"faceAngle":0,"confidence":0.969,"trackingID":7,"trackingFrameCount":12},{"bounds":{"x":0,"y":1000,"width":48,"height":48},"confidence":0.5,"trackingID":8,"trackingFrameCount":1}]}"#)
        let json = try parse(line)
        #expect(json["status"] as? String == "processed")
        let faces = try #require(json["faces"] as? [Any])
        #expect(double(object(faces[0])?["faceAngle"]) == 0)
        #expect(double(object(faces[1])?["trackingID"]) == 8)
        #expect(object(faces[1])?["leftEyePosition"] == nil)
        #expect(!line.contains("yaw") && !line.contains("Smile") && !line.contains("EyeClosed"))
        #expect(!line.contains("classify"))
    }

    @Test func goldenExpressionFrameRendersAsALine() throws {
        let vector = try #require(GoldenVectors.all.first { $0.name == "stream_frame_expression" })
        let message = try StreamMessage(parts: try vector.partBytes())
        guard case .frame(let frame) = message.body else {
            Issue.record("not a frame")
            return
        }
        let line = JSONLines.line(for: frame)
        // The seq 44 example line of protocol/REFERENCE-NODES.md §8.1.
        #expect(line == #"{"stream":"cam-1","epoch":1732240000000000,"seq":44,"captureTime":1732240001.301234,"status":"processed","width":720,"height":1280,"worker":"gpu-host:4242/t0","timings":{"queue":1.25,"decode":3.5,"detect":12.25,"classify":4.5,"total":42.75},"faces":[{"bounds":{"x":96,"y":320.5,"width":144,"height":176},"leftEyePosition":{"x":140.2,"y":380},"rightEyePosition":{"x":196.8,"y":382.5},"mouthPosition":{"x":170,"y":452},"faceAngle":2.5,"yaw":12.5,"confidence":0.938,"hasSmile":true,"smileScore":0.812,"leftEyeClosed":false,"leftEyeClosedScore":0,"rightEyeClosed":true,"rightEyeClosedScore":0.75,"trackingID":9,"trackingFrameCount":3},{"bounds":{"x":600,"y":260,"width":96,"height":112},"leftEyePosition":{"x":628,"y":300},"rightEyePosition":{"x":668,"y":300},"mouthPosition":{"x":648,"y":344},"faceAngle":0,"yaw":0,"confidence":0.75,"hasSmile":false,"smileScore":0.25,"trackingID":10,"trackingFrameCount":1},{"bounds":{"x":0,"y":1000,"width":48,"height":48},"confidence":0.5,"trackingID":8,"trackingFrameCount":3}]}"#)
        let json = try parse(line)
        let faces = try #require(json["faces"] as? [Any])
        let all = try #require(object(faces[0]))
        #expect(all["hasSmile"] as? Bool == true && all["rightEyeClosed"] as? Bool == true)
        let smile = try #require(object(faces[1]))
        #expect(smile["leftEyeClosed"] == nil && smile["rightEyeClosedScore"] == nil, "the eyes classifier did not run")
        let bare = try #require(object(faces[2]))
        #expect(Set(bare.keys) == ["bounds", "confidence", "trackingID", "trackingFrameCount"])
    }

    @Test func aDroppedRunCarriesItsLength() {
        var frame = FrameResult()
        frame.stream = "cam-1"
        frame.epoch = 9
        frame.seq = 100
        frame.status = .dropped
        frame.reason = "no-worker"
        frame.runLength = 1 << 40
        #expect(JSONLines.line(for: frame) == "{\"stream\":\"cam-1\",\"epoch\":9,\"seq\":100,\"status\":\"dropped\",\"reason\":\"no-worker\",\"runLength\":1099511627776,\"faces\":[]}")
        frame.runLength = 1
        #expect(!JSONLines.line(for: frame).contains("runLength"), "present only when > 1")
    }
}
