import Foundation
import Testing
import FacewirePulse

/// ``PulseEvaluation``: the ground truth, the rates of one trace, the medians, the errors and the table, with no data.
@Suite("Pulse evaluation (facewire eval --pulse)")
struct PulseEvaluationTests {
    typealias Rate = PulseEvaluation.Rate
    typealias RegionResult = PulseEvaluation.RegionResult

    // MARK: - Ground truth

    @Test func parsesTheGroundTruth() throws {
        let text = "country\tvideo\tmean_heart_rate_bpm\tregions\nIndia\tvideo1\t85.413\tforehead+leftcheek\n\nSierra_Leone\tvideo42\t72.511\trightcheek\n"
        let recordings = try PulseEvaluation.parseGroundTruth(text)
        #expect(recordings.count == 2)
        #expect(recordings[0] == PulseEvaluation.Recording(country: "India", video: "video1", truth: 85.413, regions: ["forehead", "leftcheek"]))
        #expect(recordings[0].name == "India/video1")
        #expect(recordings[0].file(region: "leftcheek") == "India/video1_leftcheek.avi")
        #expect(recordings[1].regions == ["rightcheek"])
    }

    @Test(arguments: [
        "",
        "country\tvideo\tregions\nIndia\tvideo1\tforehead",
        "country\tvideo\tmean_heart_rate_bpm\tregions\nIndia\tvideo1\tfast\tforehead",
        "country\tvideo\tmean_heart_rate_bpm\tregions\nIndia\tvideo1\t-3\tforehead",
        "country\tvideo\tmean_heart_rate_bpm\tregions\nIndia\tvideo1\t80",
        "country\tvideo\tmean_heart_rate_bpm\tregions\nIndia\tvideo1\t80\t",
    ])
    func refusesABrokenGroundTruth(_ text: String) {
        #expect(throws: PulseEvaluation.FormatError.self) { try PulseEvaluation.parseGroundTruth(text) }
    }

    // MARK: - One trace

    /// `seconds` of skin colour at `fps` with a pulse of `bpm` along the blood-volume direction (none for nil).
    static func trace(bpm: Double?, seconds: Double, fps: Double = 15, truth: Double = 72) -> PulseEvaluation.Trace {
        let frames = Int(seconds * fps)
        var t: [Double] = []
        var rgb: [[Double]] = []
        for i in 0..<frames {
            let time = Double(i) / fps
            let pulse = bpm.map { 0.004 * sin(2 * .pi * $0 / 60 * time) } ?? 0
            let light = 1 + 0.01 * sin(2 * .pi * 0.07 * time)
            t.append(time)
            rgb.append([160 * light * (1 + 0.33 * pulse), 115 * light * (1 + 0.77 * pulse), 95 * light * (1 + 0.53 * pulse)])
        }
        return PulseEvaluation.Trace(recording: "A/v1", region: "forehead", truth: truth, fps: fps, input: "skin", leftOut: 0, t: t, rgb: rgb)
    }

    @Test(arguments: PulseEstimator.Method.allCases)
    func findsAClearPulse(_ method: PulseEstimator.Method) throws {
        var configuration = PulseEstimator.Configuration()
        configuration.method = method
        let rate = PulseEvaluation.rate(Self.trace(bpm: 72, seconds: 40), configuration: configuration)
        #expect(rate.confident)
        #expect(abs(try #require(rate.bpm) - 72) < 3)
        // Estimates from the first full window on: about 30 of the 40 s, most of them reported.
        #expect(abs(rate.estimateSeconds - 30) < 1.5)
        #expect(try #require(rate.reportedFraction) > 0.5)
        #expect(rate.reportedSeconds <= rate.estimateSeconds)
    }

    @Test func aTraceShorterThanAWindowHasNoRate() {
        let rate = PulseEvaluation.rate(Self.trace(bpm: 72, seconds: 5), configuration: .init())
        #expect(rate.bpm == nil)
        #expect(!rate.confident)
        #expect(rate.estimateSeconds == 0)
        #expect(rate.reportedFraction == nil)
    }

    @Test func timesMicrosecondsCannotHoldAreSkippedNotTrapped() {
        // A file stating a frame rate of 1e-300 gives times past Int64's microseconds; NaN and infinity likewise.
        let times: [Double] = [.nan, .infinity, -.infinity, 1e300, -1e300, 9.3e12, 0]
        let trace = PulseEvaluation.Trace(
            recording: "x/y", region: "forehead", truth: 72, fps: 1e-300, input: "skin", leftOut: 0, t: times,
            rgb: Array(repeating: [160, 115, 95], count: times.count))
        let rate = PulseEvaluation.rate(trace, configuration: .init())
        #expect(rate.bpm == nil && rate.estimateSeconds == 0)
    }

    @Test func evaluatesPOSAndCHROM() {
        let result = PulseEvaluation.evaluate(Self.trace(bpm: 90, seconds: 30))
        #expect(result.samples == 450)
        #expect(result.recording == "A/v1" && result.region == "forehead" && result.input == "skin")
        for method in PulseEvaluation.Method.allCases {
            #expect(abs((result.rate(method).bpm ?? 0) - 90) < 3, "\(method)")
        }
    }

    @Test func aTraceReadsBackFromItsJSONLine() throws {
        var trace = Self.trace(bpm: 72, seconds: 2)
        trace.rgb[0] = [0.1 + 0.2, 1.0 / 3, 255]  // numbers that print long
        trace.leftOut = 3
        let line = try trace.jsonLine()
        #expect(!line.contains("\n"))
        #expect(line.contains("\"left_out\":3"))
        #expect(try JSONDecoder().decode(PulseEvaluation.Trace.self, from: Data(line.utf8)) == trace)
    }

    // MARK: - Medians and errors

    @Test func median() {
        #expect(PulseEvaluation.median([]) == nil)
        #expect(PulseEvaluation.median([3]) == 3)
        #expect(PulseEvaluation.median([5, 1, 3]) == 3)
        #expect(PulseEvaluation.median([4, 1, 3, 2]) == 2.5)
    }

    @Test func absoluteErrorSkipsWhatHasNoRate() {
        let error = PulseEvaluation.AbsoluteError(pairs: [(80, 70), (nil, 70), (65, 70)])
        #expect(error.mae == 7.5)
        #expect(error.count == 2)
        #expect(error.missing == 1)
        #expect(PulseEvaluation.AbsoluteError(pairs: [(nil, 70)]).mae == nil)
    }

    static func rate(_ bpm: Double?, confident: Bool = true) -> Rate {
        Rate(bpm: bpm, confident: confident, estimateSeconds: 100, reportedSeconds: confident ? 40 : 0)
    }

    static func region(_ recording: String, _ region: String, truth: Double, pos: Rate, chrom: Rate) -> RegionResult {
        RegionResult(recording: recording, region: region, truth: truth, input: "skin", samples: 1500, leftOut: 0, pos: pos, chrom: chrom)
    }

    /// Two recordings: A (truth 70) with three regions, B (truth 80) with one whose POS was not reported.
    static let regions = [
        region("A/v1", "forehead", truth: 70, pos: rate(72), chrom: rate(90)),
        region("A/v1", "leftcheek", truth: 70, pos: rate(60), chrom: rate(nil, confident: false)),
        region("A/v1", "rightcheek", truth: 70, pos: rate(75), chrom: rate(100, confident: false)),
        region("B/v2", "leftcheek", truth: 80, pos: rate(120, confident: false), chrom: rate(82)),
    ]

    @Test func summarizesRecordingsAndErrors() throws {
        let summary = PulseEvaluation.summarize(Self.regions)
        #expect(summary.recordings.map(\.recording) == ["A/v1", "B/v2"])
        let a = summary.recordings[0]
        #expect(a.truth == 70)
        #expect(a.pos.bpm == 72 && a.pos.regions == 3 && a.pos.confidentRegions == 3)
        #expect(a.chrom.bpm == 95 && a.chrom.regions == 2 && a.chrom.confidentRegions == 1)
        #expect(summary.recordings[1].pos.bpm == 120 && summary.recordings[1].pos.confidentRegions == 0)

        // POS per region file: |72-70|, |60-70|, |75-70|, |120-80| = 2, 10, 5, 40; reported only: 2, 10, 5.
        #expect(summary.pos.regions.mae == 57.0 / 4)
        #expect(summary.pos.reportedRegions.mae == 17.0 / 3 && summary.pos.reportedRegions.count == 3)
        #expect(summary.pos.recordings.mae == (2.0 + 40) / 2)
        // CHROM: 20, none, 30, 2 (one region file without a rate).
        #expect(summary.chrom.regions.mae == 52.0 / 3 && summary.chrom.regions.missing == 1)
        #expect(summary.chrom.recordings.mae == (25.0 + 2) / 2)

        // The constant guess is the mean of the recordings' rates (not of the region files').
        let guess = try #require(summary.constantGuess)
        #expect(guess.bpm == 75)
        #expect(guess.recordings.mae == 5 && guess.recordings.count == 2)
        #expect(guess.regions.mae == 5 && guess.regions.count == 4)
        #expect(summary.window == 10 && summary.band == [40, 180])
    }

    @Test func summarizesNothing() {
        let summary = PulseEvaluation.summarize([])
        #expect(summary.recordings.isEmpty)
        #expect(summary.constantGuess == nil)
        #expect(summary.pos.regions.mae == nil)
    }

    @Test func theJSONSummaryHasTheFieldsScriptsRead() throws {
        let json = try PulseEvaluation.summarize(Self.regions).jsonString()
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let regions = try #require(object["regions"] as? [[String: Any]])
        #expect(regions.count == 4)
        #expect(regions[0]["recording"] as? String == "A/v1")
        let pos = try #require(regions[0]["pos"] as? [String: Any])
        #expect(pos["bpm"] as? Double == 72 && pos["confident"] as? Bool == true)
        #expect((object["constant_guess"] as? [String: Any])?["bpm"] as? Double == 75)
        #expect(((object["pos"] as? [String: Any])?["recordings"] as? [String: Any])?["mae"] as? Double == 21)
    }

    @Test func theTableHasARowPerRegionAndRecordingAndTheErrors() {
        let table = PulseEvaluation.summarize(Self.regions).table()
        let lines = table.split(separator: "\n").map(String.init)
        #expect(lines.contains("| A/v1 | forehead | skin | 70.0 | 72.0 | 40 % | 90.0 | 40 % |"))
        #expect(lines.contains("| A/v1 | leftcheek | skin | 70.0 | 60.0 | 40 % | – | 0 % |"))
        #expect(lines.contains("| B/v2 | leftcheek | skin | 80.0 | 120.0* | 0 % | 82.0 | 40 % |"))
        #expect(lines.contains("| **A/v1** | median | | 70.0 | 72.0 | 3/3 regions | 95.0 | 1/2 regions |"))
        #expect(lines.contains { $0.hasPrefix("MAE ours POS (bpm): per region file 14.2 (n=4), per recording 21.0 (n=2)") })
        #expect(lines.contains { $0.hasPrefix("MAE ours CHROM (bpm): per region file 17.3 (n=3, 1 without a rate)") })
        #expect(lines.contains { $0.hasPrefix("MAE constant guess 75.0 bpm (the mean of the 2 oximeter rates)") })
    }
}
