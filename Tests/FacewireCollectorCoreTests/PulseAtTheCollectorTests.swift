import FacewireFuzzing
import FacewireProtocol
import Foundation
import Testing

@testable import FacewireCollectorCore
@testable import FacewirePulse

/// The collector turns each track's skin samples into a heart rate on the face, remembers the last one for the track's
/// `left` event, bounds the estimators, and refuses hostile skin values.
@Suite("Pulse at the collector")
struct PulseAtTheCollectorTests {
    static func face(x: Float, skin: (Double, Double, Double)?) -> WireFace {
        face(x: x, regions: skin.map { [PulseEstimator.RegionColour(region: .forehead, r: $0.0, g: $0.1, b: $0.2, pixels: 900)] } ?? [])
    }

    /// A face with the skin regions given (none: no pulse classifier).
    static func face(x: Float, regions: [PulseEstimator.RegionColour]) -> WireFace {
        var face = WireFace()
        face.bounds.x = x
        face.bounds.y = 50
        face.bounds.width = 100
        face.bounds.height = 120
        face.confidence = 0.9
        face.skin = regions.map { region in
            var sample = Facewire_V1_SkinSample()
            switch region.region {
            case .forehead: sample.region = .forehead
            case .leftCheek: sample.region = .leftCheek
            case .rightCheek: sample.region = .rightCheek
            }
            sample.r = Float(region.r)
            sample.g = Float(region.g)
            sample.b = Float(region.b)
            sample.pixels = UInt32(region.pixels)
            return sample
        }
        return face
    }

    /// A processed 640×480 result of `stream` at `seq`, captured at `time` (µs), with `faces`.
    static func result(_ stream: String = "cam", seq: UInt64, time: Int64, faces: [WireFace]) -> Envelope.OneOf_Body {
        guard case .result(var result) = CoreHarness.result(stream, seq: seq, captureTime: time) else { preconditionFailure() }
        result.width = 640
        result.height = 480
        result.faces = faces
        return .result(result)
    }

    /// Sends `stream` frames from `seq` on, 30 a second of capture time from `start`, each with one face at x = 200 whose
    /// skin pulses at `bpm` (``PulseEstimatorTests/skin(bpm:seconds:seed:drop:amplitude:noise:)``, no drops, as three
    /// regions: ``PulseEstimatorTests/regions(_:_:)``) for `seconds`; returns the next sequence and the capture time of
    /// the last frame.
    @discardableResult
    /// With `pace` the capture times run that many times faster than the pulse's own clock (a file at `--fps max`), and
    /// with `media` each frame also carries the pulse's clock as its media time.
    static func feed(
        _ h: inout CoreHarness, _ stream: String = "cam", bpm: Double, seconds: Double, seq: UInt64 = 0, start: Int64,
        pace: Double = 1, media: Bool = false
    ) -> (seq: UInt64, time: Int64) {
        var next = (seq: seq, time: start)
        var random = SplitMix64(seed: 4)
        for sample in SyntheticPulse.skin(bpm: bpm, seconds: seconds, seed: 3, drop: 0) {
            next.time = start + Int64(Double(sample.0) / pace)
            let regions = SyntheticPulse.regions((sample.1, sample.2, sample.3), &random)
            guard case .result(var message) = result(stream, seq: next.seq, time: next.time, faces: [face(x: 200, regions: regions)]) else {
                preconditionFailure()
            }
            if media { message.mediaTimeUs = sample.0 }
            h.send(.result(message), from: CoreHarness.worker)
            next.seq += 1
            h.advance(ms: 33)
        }
        return next
    }

    /// The `left` events published for `stream`, in order.
    static func leftEvents(_ h: CoreHarness, _ stream: String = "cam") -> [FaceEvent] {
        h.published.compactMap { message in
            guard message.stream == stream, case .event(let event)? = message.body, event.kind == .left else { return nil }
            return event
        }
    }

    /// The last heart rate the collector set on a face of `stream`.
    static func lastRate(_ h: CoreHarness, _ stream: String = "cam") -> Facewire_V1_HeartRate? {
        h.frames(stream).last { $0.faces.first?.hasHeartRate == true }?.faces.first?.heartRate
    }

    @Test func aTrackWithAPulseGetsItsHeartRateAfterTheWindow() {
        var h = CoreHarness()
        h.send(CoreHarness.hello("cam"))
        let start = h.wall
        Self.feed(&h, bpm: 84, seconds: 20, start: start)
        let frames = h.frames("cam")
        #expect(frames.count == 600)
        let rated = frames.filter { $0.faces.first?.hasHeartRate == true }
        #expect(frames.prefix(280).allSatisfy { $0.faces.first?.hasHeartRate == false }, "not before the window is full")
        #expect(rated.count >= frames.count / 3, "\(rated.count) of \(frames.count) frames rated")
        // The estimator's accuracy is PulseEstimatorTests' subject; here: every rate near the pulse's (wandering) rate
        // at the frame's capture time, most within 5 bpm (one estimate holds for a second, some 30 frames).
        let errors = rated.map { frame in
            abs(Double(frame.faces[0].heartRate.bpm) - SyntheticPulse.rate(around: 84, at: Double(frame.captureTimeUs - start) / 1_000_000))
        }
        #expect(rated.allSatisfy { $0.faces[0].heartRate.windowSeconds == 10 })
        #expect(errors.allSatisfy { $0 <= 10 }, "\(errors.max() ?? 0)")
        #expect(errors.filter { $0 <= 5 }.count * 4 >= rated.count * 3, "\(errors.filter { $0 <= 5 }.count) of \(rated.count) within 5 bpm")
    }

    @Test func aFileAtAnyPaceGetsTheSameRatesFromItsMediaTime() {
        func rates(pace: Double, media: Bool) -> [Float] {
            var h = CoreHarness()
            h.send(CoreHarness.hello("cam"))
            Self.feed(&h, bpm: 72, seconds: 16, start: h.wall, pace: pace, media: media)
            return h.frames("cam").map { $0.faces.first?.hasHeartRate == true ? $0.faces[0].heartRate.bpm : 0 }
        }
        let realTime = rates(pace: 1, media: true)
        #expect(realTime.count(where: { $0 != 0 }) >= 60, "rated in real time")
        #expect(rates(pace: 4, media: true) == realTime, "sent 4× faster, measured on media time: the same rates, frame by frame")
        let squeezed = rates(pace: 4, media: false).filter { $0 != 0 }
        #expect(squeezed.allSatisfy { abs($0 - 72) > 10 }, "without media time, a squeezed clock cannot read 72: \(squeezed.prefix(3))")
    }

    @Test func aWorkersTrackScoreDecidesWhichFacesStartTracks() {
        // CenterFace's crowd faces score near 0.6: under the default 0.7 they get no ID, with its own 0.5 they do.
        for (trackScore, tracked) in [(nil, false), (Float(0.5), true), (Float(0.6), false)] as [(Float?, Bool)] {
            var h = CoreHarness()
            h.send(CoreHarness.hello("cam"))
            var face = Self.face(x: 200, skin: nil)
            face.confidence = 0.55
            guard case .result(var message) = Self.result(seq: 0, time: h.wall, faces: [face]) else { preconditionFailure() }
            if let trackScore { message.trackScore = trackScore }
            h.send(.result(message), from: CoreHarness.worker)
            #expect((h.frames("cam").first?.faces.first?.trackingID ?? 0 != 0) == tracked, "\(String(describing: trackScore))")
        }
    }

    @Test func aTrackThatLeavesCarriesItsLastReportedRateInItsLeftEvent() throws {
        var h = CoreHarness()
        h.send(CoreHarness.hello("cam"))
        let end = Self.feed(&h, bpm: 84, seconds: 20, start: h.wall)
        let last = try #require(Self.lastRate(h), "the track reported a rate")
        #expect(h.core.footprint.pulseTracks == 1)
        #expect(Self.leftEvents(h).isEmpty)
        // No face for more than --track-max-age (1 s) of capture time: the track leaves.
        h.send(Self.result(seq: end.seq, time: end.time + 1_500_000, faces: []), from: CoreHarness.worker)
        let left = Self.leftEvents(h)
        #expect(left.count == 1 && left.first?.hasHeartRate == true)
        #expect(left.first?.heartRate == last, "the last rate reported on its faces")
        #expect(abs((left.first?.heartRate.bpm ?? 0) - 84) <= 5)
        #expect(h.core.footprint.pulseTracks == 0, "the track's heart-rate state went with it")
    }

    @Test func aTrackThatNeverReportedLeavesWithoutARate() {
        var h = CoreHarness()
        h.send(CoreHarness.hello("cam"))
        // 3 s of a pulse: the 10 s window never fills. A second face sends no skin samples at all.
        var next = Self.feed(&h, bpm: 84, seconds: 3, start: h.wall)
        h.send(Self.result(seq: next.seq, time: next.time + 40_000, faces: [Self.face(x: 500, skin: nil)]), from: CoreHarness.worker)
        next.seq += 1
        h.send(Self.result(seq: next.seq, time: next.time + 1_600_000, faces: []), from: CoreHarness.worker)
        #expect(Self.lastRate(h) == nil)
        let left = Self.leftEvents(h)
        #expect(left.count == 2 && left.allSatisfy { !$0.hasHeartRate }, "\(left)")
        #expect(h.core.footprint.pulseTracks == 0)
    }

    @Test func tracksEndedByAResetOrTheStreamsEndCarryTheirRate() throws {
        var h = CoreHarness()
        h.send(CoreHarness.hello("cam"))
        h.send(CoreHarness.hello("lobby"))
        let cam = Self.feed(&h, "cam", bpm: 72, seconds: 20, start: h.wall)
        let lobby = Self.feed(&h, "lobby", bpm: 96, seconds: 20, start: h.wall)
        let camRate = try #require(Self.lastRate(h, "cam"))
        let lobbyRate = try #require(Self.lastRate(h, "lobby"))
        #expect(h.core.footprint.pulseTracks == 2)

        var reset = ResetRequest()
        reset.stream = "cam"
        h.send(.reset(reset))
        #expect(Self.leftEvents(h, "cam").map(\.heartRate) == [camRate], "the reset ended the track")
        #expect(h.core.footprint.pulseTracks == 1, "and its heart-rate state")
        // After the reset the face is a new track, which starts without a rate.
        h.send(Self.result(seq: cam.seq, time: cam.time + 33_000, faces: [Self.face(x: 200, skin: (160, 115, 95))]), from: CoreHarness.worker)
        #expect(h.frames("cam").last?.faces.first?.hasHeartRate == false)

        h.send(CoreHarness.end("lobby", nextSeq: lobby.seq))
        let ended = Self.leftEvents(h, "lobby")
        #expect(ended.count == 1 && ended.first?.heartRate == lobbyRate, "the stream's end ended the track")
        #expect(h.summary("lobby") != nil)
        #expect(abs(camRate.bpm - 72) <= 5 && abs(lobbyRate.bpm - 96) <= 5, "\(camRate.bpm) \(lobbyRate.bpm)")
        #expect(h.core.footprint.pulseTracks == 1, "only cam's new track")
    }

    @Test func estimatorsAreCappedAndHostileSkinIsRefused() {
        var limits = CollectorLimits(maxDelay: 100_000_000, statisticsInterval: 0)
        limits.maxPulseTracks = 2
        var h = CoreHarness(limits)
        h.send(CoreHarness.hello("cam"))
        h.send(Self.result(seq: 0, time: h.wall, faces: [0, 300, 600].map { Self.face(x: $0, skin: (150, 110, 90)) }), from: CoreHarness.worker)
        #expect(h.total("pulse_refused_cap") == 1)
        #expect(h.core.footprint.pulseTracks == 2)
        for bad in [(Double.nan, 1.0, 1.0), (300, 1, 1), (-1, 1, 1)] {
            h.send(Self.result(seq: 1, time: h.wall, faces: [Self.face(x: 0, skin: bad)]), from: CoreHarness.worker)
        }
        var tooMany = Self.face(x: 0, skin: (150, 110, 90))
        tooMany.skin[0].pixels = 640 * 480 + 1
        h.send(Self.result(seq: 1, time: h.wall, faces: [tooMany]), from: CoreHarness.worker)
        #expect(h.total("results_rejected_skin") == 4, "three hostile colours and more pixels than the frame has")
        var forged = Self.face(x: 0, skin: nil)
        forged.heartRate.bpm = 60
        h.send(Self.result(seq: 1, time: h.wall, faces: [forged]), from: CoreHarness.worker)
        #expect(h.total("results_rejected_heart_rate") == 1, "a worker does not set the heart rate")
        #expect(h.frames("cam").count == 1, "no refused result was published")
    }

    @Test func theMeshForeheadIsReadOnlyWhenTheCollectorIsAskedTo() {
        func meshForehead(_ limits: CollectorLimits) -> [Bool] {
            var h = CoreHarness(limits)
            h.send(CoreHarness.hello("cam"))
            Self.feed(&h, bpm: 72, seconds: 1, start: h.wall)
            return h.core.streams.values.flatMap { $0.pulse.values.map(\.estimator.configuration.meshForehead) }
        }
        #expect(meshForehead(CollectorLimits(maxDelay: 100_000_000, statisticsInterval: 0)) == [false], "off by default")
        #expect(meshForehead(CollectorLimits(maxDelay: 100_000_000, statisticsInterval: 0, pulseMeshForehead: true)) == [true])
    }

    @Test func theFacesGeometryIsTheEstimatorsMotionReference() throws {
        var face = Self.face(x: 200, skin: (160, 115, 95))
        #expect(CollectorCore.geometry(face) == nil, "no eyes: no reference")
        face.leftEye.x = 220
        face.leftEye.y = 90
        #expect(CollectorCore.geometry(face) == nil, "one eye")
        face.rightEye.x = 280
        face.rightEye.y = 90
        let noMouth = try #require(CollectorCore.geometry(face))
        #expect(noMouth.mouth == nil && noMouth.leftEye == SIMD2(220, 90) && noMouth.rightEye == SIMD2(280, 90))
        #expect(noMouth.bounds == SIMD4(200, 50, 100, 120))
        face.mouth.x = 250
        face.mouth.y = 140
        #expect(CollectorCore.geometry(face)?.mouth == SIMD2(250, 140))
    }
}
