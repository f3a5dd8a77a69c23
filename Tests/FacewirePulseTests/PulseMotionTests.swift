import FacewireFuzzing
import Foundation
import Testing
@testable import FacewirePulse

/// ``PulseMotion``: the face's geometry as a motion reference, regressed out of the skin colours.
@Suite("Pulse motion reference")
struct PulseMotionTests {
    @Test("features in the eye frame: midpoint, log eye distance, roll, mouth and box offsets")
    func features() throws {
        let geometry = PulseMotion.Geometry(
            leftEye: SIMD2(100, 100), rightEye: SIMD2(200, 100), mouth: SIMD2(150, 190), bounds: SIMD4(90, 40, 120, 180))
        let f = try #require(geometry.features)
        #expect(f[0] == 150 && f[1] == 100)
        #expect(abs(f[2] - Float(log(100.0))) < 1e-5)
        #expect(abs(f[3]) < 1e-6)
        #expect(abs(f[4] - 0.9) < 1e-5 && abs(f[5]) < 1e-5, "mouth 0.9 eye distances below the eyes, centred")
        #expect(abs(f[6] - 0) < 1e-5 && abs(f[7] - 0.3) < 1e-5, "box centre (150, 130): 0.3 below")
        // Rolled by 90°: the eye line points down, so "below" (v) points left.
        let rolled = PulseMotion.Geometry(
            leftEye: SIMD2(100, 100), rightEye: SIMD2(100, 200), mouth: SIMD2(10, 150), bounds: SIMD4(0, 100, 100, 100))
        let g = try #require(rolled.features)
        #expect(abs(g[3] - Float.pi / 2) < 1e-5)
        #expect(abs(g[4] - 0.9) < 1e-5)
    }

    @Test("hostile geometry gives no features instead of trapping or poisoning the window")
    func hostile() {
        let bounds = SIMD4<Double>(0, 0, 10, 10)
        for (left, right, mouth) in [
            (SIMD2<Double>(.nan, 0), SIMD2<Double>(10, 0), nil), (SIMD2(5, 5), SIMD2(5, 5), nil), (SIMD2(0, 0), SIMD2(0.5, 0), nil),
            (SIMD2(0, 0), SIMD2(1e300, 0), nil), (SIMD2(0, 0), SIMD2(.infinity, 0), nil), (SIMD2(0, 0), SIMD2(10, 0), SIMD2(.nan, 1)),
            (SIMD2(0, 0), SIMD2(10, 0), SIMD2(1e9, 1)),
        ] as [(SIMD2<Double>, SIMD2<Double>, SIMD2<Double>?)] {
            #expect(PulseMotion.Geometry(leftEye: left, rightEye: right, mouth: mouth, bounds: bounds).features == nil)
        }
        #expect(PulseMotion.Geometry(leftEye: SIMD2(0, 0), rightEye: SIMD2(10, 0), mouth: nil, bounds: SIMD4(.nan, 0, 1, 1)).features == nil)
    }

    @Test("Cholesky solve of a known system")
    func solve() throws {
        // A = [[4,2,0],[2,5,1],[0,1,3]], x = (1, -2, 3): b = A x.
        let a: [Double] = [4, 2, 0, 2, 5, 1, 0, 1, 3]
        let l = try #require(PulseMotion.cholesky(a, 3))
        let x = PulseMotion.solve(l, 3, [0, -5, 7])
        #expect(zip(x, [1.0, -2, 3]).allSatisfy { abs($0 - $1) < 1e-12 })
        #expect(PulseMotion.cholesky([1, 2, 2, 1], 2) == nil, "not positive definite")
    }

    static let band = (40.0 / 60)...(180.0 / 60)

    @Test("a face that moves only a little is not regressed: the head's own jolt with each beat stays in the colours")
    func smallMotion() {
        var random = SplitMix64(seed: 9)
        let n = 300
        // Eyes 100 px apart (log 100), the midpoint jolting 0.5 px at the pulse's 1.2 Hz, with 0.3 px of jitter: the
        // largest motion in the band is well under 2.5 % of the eye distance.
        let x = (0..<n).map { 200 + 0.5 * sin(2 * .pi * 1.2 * Double($0) / 30) + 0.3 * random.gaussian() }
        let y = (0..<n).map { _ in 150 + 0.3 * random.gaussian() }
        let logD = (0..<n).map { _ in log(100.0) + 0.002 * random.gaussian() }
        let still = PulseMotion.regressors([x, y, logD], rate: 30, band: Self.band, floor: 0.025)
        #expect(still.linear.isEmpty && still.squares.isEmpty && still.motion == nil)
        // The same face nodding 4 px at 1.5 Hz is.
        let nodding = PulseMotion.regressors(
            [x, y.enumerated().map { $0.element + 4 * sin(2 * .pi * 1.5 * Double($0.offset) / 30) }, logD], rate: 30, band: Self.band,
            floor: 0.025)
        #expect(nodding.linear.count == 3)
        #expect(nodding.motion.map { abs($0 - 1.5) < 0.02 } == true)
    }

    @Test("the motion spectrum says how much the face moves at every rate, not only at its largest")
    func motionSpectrum() {
        let n = 300
        // Eyes 100 px apart: a nod of 4 px (0.04 eye distances) at 1.5 Hz, and a sway of 2 px (0.02) at 2.4 Hz.
        let x = (0..<n).map { 200 + 2 * sin(2 * .pi * 2.4 * Double($0) / 30) }
        let y = (0..<n).map { 150 + 4 * sin(2 * .pi * 1.5 * Double($0) / 30) }
        let logD = [Double](repeating: log(100.0), count: n)
        let moving = PulseMotion.regressors([x, y, logD], rate: 30, band: Self.band, floor: 0.025)
        #expect(moving.motion.map { abs($0 - 1.5) < 0.02 } == true, "the largest is the nod")
        let width = 0.1  // one bin of 10 s
        #expect(abs(moving.spectrum.amplitude(near: 1.5, width: width) - 0.04) < 0.004)
        #expect(abs(moving.spectrum.amplitude(near: 2.4, width: width) - 0.02) < 0.002, "the sway is there too")
        #expect(moving.spectrum.amplitude(near: 1.0, width: width) < 0.002, "and nothing moves at 60 bpm")
        #expect(moving.spectrum.amplitude(near: .nan, width: width) == 0)
        // A face that moves too little to be regressed has no spectrum.
        let still = PulseMotion.regressors(
            [x.map { 200 + ($0 - 200) / 10 }, y.map { _ in 150 }, logD], rate: 30, band: Self.band, floor: 0.025)
        #expect(still.motion == nil && still.spectrum.amplitude(near: 2.4, width: width) == 0)
    }

    /// The power of `x` (uniform, 30 Hz) at `frequency` Hz.
    static func power(_ x: [Double], at frequency: Double) -> Double {
        let (re, im) = PulseSignal.dft(PulseSignal.detrend(x), at: 2 * .pi * frequency / 30)
        return re * re + im * im
    }

    @Test("cleaning takes out colour the motion explains, non-linearly too, and leaves the pulse")
    func cleaning() {
        var random = SplitMix64(seed: 5)
        let n = 300
        // A nod at 1.6 Hz: the head's vertical position. The skin's colour follows it through shading (linearly, in a
        // direction unlike the pulse's) and through a box that slides over hair (its square: twice the rate).
        let nod = (0..<n).map { 8 * sin(2 * .pi * 1.6 * Double($0) / 30) + 0.3 * random.gaussian() }
        let rgb = (0..<n).map { i -> PulseSignal.RGB in
            let t = Double(i) / 30
            let pulse = 0.002 * sin(2 * .pi * 1.2 * t)
            let m = nod[i] / 8
            return PulseSignal.RGB(
                t: t, r: 160 * (1 + 0.33 * pulse + 0.006 * m + 0.004 * m * m), g: 115 * (1 + 0.77 * pulse + 0.002 * m),
                b: 95 * (1 + 0.53 * pulse - 0.004 * m + 0.003 * m * m))
        }
        let regressors = PulseMotion.regressors([nod, (0..<n).map { _ in 100 }], rate: 30, band: Self.band, floor: 0.025)
        #expect(regressors.linear.count == 1 && regressors.squares.count == 1, "the nod and its square; a constant feature is left out")
        #expect(regressors.motion.map { abs($0 - 1.6) < 0.02 } == true, "the nod's rate: \(regressors.motion ?? 0) Hz")
        let cleaned = PulseMotion.Regression(regressors, ridge: 0.1)!.clean(rgb)
        for channel in [\PulseSignal.RGB.r, \.b] {
            let before = rgb.map { $0[keyPath: channel] }
            let after = cleaned.map { $0[keyPath: channel] }
            #expect(Self.power(after, at: 1.6) < 0.05 * Self.power(before, at: 1.6), "the nod's own rate")
            #expect(Self.power(after, at: 3.2) < 0.1 * Self.power(before, at: 3.2), "its harmonic")
            #expect(Self.power(after, at: 1.2) > 0.8 * Self.power(before, at: 1.2), "the pulse stays")
        }
        // Nothing to regress on, or nothing sound: no regression; colours of another length: unchanged.
        #expect(PulseMotion.Regression([], ridge: 0.1) == nil)
        #expect(PulseMotion.Regression([[1, 2, 3], [1, 2]], ridge: 0.1) == nil, "regressors of unequal length")
        #expect(PulseMotion.Regression([[1, 2], [3, 5]], ridge: 0.1) == nil, "no more samples than regressors")
        #expect(PulseMotion.Regression(regressors, ridge: .nan) == nil && PulseMotion.Regression(regressors, ridge: -1) == nil)
        #expect(PulseMotion.Regression(regressors, ridge: 0.1)!.clean(Array(rgb.prefix(10))) == Array(rgb.prefix(10)))
    }

    @Test("colour that lags the motion by a quarter period is taken out only with the motion's rate of change")
    func laggingColour() {
        var random = SplitMix64(seed: 6)
        let n = 300
        // A shake at 1.4 Hz: the head's position is the sine; the shading (lit from one side, reaching the skin as the
        // head turns) is the cosine, which no multiple of the position or of its square explains.
        let shake = (0..<n).map { 10 * sin(2 * .pi * 1.4 * Double($0) / 30) + 0.3 * random.gaussian() }
        let rgb = (0..<n).map { i -> PulseSignal.RGB in
            let t = Double(i) / 30
            let pulse = 0.002 * sin(2 * .pi * 1.1 * t)
            let shade = 0.006 * cos(2 * .pi * 1.4 * t)
            return PulseSignal.RGB(
                t: t, r: 160 * (1 + 0.33 * pulse + shade), g: 115 * (1 + 0.77 * pulse + 0.8 * shade), b: 95 * (1 + 0.53 * pulse + 0.6 * shade))
        }
        let plain = PulseMotion.regressors([shake], rate: 30, band: Self.band, floor: 0.025)
        let lagged = PulseMotion.regressors([shake], rate: 30, band: Self.band, floor: 0.025, velocity: true)
        #expect(plain.velocities.isEmpty && lagged.velocities.count == 1)
        let without = PulseMotion.Regression(plain, ridge: 0.1)!.clean(rgb)
        let with = PulseMotion.Regression(lagged, ridge: 0.1)!.clean(rgb)
        let before = rgb.map(\.r)
        #expect(Self.power(without.map(\.r), at: 1.4) > 0.5 * Self.power(before, at: 1.4), "the position alone leaves the shading")
        #expect(Self.power(with.map(\.r), at: 1.4) < 0.05 * Self.power(before, at: 1.4), "its rate of change takes it out")
        #expect(Self.power(with.map(\.r), at: 1.1) > 0.8 * Self.power(before, at: 1.1), "the pulse stays")
        #expect(PulseMotion.derivative([1, 3, 7]) == [2, 3, 4] && PulseMotion.derivative([5]) == [0] && PulseMotion.derivative([]).isEmpty)
    }

    /// A face 100 pixels between the eyes, nodded `nod` (−1...1) of 6 pixels down, its landmarks a little noisy.
    static func geometry(nod m: Double, _ random: inout SplitMix64) -> PulseMotion.Geometry {
        let y = 200 + 6 * m
        return PulseMotion.Geometry(
            leftEye: SIMD2(150 + random.gaussian() * 0.3, y + random.gaussian() * 0.3),
            rightEye: SIMD2(250 + random.gaussian() * 0.3, y + random.gaussian() * 0.3), mouth: SIMD2(200, y + 95 + 2 * m),
            bounds: SIMD4(120, y - 80, 160, 220))
    }

    /// A face nodding at `nodBPM` while its pulse beats at 72: the nod's colour change is two to three times the pulse's.
    static func nodding(nodBPM: Double, seconds: Double = 30) -> [(t: Int64, regions: [PulseEstimator.RegionColour], geometry: PulseMotion.Geometry)] {
        var random = SplitMix64(seed: 11)
        return (0..<Int(seconds * 30)).map { i in
            let t = Double(i) / 30
            let pulse = 0.003 * sin(2 * .pi * 1.2 * t)
            let m = sin(2 * .pi * nodBPM / 60 * t + 0.4)
            let geometry = Self.geometry(nod: m, &random)
            let regions = PulseEstimator.Region.allCases.map { region -> PulseEstimator.RegionColour in
                // The worst case: the nod changes every region's colour just as blood does (along the blood-volume
                // signature, each region by its own amount), so nothing in the colours tells the two apart.
                let k = 0.006 * (1 + 0.3 * Double(region.index))
                func channel(_ value: Double, _ d: Double) -> Double {
                    value * (1 + (pulse + k * m) * d) * (1 + 0.0005 * random.gaussian())
                }
                return .init(region: region, r: channel(160, 0.33), g: channel(115, 0.77), b: channel(95, 0.53), pixels: 2000)
            }
            return (Int64(t * 1_000_000), regions, geometry)
        }
    }

    @Test("a nodding face: with its geometry the pulse's rate is reported, without it the nod's or none")
    func noddingFace() {
        let samples = Self.nodding(nodBPM: 100)
        func run(geometry: Bool) -> [Double] {
            var estimator = PulseEstimator()
            return samples.compactMap { estimator.add(timeUs: $0.t, regions: $0.regions, geometry: geometry ? $0.geometry : nil)?.bpm }
        }
        let with = run(geometry: true)
        let without = run(geometry: false)
        #expect(with.count > 200, "reported on \(with.count) frames")
        #expect(with.allSatisfy { abs($0 - 72) <= 3 }, "\(with.min() ?? 0)...\(with.max() ?? 0)")
        #expect(without.filter { abs($0 - 72) <= 3 }.count < with.count / 2,
                "without the reference: \(without.count) reported, \(without.filter { abs($0 - 72) <= 3 }.count) at the pulse")
    }

    @Test("a still face: the reference changes nothing (its features do not move)")
    func stillFace() {
        let skin = SyntheticPulse.skin(bpm: 84, seconds: 25, seed: 3)
        var random = SplitMix64(seed: 4)
        var a = PulseEstimator()
        var b = PulseEstimator()
        let geometry = PulseMotion.Geometry(leftEye: SIMD2(100, 100), rightEye: SIMD2(180, 100), mouth: SIMD2(140, 170), bounds: SIMD4(70, 40, 140, 180))
        for (t, r, g, bl) in skin {
            let regions = SyntheticPulse.regions((r, g, bl), &random)
            #expect(a.add(timeUs: t, regions: regions, geometry: geometry) == b.add(timeUs: t, regions: regions))
        }
    }

    /// A face whose pulse beats at 72 along the blood-volume signature while every region also flushes at 96 per
    /// minute towards red (an expression's colour that no motion explains), three times as deep; nodding at 45 per
    /// minute (its colour along the signature, which the motion reference takes out) when `nods`, still otherwise.
    static func flushing(nods: Bool, seconds: Double = 30) -> [(t: Int64, regions: [PulseEstimator.RegionColour], geometry: PulseMotion.Geometry)] {
        var random = SplitMix64(seed: 17)
        return (0..<Int(seconds * 30)).map { i in
            let t = Double(i) / 30
            let pulse = 0.003 * sin(2 * .pi * 1.2 * t)
            let flush = 0.009 * sin(2 * .pi * 1.6 * t + 0.3)
            let m = nods ? sin(2 * .pi * 0.75 * t + 0.4) : 0
            let geometry = Self.geometry(nod: m, &random)
            let regions = PulseEstimator.Region.allCases.map { region -> PulseEstimator.RegionColour in
                let k = 0.006 * (1 + 0.3 * Double(region.index))
                func channel(_ value: Double, _ d: Double, _ f: Double) -> Double {
                    value * (1 + (pulse + k * m) * d + flush * f) * (1 + 0.0005 * random.gaussian())
                }
                return .init(
                    region: region, r: channel(160, 0.33, 0.9), g: channel(115, 0.77, -0.2), b: channel(95, 0.53, 0.1), pixels: 2000)
            }
            return (Int64(t * 1_000_000), regions, geometry)
        }
    }

    @Test("asked to, a moving face's windows are read on PBV, which passes the pulse and not a stronger flush off the signature; a still face's on POS, as without it")
    func aMovingFaceIsReadOnTheSignature() {
        func run(_ samples: [(t: Int64, regions: [PulseEstimator.RegionColour], geometry: PulseMotion.Geometry)], moving: PulseEstimator.Method?)
            -> (reported: [Double?], peaks: [Double], moved: Int)
        {
            var configuration = PulseEstimator.Configuration()
            configuration.movingMethod = moving
            let trace = PulseEstimatorTests.trace(samples.map { (timeUs: $0.t, regions: $0.regions, geometry: $0.geometry) }, configuration)
            return (trace.reported, trace.readings.map(\.bpm), trace.readings.filter { $0.motionBPM != nil }.count)
        }
        #expect(PulseEstimator.Configuration().movingMethod == nil, "off by default")
        let nodding = Self.flushing(nods: true)
        let pbv = run(nodding, moving: .pbv)
        let pos = run(nodding, moving: nil)
        #expect(pbv.moved > 500, "the nod is regressed: \(pbv.moved) readings")
        let pbvRight = pbv.reported.compactMap { $0 }.filter { abs($0 - 72) <= 3 }.count
        let posRight = pos.reported.compactMap { $0 }.filter { abs($0 - 72) <= 3 }.count
        #expect(pbvRight > 400, "on PBV the pulse is reported: \(pbvRight) frames")
        #expect(pbv.reported.compactMap { $0 }.allSatisfy { abs($0 - 72) <= 3 })
        #expect(pbv.peaks.filter { abs($0 - 96) <= 3 }.isEmpty, "PBV's windows never peak on the flush")
        #expect(pos.peaks.filter { abs($0 - 96) <= 3 }.count > pos.peaks.count / 2, "POS's mostly do: \(pos.peaks.prefix(5))")
        #expect(posRight < pbvRight / 2, "on POS the flush wins the windows: \(posRight) frames at the pulse")

        // Still, the same colours: read on POS whatever a moving face is read with, estimate for estimate.
        let still = Self.flushing(nods: false)
        let a = run(still, moving: .pbv)
        let b = run(still, moving: nil)
        #expect(a.moved == 0)
        #expect(a.reported == b.reported && a.peaks == b.peaks)
        #expect(a.peaks.filter { abs($0 - 96) <= 3 }.count > a.peaks.count / 2, "POS's peak is the flush: \(a.peaks.prefix(5))")
    }

    /// The nodding face's samples with a forehead outlined by the mesh: the eyes' forehead's colour, brighter and
    /// flickering a little at 102 per minute (so that what reads it can tell).
    static func withMeshForehead(
        _ samples: [(t: Int64, regions: [PulseEstimator.RegionColour], geometry: PulseMotion.Geometry)]
    ) -> [(t: Int64, regions: [PulseEstimator.RegionColour], geometry: PulseMotion.Geometry, mesh: PulseEstimator.RegionColour)] {
        samples.map { sample in
            var mesh = sample.regions.first { $0.region == .forehead }!
            let flicker = 1 + 0.004 * sin(2 * .pi * 1.7 * Double(sample.t) / 1_000_000)
            (mesh.r, mesh.g, mesh.b, mesh.pixels) = (mesh.r * 1.05 * flicker, mesh.g * 1.02 * flicker, mesh.b * flicker, 3000)
            return (sample.t, sample.regions, sample.geometry, mesh)
        }
    }

    /// The estimator with the mesh's forehead switched on (off by default).
    static let meshOn: PulseEstimator.Configuration = {
        var c = PulseEstimator.Configuration()
        c.meshForehead = true
        return c
    }()

    @Test("asked to, a moving face's windows read the mesh's forehead; a still face's never do, and read exactly as without it")
    func meshForeheadOnlyWhenMoving() {
        let nodding = Self.withMeshForehead(Self.nodding(nodBPM: 100))
        var moving = PulseEstimator(configuration: Self.meshOn)
        var off = PulseEstimator()
        #expect(!off.configuration.meshForehead, "off by default")
        var readMesh = 0
        var differ = 0
        for s in nodding {
            let a = moving.add(timeUs: s.t, regions: s.regions, geometry: s.geometry, meshForehead: s.mesh)
            let b = off.add(timeUs: s.t, regions: s.regions, geometry: s.geometry, meshForehead: s.mesh)
            if moving.latest?.meshForehead == true { readMesh += 1 }
            #expect(off.latest?.meshForehead != true, "switched off")
            if a != b { differ += 1 }
        }
        #expect(readMesh > 500, "a nodding face's windows read the mesh's forehead: \(readMesh) frames")
        #expect(differ > 0, "and what it reads is not the eyes' forehead")

        // Still: the same face without the nod, mesh forehead or not: estimate for estimate.
        let skin = SyntheticPulse.skin(bpm: 84, seconds: 25, seed: 3)
        var random = SplitMix64(seed: 4)
        var with = PulseEstimator(configuration: Self.meshOn)
        var without = PulseEstimator()
        let geometry = PulseMotion.Geometry(leftEye: SIMD2(100, 100), rightEye: SIMD2(180, 100), mouth: SIMD2(140, 170), bounds: SIMD4(70, 40, 140, 180))
        var reported = 0
        for (t, r, g, bl) in skin {
            let regions = SyntheticPulse.regions((r, g, bl), &random)
            let mesh = PulseEstimator.RegionColour(region: .forehead, r: r * 1.1, g: g, b: bl, pixels: 3000)
            let a = with.add(timeUs: t, regions: regions, geometry: geometry, meshForehead: mesh)
            #expect(a == without.add(timeUs: t, regions: regions, geometry: geometry))
            #expect(with.latest?.meshForehead != true)
            if a != nil { reported += 1 }
        }
        #expect(reported > 100, "the still face is read: \(reported)")
    }

    @Test("a hostile or misplaced mesh forehead is left out: the windows read the eyes' forehead, as without one")
    func hostileMeshForehead() {
        let nodding = Self.nodding(nodBPM: 100)
        let bad: [PulseEstimator.RegionColour] = [
            .init(region: .forehead, r: .nan, g: 100, b: 100, pixels: 3000),
            .init(region: .forehead, r: -5, g: 100, b: 100, pixels: 3000),
            .init(region: .forehead, r: 1e300, g: 100, b: 100, pixels: 3000),  // infinite as a Float
            .init(region: .forehead, r: 100, g: 100, b: 100, pixels: .infinity),
            .init(region: .forehead, r: 100, g: 100, b: 100, pixels: 0),
            .init(region: .leftCheek, r: 100, g: 100, b: 100, pixels: 3000),  // not a forehead
        ]
        for mesh in bad {
            var a = PulseEstimator(configuration: Self.meshOn)
            var b = PulseEstimator(configuration: Self.meshOn)
            for s in nodding {
                #expect(a.add(timeUs: s.t, regions: s.regions, geometry: s.geometry, meshForehead: mesh)
                    == b.add(timeUs: s.t, regions: s.regions, geometry: s.geometry))
                #expect(a.latest?.meshForehead != true)
            }
        }
        // One frame in the window without a mesh forehead: that window reads the eyes' forehead.
        let mixed = Self.withMeshForehead(nodding)
        var estimator = PulseEstimator(configuration: Self.meshOn)
        var read = [Bool]()
        for (index, s) in mixed.enumerated() {
            _ = estimator.add(timeUs: s.t, regions: s.regions, geometry: s.geometry, meshForehead: index == 400 ? nil : s.mesh)
            if index == 420 || index == 760 { read.append(estimator.latest?.meshForehead ?? false) }
        }
        #expect(read == [false, true], "the window with the gap at frame 400 (frame 420), one 12 s later (frame 760)")
    }
}
