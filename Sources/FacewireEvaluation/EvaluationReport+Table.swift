import FacewireDetection
extension EvaluationReport {
    /// A Markdown table of `reports`, one row each; `sources` picks the per-source AP columns.
    public static func markdownTable(_ reports: [EvaluationReport], sources: [String] = []) -> String {
        var header = "| detector | AP@0.4 |"
        var rule = "|---|---|"
        for source in sources {
            header += " AP \(source) |"
            rule += "---|"
        }
        header += " recall@0.1 FPPI | threshold | recall@thr | precision@thr | FP on negatives (images) |"
        header += " recall 20–40 / 40–80 / 80+ px | eye NME mean / median | ms/image mean | ms/image median |"
        rule += "---|---|---|---|---|---|---|---|---|"
        var lines = [header, rule]
        for report in reports {
            var line = "| \(report.name) | \(fixed(report.averagePrecision.value, 3)) |"
            for source in sources {
                line += " \(report.averagePrecisionBySource[source].map { fixed($0, 3) } ?? "–") |"
            }
            line += " \(fixed(report.recallAtFalsePositiveRate.recall, 3))"
            line += " | \(fixed(Double(report.operatingThreshold), 2)) | \(fixed(report.recallAtOperatingThreshold, 3))"
            line += " | \(fixed(report.precisionAtOperatingThreshold, 3))"
            line += " | \(report.falsePositivesOnNegatives) (\(report.negativeImagesWithFalsePositives)/\(report.negativeImages))"
            line += " | " + report.recallByHeight.buckets.map { fixed($0.recall, 3) }.joined(separator: " / ")
            line += " | \(fixed(report.eyeError.mean, 3)) / \(fixed(report.eyeError.median, 3))"
            line += " | \(fixed(report.meanMilliseconds, 1)) | \(fixed(report.medianMilliseconds, 1)) |"
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }

    /// A two-column Markdown table of one report, one metric per row, for a terminal.
    public func metricTable() -> String {
        var rows: [(String, String)] = [
            ("images (negatives)", "\(imageCount) (\(negativeImages))"),
            ("counted faces (≥ \(Self.integer(criteria.minimumFaceHeight)) px tall)", "\(averagePrecision.countedFaces)"),
            ("AP@\(Self.fixed(Double(criteria.iouThreshold), 1))", Self.fixed(averagePrecision.value, 4)),
        ]
        for source in averagePrecisionBySource.keys.sorted() {
            rows.append(("  AP \(source)", Self.fixed(averagePrecisionBySource[source] ?? 0, 4)))
        }
        let fppi = recallAtFalsePositiveRate
        rows.append((
            "recall at \(Self.fixed(fppi.falsePositivesPerImage, 2)) FP/image",
            "\(Self.fixed(fppi.recall, 4)) (score ≥ \(fppi.threshold.map { Self.fixed(Double($0), 3) } ?? "–"), \(fppi.falsePositives) FP)"
        ))
        rows += [
            ("operating threshold", Self.fixed(Double(operatingThreshold), 2)),
            ("  recall", Self.fixed(recallAtOperatingThreshold, 4)),
            ("  precision (positive images)", Self.fixed(precisionAtOperatingThreshold, 4)),
            ("  false positives, all images", "\(falsePositivesAtOperatingThreshold)"),
            ("  false positives on negatives (images)", "\(falsePositivesOnNegatives) (\(negativeImagesWithFalsePositives)/\(negativeImages))"),
        ]
        for bucket in recallByHeight.buckets {
            rows.append(("  recall, faces \(bucket.label) px", "\(Self.fixed(bucket.recall, 4)) (\(bucket.found)/\(bucket.faces))"))
        }
        rows += [
            ("  eye NME mean / median (pairs)", "\(Self.fixed(eyeError.mean, 4)) / \(Self.fixed(eyeError.median, 4)) (\(eyeError.count))"),
            ("ms/image mean / median (decode excluded)", "\(Self.fixed(meanMilliseconds, 2)) / \(Self.fixed(medianMilliseconds, 2))"),
        ]
        var lines = ["| \(name) | |", "|---|---|"]
        lines += rows.map { "| \($0.0) | \($0.1) |" }
        return lines.joined(separator: "\n")
    }

    /// `value` with exactly `digits` decimals.
    static func fixed(_ value: Double, _ digits: Int) -> String {
        guard value.isFinite else { return "\(value)" }
        let scale = (0..<max(0, digits)).reduce(1.0) { value, _ in value * 10 }
        let scaled = (abs(value) * scale).rounded()
        let whole = Int(scaled / scale)
        var text = (value < 0 && scaled > 0 ? "-" : "") + String(whole)
        if digits > 0 {
            let fraction = Int(scaled - Double(whole) * scale)
            let digitsText = String(fraction)
            text += "." + String(repeating: "0", count: max(0, digits - digitsText.count)) + digitsText
        }
        return text
    }

    private static func integer(_ value: Float) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}
