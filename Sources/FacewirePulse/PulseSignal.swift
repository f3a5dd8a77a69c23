import Foundation

/// The signal processing of the pulse estimate, pure functions on arrays: resampling on time, the POS and CHROM
/// projections of remote photoplethysmography, and the spectral peak with its signal-to-noise ratio.
///
/// - POS: W. Wang, A. C. den Brinker, S. Stuijk, G. de Haan, "Algorithmic Principles of Remote PPG", IEEE TBME 64(7),
///   2017 (Algorithm 1: temporal normalisation over 1.6 s windows, projection on the plane orthogonal to skin tone,
///   alpha tuning, overlap-add).
/// - CHROM: G. de Haan, V. Jeanne, "Robust Pulse Rate From Chrominance-Based rPPG", IEEE TBME 60(10), 2013
///   (Xs = 3R − 2G, Ys = 1.5R + G − 1.5B on normalised channels, band-passed, S = Xf − α·Yf).
/// - PBV: G. de Haan, A. van Leest, "Improved motion robustness of remote-PPG by using the blood volume pulse
///   signature", Physiol. Meas. 35(9), 2014 (the projection that passes the signature and suppresses colour change
///   along any other direction, from the channels' covariance), over the same 1.6 s overlap-added windows as POS.
/// - SNR: de Haan & Jeanne 2013, eq. 9: power within ±0.1 Hz of the peak and ±0.2 Hz of its first harmonic over the
///   rest of the band, in dB, counting the band only; the neighbourhood is widened to the Hann window's main lobe
///   (±2/T) when that is wider.
public enum PulseSignal {
    /// One colour sample: the mean R, G, B of the skin at `t` seconds.
    public struct RGB: Sendable, Equatable {
        public var t: Double
        public var r: Double
        public var g: Double
        public var b: Double

        public init(t: Double, r: Double, g: Double, b: Double) {
            self.t = t
            self.r = r
            self.g = g
            self.b = b
        }
    }

    /// `samples` (increasing `t`) linearly interpolated on a uniform grid of `rate` Hz from the first sample's time
    /// to the last's. Empty when fewer than two samples or a non-positive rate.
    public static func resample(_ samples: [RGB], rate: Double) -> [RGB] {
        resample(times: samples.map(\.t), rate: rate) { t, j, k, w in
            let (a, b) = (samples[j], samples[k])
            return RGB(t: t, r: a.r + (b.r - a.r) * w, g: a.g + (b.g - a.g) * w, b: a.b + (b.b - a.b) * w)
        }
    }

    /// The uniform grid of `rate` Hz from `times`' first to its last (increasing), each point made by `value` from
    /// its time, the two samples around it (indices into `times`) and the weight of the second: how colours and the
    /// face's motion features are resampled alike. Empty when fewer than two times or a non-positive rate.
    static func resample<Value>(times: [Double], rate: Double, _ value: (Double, Int, Int, Double) -> Value) -> [Value] {
        guard times.count >= 2, rate > 0, rate.isFinite, let first = times.first, let last = times.last, last > first else {
            return []
        }
        let count = Int(((last - first) * rate).rounded(.down)) + 1
        var out: [Value] = []
        out.reserveCapacity(count)
        var j = 0
        for i in 0..<count {
            let t = first + Double(i) / rate
            while j + 1 < times.count - 1 && times[j + 1] <= t { j += 1 }
            let k = min(j + 1, times.count - 1)
            let span = times[k] - times[j]
            let w = span > 0 ? min(1, max(0, (t - times[j]) / span)) : 0
            out.append(value(t, j, k, w))
        }
        return out
    }

    /// The POS pulse signal of uniformly sampled colours (`rate` Hz), by overlap-adding 1.6 s windows.
    public static func pos(_ rgb: [RGB], rate: Double) -> [Double] {
        let n = rgb.count
        guard let l = overlapLength(rate: rate), n >= l else { return [] }
        var h = [Double](repeating: 0, count: n)
        // One pair of buffers for every window (an estimate runs this for the face and each region).
        var s1 = [Double](repeating: 0, count: l)
        var s2 = [Double](repeating: 0, count: l)
        for start in 0...(n - l) {
            let (mr, mg, mb) = means(rgb, start..<(start + l))
            guard mr > 0, mg > 0, mb > 0 else { continue }
            var (sum1, sum2) = (0.0, 0.0)
            for k in 0..<l {
                let c = rgb[start + k]
                let (r, g, b) = (c.r / mr, c.g / mg, c.b / mb)
                s1[k] = g - b
                s2[k] = -2 * r + g + b
                sum1 += s1[k]
                sum2 += s2[k]
            }
            let (mean1, mean2) = (sum1 / Double(l), sum2 / Double(l))
            var (v1, v2) = (0.0, 0.0)
            for k in 0..<l {
                v1 += (s1[k] - mean1) * (s1[k] - mean1)
                v2 += (s2[k] - mean2) * (s2[k] - mean2)
            }
            let alpha = v2 > 0 ? (v1 / v2).squareRoot() : 0
            // p = s1 + alpha s2, minus its mean.
            let mean = mean1 + alpha * mean2
            for k in 0..<l { h[start + k] += s1[k] + alpha * s2[k] - mean }
        }
        return h
    }

    /// The samples in one of POS's and PBV's overlap-added windows (1.6 s at `rate` Hz, at least 2; the rate capped
    /// at 1000 Hz so the count cannot trap); nil for a rate that is not positive and finite.
    static func overlapLength(rate: Double) -> Int? {
        guard rate > 0, rate.isFinite else { return nil }
        return max(2, Int((1.6 * min(rate, 1000)).rounded()))
    }

    /// The mean R, G and B of `rgb[range]` (a non-empty range).
    static func means(_ rgb: [RGB], _ range: Range<Int>) -> (r: Double, g: Double, b: Double) {
        var (r, g, b) = (0.0, 0.0, 0.0)
        for k in range {
            r += rgb[k].r
            g += rgb[k].g
            b += rgb[k].b
        }
        let count = Double(range.count)
        return (r / count, g / count, b / count)
    }

    /// The CHROM pulse signal of uniformly sampled colours (`rate` Hz), band-passed to `band` (Hz).
    public static func chrom(_ rgb: [RGB], rate: Double, band: ClosedRange<Double>) -> [Double] {
        guard rgb.count >= 4 else { return [] }
        let (mr, mg, mb) = means(rgb, rgb.indices)
        guard mr > 0, mg > 0, mb > 0 else { return [] }
        let xs = rgb.map { 3 * $0.r / mr - 2 * $0.g / mg }
        let ys = rgb.map { 1.5 * $0.r / mr + $0.g / mg - 1.5 * $0.b / mb }
        let xf = bandPass(xs, rate: rate, band: band)
        let yf = bandPass(ys, rate: rate, band: band)
        let dy = standardDeviation(yf)
        let alpha = dy > 0 ? standardDeviation(xf) / dy : 0
        return zip(xf, yf).map { $0 - alpha * $1 }
    }

    /// The PBV pulse signal of uniformly sampled colours (`rate` Hz), by overlap-adding 1.6 s windows: in each, the
    /// channels normalised by their means (minus 1) are projected on `w = Q⁻¹ s / (sᵀ Q⁻¹ s)`, with `Q` their
    /// covariance and `s` the blood-volume signature. Of all projections that pass a change along `s` unchanged, this
    /// one has the least power: colour change along other directions (motion, expressions, light) is cancelled as far
    /// as the window's own statistics allow. A window that is flat or degenerate adds nothing.
    public static func pbv(_ rgb: [RGB], rate: Double) -> [Double] {
        let n = rgb.count
        guard let l = overlapLength(rate: rate), n >= l else { return [] }
        let s = bloodVolumeSignature
        var h = [Double](repeating: 0, count: n)
        var c = [(Double, Double, Double)](repeating: (0, 0, 0), count: l)
        for start in 0...(n - l) {
            let (mr, mg, mb) = means(rgb, start..<(start + l))
            guard mr > 0, mg > 0, mb > 0 else { continue }
            // Q, symmetric: (a b c / b d e / c e f).
            var (a, b, cc, d, e, f) = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
            for (k, x) in rgb[start..<(start + l)].enumerated() {
                let v = (x.r / mr - 1, x.g / mg - 1, x.b / mb - 1)
                c[k] = v
                a += v.0 * v.0
                b += v.0 * v.1
                cc += v.0 * v.2
                d += v.1 * v.1
                e += v.1 * v.2
                f += v.2 * v.2
            }
            // A little ridge, relative to the window's own power, keeps Q invertible when the colour moves in a plane.
            let ridge = 1e-9 * (a + d + f)
            a += ridge
            d += ridge
            f += ridge
            // w = Q⁻¹ s by the adjugate (Q is 3 × 3 and symmetric).
            let (i00, i01, i02) = (d * f - e * e, cc * e - b * f, b * e - cc * d)
            let (i11, i12, i22) = (a * f - cc * cc, b * cc - a * e, a * d - b * b)
            let det = a * i00 + b * i01 + cc * i02
            guard det > 0, det.isFinite else { continue }
            let w = (
                (i00 * s.r + i01 * s.g + i02 * s.b) / det, (i01 * s.r + i11 * s.g + i12 * s.b) / det,
                (i02 * s.r + i12 * s.g + i22 * s.b) / det
            )
            let gain = s.r * w.0 + s.g * w.1 + s.b * w.2
            guard gain > 0, gain.isFinite else { continue }
            var mean = 0.0
            for k in 0..<l { mean += (c[k].0 * w.0 + c[k].1 * w.1 + c[k].2 * w.2) / gain }
            mean /= Double(l)
            for k in 0..<l { h[start + k] += (c[k].0 * w.0 + c[k].1 * w.1 + c[k].2 * w.2) / gain - mean }
        }
        return h
    }

    /// `x` with only the frequencies in `band` (Hz) kept: its DFT zeroed outside the band (a brick-wall filter on the
    /// window, after removing the mean and a linear trend).
    public static func bandPass(_ x: [Double], rate: Double, band: ClosedRange<Double>) -> [Double] {
        let n = x.count
        guard n >= 4 else { return x }
        var out = [Double](repeating: 0, count: n)
        for bin in bins(x, rate: rate, band: band) {
            for i in 0..<n {
                out[i] += bin.re * cos(bin.w * Double(i)) - bin.im * sin(bin.w * Double(i))
            }
        }
        return out
    }

    /// The DFT bins of `x` (mean and linear trend removed) in `band` (Hz): each one's angular frequency (radians per
    /// sample), its coefficient, and the amplitude of the sinusoid it stands for. Empty for fewer than 4 samples or a
    /// rate that is not positive and finite.
    static func bins(_ x: [Double], rate: Double, band: ClosedRange<Double>) -> [(w: Double, re: Double, im: Double, amplitude: Double)] {
        let n = x.count
        guard n >= 4, rate > 0, rate.isFinite else { return [] }
        let detrended = detrend(x)
        let kMin = max(1, Int((max(0, band.lowerBound) * Double(n) / rate).rounded(.up)))
        let kMax = min(n / 2, Int((min(rate, band.upperBound) * Double(n) / rate).rounded(.down)))
        guard kMin <= kMax else { return [] }
        return (kMin...kMax).map { k in
            let w = 2 * Double.pi * Double(k) / Double(n)
            let (re, im) = dft(detrended, at: w)
            let scale = (k == n - k ? 1.0 : 2.0) / Double(n)
            return (w, re * scale, im * scale, scale * (re * re + im * im).squareRoot())
        }
    }

    /// A power spectrum on a uniform frequency grid.
    public struct Spectrum: Sendable, Equatable {
        public var frequencies: [Double]
        public var power: [Double]
        /// The signal's length in seconds (what sets the width of a peak).
        public var seconds: Double
    }

    /// The Hann-windowed power spectrum of `x` (sampled at `rate` Hz, linear trend removed) over `band` (up to the
    /// Nyquist frequency), every `resolution` Hz, normalised to sum 1 (so spectra of windows can be averaged with
    /// equal weight). Nil for a signal too short or flat, or a grid of more than ``maxGridPoints`` frequencies.
    public static func spectrum(_ x: [Double], rate: Double, band: ClosedRange<Double>, resolution: Double = 0.01) -> Spectrum? {
        let n = x.count
        guard n >= 8, rate > 0, rate.isFinite else { return nil }
        let upper = min(rate / 2, band.upperBound)
        let lower = band.lowerBound
        guard lower > 0, upper >= lower, let frequencies = grid(from: lower, span: upper - lower, every: resolution) else { return nil }
        let windowed = zip(detrend(x), hann(n)).map(*)
        var power = frequencies.map { f -> Double in
            let (re, im) = dft(windowed, at: 2 * Double.pi * f / rate)
            return re * re + im * im
        }
        let total = power.reduce(0, +)
        guard total > 0, total.isFinite else { return nil }
        for i in power.indices { power[i] /= total }
        return Spectrum(frequencies: frequencies, power: power, seconds: Double(n) / rate)
    }

    /// The strongest frequency of `spectrum` in `band` (Hz) with its SNR (dB). Nil when the band holds no power.
    public static func peak(_ spectrum: Spectrum, band: ClosedRange<Double>) -> (frequency: Double, snr: Double)? {
        let frequencies = spectrum.frequencies
        let power = spectrum.power
        var best: Int?
        for (i, f) in frequencies.enumerated() where band.contains(f) {
            if best == nil || power[i] > power[best!] { best = i }
        }
        guard let best, power[best] > 0 else { return nil }
        let f0 = frequencies[best]
        // The signal's neighbourhood: de Haan's ±0.1 Hz, widened to the Hann window's main lobe (±2/T) for short windows.
        let halfWidth = max(0.1, 2 / max(spectrum.seconds, 1e-9))
        var signal = 0.0
        var noise = 0.0
        // Only the band counts, on both sides: power past its top (a neighbourhood or harmonic that reaches out of it)
        // would add to the signal and never to the noise, and a spectrum tilted towards high frequencies has most there.
        for (i, f) in frequencies.enumerated() where band.contains(f) {
            if abs(f - f0) <= halfWidth || abs(f - 2 * f0) <= 2 * halfWidth { signal += power[i] } else { noise += power[i] }
        }
        guard signal > 0 else { return nil }
        let snr = noise > 0 ? 10 * log10(signal / noise) : 100
        return (f0, snr)
    }

    /// `spectrum` with each power multiplied by `frequency^exponent` and normalised again: a pre-whitening tilt of
    /// `3 × exponent` dB per octave. A face's own motion, expressions and lighting put colour change into the band
    /// with a spectrum that falls steeply with frequency (measured on talking-head clips: about 10 dB from 45 to
    /// 150 bpm), so without the tilt a pulse at 130 bpm loses to slow motion at 45 bpm in the SNR even where it is
    /// 9–12 dB above the motion at its own frequency. `exponent` 0 returns the spectrum unchanged.
    public static func tilted(_ spectrum: Spectrum, exponent: Double) -> Spectrum {
        guard exponent != 0, exponent.isFinite else { return spectrum }
        var power = zip(spectrum.frequencies, spectrum.power).map { f, p in p * pow(f, exponent) }
        let total = power.reduce(0, +)
        guard total > 0, total.isFinite else { return spectrum }
        for i in power.indices { power[i] /= total }
        return Spectrum(frequencies: spectrum.frequencies, power: power, seconds: spectrum.seconds)
    }

    /// Most frequencies a spectrum or a refinement evaluates (10 times the default spectrum's 40–180 bpm at 0.01 Hz).
    static let maxGridPoints = 10_000

    /// `lower`, `lower + resolution`, … up to `lower + span`: nil for a resolution that is not positive and finite,
    /// a bound or span that is not finite or a negative span, or more than ``maxGridPoints`` points (checked before
    /// the count becomes an integer, which a quotient past Int.max would trap).
    static func grid(from lower: Double, span: Double, every resolution: Double) -> [Double]? {
        guard resolution > 0, resolution.isFinite, lower.isFinite, span >= 0, span.isFinite else { return nil }
        let steps = (span / resolution).rounded(.down)
        guard steps < Double(maxGridPoints) else { return nil }
        return (0...Int(steps)).map { lower + Double($0) * resolution }
    }

    /// The frequency (Hz) within `span` of `frequency` where the newest `seconds` of `x` (sampled at `rate` Hz,
    /// linear trend removed, tapered by ``taper(_:peak:)``) have the most power, searched every `resolution` Hz; nil
    /// when `x` holds less than `seconds`, or for arguments out of range (more than ``maxGridPoints`` frequencies
    /// among them).
    ///
    /// A window's spectral peak is the mean rate over the whole window, so it trails a changing rate by about half
    /// the window (5 s for 10 s); the peak of the newest few seconds, looked for only near the window's own peak,
    /// cuts that lag without the short window's noise choosing the peak. A taper that peaks late (`peak` 0.9: rising
    /// over the first nine tenths, falling over the last tenth) weighs the newest samples most and cuts it further
    /// than a symmetric one of the same length, with as little leakage at the ends.
    public static func refine(
        _ x: [Double], rate: Double, around frequency: Double, seconds: Double, span: Double, peak: Double = 0.5,
        resolution: Double = 0.005
    ) -> Double? {
        guard rate > 0, rate.isFinite, seconds > 0, seconds.isFinite, span >= 0, frequency.isFinite, frequency > 0,
            peak > 0, peak <= 1, let frequencies = grid(from: frequency - span, span: 2 * span, every: resolution)
        else { return nil }
        // Checked as a double before it becomes an integer: a product past Int.max traps.
        let samples = (seconds * rate).rounded()
        guard samples >= 8, samples <= Double(x.count) else { return nil }
        let n = Int(samples)
        let newest = zip(detrend(Array(x.suffix(n))), taper(n, peak: peak)).map(*)
        var best: (frequency: Double, power: Double)?
        for f in frequencies where f > 0 {
            let (re, im) = dft(newest, at: 2 * Double.pi * f / rate)
            let power = re * re + im * im
            if best == nil || power > best!.power { best = (f, power) }
        }
        return best?.frequency
    }

    /// A window of `n` (>= 2) points that rises as half a cosine to its top at `peak` × `n` (clamped to the points)
    /// and falls as another half to the end: a Hann window when `peak` is 0.5, a late one above.
    static func taper(_ n: Int, peak: Double) -> [Double] {
        guard n >= 2 else { return [Double](repeating: 1, count: max(0, n)) }
        let top = Int((min(1, max(0, peak.isFinite ? peak : 0.5)) * Double(n)).rounded())
        let a = min(n - 1, max(1, top))
        let rising = (0..<a).map { 0.5 - 0.5 * cos(Double.pi * Double($0) / Double(a)) }
        let falling = (0..<(n - a)).map { 0.5 + 0.5 * cos(Double.pi * Double($0) / Double(n - a)) }
        return rising + falling
    }

    /// A Hann window of `n` (>= 2) points.
    static func hann(_ n: Int) -> [Double] {
        (0..<n).map { 0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(n - 1)) }
    }

    /// The DFT of `x` at `omega` radians per sample, by rotating a unit phasor (one complex multiply per sample
    /// instead of a sine and a cosine; the phasor is renormalised every 64 samples against rounding drift).
    static func dft(_ x: [Double], at omega: Double) -> (re: Double, im: Double) {
        let (stepRe, stepIm) = (cos(omega), -sin(omega))
        var (zRe, zIm) = (1.0, 0.0)
        var (re, im) = (0.0, 0.0)
        for (i, v) in x.enumerated() {
            re += v * zRe
            im += v * zIm
            (zRe, zIm) = (zRe * stepRe - zIm * stepIm, zRe * stepIm + zIm * stepRe)
            if i & 63 == 63 {
                let norm = (zRe * zRe + zIm * zIm).squareRoot()
                zRe /= norm
                zIm /= norm
            }
        }
        return (re, im)
    }

    /// The blood-volume pulse signature of skin in normalised R, G, B (G. de Haan, A. van Leest, "Improved motion
    /// robustness of remote-PPG by using the blood volume pulse signature", Physiol. Meas. 35(9), 2014).
    public static let bloodVolumeSignature = (r: 0.33, g: 0.77, b: 0.53)

    /// How far (degrees, 0...180) the colour change at `frequency` (Hz) in `rgb` (uniform, `rate` Hz) points from the
    /// blood-volume signature: the pulse changes the skin's colour along that signature, while motion, expressions and
    /// light change it along others. Each channel is normalised by its mean, detrended and Hann-windowed; its DFT at
    /// `frequency` gives a complex 3-vector whose strongest real direction (the phase that maximises it) is compared
    /// with the signature off the grey axis (brightness changes for many reasons), oriented by its brightness part.
    /// Nil for too few samples or no colour change.
    public static func signatureAngle(_ rgb: [RGB], rate: Double, frequency: Double) -> Double? {
        let n = rgb.count
        guard n >= 8, rate > 0, rate.isFinite, frequency.isFinite else { return nil }
        let channels: [[Double]] = [rgb.map(\.r), rgb.map(\.g), rgb.map(\.b)]
        let hann = Self.hann(n)
        var a = [Double](repeating: 0, count: 3)
        var b = [Double](repeating: 0, count: 3)
        for (k, channel) in channels.enumerated() {
            let mean = channel.reduce(0, +) / Double(n)
            guard mean > 0 else { return nil }
            let windowed = zip(detrend(channel.map { $0 / mean }), hann).map(*)
            (a[k], b[k]) = dft(windowed, at: 2 * Double.pi * frequency / rate)
        }
        let aa = a.reduce(0) { $0 + $1 * $1 }
        let bb = b.reduce(0) { $0 + $1 * $1 }
        let ab = zip(a, b).reduce(0) { $0 + $1.0 * $1.1 }
        let phi = 0.5 * atan2(2 * ab, aa - bb)
        var v = zip(a, b).map { $0 * cos(phi) + $1 * sin(phi) }
        // The brightness part of the change (its grey component) sets the sign: with more blood the skin darkens
        // while its colour turns along the signature's own off-grey direction, so a colour turn the other way
        // round (reddening as it brightens, say) points away from it. This makes the result independent of v's sign.
        let vMean = v.reduce(0, +) / 3
        v = v.map { $0 - vMean }
        let s = bloodVolumeSignature
        let sMean = (s.r + s.g + s.b) / 3
        let p = [s.r - sMean, s.g - sMean, s.b - sMean]
        let vNorm = v.reduce(0) { $0 + $1 * $1 }.squareRoot()
        let pNorm = p.reduce(0) { $0 + $1 * $1 }.squareRoot()
        guard vNorm > 0, vNorm.isFinite else { return nil }
        let sign: Double = vMean < 0 ? -1 : 1
        let cosine = min(1, max(-1, sign * zip(v, p).reduce(0) { $0 + $1.0 * $1.1 } / (vNorm * pNorm)))
        return acos(cosine) * 180 / Double.pi
    }

    /// Regions' colours on one grid made one: each divided by its own mean colour (so that a brighter region counts
    /// for no more, and the sum's mean is 1 in every channel, as POS and PBV normalise it anyway), then summed with
    /// `weights` (normalised here). Nil when there is nothing to combine, the grids differ in length, a grid's mean
    /// colour is not positive and finite in every channel, or the weights are not finite, not negative and not all 0.
    public static func combine(_ grids: [[RGB]], weights: [Double]) -> [RGB]? {
        guard let n = grids.first?.count, n > 0, grids.count == weights.count, grids.allSatisfy({ $0.count == n }) else { return nil }
        let total = weights.reduce(0, +)
        guard weights.allSatisfy({ $0.isFinite && $0 >= 0 }), total > 0, total.isFinite else { return nil }
        let averages = grids.map { Self.means($0, 0..<n) }
        guard averages.allSatisfy({ m in m.r > 0 && m.g > 0 && m.b > 0 && m.r.isFinite && m.g.isFinite && m.b.isFinite }) else { return nil }
        let scales: [(r: Double, g: Double, b: Double)] = zip(weights, averages).map { w, m in
            (r: w / total / m.r, g: w / total / m.g, b: w / total / m.b)
        }
        return (0..<n).map { k in
            var (r, g, b) = (0.0, 0.0, 0.0)
            for (grid, scale) in zip(grids, scales) {
                r += grid[k].r * scale.r
                g += grid[k].g * scale.g
                b += grid[k].b * scale.b
            }
            return RGB(t: grids[0][k].t, r: r, g: g, b: b)
        }
    }

    /// Weights for signals with the same pulse in unequal noise: each the inverse of its signal's variance, normalised
    /// to sum 1 (the combination whose noise is least when the noises are independent). Nil for no signals, or a
    /// variance that is not positive and finite, or whose inverse is not finite.
    public static func inverseVarianceWeights(_ signals: [[Double]]) -> [Double]? {
        guard !signals.isEmpty else { return nil }
        var inverse: [Double] = []
        for signal in signals {
            let sd = standardDeviation(signal)
            let variance = sd * sd
            guard variance > 0, variance.isFinite, (1 / variance).isFinite else { return nil }
            inverse.append(1 / variance)
        }
        let total = inverse.reduce(0, +)
        guard total.isFinite else { return nil }
        return inverse.map { $0 / total }
    }

    static func standardDeviation(_ x: [Double]) -> Double {
        guard x.count > 1 else { return 0 }
        let mean = x.reduce(0, +) / Double(x.count)
        let variance = x.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(x.count)
        return variance.squareRoot()
    }

    /// `x` minus its least-squares line.
    static func detrend(_ x: [Double]) -> [Double] {
        let n = Double(x.count)
        guard x.count > 1 else { return x.map { _ in 0 } }
        let meanI = (n - 1) / 2
        let meanX = x.reduce(0, +) / n
        var sxy = 0.0
        var sxx = 0.0
        for (i, v) in x.enumerated() {
            sxy += (Double(i) - meanI) * (v - meanX)
            sxx += (Double(i) - meanI) * (Double(i) - meanI)
        }
        let slope = sxx > 0 ? sxy / sxx : 0
        return x.enumerated().map { $0.element - meanX - slope * (Double($0.offset) - meanI) }
    }
}
