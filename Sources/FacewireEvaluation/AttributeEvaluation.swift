import FacewireDetection
import FacewireVocabulary
import Foundation

/// Scores the per-face attributes (smile, eyes closed, head pose) on labelled face sets: GENKI-4K's `labels.tsv`
/// and a pair of `closed/` and `open/` folders. Pure: the caller runs the analyzer and hands in what it found.
public enum AttributeEvaluation {
    /// One labelled image.
    public struct Label: Sendable, Equatable {
        /// The image, relative to the label file's folder (or absolute).
        public var file: String
        /// Whether the face smiles, when the set says.
        public var smile: Bool?
        /// Whether both eyes are closed, when the set says.
        public var eyesClosed: Bool?
        /// Head pose in degrees in Facewire's conventions (see ``DetectedFace/yaw``, ``DetectedFace/pitch``,
        /// ``DetectedFace/roll``), when the set says.
        public var yaw: Double?
        public var pitch: Double?
        public var roll: Double?
        /// The angles are AFLW2000-3D's (``aflwAngles(yaw:pitch:roll:)``): predictions are re-read in that order
        /// and those signs before they are compared.
        public var aflwOrder = false

        public init(file: String, smile: Bool? = nil, eyesClosed: Bool? = nil, yaw: Double? = nil, pitch: Double? = nil, roll: Double? = nil) {
            self.file = file
            self.smile = smile
            self.eyesClosed = eyesClosed
            self.yaw = yaw
            self.pitch = pitch
            self.roll = roll
        }
    }

    /// What the analyzer said about one image's largest face (`nil` fields: not measured).
    public struct Prediction: Sendable, Equatable {
        public var smile: Bool?
        public var smileScore: Float?
        /// Both eyes read closed.
        public var eyesClosed: Bool?
        /// Exactly one eye read closed.
        public var oneEyeClosed: Bool?
        /// The smaller of the two eyes' closed scores: both eyes read closed at a threshold at or below it.
        public var bothEyesClosedScore: Float?
        public var yaw: Double?
        public var pitch: Double?
        public var roll: Double?
        /// What the attributes were measured on.
        public var source: AttributeSource?

        public init(face: DetectedFace) {
            let expression = face.expression
            if expression.smileScore != nil { smile = expression.hasSmile }
            smileScore = expression.smileScore
            if expression.leftEyeClosedScore != nil, expression.rightEyeClosedScore != nil {
                eyesClosed = expression.leftEyeClosed && expression.rightEyeClosed
                oneEyeClosed = expression.leftEyeClosed != expression.rightEyeClosed
                bothEyesClosedScore = min(expression.leftEyeClosedScore ?? 0, expression.rightEyeClosedScore ?? 0)
            }
            yaw = face.yaw.map(Double.init)
            pitch = face.pitch.map(Double.init)
            roll = (face.roll ?? face.faceAngle).map(Double.init)
            source = face.attributeSource
        }

        public init() {}
    }

    /// One line of a tab-separated label file: its number (1-based) and its fields by the header's column names.
    struct Row {
        var number: Int
        var fields: [String: String]
        /// The field of column `name` (lower case), nil when absent or empty.
        func callAsFunction(_ name: String) -> String? { fields[name].flatMap { $0.isEmpty ? nil : $0 } }
    }

    /// The rows of a tab-separated label file whose header (line 1) names at least the `required` columns (lower
    /// case); every row must name a `file`.
    /// - Throws: ``DetectionError`` `.invalidConfiguration` for a header without them or a row without a file.
    static func rows(_ text: String, required: [String]) throws -> [Row] {
        var lines = text.split(whereSeparator: \.isNewline).enumerated().makeIterator()
        func fields(_ line: Substring) -> [String] {
            line.split(separator: "\t", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        }
        let columns = lines.next().map { fields($0.element).map { $0.lowercased() } } ?? []
        guard required.allSatisfy(columns.contains) else {
            throw DetectionError(.invalidConfiguration, "labels: the header must name the columns \(required.joined(separator: ", ")) (line 1)")
        }
        var rows: [Row] = []
        while let (index, line) = lines.next() {
            let values = fields(line)
            let row = Row(number: index + 1, fields: Dictionary(
                zip(columns, values).map { ($0, $1) }, uniquingKeysWith: { first, _ in first }))
            guard row("file") != nil else { throw DetectionError(.invalidConfiguration, "labels line \(row.number): no file") }
            rows.append(row)
        }
        return rows
    }

    /// Parses GENKI-4K's `labels.tsv`: a header `file smile yaw pitch roll`, then one tab-separated line per image
    /// (smile 1/0, angles in radians). GENKI's yaw, pitch and roll have Facewire's signs (pitch positive up;
    /// checked by correlation, `evaluation/expressions/RESULTS-mesh.md`).
    /// - Throws: ``DetectionError`` `.invalidConfiguration` naming the line that cannot be read.
    public static func parseGenkiLabels(_ text: String) throws -> [Label] {
        try rows(text, required: ["file", "smile"]).map { row in
            func angle(_ name: String) throws -> Double? {
                guard let text = row(name) else { return nil }
                guard let radians = Double(text), radians.isFinite, abs(radians) < 10 else {
                    throw DetectionError(.invalidConfiguration, "labels line \(row.number): \(name) '\(text)' is not an angle in radians")
                }
                return radians * 180 / .pi
            }
            var label = Label(file: row("file")!)
            switch row("smile") {
            case "1": label.smile = true
            case "0": label.smile = false
            case nil: break
            case let other?:
                throw DetectionError(.invalidConfiguration, "labels line \(row.number): smile '\(other)' is not 0 or 1")
            }
            label.yaw = try angle("yaw")
            label.pitch = try angle("pitch")
            label.roll = try angle("roll")
            return label
        }
    }

    /// Parses `../shared/data/pose/labels.tsv` (AFLW2000-3D): a header naming `file`, `pitch_deg`, `yaw_deg` and
    /// `roll_deg`, then one tab-separated line per image, angles in degrees (within ±180), in AFLW's order and signs
    /// (``aflwAngles(yaw:pitch:roll:)``).
    /// - Throws: ``DetectionError`` `.invalidConfiguration` naming the line that cannot be read.
    public static func parsePoseLabels(_ text: String) throws -> [Label] {
        try rows(text, required: ["file", "pitch_deg", "yaw_deg", "roll_deg"]).map { row in
            func angle(_ name: String) throws -> Double {
                guard let degrees = row(name).flatMap(Double.init), degrees.isFinite, abs(degrees) <= 180 else {
                    throw DetectionError(.invalidConfiguration, "labels line \(row.number): \(name) '\(row(name) ?? "")' is not an angle in degrees")
                }
                return degrees
            }
            var label = Label(file: row("file")!, yaw: try angle("yaw_deg"), pitch: try angle("pitch_deg"), roll: try angle("roll_deg"))
            label.aflwOrder = true
            return label
        }
    }

    /// Facewire's yaw, pitch and roll (degrees; R = R_z(−roll)·R_x(−pitch)·R_y(yaw), ``MeshGeometry/headPose(mesh:)``)
    /// re-read as AFLW2000-3D states its labels: the same rotation decomposed pitch first (R = R_x·R_y·R_z), yaw
    /// positive toward the image's left. The two orders differ by degrees when yaw and roll come together, so a
    /// comparison angle by angle would charge the fit for the convention. `nil` for non-finite input.
    public static func aflwAngles(yaw: Double, pitch: Double, roll: Double) -> (yaw: Double, pitch: Double, roll: Double)? {
        let radians = Double.pi / 180
        let (y, p, r) = (yaw * radians, -pitch * radians, -roll * radians)
        guard y.isFinite, p.isFinite, r.isFinite else { return nil }
        // R = Rz(r)·Rx(p)·Ry(y), the entries read below.
        let (cy, sy, cp, sp, cr, sr) = (cos(y), sin(y), cos(p), sin(p), cos(r), sin(r))
        let r00 = cr * cy - sr * sp * sy
        let r01 = -sr * cp
        let r02 = cr * sy + sr * sp * cy
        let r12 = sr * sy - cr * sp * cy
        let r22 = cp * cy
        let degrees = 180 / Double.pi
        return (yaw: -asin(min(1, max(-1, r02))) * degrees, pitch: atan2(r12, r22) * degrees, roll: atan2(r01, r00) * degrees)
    }

    /// Counts of a binary decision.
    public struct BinaryCounts: Sendable, Equatable, CustomStringConvertible {
        public var truePositives = 0, falsePositives = 0, trueNegatives = 0, falseNegatives = 0
        public init() {}

        public mutating func add(predicted: Bool, actual: Bool) {
            switch (predicted, actual) {
            case (true, true): truePositives += 1
            case (true, false): falsePositives += 1
            case (false, false): trueNegatives += 1
            case (false, true): falseNegatives += 1
            }
        }

        public var total: Int { truePositives + falsePositives + trueNegatives + falseNegatives }
        public var accuracy: Double { ratio(truePositives + trueNegatives, total) }
        public var precision: Double { ratio(truePositives, truePositives + falsePositives) }
        public var recall: Double { ratio(truePositives, truePositives + falseNegatives) }
        /// The share of actual negatives read positive.
        public var falsePositiveRate: Double { ratio(falsePositives, falsePositives + trueNegatives) }

        func ratio(_ a: Int, _ b: Int) -> Double { b == 0 ? .nan : Double(a) / Double(b) }

        /// "P 0.912 R 0.900 (TP … FP … FN … TN …)".
        public var description: String {
            String(
                format: "P %.3f R %.3f (TP %d FP %d FN %d TN %d)", precision, recall, truePositives, falsePositives,
                falseNegatives, trueNegatives)
        }
    }

    /// One face's score (`nil`: no face, or not classified) and its label (smiling, or both eyes closed).
    public struct ScoredLabel: Sendable, Equatable {
        public var score: Float?
        public var positive: Bool
        public init(score: Float?, positive: Bool) {
            self.score = score
            self.positive = positive
        }
    }

    /// The figures of one set.
    public struct Report: Sendable, Equatable {
        public var name: String
        public var images = 0
        /// Images where no face was found: their decisions count as "no smile" / "open", their pose is not scored.
        public var noFace = 0
        /// Faces whose attributes came from the 5-landmark fallback rather than the mesh.
        public var fallback = 0
        public var smile = BinaryCounts()
        /// Every smile-labelled face's score (`nil`: no face or not classified) and label, for ``bestSmileThreshold()``.
        public var smileScores: [ScoredLabel] = []
        public var eyesClosed = BinaryCounts()
        /// Every eyes-labelled face's ``Prediction/bothEyesClosedScore`` and label, for ``bestEyesThreshold(maximumOpenReadClosed:)``.
        public var eyeScores: [ScoredLabel] = []
        /// Faces labelled with both eyes closed that read as exactly one eye closed.
        public var closedReadAsOneEye = 0
        public var yawErrors: [Double] = []
        public var pitchErrors: [Double] = []
        public var rollErrors: [Double] = []
        /// Milliseconds spent measuring attributes, per face (all the image's faces included).
        public var attributeMilliseconds: [Double] = []
        public var detectMilliseconds: [Double] = []

        public init(name: String) { self.name = name }

        /// Adds one image: its label, the largest face's prediction (`nil` when no face was found), and the times.
        public mutating func add(_ label: Label, _ prediction: Prediction?, attributeMilliseconds: Double?, detectMilliseconds: Double) {
            images += 1
            if detectMilliseconds.isFinite { self.detectMilliseconds.append(detectMilliseconds) }
            if let attributeMilliseconds, attributeMilliseconds.isFinite { self.attributeMilliseconds.append(attributeMilliseconds) }
            if prediction == nil { noFace += 1 }
            if prediction?.source == .landmarks { fallback += 1 }
            if let actual = label.smile {
                smile.add(predicted: prediction?.smile ?? false, actual: actual)
                smileScores.append(ScoredLabel(score: prediction?.smileScore, positive: actual))
            }
            if let actual = label.eyesClosed {
                eyesClosed.add(predicted: prediction?.eyesClosed ?? false, actual: actual)
                eyeScores.append(ScoredLabel(score: prediction?.bothEyesClosedScore, positive: actual))
                if actual, prediction?.oneEyeClosed == true { closedReadAsOneEye += 1 }
            }
            if var prediction {
                if label.aflwOrder {
                    // The same rotation read in AFLW's order; a face without all three angles is not pose-scored.
                    var converted: (yaw: Double, pitch: Double, roll: Double)?
                    if let yaw = prediction.yaw, let pitch = prediction.pitch, let roll = prediction.roll {
                        converted = AttributeEvaluation.aflwAngles(yaw: yaw, pitch: pitch, roll: roll)
                    }
                    (prediction.yaw, prediction.pitch, prediction.roll) = (converted?.yaw, converted?.pitch, converted?.roll)
                }
                if let truth = label.yaw, let value = prediction.yaw { yawErrors.append(abs(value - truth)) }
                if let truth = label.pitch, let value = prediction.pitch { pitchErrors.append(abs(value - truth)) }
                if let truth = label.roll, let value = prediction.roll { rollErrors.append(abs(value - truth)) }
            }
        }

        /// The mean of `values` (NaN when empty).
        public static func mean(_ values: [Double]) -> Double {
            values.isEmpty ? .nan : values.reduce(0, +) / Double(values.count)
        }

        /// The smile-score threshold with the best accuracy on this set, and the counts there (a face without a
        /// score reads "no smile"): how an operating point is chosen on a labelled set. `nil` without labels.
        public func bestSmileThreshold() -> (threshold: Float, counts: BinaryCounts)? {
            var best: (threshold: Float, counts: BinaryCounts)?
            for point in Self.sweep(smileScores) where best == nil || point.counts.accuracy > best!.counts.accuracy {
                best = point
            }
            return best
        }

        /// The lowest closed-score threshold (both eyes) at which at most `maximumOpenReadClosed` of the open faces
        /// read closed, and the counts there: the eyes' operating point with the best recall within that budget.
        public func bestEyesThreshold(maximumOpenReadClosed: Double) -> (threshold: Float, counts: BinaryCounts)? {
            Self.sweep(eyeScores).first { $0.counts.falsePositiveRate <= maximumOpenReadClosed }
        }

        /// The counts of "score ≥ threshold" at every distinct score of `scores`, lowest threshold first (a face
        /// without a score reads negative at every threshold).
        static func sweep(_ scores: [ScoredLabel]) -> [(threshold: Float, counts: BinaryCounts)] {
            Set(scores.compactMap(\.score)).sorted().map { threshold in
                var counts = BinaryCounts()
                for item in scores { counts.add(predicted: (item.score ?? -1) >= threshold, actual: item.positive) }
                return (threshold, counts)
            }
        }

        /// The median of `values` (NaN when empty).
        public static func median(_ values: [Double]) -> Double {
            guard !values.isEmpty else { return .nan }
            let sorted = values.sorted()
            let middle = sorted.count / 2
            return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        }

        /// The report as an aligned text table.
        public func table() -> String {
            func f(_ value: Double, _ decimals: Int = 3) -> String { value.isFinite ? String(format: "%.\(decimals)f", value) : "-" }
            var lines = ["\(name): \(images) images, \(noFace) without a face, \(fallback) measured on the 5 landmarks (too small or no mesh)"]
            if smile.total > 0 {
                lines.append(
                    "  smile        accuracy \(f(smile.accuracy))  precision \(f(smile.precision))  recall \(f(smile.recall))  (\(smile.truePositives + smile.falseNegatives) smiling of \(smile.total))")
                if let best = bestSmileThreshold() {
                    lines.append(
                        "               best accuracy on this set at smileScore >= \(String(format: "%.4g", best.threshold)): accuracy \(f(best.counts.accuracy))  precision \(f(best.counts.precision))  recall \(f(best.counts.recall))")
                }
            }
            if eyesClosed.total > 0 {
                lines.append(
                    "  eyes closed  recall \(f(eyesClosed.recall))  open read closed \(f(eyesClosed.falsePositiveRate * 100, 1)) %  precision \(f(eyesClosed.precision))  accuracy \(f(eyesClosed.accuracy))  (closed read as one eye: \(closedReadAsOneEye))")
                // The margin: the same decision with the operating point (closed score 0.5) moved either way.
                let around = [Float(0.48), 0.5, 0.52].map { threshold -> String in
                    var counts = BinaryCounts()
                    for item in eyeScores { counts.add(predicted: (item.score ?? -1) >= threshold, actual: item.positive) }
                    return "\(String(format: "%.2f", threshold)): \(f(counts.recall)) / \(f(counts.falsePositiveRate * 100, 1)) %"
                }
                lines.append("               recall / open read closed at closed score >= \(around.joined(separator: ", "))")
                if let best = bestEyesThreshold(maximumOpenReadClosed: 0.05) {
                    lines.append(
                        "               best recall on this set with <= 5 % of open faces read closed: both eyes' closed score >= \(String(format: "%.4g", best.threshold)): recall \(f(best.counts.recall))  open read closed \(f(best.counts.falsePositiveRate * 100, 1)) %")
                }
            }
            if !yawErrors.isEmpty || !pitchErrors.isEmpty || !rollErrors.isEmpty {
                lines.append(
                    "  head pose    median |error| yaw \(f(Self.median(yawErrors), 1))°  pitch \(f(Self.median(pitchErrors), 1))°  roll \(f(Self.median(rollErrors), 1))°  (\(yawErrors.count) faces)")
                lines.append(
                    "               mean |error|   yaw \(f(Self.mean(yawErrors), 2))°  pitch \(f(Self.mean(pitchErrors), 2))°  roll \(f(Self.mean(rollErrors), 2))°  pose on \(pitchErrors.count) of \(images) images (\(f(100 * Double(pitchErrors.count) / Double(max(1, images)), 1)) %)")
            }
            lines.append(
                "  time         detect \(f(Self.median(detectMilliseconds), 2)) ms/image, attributes \(f(Self.median(attributeMilliseconds), 2)) ms/face (medians)")
            return lines.joined(separator: "\n")
        }
    }
}
