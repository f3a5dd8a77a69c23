import FacewireImage
import Foundation

/// Runs detectors over an annotated image set (such as `faces/dev.jsonl`) and scores them.
///
/// All images are decoded once, up front, so the timings cover only the detector. Create the detector with a
/// low score threshold (so AP sees the whole precision/recall curve) and pass the threshold it would run with
/// in production as `operatingThreshold`.
public struct DetectorEvaluator {
    /// The annotated images, in file order.
    public let annotations: [AnnotatedImage]
    /// The decoded images, parallel to ``annotations``.
    public let images: [PixelImage]
    /// How detections are matched to the ground truth.
    public var criteria: MatchingCriteria

    /// Reads the annotation file and decodes every image it lists (paths are relative to the file's folder).
    /// - Throws: ``DetectionError``, ``ImageError`` or a file error naming the image.
    public init(annotationFile: URL, criteria: MatchingCriteria = MatchingCriteria()) throws {
        let annotations = try AnnotatedImage.loadJSONLines(contentsOf: annotationFile)
        let base = annotationFile.deletingLastPathComponent()
        let loader = try EvaluationImageLoader()
        var images: [PixelImage] = []
        images.reserveCapacity(annotations.count)
        for annotation in annotations {
            let path = base.appendingPathComponent(annotation.image).path
            do {
                images.append(try loader.load(path))
            } catch {
                throw DetectionError(.invalidImage, "cannot load \(path): \(error)")
            }
        }
        self.init(annotations: annotations, images: images, criteria: criteria)
    }

    /// Uses images that are already decoded.
    /// - Precondition: `images.count == annotations.count`.
    public init(annotations: [AnnotatedImage], images: [PixelImage], criteria: MatchingCriteria = MatchingCriteria()) {
        precondition(annotations.count == images.count, "one image per annotation")
        self.annotations = annotations
        self.images = images
        self.criteria = criteria
    }

    /// Runs `detector` on every image and scores it. Timings are of a second, warm call on each image.
    /// - Parameters:
    ///   - name: the label of the report.
    ///   - detector: a detector created with a low score threshold.
    ///   - operatingThreshold: the production threshold, for the recall, precision and false-positive columns.
    /// - Throws: ``DetectionError`` from the detector.
    public func evaluate(name: String, detector: any FaceDetector, operatingThreshold: Float) throws -> EvaluationReport {
        let clock = ContinuousClock()
        var samples: [AveragePrecision.Sample] = []
        var times: [Double] = []
        samples.reserveCapacity(images.count)
        times.reserveCapacity(images.count)
        for (annotation, image) in zip(annotations, images) {
            // Each image is detected twice and the second call is timed: that is the steady-state cost of a
            // stream (CenterFace builds one network per input size on first use, YuNet reshapes its input).
            let faces = try detector.detect(image)
            let start = clock.now
            _ = try detector.detect(image)
            times.append(FrameAnalyzer.milliseconds(clock.now - start))
            samples.append(AveragePrecision.Sample(groundTruth: annotation.faces, detections: faces))
        }

        let overall = AveragePrecision.compute(samples, criteria: criteria)
        var bySource: [String: Double] = [:]
        for source in Set(annotations.map(\.source)) {
            let subset = zip(annotations, samples).filter { $0.0.source == source && !$0.0.isNegative }.map(\.1)
            if !subset.isEmpty { bySource[source] = AveragePrecision.compute(subset, criteria: criteria).value }
        }

        // Operating point: keep only detections at or above the production threshold.
        let operating = samples.map { sample in
            AveragePrecision.Sample(
                groundTruth: sample.groundTruth,
                detections: sample.detections.filter { $0.confidence >= operatingThreshold })
        }
        let positives = zip(annotations, operating).filter { !$0.0.isNegative }.map(\.1)
        let atThreshold = AveragePrecision.compute(positives, criteria: criteria)
        let judged = atThreshold.truePositives + atThreshold.falsePositives
        let negatives = zip(annotations, operating).filter { $0.0.isNegative }.map(\.1)

        let sorted = times.sorted()
        let median = sorted.isEmpty ? 0 : sorted[sorted.count / 2]
        let mean = times.isEmpty ? 0 : times.reduce(0, +) / Double(times.count)
        return EvaluationReport(
            name: name, averagePrecision: overall, averagePrecisionBySource: bySource,
            operatingThreshold: operatingThreshold,
            recallAtOperatingThreshold: atThreshold.maximumRecall,
            precisionAtOperatingThreshold: judged > 0 ? Double(atThreshold.truePositives) / Double(judged) : 0,
            negativeImages: negatives.count,
            falsePositivesOnNegatives: negatives.reduce(0) { $0 + $1.detections.count },
            negativeImagesWithFalsePositives: negatives.filter { !$0.detections.isEmpty }.count,
            meanMilliseconds: mean, medianMilliseconds: median, imageCount: images.count)
    }
}
