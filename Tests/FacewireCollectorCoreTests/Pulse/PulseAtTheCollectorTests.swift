import FacewireProtocol
import Foundation
import Testing

@testable import FacewireCollectorCore

/// The collector turns each track's skin samples into a heart rate on the face, bounds the estimators, and refuses
/// hostile skin values.
@Suite("Pulse at the collector")
struct PulseAtTheCollectorTests {
    static func face(x: Float, skin: (Double, Double, Double)?) -> WireFace {
        var face = WireFace()
        face.bounds.x = x
        face.bounds.y = 50
        face.bounds.width = 100
        face.bounds.height = 120
        face.confidence = 0.9
        if let (r, g, b) = skin {
            var sample = Facewire_V1_SkinSample()
            sample.region = .forehead
            sample.r = Float(r)
            sample.g = Float(g)
            sample.b = Float(b)
            sample.pixels = 900
            face.skin = [sample]
        }
        return face
    }

    @Test func aTrackWithAPulseGetsItsHeartRateAfterTheWindow() {
        var h = CoreHarness()
        h.send(CoreHarness.hello("cam"))
        let samples = PulseEstimatorTests.skin(bpm: 84, seconds: 20, seed: 3, drop: 0)
        let start = h.wall
        for (seq, sample) in samples.enumerated() {
            guard case .result(var result) = CoreHarness.result("cam", seq: UInt64(seq), captureTime: start + sample.0) else { return }
            result.faces = [Self.face(x: 200, skin: (sample.1, sample.2, sample.3))]
            h.send(.result(result), from: CoreHarness.worker)
            h.advance(ms: 33)
        }
        let frames = h.frames("cam")
        #expect(frames.count == samples.count)
        let rated = frames.compactMap { $0.faces.first?.hasHeartRate == true ? $0.faces.first!.heartRate : nil }
        #expect(frames.prefix(280).allSatisfy { $0.faces.first?.hasHeartRate == false }, "not before the window is full")
        #expect(rated.count >= frames.count / 3, "\(rated.count) of \(frames.count) frames rated")
        #expect(rated.allSatisfy { abs($0.bpm - 84) <= 5 && $0.windowSeconds == 10 }, "\(rated.prefix(5).map(\.bpm))")
    }

    @Test func estimatorsAreCappedAndHostileSkinIsRefused() {
        var limits = CollectorLimits(maxDelay: 100_000_000, statisticsInterval: 0)
        limits.maxPulseTracks = 2
        var h = CoreHarness(limits)
        h.send(CoreHarness.hello("cam"))
        guard case .result(var result) = CoreHarness.result("cam", seq: 0, captureTime: h.wall) else { return }
        result.faces = [0, 300, 600].map { Self.face(x: $0, skin: (150, 110, 90)) }
        h.send(.result(result), from: CoreHarness.worker)
        #expect(h.total("pulse_refused_cap") == 1)
        for bad in [(Double.nan, 1.0, 1.0), (300, 1, 1), (-1, 1, 1)] {
            guard case .result(var hostile) = CoreHarness.result("cam", seq: 1, captureTime: h.wall) else { return }
            hostile.faces = [Self.face(x: 0, skin: bad)]
            h.send(.result(hostile), from: CoreHarness.worker)
        }
        guard case .result(var forged) = CoreHarness.result("cam", seq: 1, captureTime: h.wall) else { return }
        var face = Self.face(x: 0, skin: nil)
        face.heartRate.bpm = 60
        forged.faces = [face]
        h.send(.result(forged), from: CoreHarness.worker)
        #expect(h.total("results_rejected_face") == 4, "three hostile colours and a forged heart rate")
    }
}
