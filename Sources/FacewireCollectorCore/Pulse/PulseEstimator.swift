/// A heart-rate estimate for one track, from the skin colour of its face over time (remote photoplethysmography).
///
/// Samples come in capture-time order with whatever gaps drops made; the estimator never assumes a frame rate. It
/// keeps the newest ``Configuration/window`` seconds, resamples them on a uniform grid, projects them with POS (or
/// CHROM), and reads the strongest frequency in the heart-rate band with its SNR. A gap longer than
/// ``Configuration/maxGap`` starts the series again (a window never spans one). An estimate is made every
/// ``Configuration/interval`` once the window is full.
///
/// What is reported is gated, because a face's own motion, expressions and lighting put far more colour change into
/// the heart-rate band than its pulse does (measured: about ten times as much on talking-head clips), and the
/// strongest peak is then not a heart rate at all. Most of that change is slow, so the spectrum is first tilted
/// towards high frequencies (``Configuration/whitening``, ``PulseSignal/tilted(_:exponent:)``): peak and SNR are
/// read on the tilted spectrum. Then:
/// - **Start:** the newest window's SNR reaches ``Configuration/minSNR``, its colour change at the peak points along
///   the blood-volume signature (within ``Configuration/maxSignatureAngle``), and the newest
///   ``Configuration/agreement`` window peaks lie within ``Configuration/maxSpread``.
/// - **Hold:** once reporting, a window whose SNR still reaches ``Configuration/holdSNR``, whose peak is within
///   ``Configuration/maxSpread`` of the previous window's peak and still along the signature, keeps it going.
/// Otherwise "not yet" (nil). The reported rate is the newest ``Configuration/refineWindow`` seconds' peak within
/// ``Configuration/maxSpread`` of the window's peak (``PulseSignal/refine(_:rate:around:seconds:span:resolution:)``):
/// a 10 s window's own peak is its mean rate, some 5 s late when the rate changes.
///
/// Pure: no clock but the samples' own times. Bounded: at most ``Configuration/maxSamples`` samples.
public struct PulseEstimator: Sendable {
    public enum Method: String, Sendable, CaseIterable {
        case pos, chrom
    }

    public struct Configuration: Sendable, Equatable {
        public var method: Method = .pos
        /// Seconds of samples one estimate uses.
        public var window: Double = 10
        /// The uniform grid the samples are resampled on (Hz).
        public var rate: Double = 30
        /// Heart rates considered (bpm).
        public var band: ClosedRange<Double> = 40...180
        /// A longer gap between two samples (s) starts the series again.
        public var maxGap: Double = 1.0
        /// Seconds between two estimates.
        public var interval: Double = 1
        /// The tilt of the spectrum before its peak and SNR are read: power times frequency to this exponent (0: none;
        /// 1 is 3 dB per octave). Chosen with ``minSNR`` and ``holdSNR`` on synthetic clips (BENCHMARKS.md, "Heart
        /// rate"): talking heads' own colour change falls by about 5 dB per octave across the band; 1.5 found a few
        /// more pulses there but lost slow ones under plain camera noise (with a 3 dB start, 50 bpm was reported on 41 %
        /// of the frames of the unit tests' clean face), which 1 keeps.
        public var whitening: Double = 1
        /// The SNR (dB, on the tilted spectrum) a window needs to start reporting.
        public var minSNR: Double = 2.5
        /// The SNR (dB, on the tilted spectrum) a window needs to keep reporting the rate it continues.
        public var holdSNR: Double = -3
        /// Seconds of the newest pulse signal whose peak near the window's is the reported rate (0: the window's own).
        public var refineWindow: Double = 5
        /// How many newest window peaks must agree to start reporting.
        public var agreement = 3
        /// How far apart (bpm) those peaks may be, how far a held window's peak may be from the previous one, and how
        /// far from the window's peak the refined rate is looked for.
        public var maxSpread: Double = 6
        /// How far (degrees) the colour change at the peak may point from the blood-volume signature.
        public var maxSignatureAngle: Double = 35
        /// Fewest samples per second of window for an estimate: below twice the band's top (3 Hz) the band cannot be
        /// read, and it bounds the work a peer with absurd capture times can cause (one estimate per 8 samples).
        public var minSampleRate: Double = 8
        /// Most samples kept (a window at 200 frames/s).
        public var maxSamples = 2048

        public init() {}
    }

    /// A reported heart rate.
    public struct Estimate: Sendable, Equatable {
        /// Beats per minute: the peak of the newest ``Configuration/refineWindow`` seconds near the window's peak.
        public var bpm: Double
        /// The newest window's SNR (dB).
        public var snr: Double
        /// Seconds of samples the newest estimate used.
        public var window: Double
    }

    /// One window's reading, reported or not.
    public struct Reading: Sendable, Equatable {
        /// The window's peak (what agreement and holding compare).
        public var bpm: Double
        /// The rate to report: the newest seconds' peak near `bpm` (`bpm` itself when that could not be read).
        public var refinedBPM: Double
        public var snr: Double
        /// Degrees from the blood-volume signature (90 when it could not be measured).
        public var signatureAngle: Double
    }

    public let configuration: Configuration
    private var samples: [PulseSignal.RGB] = []
    private var lastEstimateAt: Double = -.infinity
    private var recent: [Double] = []
    /// The newest window's reading, reported or not (nil until the window first fills, and after a gap).
    public private(set) var latest: Reading?
    /// What is reported now.
    public private(set) var current: Estimate?

    public init(configuration: Configuration = .init()) {
        self.configuration = configuration
    }

    /// Adds the mean skin colour of the face at `timeUs` (capture time, µs) and returns the estimate to report with
    /// this frame, if any. Samples that are not finite, not positive, or not later than the previous one are ignored.
    public mutating func add(timeUs: Int64, r: Double, g: Double, b: Double) -> Estimate? {
        let t = Double(timeUs) / 1_000_000
        guard t.isFinite, [r, g, b].allSatisfy({ $0.isFinite && $0 > 0 }) else { return current }
        if let last = samples.last {
            guard t > last.t else { return current }
            if t - last.t > configuration.maxGap { restart() }
        }
        samples.append(.init(t: t, r: r, g: g, b: b))
        // Keep one window (and a little): older samples are no use.
        if let first = samples.first, t - first.t > configuration.window + 1 || samples.count > configuration.maxSamples {
            let cut = samples.firstIndex { t - $0.t <= configuration.window } ?? 0
            samples.removeFirst(max(cut, samples.count - configuration.maxSamples))
        }
        guard let first = samples.first, t - first.t >= configuration.window * 0.98, t - lastEstimateAt >= configuration.interval else {
            return current
        }
        lastEstimateAt = t
        guard Double(samples.count) >= configuration.minSampleRate * configuration.window else {
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
    }

    /// No reading, nothing reported, no peaks to agree with: what a window without a usable estimate leaves.
    private mutating func forgetReadings() {
        recent.removeAll()
        latest = nil
        current = nil
    }

    private mutating func estimate(until t: Double) {
        let window = samples.filter { t - $0.t <= configuration.window }
        let grid = PulseSignal.resample(window, rate: configuration.rate)
        let band = (configuration.band.lowerBound / 60)...(configuration.band.upperBound / 60)
        let signal: [Double]
        switch configuration.method {
        case .pos: signal = PulseSignal.pos(grid, rate: configuration.rate)
        case .chrom: signal = PulseSignal.chrom(grid, rate: configuration.rate, band: band)
        }
        guard let spectrum = PulseSignal.spectrum(signal, rate: configuration.rate, band: band),
            let peak = PulseSignal.peak(PulseSignal.tilted(spectrum, exponent: configuration.whitening), band: band)
        else {
            forgetReadings()
            return
        }
        let angle = PulseSignal.signatureAngle(grid, rate: configuration.rate, frequency: peak.frequency) ?? 90
        let refined = PulseSignal.refine(
            signal, rate: configuration.rate, around: peak.frequency, seconds: configuration.refineWindow,
            span: configuration.maxSpread / 60)
        let reading = Reading(
            bpm: peak.frequency * 60, refinedBPM: (refined ?? peak.frequency) * 60, snr: peak.snr, signatureAngle: angle)
        latest = reading
        recent.append(reading.bpm)
        let keep = max(2, configuration.agreement)  // at least the previous peak, for holding
        if recent.count > keep { recent.removeFirst(recent.count - keep) }
        current = Self.decide(reading, recent: recent, reported: current, configuration: configuration)
    }

    /// The gate (see the type's documentation): what to report after `reading`, given the newest window peaks
    /// (`recent`, newest last, `reading` among them) and what was reported before.
    static func decide(_ reading: Reading, recent: [Double], reported: Estimate?, configuration: Configuration) -> Estimate? {
        let along = reading.signatureAngle <= configuration.maxSignatureAngle
        let agreeing = recent.suffix(max(1, configuration.agreement))
        let starts = reading.snr >= configuration.minSNR && along && agreeing.count >= max(1, configuration.agreement)
            && (agreeing.max()! - agreeing.min()!) <= configuration.maxSpread
        // Holding compares window peaks: the previous window's (reported, since `reported` is set) with this one's.
        let previous = recent.count >= 2 ? recent[recent.count - 2] : nil
        let holds = reported != nil && previous.map {
            reading.snr >= configuration.holdSNR && along && abs(reading.bpm - $0) <= configuration.maxSpread
        } ?? false
        guard starts || holds else { return nil }
        return Estimate(bpm: reading.refinedBPM, snr: reading.snr, window: configuration.window)
    }
}
