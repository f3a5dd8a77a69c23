import FacewireVocabulary

/// A heart-rate estimate for one track, from the skin colour of its face over time (remote photoplethysmography).
///
/// Samples come in capture-time order with whatever gaps drops made; the estimator never assumes a frame rate. It
/// keeps the newest ``Configuration/window`` seconds, resamples them on a uniform grid, projects them with POS (or
/// CHROM, or PBV), and reads the strongest frequency in the heart-rate band. A gap longer than
/// ``Configuration/maxGap`` starts the series again (a window never spans one), and so does a jump back that long. An
/// estimate is made every ``Configuration/interval`` once the window is full; while one is reported, its rate is read
/// again from the newest seconds every ``Configuration/refineInterval``.
///
/// What is reported is gated, because a face's own motion, expressions and lighting put far more colour change into
/// the heart-rate band than its pulse does (measured: about ten times as much on talking-head clips), and the
/// strongest peak is then not a heart rate at all. Most of that change is slow, so every spectrum is first tilted
/// towards high frequencies (``Configuration/whitening``, ``PulseSignal/tilted(_:exponent:)``). A window's peak is
/// trusted on two pieces of evidence that motion rarely gives and a pulse always does:
/// - **The blood-volume signature.** The same colours projected by PBV (``PulseSignal/pbv(_:rate:)``), which passes
///   only colour change along the signature of blood and cancels the rest, must show a peak of their own within
///   ``Configuration/maxSpread`` of the window's, with an SNR (``Estimate/snr``) of at least ``Configuration/minSNR``.
///   Its colour change at the peak must also not point against the signature (``Configuration/maxSignatureAngle``,
///   ``PulseSignal/signatureAngle(_:rate:frequency:)``): a face reddening as it brightens looks to PBV like a pulse
///   upside down.
/// - **Every region beats at one rate.** When the samples carry skin regions (forehead, cheeks), each region's own
///   peak is read too, and at least two must lie within ``Configuration/maxRegionSpread`` of the window's: the heart
///   drives them all, while motion and expressions move them differently. Samples with one colour (no regions, or one
///   region in the window) have nothing to compare; the newest ``Configuration/agreement`` window peaks must agree
///   within ``Configuration/maxSpread`` instead (weaker: a steady artefact agrees with itself).
///
/// Before any of this, when the samples carry the face's geometry, what the face's own motion explains of its colours
/// is regressed out of them, and a peak that sits on the motion's own rate (or twice it), or where the face moves by
/// at least ``Configuration/motionPeakFloor``, needs more SNR (``PulseMotion``, ``Configuration/motionPenalty``). Such a
/// moving face's windows can be projected with another method (``Configuration/movingMethod``; off by default).
///
/// Once reporting, a window whose signature SNR still reaches ``Configuration/holdSNR``, whose signature peak agrees
/// and whose peak is within ``Configuration/maxSpread`` of the previous window's keeps it going. Otherwise "not yet"
/// (nil). The reported rate is the peak of the newest ``Configuration/refineWindow`` seconds (fewer at fast rates:
/// ``Configuration/refineCycles`` beats) within
/// ``Configuration/refineSpan`` of the window's, read with a taper that weighs the newest most
/// (``PulseSignal/refine(_:rate:around:seconds:span:peak:resolution:)``): a 10 s window's own peak is its mean rate,
/// some 5 s late when the rate changes.
///
/// Pure: no clock but the samples' own times. Bounded: at most ``Configuration/maxSamples`` samples.
public struct PulseEstimator: Sendable {
    public enum Method: String, Sendable, CaseIterable {
        case pos, chrom, pbv
    }

    /// How a window combines its skin regions into the face's colour (``Configuration/regionWeights``).
    public enum RegionWeights: String, Sendable, CaseIterable {
        /// By their pixels: the face's colour is the mean of its skin.
        case pixels
        /// By how quiet each region's own projected signal is in the window: weights the inverse of its variance
        /// (``PulseSignal/inverseVarianceWeights(_:)``), each region's colours divided by their own mean
        /// (``PulseSignal/combine(_:weights:)``).
        case inversePower = "inverse-power"
    }

    /// The skin regions a face's samples may carry (SPEC.md 11.5), one colour each: the vocabulary's.
    public typealias Region = SkinSample.Region

    /// One region's mean colour in a frame, with the pixels averaged (its weight in the face's colour).
    public struct RegionColour: Sendable, Equatable {
        public var region: Region
        public var r: Double
        public var g: Double
        public var b: Double
        public var pixels: Double

        public init(region: Region, r: Double, g: Double, b: Double, pixels: Double) {
            self.region = region
            self.r = r
            self.g = g
            self.b = b
            self.pixels = pixels
        }
    }

    public struct Configuration: Sendable, Equatable {
        public var method: Method = .pos
        /// Seconds of samples one estimate uses.
        public var window: Double = 10
        /// Seconds of samples after which a series' first estimate is made (at most ``window``): until the window is
        /// full, each estimate uses what there is, and its ``Estimate/window`` says how much.
        public var firstWindow: Double = 10
        /// The uniform grid the samples are resampled on (Hz).
        public var rate: Double = 30
        /// Heart rates considered (bpm).
        public var band: ClosedRange<Double> = 40...180
        /// A longer gap between two samples (s) starts the series again.
        public var maxGap: Double = 1.0
        /// Seconds between two estimates. Half a second: a rate moving 2 bpm/s (150 bpm wandering by 4 %) would be
        /// 2 bpm stale by the end of a whole one.
        public var interval: Double = 0.5
        /// The tilt of every spectrum before its peak and SNR are read: power times frequency to this exponent (0:
        /// none; 1 is 3 dB per octave). Talking heads' own colour change falls by about 5 dB per octave across the
        /// band; 1.5 found a few more pulses there but lost slow ones under plain camera noise, which 1 keeps.
        public var whitening: Double = 1
        /// The signature (PBV) SNR (dB, on the tilted spectrum) a window needs to start reporting. The gate's settings
        /// were chosen on synthetic clips (BENCHMARKS.md, "Heart rate") and checked on clips they were not chosen on;
        /// 0.5 dB reported a little more there, but let a face whose regions share white noise through on 18 % of frames.
        public var minSNR: Double = 1.5
        /// The signature SNR (dB) a window needs to keep reporting the rate it continues.
        public var holdSNR: Double = -3
        /// Seconds of the newest pulse signal whose peak near the window's is the reported rate: the most the
        /// refinement reads (fewer at fast rates: ``refineCycles``). 0: no refinement, the window's own peak.
        public var refineWindow: Double = 6
        /// Seconds between two readings of the reported rate while reporting: between two windows, only the newest
        /// seconds the refinement reads (``refineWindow``, fewer at fast rates) are read again, near the newest
        /// window's peak. Held for a whole ``interval``, the rate reported was a quarter of a second staler on
        /// average; on the synthetic clips the settings were chosen on, reading it every 0.1 s put 2.4 and 1.1 points
        /// more of the reported seconds within 5 bpm (every frame: no better). Each reading costs about a twentieth of a window's estimate (`facewire bench pulse-cost
        /// --refine-interval`: 2.15 ms CPU per tracked face-second, against 1.74 held).
        public var refineInterval: Double = 0.1
        /// How far (bpm) from the window's peak the reported rate is looked for.
        public var refineSpan: Double = 5
        /// When above 0, the refinement reads this many beats at the window's peak rate when they take less than
        /// ``refineWindow`` seconds (at least 3 s): 4.8 s at 150 bpm, 6 s at 120 bpm and below. A rate that wanders
        /// by a share of itself moves fastest when it is high, where 6 s lag most; a fast rate also has the most beats
        /// in a second to read. BENCHMARKS ("the refinement by beats") has the replays and fresh seeds it was decided on.
        public var refineCycles: Double = 12
        /// Where the refining taper peaks, as a share of its length (0.5: a Hann window; later weighs the newest more).
        public var refinePeak: Double = 0.9
        /// How far (bpm) the signature's peak may be from the window's, and a held window's peak from the previous one.
        public var maxSpread: Double = 6
        /// How far (bpm) a region's own peak may be from the window's for the region to agree (two must).
        public var maxRegionSpread: Double = 3
        /// How far (degrees) the colour change at the peak may point from the blood-volume signature to start.
        public var maxSignatureAngle: Double = 120
        /// Without regions: how many newest window peaks must agree (within ``maxSpread``) to start. Five, 2 s from
        /// first to last at the default interval: as long as the previous estimator's three a second apart (with three,
        /// 1 s, one-colour real skin traces got a rate on 6 % of their seconds, against 4 % with five).
        public var agreement = 5
        /// Fewest samples per second of window for an estimate: below twice the band's top (3 Hz) the band cannot be
        /// read, and it bounds the work a peer with absurd capture times can cause (one estimate per 8 × ``interval``
        /// samples: 4). A region with fewer in the window is not read.
        public var minSampleRate: Double = 8
        /// Most samples kept (a window at 200 frames/s; 128 bytes each).
        public var maxSamples = 2048
        /// Whether the face's own motion is regressed out of its colours before they are projected, for samples that
        /// carry the face's geometry (``PulseMotion``).
        public var motionReference = true
        /// The ridge of that regression, a share of each regressor's own power (larger: less of the pulse and of the
        /// motion taken out).
        public var motionRidge: Double = 0.1
        /// How much a face must move in the band for its motion to be regressed out: the amplitude of its largest
        /// frequency there, in eye distances for a translation (``PulseMotion/regressors(_:rate:band:floor:)``).
        public var motionFloor: Double = 0.025
        /// Whether each motion feature's rate of change is regressed out too: colour that follows the motion a
        /// quarter-period late (shading that reaches the skin as the head turns, a highlight at the end of a nod),
        /// which no multiple of the position explains. Chosen by a rule stated before two fresh seeds ran
        /// (BENCHMARKS.md, "Heads that move: the motion's rate of change"): there it put 24 more seconds within 5 bpm
        /// (401 against 377 of 630) and 2 fewer control seconds with a rate; a still face is never regressed.
        public var motionVelocity = true
        /// A window whose peak lies within ``motionSpread`` (bpm) of the face's own motion's rate or twice it
        /// (``Reading/motionBPM``: a face moving by at least ``motionFloor``) needs this many dB
        /// more signature SNR to start or hold, and its reported SNR is this much lower: the motion's colour change
        /// that the regression could not explain sits exactly there. The motion settings were chosen on the
        /// synthetic clips with rhythmic motion of one seed set (BENCHMARKS.md, "Heads that move") and checked on
        /// another: on the first, this took control seconds with a rate from 3.8 to 2.9 %, with one pulse second
        /// fewer reported.
        public var motionPenalty: Double = 3
        /// How near (bpm) a window's peak must be to the motion's, or to twice it, to count as on it.
        public var motionSpread: Double = 3
        /// A window whose peak lies where the face itself moves by at least this much (``Reading/motionAtPeak``: the
        /// largest amplitude of any motion feature within a DFT bin of the peak, in the units of ``motionFloor``)
        /// counts as on the motion too, wherever the motion's own largest rate is: a talking face moves at many rates
        /// at once (0: off). Chosen on the eight seen motion seeds and adopted by a rule stated before two fresh
        /// seeds ran (BENCHMARKS.md, "how much the face moves at the peak"): there it took the control seconds with a
        /// rate from 30 to 21 of 630, with 2 right seconds fewer of 334.
        public var motionPeakFloor: Double = 0.04
        /// Whether a moving face's windows read the forehead that follows the face mesh, where every sample carries one
        /// (``add(timeUs:regions:geometry:meshForehead:)``), instead of the one placed from the eyes. Off: on two fresh
        /// seeds it gave more rates (36 more seconds within 5 bpm of 630) but more of them false (8 more control
        /// seconds), past the limit stated before they ran (BENCHMARKS.md, "Heads that move").
        public var meshForehead = false
        /// The projection a moving face's windows are read with (those whose motion is regressed: ``Reading/motionBPM``
        /// is set), for their peak, their regions' and the reported rate; nil: ``method``. PBV passes only colour change
        /// along the blood-volume signature, so a moving face's colour change that no motion explains (an expression's
        /// flush, shading, a highlight) counts for less than on POS, which passes any change of hue. The window's peak is
        /// then the signature's own, so the gate's first piece of evidence (the two projections agreeing) holds
        /// trivially and the regions, the SNR, the angle and the motion's penalty decide. A still face keeps
        /// ``method`` (POS: issue 16's default), where that agreement is evidence. Off (nil) by default: on two fresh
        /// seeds PBV gave 24 more seconds within 5 bpm (400 against 376 of 630 tracked) but 6 more control seconds
        /// with a rate (22 against 16) and a share right 0.3 points lower, past the limit stated before they ran
        /// (BENCHMARKS.md, "Heads that move: a moving face read on the blood-volume signature").
        public var movingMethod: Method?
        /// How a window combines the face's skin regions before it is projected. The heart drives every region alike,
        /// but motion, shading and expressions do not: a cheek turning into the light or a forehead under a nod's
        /// highlight can carry several times the others' colour change, and a mean by pixels passes it on. With
        /// ``RegionWeights/inversePower`` a window whose every sample carries all three regions (and does not read the
        /// mesh's forehead, ``meshForehead``) combines them by the inverse of each one's projected signal's variance;
        /// the refresh between windows reads with the newest window's weights. The regions' own peaks (the gate's
        /// evidence that they beat at one rate) are read as before. Off (``RegionWeights/pixels``) by default, decided by
        /// rules stated before fresh seeds ran: with ``movingMethod`` PBV, on two seeds with rhythmic head motion it put
        /// 76 more seconds within 5 bpm (396 against 320 of 630) with 5 fewer control seconds with a rate; but on two of
        /// issue 16's still clip sets at 1 % it reported 78.6 % of the seconds against 81.4 % (under that check's 80 %)
        /// and gave 13 control seconds a rate against none (BENCHMARKS.md, "Heads that move: the skin regions weighed by
        /// how quiet they are"). Cost: about 5 % more CPU per tracked face-second (the refresh reads three regions).
        public var regionWeights: RegionWeights = .pixels

        public init() {}
    }

    /// A reported heart rate.
    public struct Estimate: Sendable, Equatable {
        /// Beats per minute: the peak of the newest ``Configuration/refineWindow`` seconds near the window's peak.
        public var bpm: Double
        /// The newest window's signature (PBV) SNR (dB): what the gate reads.
        public var snr: Double
        /// Seconds of samples the newest estimate used.
        public var window: Double
    }

    /// One window's reading, reported or not.
    public struct Reading: Sendable, Equatable {
        /// The window's peak (what holding compares).
        public var bpm: Double
        /// The rate to report: the newest seconds' peak near `bpm` (`bpm` itself when that could not be read).
        public var refinedBPM: Double
        /// The window's SNR (dB) in the configured method's projection.
        public var snr: Double
        /// The peak (bpm) and SNR (dB) of the same colours projected on the blood-volume signature (PBV); nil when
        /// the projection has no peak.
        public var signatureBPM: Double?
        public var signatureSNR: Double
        /// Degrees from the blood-volume signature of the colour change at `bpm` (90 when it could not be measured).
        public var signatureAngle: Double
        /// Regions read in the window, and how many of them peak within ``Configuration/maxRegionSpread`` of `bpm`.
        public var regions: Int
        public var regionsAgreeing: Int
        /// The rate (bpm) of the face's own motion, when it moved enough to be regressed out (``PulseMotion``).
        public var motionBPM: Double?
        /// Seconds of samples the window held, when fewer than ``Configuration/window`` (a first window).
        public var seconds: Double?
        /// Whether the window read the mesh's forehead (a moving face whose every sample carried one) instead of
        /// the forehead placed from the eyes.
        public var meshForehead = false
        /// How much the face moves at `bpm`: the largest amplitude of any motion feature within a DFT bin of it
        /// (``Configuration/motionPeakFloor``), when it moves enough to be regressed.
        public var motionAtPeak: Double?
        /// The weights the window combined its regions with (forehead, left cheek, right cheek: ``Region/allCases``),
        /// when it weighed them (``Configuration/regionWeights``); nil: by their pixels.
        public var regionWeights: [Double]?

        public init(
            bpm: Double, refinedBPM: Double, snr: Double, signatureBPM: Double?, signatureSNR: Double, signatureAngle: Double = 0,
            regions: Int = 0, regionsAgreeing: Int = 0, motionBPM: Double? = nil
        ) {
            self.motionBPM = motionBPM
            self.bpm = bpm
            self.refinedBPM = refinedBPM
            self.snr = snr
            self.signatureBPM = signatureBPM
            self.signatureSNR = signatureSNR
            self.signatureAngle = signatureAngle
            self.regions = regions
            self.regionsAgreeing = regionsAgreeing
        }
    }

    /// A stored sample, 128 bytes: its time, the face's colour (the regions' pixel-weighted mean), each region's
    /// that was measured, the face's motion features (``PulseMotion/Geometry/features``; NaN: none), and the mesh's
    /// forehead with the face's colour made with it (NaN: none). Colours come
    /// off the wire as 32-bit floats; they are kept so.
    struct Sample {
        var t: Double
        var colour: (Float, Float, Float)
        var regions: ((Float, Float, Float), (Float, Float, Float), (Float, Float, Float)) = ((0, 0, 0), (0, 0, 0), (0, 0, 0))
        /// Bit `region.index`: the region was measured.
        var measured: UInt8 = 0
        var motion = SIMD8<Float>(repeating: .nan)
        /// The mesh's forehead, and the face's colour with it in place of the eyes' forehead (NaN: none).
        var meshForehead: (Float, Float, Float) = (.nan, .nan, .nan)
        var meshColour: (Float, Float, Float) = (.nan, .nan, .nan)

        var hasMotion: Bool { !motion[0].isNaN }
        var measuredEveryRegion: Bool { measured == (1 << Region.allCases.count) - 1 }
        var hasMesh: Bool { !meshForehead.0.isNaN }

        /// The face's colour, with the mesh's forehead when `mesh`.
        func rgb(mesh: Bool) -> PulseSignal.RGB {
            mesh ? .init(t: t, r: Double(meshColour.0), g: Double(meshColour.1), b: Double(meshColour.2)) : rgb
        }

        /// `region`'s colour, the forehead from the mesh when `mesh`.
        func colour(_ region: Region, mesh: Bool) -> PulseSignal.RGB? {
            guard mesh, region == .forehead else { return self[region] }
            return .init(t: t, r: Double(meshForehead.0), g: Double(meshForehead.1), b: Double(meshForehead.2))
        }

        init(t: Double, colour: (Double, Double, Double)) {
            self.t = t
            self.colour = (Float(colour.0), Float(colour.1), Float(colour.2))
        }

        var rgb: PulseSignal.RGB { .init(t: t, r: Double(colour.0), g: Double(colour.1), b: Double(colour.2)) }

        mutating func set(_ region: Region, _ c: (Float, Float, Float)) {
            switch region {
            case .forehead: regions.0 = c
            case .leftCheek: regions.1 = c
            case .rightCheek: regions.2 = c
            }
            measured |= 1 << region.index
        }

        subscript(region: Region) -> PulseSignal.RGB? {
            guard measured & (1 << region.index) != 0 else { return nil }
            let c: (Float, Float, Float)
            switch region {
            case .forehead: c = regions.0
            case .leftCheek: c = regions.1
            case .rightCheek: c = regions.2
            }
            return .init(t: t, r: Double(c.0), g: Double(c.1), b: Double(c.2))
        }
    }

    public let configuration: Configuration
    private var samples: [Sample] = []
    private var lastEstimateAt: Double = -.infinity
    private var lastRefineAt: Double = -.infinity
    /// The newest window peaks, newest last (for agreement without regions, and the previous one for holding).
    private var recent: [Double] = []
    /// The newest window's reading, reported or not (nil until the window first fills, and after a gap).
    public private(set) var latest: Reading?
    /// What is reported now.
    public private(set) var current: Estimate?

    public init(configuration: Configuration = .init()) {
        self.configuration = configuration
    }

    /// Adds the mean skin colour of the face at `timeUs` (capture time, µs), without regions, and returns the
    /// estimate to report with this frame, if any. Samples that are not finite or not positive are ignored, and so are
    /// late ones: not later than the previous, by less than ``Configuration/maxGap``.
    public mutating func add(timeUs: Int64, r: Double, g: Double, b: Double) -> Estimate? {
        add(timeUs: timeUs, colour: (r, g, b), regions: [])
    }

    /// Adds the face's skin regions at `timeUs` (capture time, µs): the face's colour is their mean weighted by
    /// their pixels. A region that is not finite and positive in every channel and in its pixels, or a second one of
    /// a kind, is left out; a frame with none left is ignored, as is a late one.
    /// `geometry`, where the face is in the frame, gives the motion reference (``PulseMotion``); without it (or when
    /// it cannot give features), the windows this sample is in are read without one.
    ///
    /// `meshForehead`, the forehead outlined by the face mesh (a forehead region, ignored otherwise), is read instead
    /// of the forehead in `regions` by the windows of a moving face whose every sample carries one, when
    /// ``Configuration/meshForehead`` is set; otherwise it is not kept.
    public mutating func add(
        timeUs: Int64, regions: [RegionColour], geometry: PulseMotion.Geometry? = nil, meshForehead: RegionColour? = nil
    ) -> Estimate? {
        var kept: [RegionColour] = []
        for region in regions where Self.isUsable(region) {
            if !kept.contains(where: { $0.region == region.region }) { kept.append(region) }
        }
        guard let colour = Self.mean(kept) else { return current }
        var mesh: (forehead: RegionColour, colour: (Double, Double, Double))?
        // Kept only where it can be read (``Configuration/meshForehead``): otherwise no window would ever use it.
        if configuration.meshForehead, let forehead = meshForehead, forehead.region == .forehead, Self.isUsable(forehead),
            let colour = Self.mean(kept.filter { $0.region != .forehead } + [forehead])
        {
            mesh = (forehead, colour)
        }
        return add(timeUs: timeUs, colour: colour, regions: kept, motion: geometry?.features, mesh: mesh)
    }

    /// Whether a region's colour can be kept (``isStorable(_:)``) and its pixels are finite and positive.
    private static func isUsable(_ region: RegionColour) -> Bool {
        isStorable((region.r, region.g, region.b)) && region.pixels.isFinite && region.pixels > 0
    }

    /// Whether a colour is finite and positive in every channel as a 32-bit float too (how samples keep it).
    private static func isStorable(_ colour: (Double, Double, Double)) -> Bool {
        [colour.0, colour.1, colour.2].allSatisfy { Float($0).isFinite && Float($0) > 0 }
    }

    /// The mean of `regions` weighted by their pixels; nil when they weigh nothing (or overflow).
    private static func mean(_ regions: [RegionColour]) -> (Double, Double, Double)? {
        let weight = regions.reduce(0) { $0 + $1.pixels }
        guard weight > 0, weight.isFinite else { return nil }
        return (
            regions.reduce(0) { $0 + $1.r * ($1.pixels / weight) }, regions.reduce(0) { $0 + $1.g * ($1.pixels / weight) },
            regions.reduce(0) { $0 + $1.b * ($1.pixels / weight) }
        )
    }

    private mutating func add(
        timeUs: Int64, colour: (Double, Double, Double), regions: [RegionColour], motion: SIMD8<Float>? = nil,
        mesh: (forehead: RegionColour, colour: (Double, Double, Double))? = nil
    ) -> Estimate? {
        let t = Double(timeUs) / 1_000_000
        guard t.isFinite, Self.isStorable(colour) else { return current }
        if let last = samples.last {
            // A jump either way by more than maxGap starts again. Back, too: a capture time far ahead (validation
            // accepts up to a day, for skewed clocks) would otherwise make every later frame look late, and silence
            // the track until the clock caught up. A smaller step back is a late frame, ignored.
            if abs(t - last.t) > configuration.maxGap {
                restart()
            } else if t <= last.t {
                return current
            }
        }
        var sample = Sample(t: t, colour: colour)
        for region in regions { sample.set(region.region, (Float(region.r), Float(region.g), Float(region.b))) }
        if let motion { sample.motion = motion }
        if let mesh, Self.isStorable(mesh.colour) {
            sample.meshForehead = (Float(mesh.forehead.r), Float(mesh.forehead.g), Float(mesh.forehead.b))
            sample.meshColour = (Float(mesh.colour.0), Float(mesh.colour.1), Float(mesh.colour.2))
        }
        samples.append(sample)
        // Keep one window (and a little): older samples are no use.
        if let first = samples.first, t - first.t > configuration.window + 1 || samples.count > configuration.maxSamples {
            let cut = samples.firstIndex { t - $0.t <= configuration.window } ?? 0
            samples.removeFirst(max(cut, samples.count - configuration.maxSamples))
        }
        guard let first = samples.first, t - first.t >= min(configuration.window, configuration.firstWindow) * 0.98 else {
            return current
        }
        guard t - lastEstimateAt >= configuration.interval else {
            if current != nil, t - lastRefineAt >= configuration.refineInterval { refresh(until: t) }
            return current
        }
        lastEstimateAt = t
        lastRefineAt = t
        guard Double(samples.count) >= configuration.minSampleRate * min(configuration.window, t - first.t) else {
            // Too sparse to read the band: nothing to say about this window.
            forgetReadings()
            return nil
        }
        estimate(until: t)
        return current
    }

    private mutating func restart() {
        samples.removeAll(keepingCapacity: true)
        forgetReadings()
        lastEstimateAt = -.infinity
        lastRefineAt = -.infinity
    }

    /// Between two windows, while reporting: the reported rate read again from the newest samples, near the newest
    /// window's peak. Only the newest seconds the refinement reads (``refineSeconds(_:)``) are projected (and the
    /// overlap POS and PBV need before them): about a twentieth of a window's cost.
    private mutating func refresh(until t: Double) {
        lastRefineAt = t
        guard let reading = latest, var estimate = current, configuration.refineWindow > 0 else { return }
        let overlap = Double(PulseSignal.overlapLength(rate: configuration.rate) ?? 0) / configuration.rate
        let seconds = refineSeconds(reading.bpm / 60) + overlap + 2 / configuration.rate
        let start = samples.lastIndex { t - $0.t > seconds }.map { $0 + 1 } ?? samples.startIndex
        let slice = Array(samples[start...])
        // A face the newest window found still is read still until the next window (the check costs as much again).
        let regression = reading.motionBPM == nil ? nil : motionRegression(slice)
        let mesh = reading.meshForehead && readsMesh(slice, regression: regression)
        let grid = reading.regionWeights.flatMap { weighted(slice, regression: regression, weights: $0) }
            ?? uniform(slice, regression: regression, mesh: mesh)
        guard let refined = refine(project(grid, method(moving: reading.motionBPM != nil)), around: reading.bpm / 60) else { return }
        estimate.bpm = refined * 60
        current = estimate
    }

    /// No reading, nothing reported, no peak to hold on to: what a window without a usable estimate leaves.
    private mutating func forgetReadings() {
        recent.removeAll()
        latest = nil
        current = nil
    }

    /// `series`' colours (the face's, or `region`'s where measured) on the uniform grid, with what the face's motion
    /// explains taken out (``PulseMotion``) when configured and every sample carries the face's geometry.
    /// `regression`, when given, was made from exactly `series` (``motionRegression(_:)``); a region measured on
    /// fewer of them gets its own (none when the face's is none).
    private func uniform(
        _ series: [Sample], region: Region? = nil, regression: PulseMotion.Regression?, mesh: Bool = false
    ) -> [PulseSignal.RGB] {
        let kept = region.map { region in series.filter { $0.colour(region, mesh: mesh) != nil } } ?? series
        let colours = region.map { region in kept.compactMap { $0.colour(region, mesh: mesh) } } ?? kept.map { $0.rgb(mesh: mesh) }
        let grid = PulseSignal.resample(colours, rate: configuration.rate)
        let own = kept.count == series.count || regression == nil ? regression : motionRegression(kept)
        return own.map { $0.clean(grid) } ?? grid
    }

    /// `series`' regions on the uniform grid, each with what the face's motion explains taken out (`regression`, made
    /// from `series`), combined with `weights` (``PulseSignal/combine(_:weights:)``); nil when a sample lacks a region.
    private func weighted(_ series: [Sample], regression: PulseMotion.Regression?, weights: [Double]) -> [PulseSignal.RGB]? {
        guard series.allSatisfy(\.measuredEveryRegion) else { return nil }
        return PulseSignal.combine(Region.allCases.map { uniform(series, region: $0, regression: regression) }, weights: weights)
    }

    /// Whether `series` is read on the mesh's forehead: configured, the face moves (`regression`, the series' motion
    /// regression, is not nil), and every sample carries one.
    private func readsMesh(_ series: [Sample], regression: PulseMotion.Regression?) -> Bool {
        configuration.meshForehead && regression != nil && series.allSatisfy(\.hasMesh)
    }

    /// The motion regression of `series` (nil: not configured, or a sample without the face's geometry).
    private func motionRegression(_ series: [Sample]) -> PulseMotion.Regression? {
        motionRegressors(series).flatMap { PulseMotion.Regression($0, ridge: configuration.motionRidge) }
    }

    /// The motion regressors (``PulseMotion/regressors(_:rate:band:floor:)``) of `series`' features on the uniform
    /// grid; nil when not configured or a sample has no geometry.
    private func motionRegressors(_ series: [Sample]) -> PulseMotion.Regressors? {
        guard configuration.motionReference, series.count >= 2, series.allSatisfy(\.hasMotion) else { return nil }
        let times = series.map(\.t)
        let features = (0..<PulseMotion.featureCount).map { feature in
            PulseSignal.resample(times: times, rate: configuration.rate) { _, j, k, w in
                let (a, b) = (Double(series[j].motion[feature]), Double(series[k].motion[feature]))
                return a + (b - a) * w
            }
        }
        return PulseMotion.regressors(
            features, rate: configuration.rate, band: band, floor: configuration.motionFloor, velocity: configuration.motionVelocity)
    }

    private var band: ClosedRange<Double> { (configuration.band.lowerBound / 60)...(configuration.band.upperBound / 60) }

    /// The projection a window is read with: ``Configuration/movingMethod`` for a moving face when set.
    private func method(moving: Bool) -> Method {
        moving ? configuration.movingMethod ?? configuration.method : configuration.method
    }

    /// The configured projection of uniformly sampled colours.
    private func project(_ grid: [PulseSignal.RGB], _ method: Method) -> [Double] {
        switch method {
        case .pos: PulseSignal.pos(grid, rate: configuration.rate)
        case .chrom: PulseSignal.chrom(grid, rate: configuration.rate, band: band)
        case .pbv: PulseSignal.pbv(grid, rate: configuration.rate)
        }
    }

    /// The peak (Hz) and SNR (dB) of `signal`'s tilted spectrum, every `resolution` Hz.
    private func peak(of signal: [Double], resolution: Double = 0.01) -> (frequency: Double, snr: Double)? {
        guard let spectrum = PulseSignal.spectrum(signal, rate: configuration.rate, band: band, resolution: resolution) else { return nil }
        return PulseSignal.peak(PulseSignal.tilted(spectrum, exponent: configuration.whitening), band: band)
    }

    /// The peak (Hz) of `signal`'s newest ``Configuration/refineWindow`` seconds near `frequency` (Hz), as configured:
    /// what a window estimate reports, and what is read again between windows.
    private func refine(_ signal: [Double], around frequency: Double) -> Double? {
        PulseSignal.refine(
            signal, rate: configuration.rate, around: frequency, seconds: refineSeconds(frequency),
            span: configuration.refineSpan / 60, peak: configuration.refinePeak)
    }

    /// Seconds the refinement reads near `frequency` (Hz): ``Configuration/refineCycles`` beats when they take less
    /// than ``Configuration/refineWindow`` (at least 3 s); otherwise, or when `frequency` is not a positive finite
    /// number, ``Configuration/refineWindow`` (0: no refinement).
    func refineSeconds(_ frequency: Double) -> Double {
        guard configuration.refineWindow > 0, configuration.refineCycles > 0, frequency > 0, frequency.isFinite else {
            return configuration.refineWindow
        }
        return min(configuration.refineWindow, max(3, configuration.refineCycles / frequency))
    }

    private mutating func estimate(until t: Double) {
        let window = samples.filter { t - $0.t <= configuration.window }
        let span = min(configuration.window, t - (window.first?.t ?? t))
        let regression = motionRegression(window)
        let mesh = readsMesh(window, regression: regression)
        let method = method(moving: regression != nil)
        // Each region's own colours and signal, for those with enough samples across the whole window.
        var regionGrids: [Region: [PulseSignal.RGB]] = [:]
        var regionSignals: [Region: [Double]] = [:]
        for region in Region.allCases {
            let series = window.compactMap { $0.colour(region, mesh: mesh) }
            guard Double(series.count) >= configuration.minSampleRate * span, let first = series.first,
                let last = series.last, last.t - first.t >= span * 0.98
            else { continue }
            let grid = uniform(window, region: region, regression: regression, mesh: mesh)
            regionGrids[region] = grid
            regionSignals[region] = project(grid, method)
        }
        var weights: [Double]?
        var grid: [PulseSignal.RGB]?
        if configuration.regionWeights == .inversePower, !mesh, window.allSatisfy(\.measuredEveryRegion) {
            let signals = Region.allCases.compactMap { regionSignals[$0] }
            let grids = Region.allCases.compactMap { regionGrids[$0] }
            if signals.count == Region.allCases.count, let w = PulseSignal.inverseVarianceWeights(signals) {
                grid = PulseSignal.combine(grids, weights: w)
                weights = grid == nil ? nil : w
            }
        }
        let faceGrid = grid ?? uniform(window, regression: regression, mesh: mesh)
        let signal = project(faceGrid, method)
        guard let peak = peak(of: signal) else {
            forgetReadings()
            return
        }
        let signature = method == .pbv ? peak : self.peak(of: PulseSignal.pbv(faceGrid, rate: configuration.rate))
        // Each region's own peak: on a grid half as fine (1.2 bpm, against an agreement of 3), which halves their cost.
        var regions = 0
        var agreeing = 0
        for region in Region.allCases {
            guard let own = regionSignals[region].flatMap({ self.peak(of: $0, resolution: 0.02) }) else { continue }
            regions += 1
            if abs(own.frequency - peak.frequency) * 60 <= configuration.maxRegionSpread { agreeing += 1 }
        }
        let refined = refine(signal, around: peak.frequency)
        let angle = PulseSignal.signatureAngle(faceGrid, rate: configuration.rate, frequency: peak.frequency) ?? 90
        var reading = Reading(
            bpm: peak.frequency * 60, refinedBPM: (refined ?? peak.frequency) * 60, snr: peak.snr,
            signatureBPM: signature.map { $0.frequency * 60 }, signatureSNR: signature?.snr ?? -.infinity, signatureAngle: angle,
            regions: regions, regionsAgreeing: agreeing)
        if span < configuration.window * 0.98 { reading.seconds = span }
        reading.motionBPM = regression?.motion.map { $0 * 60 }
        reading.motionAtPeak = regression.map { $0.spectrum.amplitude(near: peak.frequency, width: 1 / max(span, 1)) }
        reading.meshForehead = mesh
        reading.regionWeights = weights
        latest = reading
        recent.append(reading.bpm)
        let keep = max(2, configuration.agreement)  // at least the previous peak, for holding
        if recent.count > keep { recent.removeFirst(recent.count - keep) }
        current = Self.decide(reading, recent: recent, reported: current, configuration: configuration)
    }

    /// The gate (see the type's documentation): what to report after `reading`, given the newest window peaks
    /// (`recent`, newest last, `reading`'s among them) and what was reported before.
    static func decide(_ reading: Reading, recent: [Double], reported: Estimate?, configuration: Configuration) -> Estimate? {
        let signed = reading.signatureBPM.map { abs($0 - reading.bpm) <= configuration.maxSpread } ?? false
        let agreeing = recent.suffix(max(1, configuration.agreement))
        let corroborated = reading.regions >= 2
            ? reading.regionsAgreeing >= 2
            : agreeing.count >= max(1, configuration.agreement) && (agreeing.max()! - agreeing.min()!) <= configuration.maxSpread
        // A peak on the face's own rhythmic motion (or its harmonic), or where the face moves much, is worth less: the
        // motion's colour change that the regression could not explain sits exactly there.
        let onMotion = reading.motionBPM.map { motion in
            [1.0, 2.0].contains { abs(reading.bpm - $0 * motion) <= configuration.motionSpread }
        } ?? false || (configuration.motionPeakFloor > 0 && (reading.motionAtPeak ?? 0) >= configuration.motionPeakFloor)
        let snr = reading.signatureSNR - (onMotion ? configuration.motionPenalty : 0)
        let starts = signed && corroborated && snr >= configuration.minSNR
            && reading.signatureAngle <= configuration.maxSignatureAngle
        // Holding compares window peaks: the previous window's (reported, since `reported` is set) with this one's.
        let previous = recent.count >= 2 ? recent[recent.count - 2] : nil
        let holds = reported != nil && signed && snr >= configuration.holdSNR
            && previous.map { abs(reading.bpm - $0) <= configuration.maxSpread } ?? false
        guard starts || holds else { return nil }
        return Estimate(bpm: reading.refinedBPM, snr: snr, window: reading.seconds ?? configuration.window)
    }
}
