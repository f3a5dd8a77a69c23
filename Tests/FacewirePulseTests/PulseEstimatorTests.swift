import FacewireFuzzing
import Foundation
import Testing
@testable import FacewirePulse

/// ``PulseEstimator`` on synthetic skin colour: a pulse along the blood-volume direction a fraction of a percent
/// deep, camera noise, a slow illumination drift and breathing, frames at 30 fps with a tenth dropped and jitter.
@Suite("Pulse estimator (synthetic skin colour)")
struct PulseEstimatorTests {
    /// (reported estimates, frames after the first full window).
    static func run(
        _ samples: [(Int64, Double, Double, Double)], _ configuration: PulseEstimator.Configuration = .init(), regions: Bool = true
    ) -> (estimates: [Double], framesAfterWindow: Int) {
        let (timed, after) = runTimed(samples, configuration, regions: regions)
        return (timed.map(\.bpm), after)
    }

    /// The reported estimates with their capture times (s), and the frames after the first full window. `regions`:
    /// each sample goes in as three regions (``SyntheticPulse/regions(_:_:)``), as the collector feeds it; otherwise as one colour.
    static func runTimed(
        _ samples: [(Int64, Double, Double, Double)], _ configuration: PulseEstimator.Configuration = .init(), regions: Bool = true
    ) -> (estimates: [(t: Double, bpm: Double)], framesAfterWindow: Int) {
        var estimator = PulseEstimator(configuration: configuration)
        var random = SplitMix64(seed: 99)
        var estimates: [(t: Double, bpm: Double)] = []
        var after = 0
        let start = samples.first!.0
        for (t, r, g, b) in samples {
            let estimate = regions
                ? estimator.add(timeUs: t, regions: SyntheticPulse.regions((r, g, b), &random)) : estimator.add(timeUs: t, r: r, g: g, b: b)
            if Double(t - start) / 1_000_000 >= configuration.window + 1 {
                after += 1
                if let estimate { estimates.append((Double(t) / 1_000_000, estimate.bpm)) }
            }
        }
        return (estimates, after)
    }

    /// How many of `estimates` are within 5 bpm of the pulse's rate at their time.
    static func close(_ estimates: [(t: Double, bpm: Double)], around bpm: Double) -> Int {
        estimates.filter { abs($0.bpm - SyntheticPulse.rate(around: bpm, at: $0.t)) <= 5 }.count
    }

    /// A rate climbing from 70 to 100 bpm over 30 s after the first 5 (1 bpm/s, as when someone stands up).
    static func climbingRate(at t: Double) -> Double { 70 + min(30, max(0, t - 5)) }

    /// 40 s at 30 fps of a pulse 0.3 % deep at `rate` (bpm at t seconds; ``climbingRate(at:)`` unless given), with
    /// 0.05 % noise per channel.
    static func climbing(seed: UInt64, rate: (Double) -> Double = climbingRate(at:)) -> [(Int64, Double, Double, Double)] {
        var phase = 0.0
        var random = SplitMix64(seed: seed)
        return (0..<1200).map { i -> (Int64, Double, Double, Double) in
            let t = Double(i) / 30
            phase += 2 * .pi * rate(t) / 60 / 30
            let p = 0.003 * sin(phase)
            func channel(_ value: Double, _ d: Double) -> Double { value * (1 + p * d) * (1 + 0.0005 * random.gaussian()) }
            return (Int64(t * 1_000_000), channel(160, 0.33), channel(115, 0.77), channel(95, 0.53))
        }
    }

    /// The mean distance (bpm) of `estimates` from ``climbingRate(at:)``.
    static func climbingError(_ estimates: [(t: Double, bpm: Double)]) -> Double {
        estimates.map { abs($0.bpm - climbingRate(at: $0.t)) }.reduce(0, +) / Double(max(1, estimates.count))
    }

    @Test("POS finds rates from 50 to 150 bpm, within 5 bpm of the moving rate on 80 %, reported on 80 % of the frames after the window",
          arguments: [50.0, 65, 80, 100, 120, 150])
    func posFindsTheRate(bpm: Double) {
        let (estimates, after) = Self.runTimed(SyntheticPulse.skin(bpm: bpm, seed: UInt64(bpm)))
        let close = Self.close(estimates, around: bpm)
        #expect(Double(estimates.count) >= 0.8 * Double(after), "reported on \(estimates.count) of \(after) frames")
        // Against the rate at the estimate's own time, which moves by up to 1.7 bpm/s at 150: what is reported is the
        // newest 5 s's peak, about 2.5 s late (the window's own peak, 5 s late, is within 5 bpm on 59 % at 150).
        #expect(Double(close) >= 0.8 * Double(estimates.count), "\(close) of \(estimates.count) within 5 bpm of the rate around \(bpm)")
    }

    @Test("CHROM finds the rate too", arguments: [60.0, 110])
    func chromFindsTheRate(bpm: Double) {
        var configuration = PulseEstimator.Configuration()
        configuration.method = .chrom
        let (estimates, after) = Self.runTimed(SyntheticPulse.skin(bpm: bpm, seed: 7), configuration)
        #expect(Double(estimates.count) >= 0.8 * Double(after))
        #expect(Double(Self.close(estimates, around: bpm)) >= 0.8 * Double(estimates.count))
    }

    @Test("without a pulse it does not invent one: confident on at most 10 % of the frames", arguments: [UInt64(1), 2, 3, 4, 5])
    func noPulseNoRate(seed: UInt64) {
        let (estimates, after) = Self.run(SyntheticPulse.skin(bpm: nil, seed: seed))
        #expect(Double(estimates.count) <= 0.1 * Double(after), "reported \(estimates.count) of \(after): \(estimates.prefix(10))")
    }

    @Test("one colour without regions: the rate is found, and without a pulse reported on at most 15 % of the frames")
    func oneColour() {
        let (estimates, after) = Self.runTimed(SyntheticPulse.skin(bpm: 96, seed: 96), regions: false)
        #expect(Double(estimates.count) >= 0.8 * Double(after), "reported on \(estimates.count) of \(after) frames")
        #expect(Double(Self.close(estimates, around: 96)) >= 0.8 * Double(estimates.count))
        // Weaker without regions to compare (agreement over time instead), and said so in the documentation.
        var invented = 0
        var frames = 0
        for seed in UInt64(1)...5 {
            let (none, after) = Self.run(SyntheticPulse.skin(bpm: nil, seed: seed), regions: false)
            invented += none.count
            frames += after
        }
        #expect(Double(invented) <= 0.15 * Double(frames), "reported \(invented) of \(frames)")
    }

    @Test("a periodic colour change that is not along the blood-volume signature is not a pulse", arguments: [
        (0.9, -0.2, 0.1),  // reddening and yellowing, as with an expression or a blush
        (-0.3, 0.1, 0.9),  // towards blue, as a screen's light
        (1.0, 1.0, 1.0),  // brightness alone, as a nod under a lamp
    ])
    func otherDirectionsAreNotAPulse(direction: (Double, Double, Double)) {
        // Stronger than the pulse of the other tests, at a heart-like rate.
        let (estimates, after) = Self.run(SyntheticPulse.skin(bpm: 72, seed: 3, amplitude: 0.006, direction: direction))
        #expect(Double(estimates.count) <= 0.1 * Double(after), "reported \(estimates.count) of \(after): \(estimates.prefix(5))")
    }

    @Test("PBV passes a change along the blood-volume signature and cancels a stronger one along another")
    func pbvPassesTheSignatureOnly() throws {
        // A 1.2 Hz pulse along the signature, 0.3 % deep, under a 0.8 Hz change three times as deep towards red.
        let rgb = (0..<300).map { i -> PulseSignal.RGB in
            let t = Double(i) / 30
            let p = 0.003 * sin(2 * .pi * 1.2 * t)
            let m = 0.009 * sin(2 * .pi * 0.8 * t)
            return PulseSignal.RGB(
                t: t, r: 160 * (1 + p * 0.33 + m * 0.9), g: 115 * (1 + p * 0.77 - m * 0.2), b: 95 * (1 + p * 0.53 + m * 0.1))
        }
        let band = (40.0 / 60)...(180.0 / 60)
        func peak(_ signal: [Double]) throws -> Double {
            let spectrum = try #require(PulseSignal.spectrum(signal, rate: 30, band: band))
            return try #require(PulseSignal.peak(spectrum, band: band)).frequency
        }
        #expect(abs(try peak(PulseSignal.pos(rgb, rate: 30)) - 0.8) < 0.05, "POS sees the stronger change")
        #expect(abs(try peak(PulseSignal.pbv(rgb, rate: 30)) - 1.2) < 0.05, "PBV sees the pulse")
        // Flat, too short or nonsense: nothing, without trapping.
        let flat = (0..<300).map { PulseSignal.RGB(t: Double($0) / 30, r: 100, g: 100, b: 100) }
        #expect(PulseSignal.pbv(flat, rate: 30).allSatisfy { $0 == 0 })
        #expect(PulseSignal.pbv(Array(rgb.prefix(10)), rate: 30).isEmpty)
        #expect(PulseSignal.pbv(rgb, rate: 0).isEmpty && PulseSignal.pbv(rgb, rate: .nan).isEmpty)
        #expect(PulseSignal.pbv(rgb, rate: .infinity).isEmpty && PulseSignal.pbv(rgb, rate: 1e300).isEmpty)
        let zeros = (0..<300).map { PulseSignal.RGB(t: Double($0) / 30, r: 0, g: 0, b: 0) }
        #expect(PulseSignal.pbv(zeros, rate: 30).allSatisfy { $0 == 0 })
    }

    @Test func theSignatureAngleMeasuresTheDirection() {
        // Uniform 30 Hz samples of a 1.2 Hz change along a direction: the angle is small along the signature only.
        func angle(_ d: (Double, Double, Double)) -> Double? {
            let rgb = (0..<300).map { i -> PulseSignal.RGB in
                let t = Double(i) / 30
                let p = 0.005 * sin(2 * .pi * 1.2 * t)
                return PulseSignal.RGB(t: t, r: 160 * (1 + p * d.0), g: 115 * (1 + p * d.1), b: 95 * (1 + p * d.2))
            }
            return PulseSignal.signatureAngle(rgb, rate: 30, frequency: 1.2)
        }
        #expect(angle((0.33, 0.77, 0.53))! < 2)
        #expect(angle((-0.33, -0.77, -0.53))! < 2, "the sign of the beat does not matter")
        #expect(angle((0.9, -0.2, 0.1))! > 60)
        let flat = (0..<300).map { PulseSignal.RGB(t: Double($0) / 30, r: 100, g: 100, b: 100) }
        #expect(PulseSignal.signatureAngle(flat, rate: 30, frequency: 1.2) == nil)
        #expect(PulseSignal.signatureAngle(Array(flat.prefix(4)), rate: 30, frequency: 1.2) == nil)
    }

    @Test func aRateStartsOnTheSignatureAndTheRegionsAndHoldsThroughAWeakerWindowButNotAJump() {
        var configuration = PulseEstimator.Configuration()
        configuration.minSNR = 1.5
        configuration.holdSNR = -3
        configuration.agreement = 3
        let reported = PulseEstimator.Estimate(bpm: 72, snr: 5, window: 10)
        func reading(
            _ bpm: Double, snr: Double, signature: Double? = nil, refined: Double? = nil, angle: Double = 10, regions: Int = 3,
            agreeing: Int = 3
        ) -> PulseEstimator.Reading {
            PulseEstimator.Reading(
                bpm: bpm, refinedBPM: refined ?? bpm, snr: 0, signatureBPM: signature ?? bpm, signatureSNR: snr, signatureAngle: angle,
                regions: regions, regionsAgreeing: agreeing)
        }
        func decide(
            _ r: PulseEstimator.Reading, previous: Double? = nil, recent: [Double]? = nil, reported: PulseEstimator.Estimate? = nil
        ) -> PulseEstimator.Estimate? {
            PulseEstimator.decide(
                r, recent: recent ?? ((previous.map { [$0] } ?? []) + [r.bpm]), reported: reported, configuration: configuration)
        }
        // Starts: the signature's SNR, its peak near the window's, two regions agreeing; what is reported is the refined
        // rate with the signature's SNR.
        #expect(decide(reading(95, snr: 2, refined: 97)) == .init(bpm: 97, snr: 2, window: 10))
        #expect(decide(reading(95, snr: 1)) == nil, "too weak to start")
        #expect(decide(reading(95, snr: 4, signature: 110)) == nil, "the signature peaks elsewhere")
        #expect(decide(PulseEstimator.Reading(bpm: 95, refinedBPM: 95, snr: 9, signatureBPM: nil, signatureSNR: 9)) == nil,
                "no signature peak")
        #expect(decide(reading(95, snr: 4, agreeing: 1)) == nil, "one region alone beats at this rate")
        #expect(decide(reading(95, snr: 4, regions: 2, agreeing: 2)) != nil)
        #expect(decide(reading(95, snr: 4, regions: 2, agreeing: 1)) == nil)
        #expect(decide(reading(95, snr: 4, angle: 150)) == nil, "the colour turns against the signature")
        // Without regions to compare, the newest three window peaks must agree instead.
        let single = reading(95, snr: 4, regions: 1, agreeing: 0)
        #expect(decide(single, recent: [94, 96, 95]) != nil)
        #expect(decide(single, recent: [80, 96, 95]) == nil, "peaks disagree")
        #expect(decide(single, recent: [96, 95]) == nil, "too few peaks yet")
        #expect(decide(reading(95, snr: 4, regions: 0, agreeing: 0), recent: [80, 94, 96, 95]) != nil, "only the newest three count")
        // Holds: weaker than a start needs, near the previous window's peak, even if the regions disagree.
        let weak = reading(73, snr: -2, refined: 74.5, agreeing: 0)
        #expect(decide(weak, previous: 72, reported: reported)?.bpm == 74.5)
        #expect(decide(weak, previous: 72) == nil, "too weak to start")
        #expect(decide(reading(73, snr: -4), previous: 72, reported: reported) == nil, "too weak to hold")
        #expect(decide(weak, previous: nil, reported: reported) == nil, "no previous peak to hold on to")
        #expect(decide(reading(73, snr: -2, signature: 90), previous: 72, reported: reported) == nil, "the signature went elsewhere")
        // The comparison is with the previous window's peak, not with the (refined) rate reported.
        let drifting = PulseEstimator.Estimate(bpm: 79, snr: 5, window: 10)
        #expect(decide(weak, previous: 72, reported: drifting) != nil)
        #expect(decide(reading(95, snr: 1), previous: 72, reported: reported) == nil, "a jump")
        // On the face's own rhythmic motion (or its harmonic), a peak needs motionPenalty dB more, and reports that less.
        func moving(_ bpm: Double, snr: Double, motion: Double) -> PulseEstimator.Reading {
            var r = reading(bpm, snr: snr)
            r.motionBPM = motion
            return r
        }
        #expect(decide(moving(95, snr: 4, motion: 110)) == .init(bpm: 95, snr: 4, window: 10), "the motion is elsewhere")
        #expect(decide(moving(95, snr: 5, motion: 93)) == .init(bpm: 95, snr: 5 - configuration.motionPenalty, window: 10))
        #expect(decide(moving(95, snr: 3, motion: 93)) == nil, "on the motion: 3 dB is not enough to start")
        #expect(decide(moving(96, snr: 3, motion: 48)) == nil, "on the motion's harmonic")
        #expect(decide(reading(95, snr: 3)) != nil, "no motion regressed: nothing to sit on")
        #expect(decide(moving(73, snr: -1, motion: 72), previous: 72, reported: reported) == nil, "too weak to hold on the motion")
        #expect(decide(moving(73, snr: 1, motion: 72), previous: 72, reported: reported) != nil)
        #expect(decide(moving(95, snr: 4, motion: .nan)) != nil, "a NaN motion changes nothing")
        // Where the face moves by at least motionPeakFloor at the peak, wherever its largest motion is, the same.
        func movingAtPeak(_ amplitude: Double, snr: Double = 4) -> PulseEstimator.Reading {
            var r = moving(95, snr: snr, motion: 130)
            r.motionAtPeak = amplitude
            return r
        }
        let floor = 0.04
        configuration.motionPeakFloor = floor
        #expect(decide(movingAtPeak(floor)) == nil, "moving as much as the floor at the peak: 4 dB is not enough to start")
        #expect(decide(movingAtPeak(floor, snr: 5)) == .init(bpm: 95, snr: 5 - configuration.motionPenalty, window: 10))
        #expect(decide(movingAtPeak(floor * 0.9)) == .init(bpm: 95, snr: 4, window: 10), "less than the floor: no penalty")
        #expect(decide(movingAtPeak(.nan)) != nil, "a NaN amplitude changes nothing")
        configuration.motionPeakFloor = 0
        #expect(decide(movingAtPeak(1)) != nil, "0 turns it off")
        // Nonsense settings and readings do not trap.
        configuration.minSNR = .nan
        configuration.maxSpread = -1
        #expect(decide(reading(.nan, snr: .nan)) == nil)
        configuration.agreement = 0
        #expect(decide(single, recent: []) == nil)
    }

    @Test("a colour change in one region only, even along the signature, is not a pulse")
    func oneRegionAloneIsNotAPulse() {
        // A hand or a shadow at one cheek at a heart-like rate, five times as deep as a pulse, along the signature;
        // the forehead and the other cheek see only camera noise.
        var random = SplitMix64(seed: 5)
        var estimator = PulseEstimator()
        var reported = 0
        var after = 0
        for i in 0..<(30 * 40) where random.uniform() >= 0.1 {
            let t = Double(i) / 30
            let p = 0.015 * sin(2 * .pi * 1.25 * t)
            let regions = PulseEstimator.Region.allCases.map { region -> PulseEstimator.RegionColour in
                let q = region == .leftCheek ? p : 0
                func channel(_ v: Double, _ d: Double) -> Double { v * (1 + q * d) * (1 + 0.001 * random.gaussian()) }
                return .init(region: region, r: channel(160, 0.33), g: channel(115, 0.77), b: channel(95, 0.53), pixels: 1000)
            }
            let estimate = estimator.add(timeUs: Int64(t * 1_000_000), regions: regions)
            if t >= 11 {
                after += 1
                if estimate != nil { reported += 1 }
            }
        }
        #expect(estimator.latest.map { abs($0.bpm - 75) < 2 } == true, "the face's colour does peak there: \(String(describing: estimator.latest))")
        #expect(Double(reported) <= 0.1 * Double(after), "reported on \(reported) of \(after) frames")
    }

    @Test("a pulse in every region is reported from regions as from one colour")
    func aPulseInEveryRegionIsReported() {
        var random = SplitMix64(seed: 8)
        var estimator = PulseEstimator()
        var estimates: [(t: Double, bpm: Double)] = []
        var after = 0
        var phase = 0.0
        for i in 0..<(30 * 40) {
            let t = Double(i) / 30
            phase += 2 * .pi * SyntheticPulse.rate(around: 84, at: t) / 60 / 30
            guard random.uniform() >= 0.1 else { continue }
            let p = 0.003 * sin(phase)
            let regions = PulseEstimator.Region.allCases.map { region -> PulseEstimator.RegionColour in
                func channel(_ v: Double, _ d: Double) -> Double { v * (1 + p * d) * (1 + 0.001 * random.gaussian()) }
                return .init(region: region, r: channel(160, 0.33), g: channel(115, 0.77), b: channel(95, 0.53), pixels: region == .forehead ? 2000 : 900)
            }
            let estimate = estimator.add(timeUs: Int64(t * 1_000_000), regions: regions)
            if t >= 11 {
                after += 1
                if let estimate { estimates.append((t, estimate.bpm)) }
            }
        }
        #expect(estimator.latest?.regions == 3)
        #expect(Double(estimates.count) >= 0.8 * Double(after), "reported on \(estimates.count) of \(after) frames")
        #expect(Double(Self.close(estimates, around: 84)) >= 0.8 * Double(estimates.count))
    }

    /// What an estimator configured so makes of `samples`: the rate it reports with each (nil: none), the newest
    /// window's reading after each once there is one, and the estimator after the last.
    static func trace(
        _ samples: [(timeUs: Int64, regions: [PulseEstimator.RegionColour], geometry: PulseMotion.Geometry?)],
        _ configuration: PulseEstimator.Configuration
    ) -> (reported: [Double?], readings: [PulseEstimator.Reading], estimator: PulseEstimator) {
        var estimator = PulseEstimator(configuration: configuration)
        var reported: [Double?] = []
        var readings: [PulseEstimator.Reading] = []
        for s in samples {
            reported.append(estimator.add(timeUs: s.timeUs, regions: s.regions, geometry: s.geometry)?.bpm)
            if let reading = estimator.latest { readings.append(reading) }
        }
        return (reported, readings, estimator)
    }

    /// 40 s at 30 fps, a tenth of the frames left out: a pulse at 72 per minute, 0.3 % deep along the blood-volume
    /// signature, in every region; the left cheek also changes colour along the signature at 100 per minute, eight times
    /// as deep (shading or a hand that only it sees). Every region has camera noise of its own.
    static func oneLoudCheek() -> [(timeUs: Int64, regions: [PulseEstimator.RegionColour])] {
        var random = SplitMix64(seed: 21)
        return (0..<(30 * 40)).compactMap { i in
            let t = Double(i) / 30
            guard random.uniform() >= 0.1 else { return nil }
            let pulse = 0.003 * sin(2 * .pi * 1.2 * t)
            let loud = 0.024 * sin(2 * .pi * 100 / 60 * t + 0.7)
            let regions = PulseEstimator.Region.allCases.map { region -> PulseEstimator.RegionColour in
                let p = pulse + (region == .leftCheek ? loud : 0)
                func channel(_ v: Double, _ d: Double) -> Double { v * (1 + p * d) * (1 + 0.001 * random.gaussian()) }
                return .init(region: region, r: channel(160, 0.33), g: channel(115, 0.77), b: channel(95, 0.53), pixels: region == .forehead ? 2000 : 900)
            }
            return (Int64(t * 1_000_000), regions)
        }
    }

    @Test("asked to, regions are weighed by how quiet they are: one cheek's loud colour change no longer hides the pulse the others carry")
    func regionsWeighedByHowQuietTheyAre() {
        func run(_ weights: PulseEstimator.RegionWeights, _ samples: [(timeUs: Int64, regions: [PulseEstimator.RegionColour])])
            -> (reported: [Double?], peaks: [Double], estimator: PulseEstimator)
        {
            var configuration = PulseEstimator.Configuration()
            configuration.regionWeights = weights
            let trace = Self.trace(samples.map { (timeUs: $0.timeUs, regions: $0.regions, geometry: nil) }, configuration)
            return (trace.reported, trace.readings.map(\.bpm), trace.estimator)
        }
        #expect(PulseEstimator.Configuration().regionWeights == .pixels, "off by default")
        let samples = Self.oneLoudCheek()
        let quiet = run(.inversePower, samples)
        let pixels = run(.pixels, samples)
        let after = samples.filter { $0.timeUs >= 11_000_000 }.count
        let quietReported = quiet.reported.compactMap { $0 }
        #expect(Double(quietReported.count) >= 0.8 * Double(after), "reported on \(quietReported.count) of \(after) frames")
        #expect(quietReported.allSatisfy { abs($0 - 72) <= 3 }, "\(quietReported.min() ?? 0)...\(quietReported.max() ?? 0)")
        let weights = quiet.estimator.latest?.regionWeights ?? []
        #expect(weights.count == 3 && weights[1] < 0.05 && weights[0] > 0.4 && weights[2] > 0.4, "weights \(weights)")
        #expect(abs(weights.reduce(0, +) - 1) < 1e-9)
        // By pixels the loud cheek is a quarter of the face's colour, and its change twice the pulse there: the windows
        // peak on it, only that cheek agrees, and the pulse is hardly reported.
        #expect(pixels.peaks.filter { abs($0 - 100) <= 3 }.count > pixels.peaks.count / 2, "\(pixels.peaks.prefix(5))")
        #expect(pixels.reported.compactMap { $0 }.filter { abs($0 - 72) <= 3 }.count < quietReported.count / 2)
        #expect(pixels.estimator.latest?.regionWeights == nil && pixels.estimator.latest?.regions == 3)

        // A window where a sample lacks a region is read by pixels, estimate for estimate.
        let gappy = samples.enumerated().map { k, s in
            (timeUs: s.timeUs, regions: k % 50 == 7 ? s.regions.filter { $0.region != .rightCheek } : s.regions)
        }
        let a = run(.inversePower, gappy)
        let b = run(.pixels, gappy)
        #expect(a.reported == b.reported && a.peaks == b.peaks)
        #expect(a.estimator.latest?.regionWeights == nil)
    }

    @Test func regionsCombineByTheirOwnMeanAndWeighByTheInverseOfTheirVariance() throws {
        let bright = (0..<4).map { PulseSignal.RGB(t: Double($0), r: 200 * (1 + 0.01 * Double($0)), g: 100, b: 50) }
        let dim = (0..<4).map { PulseSignal.RGB(t: Double($0), r: 20, g: 10 * (1 - 0.01 * Double($0)), b: 5) }
        let combined = try #require(PulseSignal.combine([bright, dim], weights: [3, 1]))
        let (mr, mg) = (200 * 1.015, 10 * 0.985)
        for (k, c) in combined.enumerated() {
            #expect(c.t == Double(k))
            #expect(abs(c.r - (0.75 * bright[k].r / mr + 0.25)) < 1e-12)
            #expect(abs(c.g - (0.75 + 0.25 * dim[k].g / mg)) < 1e-12)
            #expect(abs(c.b - 1) < 1e-12)
        }
        // Nothing to combine, unequal lengths, weights that are not finite, negative or all 0, a mean that is not positive.
        #expect(PulseSignal.combine([], weights: []) == nil)
        #expect(PulseSignal.combine([bright, Array(dim.prefix(3))], weights: [1, 1]) == nil)
        #expect(PulseSignal.combine([bright, dim], weights: [1]) == nil)
        for w in [Double.nan, .infinity, -1] { #expect(PulseSignal.combine([bright, dim], weights: [1, w]) == nil) }
        #expect(PulseSignal.combine([bright, dim], weights: [0, 0]) == nil)
        #expect(PulseSignal.combine([bright, dim.map { .init(t: $0.t, r: 0, g: $0.g, b: $0.b) }], weights: [1, 1]) == nil)
        #expect(PulseSignal.combine([bright, dim.map { .init(t: $0.t, r: .nan, g: $0.g, b: $0.b) }], weights: [1, 1]) == nil)

        let w = try #require(PulseSignal.inverseVarianceWeights([[1, -1, 1, -1], [2, -2, 2, -2]]))
        #expect(abs(w[0] - 0.8) < 1e-12 && abs(w[1] - 0.2) < 1e-12)
        #expect(PulseSignal.inverseVarianceWeights([]) == nil)
        #expect(PulseSignal.inverseVarianceWeights([[1, -1], [3, 3]]) == nil, "a flat signal")
        #expect(PulseSignal.inverseVarianceWeights([[1, -1], [.nan, 1]]) == nil)
        #expect(PulseSignal.inverseVarianceWeights([[1, -1], [1e200, -1e200]]) == nil, "a variance past a double")
        #expect(PulseSignal.inverseVarianceWeights([[1, -1], [1e-200, -1e-200]]) == nil, "an inverse past a double")
    }

    @Test("a region seen for only part of the window is not read, however many samples it has there")
    func aRegionMustCoverTheWindow() {
        // The right cheek appears for the last 4 s only (120 samples, more than the 80 a window needs).
        var random = SplitMix64(seed: 12)
        var estimator = PulseEstimator()
        for (t, r, g, b) in SyntheticPulse.skin(bpm: 80, seconds: 30, drop: 0) {
            var regions = SyntheticPulse.regions((r, g, b), &random)
            if t < 26_000_000 { regions.removeAll { $0.region == .rightCheek } }
            _ = estimator.add(timeUs: t, regions: regions)
        }
        #expect(estimator.latest?.regions == 2)
    }

    /// `seconds` at 30 fps of a pulse at a steady `bpm`, 0.3 % deep along the blood-volume signature, under the slow
    /// drift and breathing of ``SyntheticPulse/skin(bpm:seconds:seed:drop:amplitude:noise:direction:)``, every frame as the three
    /// regions ``SyntheticPulse/regions(_:_:)`` makes of it (each with camera noise of its own).
    static func steady(bpm: Double, seconds: Double = 20, seed: UInt64) -> [(timeUs: Int64, regions: [PulseEstimator.RegionColour])] {
        var random = SplitMix64(seed: seed)
        return (0..<Int(seconds * 30)).map { i -> (timeUs: Int64, regions: [PulseEstimator.RegionColour]) in
            let t = Double(i) / 30
            let p = 0.003 * sin(2 * .pi * bpm / 60 * t)
            let light = 1 + 0.02 * sin(2 * .pi * 0.05 * t) + 0.003 * sin(2 * .pi * 0.25 * t)
            func channel(_ value: Double, _ direction: Double) -> Double { value * light * (1 + p * direction) }
            return (Int64(t * 1_000_000), SyntheticPulse.regions((channel(160, 0.33), channel(115, 0.77), channel(95, 0.53)), &random))
        }
    }

    /// A region of kind `region` the estimator must leave out, the `k`th of a cycle: one channel not finite, not
    /// positive or past a 32-bit float's range (how colours are kept), or pixels not finite or not positive. Its other
    /// values are a plausible skin colour (not the clean one's), so that using it would show in the estimate.
    static func hostile(_ region: PulseEstimator.Region, _ k: Int) -> PulseEstimator.RegionColour {
        let colours: [Double] = [.nan, .infinity, -.infinity, -1, 0, 1e308, 1e39, .leastNonzeroMagnitude]
        let pixels: [Double] = [.nan, .infinity, -.infinity, -1, 0, -.leastNonzeroMagnitude]
        let colour = colours[(k / 4) % colours.count]
        switch k % 4 {
        case 0: return .init(region: region, r: colour, g: 130, b: 80, pixels: 5000)
        case 1: return .init(region: region, r: 200, g: colour, b: 80, pixels: 5000)
        case 2: return .init(region: region, r: 200, g: 130, b: colour, pixels: 5000)
        default: return .init(region: region, r: 200, g: 130, b: 80, pixels: pixels[(k / 4) % pixels.count])
        }
    }

    @Test("hostile regions interleaved into a clean pulse are left out: the clean window's estimates, at the injected rate")
    func hostileRegionsAreLeftOut() throws {
        let bpm = 78.0
        let clean = Self.steady(bpm: bpm, seed: 31)
        let kinds = PulseEstimator.Region.allCases
        // The clean frames alone: the reference, which must read the injected rate.
        var reference = PulseEstimator()
        let expected = clean.map { reference.add(timeUs: $0.timeUs, regions: $0.regions) }
        let windowFull = clean.indices.filter { Double(clean[$0].timeUs) / 1e6 >= reference.configuration.window + 1 }
        let reported = windowFull.compactMap { expected[$0] }
        #expect(Double(reported.count) >= 0.8 * Double(windowFull.count), "reported on \(reported.count) of \(windowFull.count) frames")
        #expect(reported.allSatisfy { abs($0.bpm - bpm) <= 3 }, "\(reported.map(\.bpm).filter { abs($0 - bpm) > 3 }.prefix(5))")
        let cleanFinal = try #require(reference.current, "the clean window reports a rate")
        #expect(abs(cleanFinal.bpm - bpm) <= 3, "\(cleanFinal.bpm) against \(bpm)")

        // Every clean frame also carries a hostile region of some kind ahead of the clean ones (left out, so the clean
        // one of that kind is kept) and a second, valid region of a kind after them (left out: the first counts); and
        // between two clean frames comes one the estimator must ignore whole: no regions, only hostile ones, or two
        // whose pixels would overflow the weights' sum. The estimator must not tell the difference: the same estimate
        // on every clean frame, and on every ignored one the one it reported before.
        var interleaved = PulseEstimator()
        var same = 0
        var kept = 0
        for (i, frame) in clean.enumerated() {
            let extra = kinds[(i / 2) % kinds.count]
            var regions = [Self.hostile(kinds[i % kinds.count], i)] + frame.regions
            regions.append(.init(region: extra, r: 200, g: 130, b: 80, pixels: 1e300))
            if interleaved.add(timeUs: frame.timeUs, regions: regions) == expected[i] { same += 1 }
            let ignored: [PulseEstimator.RegionColour] = switch i % 3 {
            case 0: []
            case 1: kinds.enumerated().map { Self.hostile($0.element, i + $0.offset) }
            default: [
                .init(region: .forehead, r: 200, g: 130, b: 80, pixels: .greatestFiniteMagnitude),
                .init(region: .leftCheek, r: 200, g: 130, b: 80, pixels: .greatestFiniteMagnitude),
            ]
            }
            if interleaved.add(timeUs: frame.timeUs + 10_000, regions: ignored) == expected[i] { kept += 1 }
        }
        #expect(same == clean.count, "the clean window's estimate on \(same) of \(clean.count) frames")
        #expect(kept == clean.count, "an ignored frame returned what was reported before on \(kept) of \(clean.count)")
        #expect(interleaved.latest == reference.latest && interleaved.current == reference.current)

        // A region of every third frame replaced by a hostile one of its kind: that frame's colour is the other two
        // regions' (each with noise of its own), so the estimate may move a little, not off the rate.
        var replaced = PulseEstimator()
        var replacedReported: [Double] = []
        for (i, frame) in clean.enumerated() {
            var regions = frame.regions
            if i % 3 == 0 {
                let j = (i / 3) % regions.count
                regions[j] = Self.hostile(regions[j].region, i)
            }
            let estimate = replaced.add(timeUs: frame.timeUs, regions: regions)
            if Double(frame.timeUs) / 1e6 >= replaced.configuration.window + 1, let estimate { replacedReported.append(estimate.bpm) }
        }
        #expect(replaced.latest?.regions == 3, "each region is still read: \(String(describing: replaced.latest))")
        #expect(replacedReported.allSatisfy { abs($0 - bpm) <= 3 }, "\(replacedReported.filter { abs($0 - bpm) > 3 }.prefix(5))")
        let replacedFinal = try #require(replaced.current, "a rate is reported with hostile regions left out")
        #expect(abs(replacedFinal.bpm - cleanFinal.bpm) <= 1.5, "\(replacedFinal.bpm) against the clean window's \(cleanFinal.bpm)")
        #expect(abs(replacedFinal.bpm - bpm) <= 3)
    }

    @Test func theTaperPeaksWhereAsked() {
        let hann = PulseSignal.taper(100, peak: 0.5)
        #expect(hann.count == 100 && hann[0] == 0)
        #expect(abs(hann[50] - 1) < 1e-12 && abs(hann[25] - hann[75]) < 1e-9, "symmetric")
        let late = PulseSignal.taper(100, peak: 0.9)
        #expect(late.firstIndex(of: late.max()!) == 90)
        #expect(late[99] > 0 && late[99] < 0.1)
        // Out of range: clamped to the points, no trap.
        for peak in [0.0, -1, 2, .nan, .infinity] { #expect(PulseSignal.taper(10, peak: peak).count == 10) }
        #expect(PulseSignal.taper(1, peak: 0.9) == [1] && PulseSignal.taper(0, peak: 0.9).isEmpty)
    }

    @Test func theTiltFavoursHighFrequenciesAndLeavesAFlatExponentAlone() {
        let spectrum = PulseSignal.Spectrum(frequencies: [1, 2], power: [0.8, 0.2], seconds: 10)
        #expect(PulseSignal.tilted(spectrum, exponent: 0) == spectrum)
        #expect(PulseSignal.tilted(spectrum, exponent: .nan) == spectrum)
        let tilted = PulseSignal.tilted(spectrum, exponent: 2)  // 0.8 × 1 against 0.2 × 4
        #expect(abs(tilted.power[0] - 0.5) < 1e-12 && abs(tilted.power[1] - 0.5) < 1e-12)
        let empty = PulseSignal.Spectrum(frequencies: [1, 2], power: [0, 0], seconds: 10)
        #expect(PulseSignal.tilted(empty, exponent: 2) == empty)
    }

    @Test("a pulse under slow motion ten times its power is the tilted spectrum's peak, not the plain one's")
    func theTiltFindsAPulseUnderSlowMotion() throws {
        // A 0.75 Hz (45 bpm) sway of amplitude 1 and a 2.2 Hz (132 bpm) pulse of amplitude 0.3: 10.5 dB weaker.
        let signal = (0..<300).map { i -> Double in
            let t = Double(i) / 30
            return sin(2 * .pi * 0.75 * t) + 0.3 * sin(2 * .pi * 2.2 * t + 1)
        }
        let band = (40.0 / 60)...(180.0 / 60)
        let spectrum = try #require(PulseSignal.spectrum(signal, rate: 30, band: band))
        #expect(abs(try #require(PulseSignal.peak(spectrum, band: band)).frequency - 0.75) < 0.03)
        #expect(abs(try #require(PulseSignal.peak(PulseSignal.tilted(spectrum, exponent: 3), band: band)).frequency - 2.2) < 0.03)
        // A grid finer than maxGridPoints frequencies, or a resolution whose count would trap, gives no spectrum.
        #expect(PulseSignal.spectrum(signal, rate: 30, band: band, resolution: 1e-300) == nil)
        #expect(PulseSignal.spectrum(signal, rate: 30, band: band, resolution: (band.upperBound - band.lowerBound) / 20_000) == nil)
        #expect(PulseSignal.spectrum(signal, rate: 30, band: band, resolution: .infinity) == nil)
        #expect(PulseSignal.spectrum(signal, rate: 30, band: band, resolution: .nan) == nil)
    }

    @Test func refiningReadsTheNewestSecondsNearThePeak() throws {
        // 80 bpm for 6 s, then 90 bpm for 4 s: the 10 s peak lies between; the newest 4 s say 90.
        var phase = 0.0
        let signal = (0..<300).map { i -> Double in
            phase += 2 * .pi * (i < 180 ? 80.0 : 90.0) / 60 / 30
            return sin(phase)
        }
        let band = (40.0 / 60)...(180.0 / 60)
        let spectrum = try #require(PulseSignal.spectrum(signal, rate: 30, band: band))
        let window = try #require(PulseSignal.peak(spectrum, band: band)).frequency * 60
        let refined = try #require(PulseSignal.refine(signal, rate: 30, around: window / 60, seconds: 4, span: 0.2)) * 60
        #expect(abs(refined - 90) < abs(window - 90), "window \(window), refined \(refined)")
        #expect(abs(refined - 90) < 2, "refined \(refined)")
        // Only near the window's peak: a span of 0 returns it; nonsense and too little signal return nil.
        #expect(PulseSignal.refine(signal, rate: 30, around: 1.4, seconds: 4, span: 0) == 1.4)
        #expect(PulseSignal.refine(signal, rate: 30, around: 1.4, seconds: 11, span: 0.1) == nil, "longer than the signal")
        #expect(PulseSignal.refine(signal, rate: 30, around: .nan, seconds: 4, span: 0.1) == nil)
        #expect(PulseSignal.refine(signal, rate: 0, around: 1.4, seconds: 4, span: 0.1) == nil)
        #expect(PulseSignal.refine(signal, rate: 30, around: 1.4, seconds: 4, span: .infinity) == nil)
        for peak in [0.0, 1.5, .nan] { #expect(PulseSignal.refine(signal, rate: 30, around: 1.4, seconds: 4, span: 0.1, peak: peak) == nil) }
        // The late taper reads the same 90 bpm.
        let late = try #require(PulseSignal.refine(signal, rate: 30, around: window / 60, seconds: 4, span: 0.2, peak: 0.9)) * 60
        #expect(abs(late - 90) < 2, "late \(late)")
        // Counts past Int.max do not trap: seconds × rate, span ÷ resolution.
        #expect(PulseSignal.refine(signal, rate: 1e200, around: 1.4, seconds: 1e200, span: 0.1) == nil)
        #expect(PulseSignal.refine(signal, rate: 30, around: 1.4, seconds: 4, span: 0.1, resolution: 1e-300) == nil)
        #expect(PulseSignal.refine(signal, rate: 30, around: 1.4, seconds: 4, span: 0.1, resolution: 0.1 / 20_000) == nil)
    }

    @Test("the reported rate follows a moving rate more closely than the window's own peak")
    func refiningFollowsAMovingRate() {
        // A 10 s window's peak trails a rate climbing 1 bpm/s by about 5 bpm.
        let samples = Self.climbing(seed: 11)
        func meanError(_ configuration: PulseEstimator.Configuration) -> Double {
            Self.climbingError(Self.runTimed(samples, configuration).estimates.filter { $0.t >= 15 && $0.t <= 35 })
        }
        var plain = PulseEstimator.Configuration()
        plain.refineWindow = 0
        let refined = meanError(.init())
        let window = meanError(plain)
        #expect(window > 3, "the window's peak lags: \(window)")
        #expect(refined < window * 0.7, "refined \(refined) against the window's \(window)")
    }

    @Test("the refinement reads twelve beats when they take less than 6 s: fewer seconds at a fast rate, 6 s below 120 bpm")
    func theRefinementReadsBeats() {
        let estimator = PulseEstimator()
        #expect(abs(estimator.refineSeconds(150.0 / 60) - 4.8) < 1e-9)
        #expect(estimator.refineSeconds(120.0 / 60) == 6)
        #expect(estimator.refineSeconds(60.0 / 60) == 6, "12 beats at 60 bpm are 12 s: the refinement's 6 s")
        #expect(estimator.refineSeconds(300.0 / 60) == 3, "12 beats at 300 bpm are 2.4 s: at least 3")
        var off = PulseEstimator.Configuration()
        off.refineWindow = 0
        #expect(PulseEstimator(configuration: off).refineSeconds(150.0 / 60) == 0, "no refinement")
        for odd in [0.0, -1, .nan, .infinity] { #expect(estimator.refineSeconds(odd) == 6, "\(odd): the fixed 6 s") }
        var seconds = PulseEstimator.Configuration()
        seconds.refineCycles = 0
        #expect(PulseEstimator(configuration: seconds).refineSeconds(150.0 / 60) == 6)

        // A fast rate climbing 1 bpm/s (140 to 160 bpm): 4.8 s lag less than 6 s.
        func rate(_ t: Double) -> Double { 140 + min(20, max(0, t - 5)) }
        let samples = Self.climbing(seed: 21, rate: rate)
        func meanError(_ configuration: PulseEstimator.Configuration) -> Double {
            let climbing = Self.runTimed(samples, configuration).estimates.filter { $0.t >= 15 && $0.t <= 25 }
            return climbing.map { abs($0.bpm - rate($0.t)) }.reduce(0, +) / Double(max(1, climbing.count))
        }
        let beats = meanError(.init())
        let fixed = meanError(seconds)
        #expect(beats < fixed - 0.3, "12 beats: \(beats) bpm off, against \(fixed) with 6 s")
    }

    @Test("between windows the reported rate is read again from the newest seconds, and keeps closer to a climbing rate")
    func theReportedRateIsReadAgainBetweenWindows() {
        // A rate climbing 1 bpm/s from 70 to 100 bpm: an estimate held for half a second is a quarter of a second
        // stale on average.
        let samples = Self.climbing(seed: 12)
        func climb(_ configuration: PulseEstimator.Configuration) -> (changes: Int, meanError: Double) {
            let climbing = Self.runTimed(samples, configuration).estimates.filter { $0.t >= 15 && $0.t <= 34 }
            let changes = zip(climbing, climbing.dropFirst()).filter { $0.bpm != $1.bpm }.count
            return (changes, Self.climbingError(climbing))
        }
        var held = PulseEstimator.Configuration()
        held.refineInterval = .infinity
        let (heldChanges, heldError) = climb(held)
        let (changes, error) = climb(.init())
        #expect(heldChanges <= 40, "one change per window at most: \(heldChanges)")
        // The refined rate moves on a 0.3 bpm grid: at 1 bpm/s every third of a second, not every tenth.
        #expect(changes >= 2 * heldChanges, "read again between windows: \(changes) changes against \(heldChanges)")
        #expect(error < heldError - 0.1, "\(error) bpm off, against \(heldError) when held")
    }

    @Test func tooFewSamplesAWindowGiveNoEstimateAndCostNoSpectrum() {
        // A peer whose capture times jump by a second per frame: every frame would be due an estimate; none is made.
        var estimator = PulseEstimator()
        for i in 0..<200 {
            #expect(estimator.add(timeUs: Int64(i) * 999_000, r: 160, g: 115 + Double(i % 2), b: 95) == nil)
        }
        #expect(estimator.latest == nil)
        // At 6 frames/s (under twice the band's top) nothing either; at 10 frames/s the window is read.
        let sparse = SyntheticPulse.skin(bpm: 72, seconds: 30, drop: 0).enumerated().filter { $0.offset % 5 == 0 }.map(\.element)
        #expect(Self.run(sparse).estimates.isEmpty)
        let slow = SyntheticPulse.skin(bpm: 72, seconds: 30, drop: 0).enumerated().filter { $0.offset % 3 == 0 }.map(\.element)
        var reading = PulseEstimator()
        for (t, r, g, b) in slow { _ = reading.add(timeUs: t, r: r, g: g, b: b) }
        #expect(reading.latest != nil)
    }

    @Test func aGapStartsTheSeriesAgain() {
        var samples = SyntheticPulse.skin(bpm: 75, seconds: 30, drop: 0)
        // Two seconds missing at 15 s: no estimate until a full window after it.
        samples.removeAll { $0.0 >= 15_000_000 && $0.0 < 17_000_000 }
        var estimator = PulseEstimator()
        var reportedAt: [Double] = []
        for (t, r, g, b) in samples where estimator.add(timeUs: t, r: r, g: g, b: b) != nil { reportedAt.append(Double(t) / 1e6) }
        #expect(reportedAt.contains { $0 < 15 }, "reported before the gap")
        #expect(!reportedAt.contains { $0 >= 17 && $0 < 26.5 }, "nothing within a window after the gap: \(reportedAt.filter { $0 >= 17 }.prefix(3))")
        #expect(reportedAt.contains { $0 >= 27.5 }, "reported again once the window refilled")
    }

    @Test("one frame a day ahead (what validation still accepts) or at an Int64 extreme, while reporting, costs a window, not the rest of the track")
    func aCaptureTimeFarAheadDoesNotSilenceTheTrack() {
        let strays: [(String, (Int64) -> Int64)] = [
            ("a day ahead", { $0 + 86_400_000_000 }), ("Int64.max", { _ in .max }), ("Int64.max - 1", { _ in .max - 1 }),
            ("Int64.min", { _ in .min }), ("Int64.min + 1", { _ in .min + 1 }),
        ]
        for (name, stray) in strays {
            var estimator = PulseEstimator()
            var random = SplitMix64(seed: 21)
            var reportedAt: [Double] = []
            var sent = false
            for (t, r, g, b) in SyntheticPulse.skin(bpm: 80, seconds: 40, drop: 0) {
                if t >= 15_000_000 && !sent {
                    sent = true
                    #expect(estimator.add(timeUs: stray(t), regions: SyntheticPulse.regions((r, g, b), &random)) == nil, "\(name)")
                }
                if estimator.add(timeUs: t, regions: SyntheticPulse.regions((r, g, b), &random)) != nil { reportedAt.append(Double(t) / 1e6) }
            }
            #expect(reportedAt.contains { $0 < 15 }, "\(name): reported before")
            #expect(
                !reportedAt.contains { $0 > 15.1 && $0 < 24.5 },
                "\(name): the series started again: \(reportedAt.filter { $0 > 15.1 && $0 < 24.5 }.prefix(5))")
            #expect(reportedAt.contains { $0 >= 27 }, "\(name): and reports again a window later: \(reportedAt.filter { $0 > 15 }.prefix(3))")
        }
    }

    @Test("hostile samples never trap and leave no trace: a clean window after and among them reads as on a fresh estimator")
    func hostileSamplesNeverTrapAndAreIgnored() {
        let values: [Double] = [.nan, .infinity, -.infinity, -1, 0, 1e308, .leastNonzeroMagnitude]
        let times: [Int64] = [.min, -1, 0, 1, .max, .max - 1]
        let samples = SyntheticPulse.skin(bpm: 90, seconds: 20, drop: 0)
        // The clean window alone, on a fresh estimator: the reference.
        var fresh = PulseEstimator()
        let expected = samples.map { fresh.add(timeUs: $0.0, r: $0.1, g: $0.2, b: $0.3) }
        let last = expected.compactMap { $0 }.last
        #expect(last.map { abs($0.bpm - 90) <= 5 } == true, "\(String(describing: last))")

        // The same window after hostile samples at extreme times, with a hostile sample just after every clean one
        // and a late one (half a second back: not a restart) after that: every one ignored, returning what was
        // reported before, and every clean sample's estimate the fresh estimator's.
        var estimator = PulseEstimator()
        for t in times {
            for v in values {
                #expect(estimator.add(timeUs: t, r: v, g: 100, b: v) == nil)
                #expect(estimator.add(timeUs: t, r: 100, g: v, b: 100) == nil)
            }
        }
        #expect(estimator.latest == nil)
        var same = 0
        var ignored = 0
        for (i, (t, r, g, b)) in samples.enumerated() {
            if estimator.add(timeUs: t, r: r, g: g, b: b) == expected[i] { same += 1 }
            let v = values[i % values.count]
            if estimator.add(timeUs: t + 1_000, r: v, g: g, b: b) == expected[i] { ignored += 1 }
            if estimator.add(timeUs: t - 500_000, r: 1, g: 1, b: 1) == expected[i] { ignored += 1 }
        }
        #expect(same == samples.count, "the fresh estimator's estimate on \(same) of \(samples.count) clean samples")
        #expect(ignored == 2 * samples.count, "\(ignored) of \(2 * samples.count) hostile or late samples returned the estimate before them")
        #expect(estimator.latest == fresh.latest && estimator.current == fresh.current)
    }

    @Test func aShorterFirstWindowReportsEarlierAndSaysHowLongItWas() throws {
        var configuration = PulseEstimator.Configuration()
        configuration.firstWindow = 6
        let skin = SyntheticPulse.skin(bpm: 84, seconds: 20, seed: 8, drop: 0, amplitude: 0.006)
        var random = SplitMix64(seed: 2)
        var early = PulseEstimator(configuration: configuration)
        var standard = PulseEstimator()
        var first: (early: Double?, standard: Double?) = (nil, nil)
        var windows: [Double] = []
        let start = Double(skin[0].0) / 1_000_000
        for (t, r, g, b) in skin {
            let regions = SyntheticPulse.regions((r, g, b), &random)
            let seconds = Double(t) / 1_000_000 - start
            if let estimate = early.add(timeUs: t, regions: regions) {
                first.early = first.early ?? seconds
                windows.append(estimate.window)
            }
            if standard.add(timeUs: t, regions: regions) != nil { first.standard = first.standard ?? seconds }
        }
        let e = try #require(first.early)
        let s = try #require(first.standard)
        #expect(e < 9 && s >= 9.8, "first rates at \(e) s and \(s) s")
        #expect(windows.first.map { $0 < 9.8 && $0 >= 5.8 } == true, "the first estimate's window: \(windows.first ?? 0)")
        #expect(windows.last == 10)
    }
}
