import FacewirePulse
import Foundation

/// Synthetic skin colour with a pulse, for the heart-rate tests of the estimator and of the collector: a pulse along
/// the blood-volume direction a fraction of a percent deep, camera noise, a slow illumination drift and breathing,
/// frames at 30 fps with some dropped and jitter.
public enum SyntheticPulse {
    /// Samples of `seconds` at 30 fps: (capture time µs, r, g, b). `bpm` nil: no pulse at all.
    /// `direction`: how the colour changes with the beat, in normalised R, G, B; by default the blood-volume pulse
    /// signature (de Haan & van Leest 2014). Anything else stands for a periodic motion or expression artefact.
    public static func skin(bpm: Double?, seconds: Double = 40, seed: UInt64 = 1, drop: Double = 0.1, amplitude: Double = 0.003,
                     noise: Double = 0.001, direction: (r: Double, g: Double, b: Double) = (0.33, 0.77, 0.53))
        -> [(Int64, Double, Double, Double)]
    {
        var random = SplitMix64(seed: seed)
        let base = (r: 160.0, g: 115.0, b: 95.0)
        let pbv = direction
        var out: [(Int64, Double, Double, Double)] = []
        var phase = 0.0
        let frames = Int(seconds * 30)
        for i in 0..<frames {
            let t = Double(i) / 30 + (random.uniform() - 0.5) * 0.004
            let rate = bpm.map { Self.rate(around: $0, at: t) / 60 } ?? 0
            phase += 2 * .pi * rate / 30
            let pulse = bpm == nil ? 0 : amplitude * sin(phase)
            let light = 1 + 0.02 * sin(2 * .pi * 0.05 * t) + 0.003 * sin(2 * .pi * 0.25 * t)  // drift and breathing
            guard random.uniform() >= drop else { continue }
            func channel(_ value: Double, _ direction: Double) -> Double {
                value * light * (1 + pulse * direction) * (1 + noise * random.gaussian())
            }
            out.append((Int64(t * 1_000_000), channel(base.r, pbv.r), channel(base.g, pbv.g), channel(base.b, pbv.b)))
        }
        return out
    }

    /// The rate of ``skin(bpm:seconds:seed:drop:amplitude:noise:direction:)``'s pulse at `t` seconds: it wanders by
    /// ±3 % around `bpm` over 17 s, as a resting heart does.
    public static func rate(around bpm: Double, at t: Double) -> Double {
        bpm * (1 + 0.03 * sin(2 * .pi * t / 17))
    }

    /// The three regions a worker would send for a face whose skin is `colour`: each with camera noise of its own
    /// (0.1 % per channel, as much again as the face's own), the forehead twice the pixels of a cheek.
    public static func regions(_ colour: (Double, Double, Double), _ random: inout SplitMix64) -> [PulseEstimator.RegionColour] {
        PulseEstimator.Region.allCases.map { region in
            func channel(_ v: Double) -> Double { v * (1 + 0.001 * random.gaussian()) }
            return .init(
                region: region, r: channel(colour.0), g: channel(colour.1), b: channel(colour.2), pixels: region == .forehead ? 1800 : 900)
        }
    }
}

/// Draws for synthetic signals.
extension SplitMix64 {
    /// Uniform in [0, 1).
    public mutating func uniform() -> Double { Double(next() >> 11) / Double(1 << 53) }

    /// Standard normal (Box-Muller).
    public mutating func gaussian() -> Double {
        let u = max(uniform(), 1e-12)
        return (-2 * log(u)).squareRoot() * cos(2 * .pi * uniform())
    }
}
