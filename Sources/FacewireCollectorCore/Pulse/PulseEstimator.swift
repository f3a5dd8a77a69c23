/// A heart-rate estimate for one track, from the skin colour of its face over time (remote photoplethysmography).
///
/// Samples come in capture-time order with whatever gaps drops made; the estimator never assumes a frame rate. It
/// keeps the newest ``Configuration/window`` seconds, resamples them on a uniform grid, projects them with POS (or
/// CHROM), and reads the strongest frequency in the heart-rate band with its SNR. A gap longer than
/// ``Configuration/maxGap`` starts the series again (a window never spans one). An estimate is made at most every
/// ``Configuration/interval`` once the window is full; the reported rate is the median of the newest three, and it is
/// reported only while the newest SNR reaches ``Configuration/minSNR`` and the three agree within
/// ``Configuration/maxSpread``: otherwise "not yet" (nil).
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
        /// The SNR (dB) an estimate needs to be reported.
        public var minSNR: Double = 3
        /// How far apart (bpm) the newest three window estimates may be for the rate to be reported: a pulse holds its
        /// rate from window to window, noise peaks wander.
        public var maxSpread: Double = 6
        /// Most samples kept (a window at 200 frames/s).
        public var maxSamples = 2048

        public init() {}
    }

    /// A reported heart rate.
    public struct Estimate: Sendable, Equatable {
        /// Beats per minute: the median of the newest three window estimates.
        public var bpm: Double
        /// The newest window's SNR (dB).
        public var snr: Double
        /// Seconds of samples the newest estimate used.
        public var window: Double
    }

    public let configuration: Configuration
    private var samples: [PulseSignal.RGB] = []
    private var lastEstimateAt: Double = -.infinity
    private var recent: [Double] = []
    /// The newest estimate made, reported or not (nil until the window first fills, and after a gap).
    public private(set) var latest: (bpm: Double, snr: Double)?

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
        estimate(until: t)
        return current
    }

    /// What is reported now: the median of the newest estimates while the newest is confident.
    public var current: Estimate? {
        guard let latest, latest.snr >= configuration.minSNR, recent.count == 3 else { return nil }
        let sorted = recent.sorted()
        guard sorted[2] - sorted[0] <= configuration.maxSpread else { return nil }
        return Estimate(bpm: sorted[sorted.count / 2], snr: latest.snr, window: configuration.window)
    }

    private mutating func restart() {
        samples.removeAll(keepingCapacity: true)
        recent.removeAll()
        latest = nil
        lastEstimateAt = -.infinity
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
        guard let peak = PulseSignal.peak(signal, rate: configuration.rate, band: band) else {
            latest = nil
            return
        }
        latest = (peak.frequency * 60, peak.snr)
        recent.append(peak.frequency * 60)
        if recent.count > 3 { recent.removeFirst(recent.count - 3) }
    }
}
