import Foundation

/// The signal processing of the pulse estimate, pure functions on arrays: resampling on time, the POS and CHROM
/// projections of remote photoplethysmography, and the spectral peak with its signal-to-noise ratio.
///
/// - POS: W. Wang, A. C. den Brinker, S. Stuijk, G. de Haan, "Algorithmic Principles of Remote PPG", IEEE TBME 64(7),
///   2017 (Algorithm 1: temporal normalisation over 1.6 s windows, projection on the plane orthogonal to skin tone,
///   alpha tuning, overlap-add).
/// - CHROM: G. de Haan, V. Jeanne, "Robust Pulse Rate From Chrominance-Based rPPG", IEEE TBME 60(10), 2013
///   (Xs = 3R − 2G, Ys = 1.5R + G − 1.5B on normalised channels, band-passed, S = Xf − α·Yf).
/// - SNR: de Haan & Jeanne 2013, eq. 9: power within ±0.1 Hz of the peak and ±0.2 Hz of its first harmonic over the
///   rest of the band, in dB; the neighbourhood is widened to the Hann window's main lobe (±2/T) when that is wider.
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
        guard samples.count >= 2, rate > 0, rate.isFinite, let first = samples.first, let last = samples.last, last.t > first.t else {
            return []
        }
        let count = Int(((last.t - first.t) * rate).rounded(.down)) + 1
        var out: [RGB] = []
        out.reserveCapacity(count)
        var j = 0
        for i in 0..<count {
            let t = first.t + Double(i) / rate
            while j + 1 < samples.count - 1 && samples[j + 1].t <= t { j += 1 }
            let a = samples[j]
            let b = samples[min(j + 1, samples.count - 1)]
            let span = b.t - a.t
            let w = span > 0 ? min(1, max(0, (t - a.t) / span)) : 0
            out.append(RGB(t: t, r: a.r + (b.r - a.r) * w, g: a.g + (b.g - a.g) * w, b: a.b + (b.b - a.b) * w))
        }
        return out
    }

    /// The POS pulse signal of uniformly sampled colours (`rate` Hz), by overlap-adding 1.6 s windows.
    public static func pos(_ rgb: [RGB], rate: Double) -> [Double] {
        let n = rgb.count
        let l = max(2, Int((1.6 * rate).rounded()))
        guard n >= l else { return [] }
        var h = [Double](repeating: 0, count: n)
        for start in 0...(n - l) {
            let window = rgb[start..<(start + l)]
            let mr = window.reduce(0) { $0 + $1.r } / Double(l)
            let mg = window.reduce(0) { $0 + $1.g } / Double(l)
            let mb = window.reduce(0) { $0 + $1.b } / Double(l)
            guard mr > 0, mg > 0, mb > 0 else { continue }
            var s1 = [Double](repeating: 0, count: l)
            var s2 = [Double](repeating: 0, count: l)
            for (k, c) in window.enumerated() {
                let (r, g, b) = (c.r / mr, c.g / mg, c.b / mb)
                s1[k] = g - b
                s2[k] = -2 * r + g + b
            }
            let d2 = standardDeviation(s2)
            let alpha = d2 > 0 ? standardDeviation(s1) / d2 : 0
            var p = zip(s1, s2).map { $0 + alpha * $1 }
            let mean = p.reduce(0, +) / Double(l)
            for k in p.indices { p[k] -= mean }
            for k in 0..<l { h[start + k] += p[k] }
        }
        return h
    }

    /// The CHROM pulse signal of uniformly sampled colours (`rate` Hz), band-passed to `band` (Hz).
    public static func chrom(_ rgb: [RGB], rate: Double, band: ClosedRange<Double>) -> [Double] {
        guard rgb.count >= 4 else { return [] }
        let n = Double(rgb.count)
        let mr = rgb.reduce(0) { $0 + $1.r } / n
        let mg = rgb.reduce(0) { $0 + $1.g } / n
        let mb = rgb.reduce(0) { $0 + $1.b } / n
        guard mr > 0, mg > 0, mb > 0 else { return [] }
        let xs = rgb.map { 3 * $0.r / mr - 2 * $0.g / mg }
        let ys = rgb.map { 1.5 * $0.r / mr + $0.g / mg - 1.5 * $0.b / mb }
        let xf = bandPass(xs, rate: rate, band: band)
        let yf = bandPass(ys, rate: rate, band: band)
        let dy = standardDeviation(yf)
        let alpha = dy > 0 ? standardDeviation(xf) / dy : 0
        return zip(xf, yf).map { $0 - alpha * $1 }
    }

    /// `x` with only the frequencies in `band` (Hz) kept: its DFT zeroed outside the band (a brick-wall filter on the
    /// window, after removing the mean and a linear trend).
    public static func bandPass(_ x: [Double], rate: Double, band: ClosedRange<Double>) -> [Double] {
        let n = x.count
        guard n >= 4 else { return x }
        let detrended = detrend(x)
        var out = [Double](repeating: 0, count: n)
        let kMin = max(1, Int((band.lowerBound * Double(n) / rate).rounded(.up)))
        let kMax = min(n / 2, Int((band.upperBound * Double(n) / rate).rounded(.down)))
        guard kMin <= kMax else { return out }
        for k in kMin...kMax {
            var re = 0.0
            var im = 0.0
            let w = 2 * Double.pi * Double(k) / Double(n)
            for (i, v) in detrended.enumerated() {
                re += v * cos(w * Double(i))
                im -= v * sin(w * Double(i))
            }
            let scale = (k == n - k ? 1.0 : 2.0) / Double(n)
            for i in 0..<n {
                out[i] += scale * (re * cos(w * Double(i)) - im * sin(w * Double(i)))
            }
        }
        return out
    }

    /// The strongest frequency of `x` in `band` (Hz) with its SNR (dB), from a Hann-windowed spectrum evaluated
    /// every `resolution` Hz. Nil for a signal too short or flat.
    public static func peak(_ x: [Double], rate: Double, band: ClosedRange<Double>, resolution: Double = 0.01)
        -> (frequency: Double, snr: Double)?
    {
        let n = x.count
        guard n >= 8, rate > 0, resolution > 0 else { return nil }
        let detrended = detrend(x)
        let hann = (0..<n).map { 0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(n - 1)) }
        let windowed = zip(detrended, hann).map(*)
        // The band and a margin for the harmonic's neighbourhood.
        let upper = min(rate / 2, band.upperBound * 2 + 0.3)
        var frequencies: [Double] = []
        var f = max(0.1, band.lowerBound - 0.3)
        while f <= upper {
            frequencies.append(f)
            f += resolution
        }
        let power = frequencies.map { f -> Double in
            var re = 0.0
            var im = 0.0
            let w = 2 * Double.pi * f / rate
            for (i, v) in windowed.enumerated() {
                re += v * cos(w * Double(i))
                im -= v * sin(w * Double(i))
            }
            return re * re + im * im
        }
        var best: Int?
        for (i, f) in frequencies.enumerated() where band.contains(f) {
            if best == nil || power[i] > power[best!] { best = i }
        }
        guard let best, power[best] > 0 else { return nil }
        let f0 = frequencies[best]
        // The signal's neighbourhood: de Haan's ±0.1 Hz, widened to the Hann window's main lobe (±2/T) for short windows.
        let halfWidth = max(0.1, 2 * rate / Double(n))
        var signal = 0.0
        var noise = 0.0
        for (i, f) in frequencies.enumerated() where f >= band.lowerBound && f <= min(upper, band.upperBound * 2) {
            if abs(f - f0) <= halfWidth || abs(f - 2 * f0) <= 2 * halfWidth { signal += power[i] } else if band.contains(f) { noise += power[i] }
        }
        guard signal > 0 else { return nil }
        let snr = noise > 0 ? 10 * log10(signal / noise) : 100
        return (f0, snr)
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
