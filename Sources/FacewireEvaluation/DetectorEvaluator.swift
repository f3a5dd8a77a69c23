import FacewireDetection
import FacewireVocabulary
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
    public init(annotationFile: URL, unannotatedFaces: URL? = nil, criteria: MatchingCriteria = MatchingCriteria()) throws {
        var annotations = try AnnotatedImage.loadJSONLines(contentsOf: annotationFile)
        if let unannotatedFaces {
            annotations = try AnnotatedImage.addingUnannotatedFaces(to: annotations, contentsOf: unannotatedFaces)
        }
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

    /// What a detector returned on every image, and how long it took.
    public struct Detections: Sendable, Equatable {
        /// The faces found in each image, parallel to ``DetectorEvaluator/annotations``, best first.
        public var faces: [[DetectedFace]]
        /// The time of the timed `detect` call on each image, in milliseconds.
        public var milliseconds: [Double]

        /// Creates a result.
        public init(faces: [[DetectedFace]], milliseconds: [Double]) {
            self.faces = faces
            self.milliseconds = milliseconds
        }
    }

    /// Runs `detector` on every image, and times `timedDetector` (by default the same one).
    ///
    /// The detections come from one call of `detector` per image (created with a low score threshold, for the
    /// whole precision/recall curve). The time is that of a second, warm `detect` call per image with
    /// `timedDetector` — pass one created with the production threshold to time what a stream costs (the
    /// threshold changes the work after the model: decoding candidates, NMS, landmark refinement). A separate
    /// `timedDetector` gets an untimed warm-up call on each image first (CenterFace builds one network per input
    /// size on first use, YuNet reshapes its input). The time covers one `detect` call on the decoded image:
    /// resizing to the input width, the model, its post-processing and mapping the boxes back; image decoding is
    /// not included (the images are decoded before).
    /// - Parameters:
    ///   - detector: a detector created with a low score threshold.
    ///   - timedDetector: the detector to time; `nil` times `detector`.
    ///   - inputWidth: the width to run at; `nil` uses the detector's own (``FaceDetector/inputWidth(forImageWidth:)``).
    ///   - progress: called after each image with the number done.
    /// - Throws: ``DetectionError`` from the detector, naming the image.
    public func run(
        detector: any FaceDetector, timedDetector: (any FaceDetector)? = nil, inputWidth: Int? = nil,
        progress: ((Int) -> Void)? = nil
    ) throws -> Detections {
        let clock = ContinuousClock()
        var faces: [[DetectedFace]] = []
        var times: [Double] = []
        faces.reserveCapacity(images.count)
        times.reserveCapacity(images.count)
        for (annotation, image) in zip(annotations, images) {
            // The width a worker would run this image at (the default grows for images wider than 1280).
            let width = inputWidth ?? detector.inputWidth(forImageWidth: image.width)
            do {
                faces.append(try detector.detect(image, inputWidth: width))
                let timed = timedDetector ?? detector
                if let timedDetector { _ = try timedDetector.detect(image, inputWidth: width) }
                let start = clock.now
                _ = try timed.detect(image, inputWidth: width)
                times.append(Self.milliseconds(clock.now - start))
            } catch {
                throw DetectionError(.detectionFailed, "\(annotation.image): \(error)")
            }
            progress?(faces.count)
        }
        return Detections(faces: faces, milliseconds: times)
    }

    /// Runs `detector` on every image and scores it (``run(detector:timedDetector:inputWidth:progress:)`` then
    /// ``EvaluationReport/compute(name:annotations:detections:milliseconds:criteria:operatingThreshold:fppiBudget:)``).
    /// - Parameters:
    ///   - name: the label of the report.
    ///   - detector: a detector created with a low score threshold.
    ///   - operatingThreshold: the production threshold, for the operating-point figures.
    ///   - inputWidth: the width to run at; `nil` uses the detector's own.
    /// - Throws: ``DetectionError`` from the detector.
    public func evaluate(
        name: String, detector: any FaceDetector, operatingThreshold: Float, inputWidth: Int? = nil
    ) throws -> EvaluationReport {
        let result = try run(detector: detector, inputWidth: inputWidth)
        return EvaluationReport.compute(
            name: name, annotations: annotations, detections: result.faces, milliseconds: result.milliseconds,
            criteria: criteria, operatingThreshold: operatingThreshold)
    }

    static func milliseconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
    }
}
