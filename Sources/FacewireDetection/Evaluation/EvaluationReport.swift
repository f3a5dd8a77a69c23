/// The scores of one detector configuration on an annotated image set.
public struct EvaluationReport: Sendable, Equatable {
    /// A label for the configuration (for example "YuNet 320").
    public var name: String
    /// AP over every image (negatives included), from the detections at the evaluation threshold.
    public var averagePrecision: AveragePrecision
    /// AP per `source` group of the annotations.
    public var averagePrecisionBySource: [String: Double]
    /// The confidence threshold the detector would run with in production.
    public var operatingThreshold: Float
    /// Recall of counted faces using only detections at or above ``operatingThreshold``.
    public var recallAtOperatingThreshold: Double
    /// Precision on the positive images at ``operatingThreshold`` (matches to ignored faces left out).
    public var precisionAtOperatingThreshold: Double
    /// Number of negative (face-free) images.
    public var negativeImages: Int
    /// Detections at or above ``operatingThreshold`` on the negative images.
    public var falsePositivesOnNegatives: Int
    /// Negative images with at least one detection at or above ``operatingThreshold``.
    public var negativeImagesWithFalsePositives: Int
    /// Mean time of one `detect` call (resize included, decoding excluded).
    public var meanMilliseconds: Double
    /// Median time of one `detect` call.
    public var medianMilliseconds: Double
    /// Number of images evaluated.
    public var imageCount: Int

    /// Creates a report.
    public init(
        name: String, averagePrecision: AveragePrecision, averagePrecisionBySource: [String: Double],
        operatingThreshold: Float, recallAtOperatingThreshold: Double, precisionAtOperatingThreshold: Double,
        negativeImages: Int, falsePositivesOnNegatives: Int, negativeImagesWithFalsePositives: Int,
        meanMilliseconds: Double, medianMilliseconds: Double, imageCount: Int
    ) {
        self.name = name
        self.averagePrecision = averagePrecision
        self.averagePrecisionBySource = averagePrecisionBySource
        self.operatingThreshold = operatingThreshold
        self.recallAtOperatingThreshold = recallAtOperatingThreshold
        self.precisionAtOperatingThreshold = precisionAtOperatingThreshold
        self.negativeImages = negativeImages
        self.falsePositivesOnNegatives = falsePositivesOnNegatives
        self.negativeImagesWithFalsePositives = negativeImagesWithFalsePositives
        self.meanMilliseconds = meanMilliseconds
        self.medianMilliseconds = medianMilliseconds
        self.imageCount = imageCount
    }

    /// A Markdown table of `reports`, one row each; `sources` picks the per-source AP columns.
    public static func markdownTable(_ reports: [EvaluationReport], sources: [String] = []) -> String {
        func fixed(_ value: Double, _ digits: Int) -> String {
            let scale = pow10(digits)
            let rounded = (value * scale).rounded() / scale
            var text = "\(rounded)"
            if let dot = text.firstIndex(of: ".") {
                let decimals = text.distance(from: dot, to: text.endIndex) - 1
                if decimals < digits { text += String(repeating: "0", count: digits - decimals) }
            } else if digits > 0 {
                text += "." + String(repeating: "0", count: digits)
            }
            return text
        }
        var header = "| detector | AP@0.4 |"
        var rule = "|---|---|"
        for source in sources {
            header += " AP \(source) |"
            rule += "---|"
        }
        header += " threshold | recall@thr | precision@thr | FP on negatives (images) | ms/image mean | ms/image median |"
        rule += "---|---|---|---|---|---|"
        var lines = [header, rule]
        for report in reports {
            var line = "| \(report.name) | \(fixed(report.averagePrecision.value, 3)) |"
            for source in sources {
                line += " \(report.averagePrecisionBySource[source].map { fixed($0, 3) } ?? "–") |"
            }
            line += " \(fixed(Double(report.operatingThreshold), 2)) | \(fixed(report.recallAtOperatingThreshold, 3))"
            line += " | \(fixed(report.precisionAtOperatingThreshold, 3))"
            line += " | \(report.falsePositivesOnNegatives) (\(report.negativeImagesWithFalsePositives)/\(report.negativeImages))"
            line += " | \(fixed(report.meanMilliseconds, 1)) | \(fixed(report.medianMilliseconds, 1)) |"
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }

    private static func pow10(_ digits: Int) -> Double {
        (0..<max(0, digits)).reduce(1.0) { value, _ in value * 10 }
    }
}
