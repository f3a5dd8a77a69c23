import FacewireDetection
import Foundation

/// The JSON summary `facewire eval` prints, and `evaluation/eval-baseline.py` prints with the same keys, so the two
/// can be compared field by field. Keys are snake_case and written sorted; ratios are rounded to 6 decimals and
/// times to 3.
///
/// ```json
/// {"implementation": "facewire", "backend": "yunet", "input_width": 320, "ap": 0.906, "images": 396,
///  "recall_at_fppi": {"fppi": 0.1, "recall": 0.87, "threshold": 0.84, ...},
///  "operating": {"threshold": 0.6, "recall": 0.93, "recall_by_height": [{"bucket": "20-40", ...}], ...},
///  "eye_nme": {"count": 1200, "mean": 0.07, "median": 0.05},
///  "timing": {"ms_per_image_mean": 15.2, "ms_per_image_median": 14.1, "includes_decode": false, ...}, ...}
/// ```
public struct EvaluationSummary: Encodable, Sendable, Equatable {
    /// What was run, as the command line chose it.
    public struct Run: Sendable, Equatable {
        /// `facewire` or `opencv-python <version>`.
        public var implementation: String
        /// The annotation file.
        public var annotations: String
        /// `yunet`, `centerface` or `cascade`.
        public var backend: String
        /// The model file (`nil`: the cascade's default).
        public var model: String?
        /// The width the detector ran at.
        public var inputWidth: Int?
        /// The score threshold the detector ran with (low, so AP sees the whole curve).
        public var evaluationThreshold: Float
        /// OpenCV threads (`cv::setNumThreads`).
        public var threads: Int
        /// The OpenCV version, when known.
        public var openCVVersion: String?

        /// Creates run information.
        public init(
            implementation: String, annotations: String, backend: String, model: String?, inputWidth: Int?,
            evaluationThreshold: Float, threads: Int, openCVVersion: String? = nil
        ) {
            self.implementation = implementation
            self.annotations = annotations
            self.backend = backend
            self.model = model
            self.inputWidth = inputWidth
            self.evaluationThreshold = evaluationThreshold
            self.threads = threads
            self.openCVVersion = openCVVersion
        }
    }

    /// What was run.
    public var run: Run
    /// The scores.
    public var report: EvaluationReport

    /// What the timing measures, stated in the JSON so the baseline can be checked to measure the same thing.
    public static let timingDescription =
        "second (warm) detect call per already decoded image, at the operating threshold: resize to the input width, detection and post-processing, mapping boxes back; JPEG/PNG decode excluded"

    /// Creates a summary.
    public init(run: Run, report: EvaluationReport) {
        self.run = run
        self.report = report
    }

    /// The summary as pretty-printed JSON with sorted keys (no trailing newline).
    public func jsonString() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }

    private enum Key: String, CodingKey {
        case implementation, annotations, backend, model, name, images, ap, operating, timing
        case inputWidth = "input_width", evaluationThreshold = "evaluation_threshold", threads = "opencv_threads"
        case openCVVersion = "opencv_version", iouThreshold = "iou_threshold", minFaceHeight = "min_face_height"
        case negativeImages = "negative_images", countedFaces = "counted_faces", apBySource = "ap_by_source"
        case recallAtFPPI = "recall_at_fppi", eyeNME = "eye_nme"
        case apTruePositives = "ap_true_positives", apFalsePositives = "ap_false_positives"
        case apIgnoredDetections = "ap_ignored_detections", maximumRecall = "max_recall"
    }

    private enum NestedKey: String, CodingKey {
        case fppi, recall, threshold, precision, count, mean, median, bucket, faces, found, what
        case truePositives = "true_positives", falsePositives = "false_positives"
        case falsePositivesOnNegatives = "false_positives_on_negatives"
        case negativeImagesWithFalsePositives = "negative_images_with_false_positives"
        case recallByHeight = "recall_by_height", minHeight = "min_height", maxHeight = "max_height"
        case msMean = "ms_per_image_mean", msMedian = "ms_per_image_median", includesDecode = "includes_decode"
    }

    public func encode(to encoder: Encoder) throws {
        func rounded(_ value: Double, _ digits: Int = 6) -> Double {
            let scale = (0..<digits).reduce(1.0) { value, _ in value * 10 }
            return (value * scale).rounded() / scale
        }
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(run.implementation, forKey: .implementation)
        try container.encode(run.annotations, forKey: .annotations)
        try container.encode(run.backend, forKey: .backend)
        try container.encode(run.model, forKey: .model)
        try container.encode(run.inputWidth, forKey: .inputWidth)
        try container.encode(run.evaluationThreshold, forKey: .evaluationThreshold)
        try container.encode(run.threads, forKey: .threads)
        try container.encode(run.openCVVersion, forKey: .openCVVersion)
        try container.encode(report.name, forKey: .name)
        try container.encode(report.criteria.iouThreshold, forKey: .iouThreshold)
        try container.encode(report.criteria.minimumFaceHeight, forKey: .minFaceHeight)
        try container.encode(report.imageCount, forKey: .images)
        try container.encode(report.negativeImages, forKey: .negativeImages)
        try container.encode(report.averagePrecision.countedFaces, forKey: .countedFaces)
        try container.encode(rounded(report.averagePrecision.value), forKey: .ap)
        try container.encode(report.averagePrecision.truePositives, forKey: .apTruePositives)
        try container.encode(report.averagePrecision.falsePositives, forKey: .apFalsePositives)
        try container.encode(report.averagePrecision.ignoredDetections, forKey: .apIgnoredDetections)
        try container.encode(rounded(report.averagePrecision.maximumRecall), forKey: .maximumRecall)
        try container.encode(report.averagePrecisionBySource.mapValues { rounded($0) }, forKey: .apBySource)

        var fppi = container.nestedContainer(keyedBy: NestedKey.self, forKey: .recallAtFPPI)
        let atFPPI = report.recallAtFalsePositiveRate
        try fppi.encode(atFPPI.falsePositivesPerImage, forKey: .fppi)
        try fppi.encode(rounded(atFPPI.recall), forKey: .recall)
        try fppi.encode(atFPPI.threshold, forKey: .threshold)
        try fppi.encode(atFPPI.truePositives, forKey: .truePositives)
        try fppi.encode(atFPPI.falsePositives, forKey: .falsePositives)

        var operating = container.nestedContainer(keyedBy: NestedKey.self, forKey: .operating)
        try operating.encode(report.operatingThreshold, forKey: .threshold)
        try operating.encode(rounded(report.recallAtOperatingThreshold), forKey: .recall)
        try operating.encode(rounded(report.precisionAtOperatingThreshold), forKey: .precision)
        try operating.encode(report.truePositivesAtOperatingThreshold, forKey: .truePositives)
        try operating.encode(report.falsePositivesAtOperatingThreshold, forKey: .falsePositives)
        try operating.encode(report.falsePositivesOnNegatives, forKey: .falsePositivesOnNegatives)
        try operating.encode(report.negativeImagesWithFalsePositives, forKey: .negativeImagesWithFalsePositives)
        var buckets = operating.nestedUnkeyedContainer(forKey: .recallByHeight)
        for bucket in report.recallByHeight.buckets {
            var entry = buckets.nestedContainer(keyedBy: NestedKey.self)
            try entry.encode(bucket.label, forKey: .bucket)
            try entry.encode(bucket.lower, forKey: .minHeight)
            try entry.encode(bucket.upper, forKey: .maxHeight)
            try entry.encode(bucket.faces, forKey: .faces)
            try entry.encode(bucket.found, forKey: .found)
            try entry.encode(rounded(bucket.recall), forKey: .recall)
        }

        var eyes = container.nestedContainer(keyedBy: NestedKey.self, forKey: .eyeNME)
        try eyes.encode(report.eyeError.count, forKey: .count)
        try eyes.encode(rounded(report.eyeError.mean), forKey: .mean)
        try eyes.encode(rounded(report.eyeError.median), forKey: .median)

        var timing = container.nestedContainer(keyedBy: NestedKey.self, forKey: .timing)
        try timing.encode(rounded(report.meanMilliseconds, 3), forKey: .msMean)
        try timing.encode(rounded(report.medianMilliseconds, 3), forKey: .msMedian)
        try timing.encode(false, forKey: .includesDecode)
        try timing.encode(Self.timingDescription, forKey: .what)
    }
}
