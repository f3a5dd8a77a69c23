import Foundation

/// ``PulseEstimator`` on recordings with a known mean heart rate (`facewire eval --pulse`, issue 16): the data set's
/// ground truth, what the estimator makes of each region's colour trace, the medians, the mean absolute errors and
/// the table. Pure: the caller decodes the videos and hands over the traces.
///
/// For one trace and method, every sample is fed to a fresh estimator at its own time. The rate is the median of the
/// rates it reported, sample by sample (so each counts for the time it was reported); when it reported none, the
/// median of its window estimates (``PulseEstimator/latest``) at every sample, marked as not confident. A recording's
/// rate is the median of its regions' rates.
public enum PulseEvaluation {
    /// The methods evaluated: those the reference implementation (pyVHR) runs beside ours.
    public enum Method: String, Sendable, CaseIterable {
        case pos, chrom

        public var estimator: PulseEstimator.Method {
            switch self {
            case .pos: .pos
            case .chrom: .chrom
            }
        }
    }

    /// One line of `ground_truth.tsv` (country, video, mean_heart_rate_bpm, regions joined by `+`).
    public struct Recording: Sendable, Equatable {
        public var country: String
        public var video: String
        /// The mean rate over the recording from the contact sensor (bpm).
        public var truth: Double
        public var regions: [String]

        public init(country: String, video: String, truth: Double, regions: [String]) {
            self.country = country
            self.video = video
            self.truth = truth
            self.regions = regions
        }

        /// `country/video`, as the table and the traces name it.
        public var name: String { "\(country)/\(video)" }

        /// The region's video file, relative to the data folder.
        public func file(region: String) -> String { "\(country)/\(video)_\(region).avi" }
    }

    public struct FormatError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Parses `ground_truth.tsv`: a header line naming at least `country`, `video`, `mean_heart_rate_bpm` and
    /// `regions`, then one tab-separated line per recording.
    public static func parseGroundTruth(_ text: String) throws -> [Recording] {
        let lines = text.split(whereSeparator: \.isNewline).map(String.init).filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        guard let header = lines.first?.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) else {
            throw FormatError(description: "ground truth: empty")
        }
        func column(_ name: String) throws -> Int {
            guard let index = header.firstIndex(of: name) else { throw FormatError(description: "ground truth: no column \(name)") }
            return index
        }
        let (country, video, rate, regions) = (try column("country"), try column("video"), try column("mean_heart_rate_bpm"), try column("regions"))
        return try lines.dropFirst().enumerated().map { number, line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == header.count else {
                throw FormatError(description: "ground truth line \(number + 2): \(fields.count) fields, the header has \(header.count)")
            }
            guard let truth = Double(fields[rate]), truth.isFinite, truth > 0 else {
                throw FormatError(description: "ground truth line \(number + 2): rate '\(fields[rate])' is not a positive number")
            }
            let names = fields[regions].split(separator: "+").map(String.init)
            guard !fields[country].isEmpty, !fields[video].isEmpty, !names.isEmpty else {
                throw FormatError(description: "ground truth line \(number + 2): country, video or regions empty")
            }
            return Recording(country: fields[country], video: fields[video], truth: truth, regions: names)
        }
    }

    /// One region file's colour trace: what the estimator is fed.
    public struct Trace: Sendable, Equatable, Codable {
        public var recording: String
        public var region: String
        /// The recording's mean rate from the contact sensor (bpm).
        public var truth: Double
        public var fps: Double
        /// What the colours are the mean of: `skin` (the skin pixels) or `frame` (every pixel).
        public var input: String
        /// Frames of the file left out of the trace (too few skin pixels).
        public var leftOut: Int
        /// Seconds from the file's start (frame index / fps).
        public var t: [Double]
        /// Mean colour (r, g, b), 0...255, at each time.
        public var rgb: [[Double]]

        public init(recording: String, region: String, truth: Double, fps: Double, input: String, leftOut: Int, t: [Double], rgb: [[Double]]) {
            self.recording = recording
            self.region = region
            self.truth = truth
            self.fps = fps
            self.input = input
            self.leftOut = leftOut
            self.t = t
            self.rgb = rgb
        }

        /// The trace as one line of JSON (keys sorted; the numbers as Swift prints them, which read back exactly).
        public func jsonLine() throws -> String {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            return String(decoding: try encoder.encode(self), as: UTF8.self)
        }

        private enum CodingKeys: String, CodingKey {
            case recording, region, truth, fps, input, t, rgb
            case leftOut = "left_out"
        }
    }

    /// What one method made of one trace.
    public struct Rate: Sendable, Equatable, Codable {
        /// The median reported rate, or when none was reported the median window estimate; nil when the estimator
        /// made no estimate at all (a trace shorter than a window).
        public var bpm: Double?
        /// Whether ``bpm`` comes from reported rates.
        public var confident: Bool
        /// Seconds during which the estimator had a window estimate, and during which it reported a rate (each
        /// sample counts 1 / fps).
        public var estimateSeconds: Double
        public var reportedSeconds: Double

        public init(bpm: Double?, confident: Bool, estimateSeconds: Double, reportedSeconds: Double) {
            self.bpm = bpm
            self.confident = confident
            self.estimateSeconds = estimateSeconds
            self.reportedSeconds = reportedSeconds
        }

        /// The fraction of the estimate seconds in which a rate was reported (nil without any estimate).
        public var reportedFraction: Double? { estimateSeconds > 0 ? reportedSeconds / estimateSeconds : nil }

        private enum CodingKeys: String, CodingKey {
            case bpm, confident
            case estimateSeconds = "estimate_seconds", reportedSeconds = "reported_seconds"
        }
    }

    /// Feeds `trace` to a fresh estimator with `configuration` and sums up what it said.
    public static func rate(_ trace: Trace, configuration: PulseEstimator.Configuration) -> Rate {
        var estimator = PulseEstimator(configuration: configuration)
        var reported: [Double] = []
        var windows: [Double] = []
        for (t, rgb) in zip(trace.t, trace.rgb) where rgb.count == 3 {
            // A time µs cannot hold (NaN, infinite, beyond Int64: a file stating a near-zero frame rate) is skipped,
            // not converted: the conversion would trap.
            guard let timeUs = Int64(exactly: (t * 1_000_000).rounded()) else { continue }
            let estimate = estimator.add(timeUs: timeUs, r: rgb[0], g: rgb[1], b: rgb[2])
            if let estimate { reported.append(estimate.bpm) }
            if let latest = estimator.latest { windows.append(latest.bpm) }
        }
        let second = trace.fps > 0 ? 1 / trace.fps : 0
        let confident = !reported.isEmpty
        return Rate(
            bpm: median(confident ? reported : windows), confident: confident,
            estimateSeconds: Double(windows.count) * second, reportedSeconds: Double(reported.count) * second)
    }

    /// One region file: the rates of both methods.
    public struct RegionResult: Sendable, Equatable, Codable {
        public var recording: String
        public var region: String
        public var truth: Double
        public var input: String
        public var samples: Int
        public var leftOut: Int
        public var pos: Rate
        public var chrom: Rate

        public init(recording: String, region: String, truth: Double, input: String, samples: Int, leftOut: Int, pos: Rate, chrom: Rate) {
            self.recording = recording
            self.region = region
            self.truth = truth
            self.input = input
            self.samples = samples
            self.leftOut = leftOut
            self.pos = pos
            self.chrom = chrom
        }

        public func rate(_ method: Method) -> Rate { method == .pos ? pos : chrom }

        private enum CodingKeys: String, CodingKey {
            case recording, region, truth, input, samples, pos, chrom
            case leftOut = "left_out"
        }
    }

    /// Both methods on one trace; `configuration`'s own method is replaced by each in turn.
    public static func evaluate(_ trace: Trace, configuration: PulseEstimator.Configuration = .init()) -> RegionResult {
        func run(_ method: Method) -> Rate {
            var configuration = configuration
            configuration.method = method.estimator
            return rate(trace, configuration: configuration)
        }
        return RegionResult(
            recording: trace.recording, region: trace.region, truth: trace.truth, input: trace.input, samples: trace.t.count,
            leftOut: trace.leftOut, pos: run(.pos), chrom: run(.chrom))
    }

    /// One recording: the median over its regions, per method.
    public struct RecordingResult: Sendable, Equatable, Codable {
        public struct Combined: Sendable, Equatable, Codable {
            /// The median of the regions' rates (nil when no region has one).
            public var bpm: Double?
            /// Regions with a rate, and how many of those were reported (confident).
            public var regions: Int
            public var confidentRegions: Int

            private enum CodingKeys: String, CodingKey {
                case bpm, regions
                case confidentRegions = "confident_regions"
            }
        }

        public var recording: String
        public var truth: Double
        public var pos: Combined
        public var chrom: Combined

        public func rate(_ method: Method) -> Combined { method == .pos ? pos : chrom }
    }

    /// A mean absolute error over the items that have a rate.
    public struct AbsoluteError: Sendable, Equatable, Codable {
        public var mae: Double?
        /// Items counted, and items that had no rate (left out).
        public var count: Int
        public var missing: Int

        public init(pairs: [(estimate: Double?, truth: Double)]) {
            let present = pairs.compactMap { pair in pair.estimate.map { abs($0 - pair.truth) } }
            mae = present.isEmpty ? nil : present.reduce(0, +) / Double(present.count)
            count = present.count
            missing = pairs.count - present.count
        }
    }

    /// The errors of one method.
    public struct MethodErrors: Sendable, Equatable, Codable {
        /// Over the region files, over the recordings (median of regions), and over the region files whose rate was
        /// reported (confident).
        public var regions: AbsoluteError
        public var recordings: AbsoluteError
        public var reportedRegions: AbsoluteError

        private enum CodingKeys: String, CodingKey {
            case regions, recordings
            case reportedRegions = "reported_regions"
        }
    }

    /// Guessing the same rate for everyone: the mean of the recordings' rates.
    public struct ConstantGuess: Sendable, Equatable, Codable {
        public var bpm: Double
        public var recordings: AbsoluteError
        public var regions: AbsoluteError
    }

    public struct Summary: Sendable, Equatable, Codable {
        public var regions: [RegionResult]
        public var recordings: [RecordingResult]
        public var pos: MethodErrors
        public var chrom: MethodErrors
        public var constantGuess: ConstantGuess?
        /// The estimator's settings (method aside).
        public var window: Double
        public var band: [Double]
        public var minSNR: Double

        public func errors(_ method: Method) -> MethodErrors { method == .pos ? pos : chrom }

        public func jsonString() throws -> String {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            return String(decoding: try encoder.encode(self), as: UTF8.self)
        }

        private enum CodingKeys: String, CodingKey {
            case regions, recordings, pos, chrom, window, band
            case constantGuess = "constant_guess", minSNR = "min_snr"
        }
    }

    /// The recordings' medians and every error, from the region files' results (in the order given; recordings in
    /// the order they first appear).
    public static func summarize(_ regions: [RegionResult], configuration: PulseEstimator.Configuration = .init()) -> Summary {
        var order: [String] = []
        var byRecording: [String: [RegionResult]] = [:]
        for region in regions {
            if byRecording[region.recording] == nil { order.append(region.recording) }
            byRecording[region.recording, default: []].append(region)
        }
        let recordings = order.map { name -> RecordingResult in
            let parts = byRecording[name] ?? []
            func combine(_ method: Method) -> RecordingResult.Combined {
                let rates = parts.map { $0.rate(method) }.filter { $0.bpm != nil }
                return RecordingResult.Combined(
                    bpm: median(rates.compactMap(\.bpm)), regions: rates.count, confidentRegions: rates.filter(\.confident).count)
            }
            return RecordingResult(recording: name, truth: parts.first?.truth ?? 0, pos: combine(.pos), chrom: combine(.chrom))
        }
        func errors(_ method: Method) -> MethodErrors {
            MethodErrors(
                regions: AbsoluteError(pairs: regions.map { ($0.rate(method).bpm, $0.truth) }),
                recordings: AbsoluteError(pairs: recordings.map { ($0.rate(method).bpm, $0.truth) }),
                reportedRegions: AbsoluteError(pairs: regions.filter { $0.rate(method).confident }.map { ($0.rate(method).bpm, $0.truth) }))
        }
        let guess = recordings.isEmpty ? nil : recordings.map(\.truth).reduce(0, +) / Double(recordings.count)
        return Summary(
            regions: regions, recordings: recordings, pos: errors(.pos), chrom: errors(.chrom),
            constantGuess: guess.map { bpm in
                ConstantGuess(
                    bpm: bpm, recordings: AbsoluteError(pairs: recordings.map { (bpm, $0.truth) }),
                    regions: AbsoluteError(pairs: regions.map { (bpm, $0.truth) }))
            },
            window: configuration.window, band: [configuration.band.lowerBound, configuration.band.upperBound],
            minSNR: configuration.minSNR)
    }

    /// The median (the mean of the middle two for an even count); nil for none.
    public static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}

extension PulseEvaluation.Summary {
    /// A Markdown table, one row per region file and one per recording (the median of its regions), then the mean
    /// absolute errors and the constant guess's.
    public func table() -> String {
        func bpm(_ value: Double?, confident: Bool = true) -> String {
            guard let value else { return "–" }
            return String(format: "%.1f", value) + (confident ? "" : "*")
        }
        func percent(_ rate: PulseEvaluation.Rate) -> String {
            rate.reportedFraction.map { String(format: "%.0f %%", $0 * 100) } ?? "–"
        }
        func mae(_ error: PulseEvaluation.AbsoluteError) -> String {
            (error.mae.map { String(format: "%.1f", $0) } ?? "–") + " (n=\(error.count)" + (error.missing > 0 ? ", \(error.missing) without a rate)" : ")")
        }
        var lines = [
            "| recording | region | input | oximeter | ours POS | POS reported | ours CHROM | CHROM reported |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for recording in recordings {
            for region in regions where region.recording == recording.recording {
                let input = region.input + (region.leftOut > 0 ? " (\(region.leftOut) frames left out)" : "")
                lines.append(
                    "| \(region.recording) | \(region.region) | \(input) | \(String(format: "%.1f", region.truth)) "
                        + "| \(bpm(region.pos.bpm, confident: region.pos.confident)) | \(percent(region.pos)) "
                        + "| \(bpm(region.chrom.bpm, confident: region.chrom.confident)) | \(percent(region.chrom)) |")
            }
            func combined(_ rate: PulseEvaluation.RecordingResult.Combined) -> String {
                "\(bpm(rate.bpm)) | \(rate.confidentRegions)/\(rate.regions) regions"
            }
            lines.append(
                "| **\(recording.recording)** | median | | \(String(format: "%.1f", recording.truth)) | \(combined(recording.pos)) "
                    + "| \(combined(recording.chrom)) |")
        }
        lines.append("")
        lines.append("\\* not reported (below the estimator's SNR or agreement gates): the median of its window estimates instead.")
        lines.append("")
        for method in PulseEvaluation.Method.allCases {
            let errors = errors(method)
            lines.append(
                "MAE ours \(method.rawValue.uppercased()) (bpm): per region file \(mae(errors.regions)), per recording \(mae(errors.recordings)), "
                    + "reported region files only \(mae(errors.reportedRegions))")
        }
        if let constantGuess {
            lines.append(
                "MAE constant guess \(String(format: "%.1f", constantGuess.bpm)) bpm (the mean of the \(recordings.count) oximeter rates): "
                    + "per region file \(mae(constantGuess.regions)), per recording \(mae(constantGuess.recordings))")
        }
        return lines.joined(separator: "\n")
    }
}
