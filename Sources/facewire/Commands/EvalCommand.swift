import ArgumentParser
import FacewireDetection
import Foundation
import FacewirePulse
import FacewireEvaluation

/// `facewire eval`: scores a detector backend on an annotated image set (the `faces/dev.jsonl` format).
struct EvalCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eval",
        abstract: "Score a detector on an annotated image set (AP, recall, eye error, false positives, ms/image), the face attributes on a labelled set (--attributes), or the pulse estimator (--pulse).",
        discussion: """
            Reads a JSON-lines annotation file (the format of ../shared/data/faces/dev.jsonl; image paths are \
            relative to it), decodes every image once, runs the detector at --eval-threshold on each image for the \
            detections, then times a second, warm call of a detector at --score-threshold (resize + detection + \
            post-processing, decoding excluded), and prints a table and a JSON summary.
            AP is at IoU --iou (0.4) with all-points interpolation over every image, from detections at \
            --eval-threshold; faces under --min-face-height (20 px) tall are not counted and a detection matching \
            one is not a false positive. Recall at --fppi (0.1) false positives per image sweeps the score \
            threshold. Recall by face height, eye NME (mean eye error / annotated inter-ocular distance, eyes \
            paired by x order) and false positives on the face-free images use --score-threshold (the backend's \
            default). evaluation/eval-baseline.py computes the same figures with OpenCV-Python (BENCHMARKS.md).

            With --pulse, scores the heart-rate estimator (POS and CHROM) on the skin-region videos of \
            --pulse-data against each recording's mean oximeter rate: the mean colour of every frame (its skin \
            pixels, or the whole frame where the skin test keeps too few), at frame index / fps, through \
            PulseEstimator; per region file the median reported rate, per recording the median of its regions, the \
            mean absolute errors and a constant guess's. evaluation/eval-pulse.py sets it beside pyVHR's POS and CHROM \
            on the same traces (--traces).

            With --attributes, scores smile, eyes closed and head pose instead, on the largest face of each image,             with the worker's own attribute pipeline: --attributes LABELS.tsv (GENKI-4K's format: file, smile, yaw,             pitch, roll in radians) or --attributes DIR holding closed/ and open/ folders of faces (both eyes closed,             both open; padded by --pad, 0.3 by default, before detection).
            """
    )

    @Option(help: "The annotation file (JSON lines: image, width, height, source, faces[box, landmarks]).")
    var annotations: String?

    @Option(help: "With --annotations: faces the annotation leaves out (JSON lines: image, faces[[x, y, w, h]]), ignored: detecting one is neither a true nor a false positive. evaluation/dev-unannotated.jsonl holds ours for ../shared/data/faces/dev.jsonl.")
    var unannotated: String?

    @Option(help: "Score the face attributes instead: a GENKI-style labels.tsv, or a folder with closed/ and open/ face folders.")
    var attributes: String?

    @Flag(help: "Score the pulse estimator instead, on the skin-region videos of --pulse-data (ground_truth.tsv: one mean oximeter rate per recording).")
    var pulse = false

    @Option(help: "With --pulse: the folder with ground_truth.tsv and <country>/<video>_<region>.avi.")
    var pulseData: String = "../shared/data/pulse"

    @Option(help: "With --pulse: only this recording (country/video, as India/video10); may be given more than once.")
    var pulseRecording: [String] = []

    @Option(help: "With --pulse: write each region file's per-frame colour trace here (JSON lines: recording, region, truth, fps, input, left_out, t, rgb), for another implementation to run on the same inputs.")
    var traces: String?

    @Option(help: "With --attributes: pad each image by this fraction of its size on every side (edge pixels repeated) before detection. Default 0.3 for closed/open folders, 0 for a labels file.")
    var pad: Double?

    @Option(help: "With --attributes: the classifiers to score (as --classifiers on a worker).")
    var classifiers: String = "all"

    @OptionGroup var attributeModels: AttributeModelOptions

    @OptionGroup var detector: DetectorOptions

    @Option(help: "Score threshold the detector runs with, so AP sees the whole curve (default: yunet 0.3, centerface 0.1, cascade 0).")
    var evalThreshold: Float?

    @Option(help: "Accuracy: low (the backend's input width) or high (twice that, as --accuracy high does on a worker).")
    var accuracy: String = "low"

    @Option(help: "Write the raw detections (at --eval-threshold) here, one JSON line per image.")
    var dump: String?

    @Option(help: "Also write the JSON summary to this file; '-' prints only the JSON on stdout (table on stderr).")
    var json: String?

    @Option(help: "OpenCV threads (cv::setNumThreads); 1 compares with a one-thread baseline.")
    var threads: Int = 1

    @Option(help: "Minimum IoU for a detection to match a face.")
    var iou: Float = 0.4

    @Option(help: "Faces shorter than this (px) are not counted; detections of them are not false positives.")
    var minFaceHeight: Float = 20

    @Option(help: "False positives per image for the recall-at-FPPI figure.")
    var fppi: Double = 0.1

    @Option(help: "A label for the report (default: backend and width).")
    var name: String?

    func validate() throws {
        guard [annotations != nil, attributes != nil, pulse].filter({ $0 }).count == 1 else {
            throw ValidationError("give exactly one of --annotations (detector), --attributes (face attributes) and --pulse (heart rate)")
        }
        if unannotated != nil, annotations == nil { throw ValidationError("--unannotated goes with --annotations") }
        if !pulse, traces != nil || !pulseRecording.isEmpty {
            throw ValidationError("--traces and --pulse-recording go with --pulse")
        }
        if let pad, !(0...4).contains(pad) { throw ValidationError("--pad must be in 0...4, not \(pad)") }
        guard (0...1).contains(iou), iou > 0 else { throw ValidationError("--iou must be in (0, 1], not \(iou)") }
        guard minFaceHeight >= 0 else { throw ValidationError("--min-face-height must be >= 0") }
        guard fppi > 0, fppi.isFinite else { throw ValidationError("--fppi must be positive") }
        guard threads >= 1 else { throw ValidationError("--threads must be at least 1") }
        if let evalThreshold, !(0...1).contains(evalThreshold) {
            throw ValidationError("--eval-threshold must be in 0...1, not \(evalThreshold)")
        }
        guard AnalysisOptions.Accuracy(rawValue: accuracy.lowercased()) != nil else {
            throw ValidationError("--accuracy must be low or high, not '\(accuracy)'")
        }
    }

    func run() throws {
        if let attributes { return try runAttributes(attributes) }
        if pulse { return try runPulse() }
        let annotations = self.annotations ?? ""
        let annotationURL = URL(fileURLWithPath: annotations)
        guard FileManager.default.isReadableFile(atPath: annotationURL.path) else {
            throw ValidationError("--annotations \(annotations): no such readable file")
        }
        let dumpHandle = try dump.map(Self.createFile)
        let jsonHandle = try json.flatMap { $0 == "-" ? nil : try Self.createFile($0) }
        setOpenCVThreads(threads)

        // The operating point is what the backend runs with in production; the detector itself runs lower.
        var resolved = try detector.configuration().resolve()
        if let note = resolved.note { Self.log("note: \(note)") }
        let operatingThreshold = resolved.scoreThreshold
        let evaluationThreshold = evalThreshold ?? Self.defaultEvaluationThreshold(resolved.backend)
        guard evaluationThreshold <= operatingThreshold else {
            throw ValidationError(
                "--eval-threshold \(evaluationThreshold) is above the operating threshold \(operatingThreshold)")
        }
        resolved.maxFaces = AnalysisOptions.maxFacesLimit
        // The time is taken with a second detector at the production threshold: what a stream costs.
        let timedDetector = evaluationThreshold < operatingThreshold ? try resolved.makeDetector() : nil
        resolved.scoreThreshold = evaluationThreshold
        let faceDetector = try resolved.makeDetector()
        var options = AnalysisOptions()
        options.accuracy = AnalysisOptions.Accuracy(rawValue: accuracy.lowercased()) ?? .low
        let fixedWidth = options.detectorWidth(base: resolved.inputWidth, imageWidth: resolved.inputWidth)
        // At the default width each image runs where a worker would run it (wider for images over 1280 px).
        let followsImage = resolved.inputWidthFollowsImage && options.accuracy == .low
        let width = followsImage ? nil : fixedWidth

        let clock = ContinuousClock()
        var start = clock.now
        let evaluator = try DetectorEvaluator(
            annotationFile: annotationURL, unannotatedFaces: unannotated.map { URL(fileURLWithPath: $0) },
            criteria: MatchingCriteria(iouThreshold: iou, minimumFaceHeight: minFaceHeight))
        Self.log("loaded and decoded \(evaluator.images.count) images in \(clock.now - start)")
        start = clock.now
        let detections = try evaluator.run(detector: faceDetector, timedDetector: timedDetector, inputWidth: width) { done in
            if done % 100 == 0 { Self.log("\(done)/\(evaluator.images.count) images") }
        }
        Self.log("detected in \(clock.now - start)")

        let label =
            name ?? "\(resolved.backend.rawValue) \(fixedWidth.map(String.init) ?? "full")"
            + (resolved.refineLandmarks || resolved.backend == .cascade ? "" : " (landmark refinement off)")
            + (unannotated == nil ? "" : " (unannotated faces ignored)")
        let report = EvaluationReport.compute(
            name: label, annotations: evaluator.annotations, detections: detections.faces,
            milliseconds: detections.milliseconds, criteria: evaluator.criteria,
            operatingThreshold: operatingThreshold, fppiBudget: fppi)
        let summary = EvaluationSummary(
            run: EvaluationSummary.Run(
                implementation: "facewire", annotations: annotations, backend: resolved.backend.rawValue,
                model: resolved.modelPath, inputWidth: fixedWidth, evaluationThreshold: evaluationThreshold,
                threads: threads),
            report: report)
        let jsonText = try summary.jsonString()

        if let dumpHandle {
            var text = ""
            for (annotation, faces) in zip(evaluator.annotations, detections.faces) {
                text += DetectionDump.line(image: annotation.image, faces: faces) + "\n"
            }
            try Self.write(text, to: dumpHandle, path: dump ?? "")
        }
        if let jsonHandle { try Self.write(jsonText + "\n", to: jsonHandle, path: json ?? "") }

        let table = report.metricTable()
        if json == "-" {
            FileHandle.standardError.write(Data((table + "\n").utf8))
            print(jsonText)
        } else {
            print(table)
            print()
            print(jsonText)
        }
    }

    /// The score threshold each backend runs with for AP (low enough that the curve reaches its full recall).
    static func defaultEvaluationThreshold(_ backend: DetectorConfiguration.Backend) -> Float {
        switch backend {
        case .yunet: 0.3
        case .centerface: 0.1
        case .cascade, .auto, .synthetic, .noop: 0
        }
    }

    /// Creates (truncates) an output file up front, so a bad path fails before the slow part.
    static func createFile(_ path: String) throws -> FileHandle {
        guard FileManager.default.createFile(atPath: path, contents: nil),
            let handle = FileHandle(forWritingAtPath: path)
        else {
            throw ValidationError("cannot create \(path) (does its folder exist and is it writable?)")
        }
        return handle
    }

    static func write(_ text: String, to handle: FileHandle, path: String) throws {
        do {
            try handle.write(contentsOf: Data(text.utf8))
            try handle.close()
        } catch {
            throw ValidationError("cannot write \(path): \(error)")
        }
    }

    /// Progress goes to stderr so stdout stays the report.
    static func log(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
