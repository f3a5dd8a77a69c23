import FacewireRuntime
import ArgumentParser
import FacewireBench
import FacewireCollectorCore
import FacewireProtocol
import Foundation
import FacewirePulse

/// `facewire bench ...`: test tools for the benchmarks (`benchmarks/bench-collector.py`), like `--detector synthetic`.
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Test tools for benchmarks: a collector load generator, a raw libzmq message rate, the heart-rate estimator's cost, the estimator replayed on recorded skin colours.",
        subcommands: [CollectorLoadCommand.self, ZMQRateCommand.self, PulseCostCommand.self, PulseReplayCommand.self]
    )
}

/// Prints a report as one JSON line on stdout.
private func printJSON<Report: Encodable>(_ report: Report) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    FileHandle.standardOutput.write(try encoder.encode(report) + Data([0x0A]))
}

struct CollectorLoadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "collector-load",
        abstract: "A test tool: play fake capture nodes and worker threads against a collector, as fast as it takes results.",
        discussion: """
            Each stream is announced by a capture hello (every second) and ended with StreamEnd; fake worker threads \
            send valid processed results (with --faces drifting faces, so tracking works), pre-encoded, at most \
            --window sequences apart and at most --in-flight ahead of what the collector published (counted on its \
            results stream). Prints {"event":"sending"} when the clock starts and, once every stream's summary was \
            published, one JSON line: results, seconds, rate (sent/s), publishedRate, published, waited (fraction of \
            bookings that waited for the collector: near 1 means the collector set the pace), meanBytes.
            """
    )

    @Option(help: "The collector's endpoint.")
    var collector: String

    @Option(help: "The collector's results stream (PUB), where the generator counts what was published.")
    var publish: String

    @Option(help: "Streams (fake capture nodes).")
    var streams: Int = 1

    @Option(help: "Fake worker threads, one results socket each.")
    var threads: Int = 4

    @Option(help: "Results per stream.")
    var frames: UInt64 = 10_000

    @Option(help: "Faces per result.")
    var faces: Int = 2

    @Option(help: "Sequences the fastest thread may run ahead of the slowest (keep it below the collector's --max-pending).")
    var window: UInt64 = 128

    @Option(help: "Results sent but not yet published, at most (closed loop, as credits make a real cluster).")
    var inFlight: UInt64 = 2048

    @Option(help: "Play only streams shard K of N owns (K/N, SPEC.md 19): the first --streams of load-00000, load-00001, … it owns.")
    var shard: String?

    func validate() throws {
        guard (1...100_000).contains(window) else { throw ValidationError("--window must be 1...100000") }
        guard (1...10_000_000).contains(inFlight) else { throw ValidationError("--in-flight must be 1...10000000") }
        if let shard {
            do { _ = try ShardIdentity(parsing: shard) } catch { throw ValidationError("--shard: \(error)") }
        }
    }

    func run() throws {
        let epoch = UInt64(max(1, Clock.wallMicroseconds()))
        let plan: CollectorLoadPlan
        do {
            plan = try CollectorLoadPlan(
                streams: streams, threads: threads, framesPerStream: frames, faces: faces, epoch: epoch, startUs: Clock.wallMicroseconds(),
                shard: try shard.map(ShardIdentity.init(parsing:)))
        } catch {
            throw ValidationError("\(error)")
        }
        let load = CollectorLoad(plan: plan, collector: collector, publish: publish, window: window, maxInFlight: inFlight)
        let report = try load.run {
            FileHandle.standardOutput.write(Data(#"{"event":"sending"}"#.utf8 + [0x0A]))
        }
        try printJSON(report)
    }
}

struct ZMQRateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "zmq-rate",
        abstract: "A test tool: messages/s one PUSH carries to one PULL over TCP loopback (two threads), as one JSON line."
    )

    @Option(help: "Messages to send.")
    var messages: Int = 1_000_000

    @Option(help: "Bytes per message.")
    var bytes: Int = 200

    func run() throws {
        try printJSON(try RawMessageRate.measure(messages: messages, bytes: bytes))
    }
}

struct PulseCostCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pulse-cost",
        abstract: "A test tool: the collector's heart-rate estimator on synthetic skin colours, CPU time per track.",
        discussion: """
            Feeds --tracks estimators --seconds of skin colour each at --fps (a 72 bpm pulse, noise, three regions, and \
            a face whose eyes, mouth and box sway by --sway: the motion reference), as the collector does for tracked faces, and prints one JSON line: samples, estimates, cpuSeconds, \
            msPerEstimate, msPerTrackSecond (CPU per second of one face's video: what a live stream costs per tracked \
            face) and reported (the share of estimates that gave a rate).
            """
    )

    @Option(help: "Tracks (one estimator each).")
    var tracks: Int = 100

    @Option(help: "Seconds of colour per track.")
    var seconds: Double = 60

    @Option(help: "Frames per second of each track.")
    var fps: Double = 30

    @Option(help: "Method: pos, chrom or pbv.")
    var method: PulseEstimator.Method = .pos

    @Option(help: "The method a moving face's windows are read with: pos, chrom or pbv (default: the estimator's).")
    var movingMethod: PulseEstimator.Method?

    @Option(help: "How a window combines the face's skin regions: pixels or inverse-power.")
    var regionWeights: PulseEstimator.RegionWeights = PulseEstimator.Configuration().regionWeights

    @Option(help: "Seconds between two readings of a reported rate between windows (inf: held for a window's interval).")
    var refineInterval: Double = PulseEstimator.Configuration().refineInterval

    @Flag(inversion: .prefixedNo, help: "Regress the face's own motion out of its colours (PulseMotion).")
    var motionReference = PulseEstimator.Configuration().motionReference

    @Flag(inversion: .prefixedNo, help: "Regress each motion feature's rate of change out too.")
    var motionVelocity = PulseEstimator.Configuration().motionVelocity

    @Option(help: "How far (pixels) each face sways from side to side at 78 per minute, its eyes 80 pixels apart (0: still; 2 or more: moving, its motion regressed out).")
    var sway: Double = 4

    func validate() throws {
        guard (1...100_000).contains(tracks), seconds > 0, seconds <= 3600, fps > 0, fps <= 1000 else {
            throw ValidationError("--tracks 1...100000, --seconds 0...3600, --fps 0...1000")
        }
        guard (0...1000).contains(sway) else { throw ValidationError("--sway 0...1000") }
        guard refineInterval >= 0 else { throw ValidationError("--refine-interval 0 or more (inf: never)") }
    }

    struct Report: Encodable {
        var samples: Int
        var estimates: Int
        var cpuSeconds: Double
        var msPerEstimate: Double
        var msPerTrackSecond: Double
        var reported: Double
    }

    func run() throws {
        var configuration = PulseEstimator.Configuration()
        configuration.method = method
        configuration.movingMethod = movingMethod ?? configuration.movingMethod
        configuration.regionWeights = regionWeights
        configuration.refineInterval = refineInterval
        configuration.motionReference = motionReference
        configuration.motionVelocity = motionVelocity
        let frames = Int(seconds * fps)
        var samples = 0
        var estimates = 0
        var reported = 0
        let start = CollectorLoad.processCPUSeconds()
        for track in 0..<tracks {
            var estimator = PulseEstimator(configuration: configuration)
            var previous: PulseEstimator.Reading?
            for i in 0..<frames {
                let t = Double(i) / fps
                let pulse = 0.003 * sin(2 * Double.pi * 1.2 * t + Double(track))
                // Three regions, as a worker sends them: the collector reads each one's peak too.
                let regions = PulseEstimator.Region.allCases.map { region -> PulseEstimator.RegionColour in
                    let noise = 0.001 * sin(Double((i &* 7919 &+ region.index &* 104_729) % 1000))
                    return .init(
                        region: region, r: 160 * (1 + 0.33 * pulse + noise), g: 115 * (1 + 0.77 * pulse - noise),
                        b: 95 * (1 + 0.53 * pulse + noise), pixels: region == .forehead ? 4000 : 1800)
                }
                let sway = self.sway * sin(2 * Double.pi * 1.3 * t + Double(track))
                let geometry = PulseMotion.Geometry(
                    leftEye: SIMD2(300 + sway, 200), rightEye: SIMD2(380 + sway, 201), mouth: SIMD2(340 + sway, 290 + sway / 4),
                    bounds: SIMD4(260 + sway, 120, 160, 210))
                let estimate = estimator.add(timeUs: Int64(t * 1_000_000), regions: regions, geometry: geometry)
                samples += 1
                if let latest = estimator.latest, latest != previous {
                    estimates += 1
                    if estimate != nil { reported += 1 }
                }
                previous = estimator.latest
            }
        }
        let cpu = CollectorLoad.processCPUSeconds() - start
        try printJSON(Report(
            samples: samples, estimates: estimates, cpuSeconds: cpu, msPerEstimate: estimates > 0 ? cpu * 1000 / Double(estimates) : 0,
            msPerTrackSecond: cpu * 1000 / (Double(tracks) * seconds), reported: estimates > 0 ? Double(reported) / Double(estimates) : 0))
    }
}

/// `--method pos|chrom|pbv`: ArgumentParser refuses any other value, listing these.
extension PulseEstimator.Method: ExpressibleByArgument {}

/// `--region-weights pixels|inverse-power`, likewise.
extension PulseEstimator.RegionWeights: ExpressibleByArgument {}

struct PulseReplayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pulse-replay",
        abstract: "A test tool: the heart-rate estimator run again on the skin colours of recorded JSON Lines.",
        discussion: """
            Reads the JSON Lines of one stream (as tail prints them, with the pulse classifier's "skin"), feeds the \
            largest face of every processed frame to one estimator on --clock (its regions, and its eyes, mouth and \
            box as the motion reference unless --no-motion-reference), and writes each such frame again as a short \
            line: its epoch and seq, status, the clock's time (under its own key), that face's bounds and the heartRate the estimator \
            gives now, and the newest window's reading (reported or not: what the gate saw). Lines that are not JSON, \
            not processed, or whose time is not finite or beyond 64-bit microseconds are skipped. For exploring the estimator's settings on the same inputs without running the cluster again.
            """
    )

    @Option(help: "The recorded JSON Lines (- for standard input).")
    var input: String = "-"

    @Option(help: "The time the estimator reads: mediaTime or captureTime.")
    var clock: String = "mediaTime"

    @Flag(inversion: .prefixedNo, help: "Regress the face's own motion out of its colours.")
    var motionReference = PulseEstimator.Configuration().motionReference

    @Option(help: "The motion regression's ridge.")
    var motionRidge: Double = PulseEstimator.Configuration().motionRidge

    @Option(help: "The smallest motion regressed out (amplitude in the band, in eye distances).")
    var motionFloor: Double = PulseEstimator.Configuration().motionFloor

    @Option(help: "Seconds after which a series' first estimate is made (at most the 10 s window).")
    var firstWindow: Double = PulseEstimator.Configuration().firstWindow

    @Option(help: "Extra signature SNR (dB) a peak on the face's own motion needs.")
    var motionPenalty: Double = PulseEstimator.Configuration().motionPenalty

    @Option(help: "How near (bpm) a peak must be to the motion's (or its harmonic) to count as on it.")
    var motionSpread: Double = PulseEstimator.Configuration().motionSpread

    @Option(help: "A peak where the face moves by at least this much (amplitude, eye distances) counts as on the motion (0: off).")
    var motionPeakFloor: Double = PulseEstimator.Configuration().motionPeakFloor

    @Flag(inversion: .prefixedNo, help: "Read a moving face's forehead on the mesh (meshSkin), where every sample has one.")
    var meshForehead = PulseEstimator.Configuration().meshForehead

    @Flag(inversion: .prefixedNo, help: "Regress each motion feature's rate of change out too (colour that lags the motion).")
    var motionVelocity = PulseEstimator.Configuration().motionVelocity

    @Option(help: "Seconds of the newest pulse signal whose peak near the window's is the reported rate (0: the window's own).")
    var refineWindow: Double = PulseEstimator.Configuration().refineWindow

    @Option(help: "Where the refining taper peaks, as a share of its length (0.5: a Hann window).")
    var refinePeak: Double = PulseEstimator.Configuration().refinePeak

    @Option(help: "How far (bpm) from the window's peak the reported rate is looked for.")
    var refineSpan: Double = PulseEstimator.Configuration().refineSpan

    @Option(help: "Beats at the window's peak rate the refinement reads when they take less than --refine-window (at least 3 s); 0: always --refine-window.")
    var refineCycles: Double = PulseEstimator.Configuration().refineCycles

    @Option(help: "The projection the rate is read from: pos, chrom or pbv.")
    var method: PulseEstimator.Method = PulseEstimator.Configuration().method

    @Option(help: "The projection a moving face's windows are read with (default: the estimator's).")
    var movingMethod: PulseEstimator.Method?

    @Option(help: "How a window combines the face's skin regions: pixels or inverse-power.")
    var regionWeights: PulseEstimator.RegionWeights = PulseEstimator.Configuration().regionWeights

    func validate() throws {
        guard (0...60).contains(refineCycles) else { throw ValidationError("--refine-cycles 0...60 (0: --refine-window seconds)") }
        guard (0...10).contains(refineWindow), (0.5...1).contains(refinePeak), (0...30).contains(refineSpan) else {
            throw ValidationError("--refine-window 0...10, --refine-peak 0.5...1, --refine-span 0...30")
        }
        guard ["mediaTime", "captureTime"].contains(clock) else { throw ValidationError("--clock mediaTime or captureTime") }
        guard motionRidge >= 0, motionRidge.isFinite else { throw ValidationError("--motion-ridge 0 or more") }
        guard motionPeakFloor >= 0, motionPeakFloor.isFinite else { throw ValidationError("--motion-peak-floor 0 or more (0: off)") }
        guard firstWindow >= 1, firstWindow.isFinite else { throw ValidationError("--first-window 1 or more") }
    }

    func run() throws {
        var configuration = PulseEstimator.Configuration()
        configuration.motionReference = motionReference
        configuration.motionRidge = motionRidge
        configuration.motionPenalty = motionPenalty
        configuration.firstWindow = firstWindow
        configuration.motionFloor = motionFloor
        configuration.motionSpread = motionSpread
        configuration.motionPeakFloor = motionPeakFloor
        configuration.meshForehead = meshForehead
        configuration.motionVelocity = motionVelocity
        configuration.refineWindow = refineWindow
        configuration.refinePeak = refinePeak
        configuration.refineSpan = refineSpan
        configuration.refineCycles = refineCycles
        configuration.method = method
        configuration.movingMethod = movingMethod ?? configuration.movingMethod
        configuration.regionWeights = regionWeights
        var estimator = PulseEstimator(configuration: configuration)
        let data = input == "-" ? FileHandle.standardInput.readDataToEndOfFile() : try Data(contentsOf: URL(fileURLWithPath: input))
        func point(_ value: Any?) -> SIMD2<Double>? {
            guard let p = value as? [String: Any], let x = (p["x"] as? NSNumber)?.doubleValue, let y = (p["y"] as? NSNumber)?.doubleValue
            else { return nil }
            return SIMD2(x, y)
        }
        var out = ""
        for line in data.split(separator: 0x0A) {
            guard let message = try? JSONSerialization.jsonObject(with: line) as? [String: Any],
                message["status"] as? String == "processed", let time = (message[clock] as? NSNumber)?.doubleValue,
                // A time that is not finite or does not fit in 64-bit microseconds is skipped, not converted (a trap).
                let timeUs = Int64(exactly: (time * 1_000_000).rounded()), let faces = message["faces"] as? [[String: Any]]
            else { continue }
            func box(_ face: [String: Any]) -> SIMD4<Double> {
                let b = face["bounds"] as? [String: Any] ?? [:]
                return SIMD4(["x", "y", "width", "height"].map { (b[$0] as? NSNumber)?.doubleValue ?? 0 })
            }
            guard let face = faces.max(by: { box($0).z * box($0).w < box($1).z * box($1).w }) else { continue }
            func regions(_ key: String) -> [PulseEstimator.RegionColour] {
                (face[key] as? [[String: Any]] ?? []).compactMap { skin -> PulseEstimator.RegionColour? in
                    guard let name = skin["region"] as? String, let region = PulseEstimator.Region(rawValue: name) else { return nil }
                    let value = { (key: String) in (skin[key] as? NSNumber)?.doubleValue ?? .nan }
                    return .init(region: region, r: value("r"), g: value("g"), b: value("b"), pixels: value("pixels"))
                }
            }
            let geometry = point(face["leftEyePosition"]).flatMap { left in
                point(face["rightEyePosition"]).map { right in
                    PulseMotion.Geometry(leftEye: left, rightEye: right, mouth: point(face["mouthPosition"]), bounds: box(face))
                }
            }
            let estimate = estimator.add(
                timeUs: timeUs, regions: regions("skin"), geometry: geometry,
                meshForehead: regions("meshSkin").first { $0.region == .forehead })
            let b = box(face)
            let numbering = ["epoch", "seq"].compactMap { key in (message[key] as? NSNumber).map { "\"\(key)\":\($0)," } }.joined()
            out += "{\(numbering)\"status\":\"processed\",\"\(clock)\":\(time),\"faces\":[{\"bounds\":{\"x\":\(b.x),\"y\":\(b.y),\"width\":\(b.z),\"height\":\(b.w)}"
            if let estimate { out += ",\"heartRate\":{\"bpm\":\(estimate.bpm),\"snr\":\(estimate.snr),\"window\":\(estimate.window)}" }
            out += "}]"
            if let r = estimator.latest {
                // The newest window's reading, reported or not: what the gate saw.
                out += ",\"reading\":{\"bpm\":\(r.bpm),\"signatureBPM\":\(r.signatureBPM ?? 0),\"signatureSNR\":\(r.signatureSNR)"
                out += ",\"angle\":\(r.signatureAngle),\"regions\":\(r.regions),\"agreeing\":\(r.regionsAgreeing),\"motionBPM\":\(r.motionBPM ?? 0),\"motionAtPeak\":\(r.motionAtPeak ?? 0),\"meshForehead\":\(r.meshForehead)"
                if let w = r.regionWeights { out += ",\"regionWeights\":[\(w.map { "\($0)" }.joined(separator: ","))]" }
                out += "}"
            }
            out += "}\n"
        }
        FileHandle.standardOutput.write(Data(out.utf8))
    }
}
