import Foundation

/// The face's own motion as a reference for the pulse estimate (issue 32): what moves the skin regions' colour
/// besides the blood.
///
/// A head that nods, shakes or talks rhythmically changes its skin regions' colour at the rate it moves: the regions
/// slide over shading, hair and eyebrows, the light on the skin changes with its angle, and a jaw or a brow moves the
/// skin itself. Over a window that colour change is, to first order, a function of where the face is and how it is
/// posed, which the wire already carries in every frame (the eyes, the mouth, the bounds). So each frame's
/// ``Geometry`` gives eight numbers (``features``), and before the colours are projected, each colour channel's
/// normalised trace is regressed on those numbers over the window (on their squares, for the harmonics a non-linear
/// mapping makes, and on their rates of change, for colour that lags the motion), when they move in the heart-rate
/// band, and the part they explain is taken out
/// (``Regression``): the nuisance regression of the motion-robust rPPG literature (Li et al., CVPR 2014, with a
/// background reference; and fMRI's motion regressors), on the landmark trajectories instead of an accelerometer.
///
/// The pulse is left alone because only a face that moves is regressed (``regressors(_:rate:band:floor:)``): the
/// head's own jolt with each beat is a fraction of a pixel. A ridge keeps the regression from fitting noise.
///
/// The motion's own rate is read too (``Regressors/motion``), and how much the face moves at every rate of the band
/// (``Regressors/spectrum``): the estimator's gate asks more of a peak that sits on the rate or on twice it, or where
/// the face moves much.
///
/// Pure, and bounded: at most ``featureCount`` features per sample, one solve of a 24 × 24 system per channel.
public enum PulseMotion {
    /// Where a face is in one frame (full-resolution pixels, as on the wire).
    public struct Geometry: Sendable, Equatable {
        public var leftEye: SIMD2<Double>
        public var rightEye: SIMD2<Double>
        /// The mouth's centre, when the worker sent one.
        public var mouth: SIMD2<Double>?
        /// The face's box: x, y, width, height.
        public var bounds: SIMD4<Double>

        public init(leftEye: SIMD2<Double>, rightEye: SIMD2<Double>, mouth: SIMD2<Double>?, bounds: SIMD4<Double>) {
            self.leftEye = leftEye
            self.rightEye = rightEye
            self.mouth = mouth
            self.bounds = bounds
        }

        /// The eight motion features, or nil when the geometry cannot give them (not finite, the eyes less than a
        /// pixel apart or more than 65536 pixels away: a hostile or broken face, whose frame then has no motion
        /// reference). In the eye frame (origin at the eyes' midpoint, unit eye distance, `u` along the eye line, `v`
        /// across it): the midpoint's x and y (pixels), the log of the eye distance (scale, distance to the camera),
        /// the eye line's angle (roll), the mouth's offset along `v` and `u` (a jaw that drops, a head that nods or
        /// turns), and the box centre's offset along `u` and `v` (yaw and pitch as the detector sees them). Without a
        /// mouth its two features are 0 (constant: the regression leaves them out).
        public var features: SIMD8<Float>? {
            let values = [leftEye.x, leftEye.y, rightEye.x, rightEye.y, bounds.x, bounds.y, bounds.z, bounds.w]
                + (mouth.map { [$0.x, $0.y] } ?? [])
            guard values.allSatisfy({ $0.isFinite && abs($0) <= 65_536 }) else { return nil }
            let delta = rightEye - leftEye
            let d = (delta.x * delta.x + delta.y * delta.y).squareRoot()
            guard d >= 1 else { return nil }
            let u = delta / d
            let v = SIMD2(-u.y, u.x)
            let centre = (leftEye + rightEye) / 2
            func along(_ p: SIMD2<Double>) -> (u: Double, v: Double) {
                let q = p - centre
                return ((q * u).sum() / d, (q * v).sum() / d)
            }
            let mouthOffset = mouth.map(along) ?? (u: 0, v: 0)
            let box = along(SIMD2(bounds.x + bounds.z / 2, bounds.y + bounds.w / 2))
            return SIMD8(
                Float(centre.x), Float(centre.y), Float(log(d)), Float(atan2(u.y, u.x)),
                Float(mouthOffset.v), Float(mouthOffset.u), Float(box.u), Float(box.v))
        }
    }

    /// Features per sample.
    public static let featureCount = 8

    /// The regressors of a window, when the face moves in `band` (Hz) by at least `floor` at some frequency: the
    /// amplitude of a DFT bin of a feature series (uniform at `rate` Hz), in eye distances for the midpoint (whose two
    /// series are divided by the mean eye distance), in its own units (eye distances, log units, radians) for the
    /// others. Then each feature series detrended and scaled to unit variance (`linear`), its centred square
    /// likewise (`squares`: the harmonics a non-linear mapping from pose to colour makes) and, with `velocity`, its
    /// rate of change likewise (`velocities`: colour a quarter-period behind the motion); a feature that does not
    /// move is left out; the face's motion's own rate (`motion`, Hz): where the largest of those amplitudes is, read
    /// every 0.01 Hz within a bin of it; and, per bin, the largest of those amplitudes (`spectrum`). Otherwise none.
    ///
    /// Only then, because the head also moves with the pulse itself: each beat jolts it by a fraction of a pixel
    /// (ballistocardiography; Balakrishnan et al., CVPR 2013, read the pulse from exactly that), and the detector's
    /// landmarks follow. Regressed always, the features took the pulse out of the colours of people sitting still: on
    /// the real recordings, 18–51 % of frames within 3 bpm instead of 100 %. Their faces' largest motion in the band
    /// measured 0.006 and 0.014 eye distances; the synthetic nods, shakes and talking 0.035–0.2. (Leaving out only
    /// each feature's small frequencies instead kept the recordings and lost a third of the moving faces' gain.)
    static func regressors(
        _ features: [[Double]], rate: Double, band: ClosedRange<Double>, floor: Double, velocity: Bool = false
    ) -> Regressors {
        let scale = features.count > 2 ? exp(features[2].reduce(0, +) / Double(max(1, features[2].count))) : 1
        var largest: (amplitude: Double, w: Double, units: [Double])?
        var spectrum = Spectrum()
        for (index, series) in features.enumerated() {
            let units = index < 2 && scale.isFinite && scale > 0 ? series.map { $0 / scale } : series
            for (k, bin) in PulseSignal.bins(units, rate: rate, band: band).enumerated() {
                spectrum.add(bin: k, hz: bin.w * rate / (2 * Double.pi), amplitude: bin.amplitude)
                if bin.amplitude > largest?.amplitude ?? 0 { largest = (bin.amplitude, bin.w, units) }
            }
        }
        guard let largest, largest.amplitude >= floor else { return Regressors() }
        var out = Regressors()
        out.spectrum = spectrum
        for series in features where series.count >= 8 {
            let detrended = PulseSignal.detrend(series)
            let scale = series.reduce(0) { max($0, abs($1)) }
            guard let unit = unitVariance(detrended, floor: 1e-12 * max(scale * scale, 1e-12)) else { continue }
            out.linear.append(unit)
            if let square = unitVariance(PulseSignal.detrend(unit.map { $0 * $0 }), floor: 1e-9) { out.squares.append(square) }
            if velocity, let rate = unitVariance(PulseSignal.detrend(derivative(unit)), floor: 1e-9) { out.velocities.append(rate) }
        }
        // The bin's frequency, refined: bins are 1/T apart (6 bpm for 10 s), the gate's spread is 3.
        let detrended = PulseSignal.detrend(largest.units)
        let binWidth = 2 * Double.pi / Double(max(1, detrended.count))
        let step = 2 * Double.pi * 0.01 / rate
        var best = (w: largest.w, power: -1.0)
        for w in stride(from: largest.w - binWidth, through: largest.w + binWidth, by: step) where w > 0 {
            let (re, im) = PulseSignal.dft(detrended, at: w)
            if re * re + im * im > best.power { best = (w, re * re + im * im) }
        }
        out.motion = best.w * rate / (2 * Double.pi)
        return out
    }

    /// A window's regressors (``regressors(_:rate:band:floor:)``).
    struct Regressors {
        var linear: [[Double]] = []
        var squares: [[Double]] = []
        /// Each linear regressor's rate of change (central differences), when asked for: the same motion a quarter of
        /// a period earlier at every frequency, for colour that follows the motion with a lag.
        var velocities: [[Double]] = []
        /// The face's motion's own rate (Hz), when it moves enough to be regressed.
        var motion: Double?
        /// How much the face moves at each frequency of the band.
        var spectrum = Spectrum()
    }

    /// How much a face moves at each DFT bin of a window in the band: the bin's frequency (Hz) and the largest
    /// amplitude any feature has there, in the units of ``regressors(_:rate:band:floor:velocity:)``'s floor. Where the
    /// motion's largest rate (``Regressors/motion``) says only where it moves most, this says how much it moves at a
    /// pulse's candidate rate: talking moves a face at many rates at once.
    struct Spectrum: Sendable {
        private(set) var bins: [(hz: Double, amplitude: Double)] = []

        /// Bin `index` of a feature: its frequency is set by the first feature that has it, its amplitude is the largest.
        mutating func add(bin index: Int, hz: Double, amplitude: Double) {
            if index == bins.count { bins.append((hz, 0)) }
            if index < bins.count { bins[index].amplitude = max(bins[index].amplitude, amplitude) }
        }

        /// The largest amplitude of the bins within `width` Hz of `hz` (0: none).
        func amplitude(near hz: Double, width: Double) -> Double {
            bins.reduce(0) { abs($1.hz - hz) <= width ? max($0, $1.amplitude) : $0 }
        }
    }

    /// Central differences of `x` (one-sided at the ends), per sample.
    static func derivative(_ x: [Double]) -> [Double] {
        guard x.count >= 2 else { return x.map { _ in 0 } }
        let n = x.count
        return (0..<n).map { k in
            let (a, b) = (max(0, k - 1), min(n - 1, k + 1))
            return (x[b] - x[a]) / Double(b - a)
        }
    }

    /// `x` over its standard deviation; nil when its variance is below `floor`.
    private static func unitVariance(_ x: [Double], floor: Double) -> [Double]? {
        let n = Double(x.count)
        let mean = x.reduce(0, +) / n
        let variance = x.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / n
        guard variance > floor, variance.isFinite else { return nil }
        let sd = variance.squareRoot()
        return x.map { ($0 - mean) / sd }
    }

    /// A ridge regression on a window's motion regressors, factorised once for every series of the window it cleans
    /// (the face's colours and each region's).
    struct Regression {
        let regressors: [[Double]]
        let factor: [Double]
        /// The face's motion's own rate (Hz).
        let motion: Double?
        /// How much the face moves at each frequency (``Regressors/spectrum``).
        let spectrum: Spectrum

        /// Nil without regressors, with regressors of unequal length or no more samples than regressors, or a ridge
        /// that is negative or not finite. `ridge` times the sample count goes on the diagonal of MᵀM.
        init?(_ regressors: Regressors, ridge: Double) {
            self.init(
                regressors.linear + regressors.squares + regressors.velocities, motion: regressors.motion,
                spectrum: regressors.spectrum, ridge: ridge)
        }

        init?(_ regressors: [[Double]], motion: Double? = nil, spectrum: Spectrum = Spectrum(), ridge: Double) {
            guard let n = regressors.first?.count, regressors.allSatisfy({ $0.count == n }), n > regressors.count, ridge >= 0,
                ridge.isFinite
            else { return nil }
            let p = regressors.count
            var gram = [Double](repeating: 0, count: p * p)
            for i in 0..<p {
                for j in i..<p {
                    var s = 0.0
                    for k in 0..<n { s += regressors[i][k] * regressors[j][k] }
                    gram[i * p + j] = s
                    gram[j * p + i] = s
                }
                gram[i * p + i] += ridge * Double(n)
            }
            guard let factor = PulseMotion.cholesky(gram, p) else { return nil }
            self.regressors = regressors
            self.motion = motion
            self.spectrum = spectrum
            self.factor = factor
        }

        /// `rgb` (uniform, as many samples as the regressors) with what the regressors explain of each channel's
        /// normalised trace (the channel over its mean, minus 1) taken out. Unchanged when the length differs or a
        /// channel's mean is not positive.
        func clean(_ rgb: [PulseSignal.RGB]) -> [PulseSignal.RGB] {
            let n = rgb.count
            let p = regressors.count
            guard n == regressors[0].count else { return rgb }
            var channels: [[Double]] = [rgb.map(\.r), rgb.map(\.g), rgb.map(\.b)]
            for c in channels.indices {
                let mean = channels[c].reduce(0, +) / Double(n)
                guard mean > 0, mean.isFinite else { return rgb }
                let y = channels[c].map { $0 / mean - 1 }
                let beta = PulseMotion.solve(factor, p, regressors.map { r in zip(r, y).reduce(0) { $0 + $1.0 * $1.1 } })
                for k in 0..<n {
                    var fitted = 0.0
                    for i in 0..<p { fitted += beta[i] * regressors[i][k] }
                    channels[c][k] = mean * (1 + y[k] - fitted)
                }
            }
            return rgb.indices.map { PulseSignal.RGB(t: rgb[$0].t, r: channels[0][$0], g: channels[1][$0], b: channels[2][$0]) }
        }
    }

    /// The lower-triangular Cholesky factor of the symmetric `p` × `p` matrix `a` (row-major); nil when it is not
    /// positive definite.
    static func cholesky(_ a: [Double], _ p: Int) -> [Double]? {
        var l = [Double](repeating: 0, count: p * p)
        for i in 0..<p {
            for j in 0...i {
                var s = a[i * p + j]
                for k in 0..<j { s -= l[i * p + k] * l[j * p + k] }
                if i == j {
                    guard s > 0, s.isFinite else { return nil }
                    l[i * p + i] = s.squareRoot()
                } else {
                    l[i * p + j] = s / l[j * p + j]
                }
            }
        }
        return l
    }

    /// x with L Lᵀ x = b, for `l` from ``cholesky(_:_:)``.
    static func solve(_ l: [Double], _ p: Int, _ b: [Double]) -> [Double] {
        var y = [Double](repeating: 0, count: p)
        for i in 0..<p {
            var s = b[i]
            for k in 0..<i { s -= l[i * p + k] * y[k] }
            y[i] = s / l[i * p + i]
        }
        var x = [Double](repeating: 0, count: p)
        for i in stride(from: p - 1, through: 0, by: -1) {
            var s = y[i]
            for k in (i + 1)..<p { s -= l[k * p + i] * x[k] }
            x[i] = s / l[i * p + i]
        }
        return x
    }
}
