import FacewireVocabulary
import FacewireImage

/// Decodes a JPEG frame, brings it upright and finds its faces: the per-frame work of a detection worker.
///
/// Decoding is part of the per-frame budget, so the JPEG is decoded with DCT-domain scaling to the smallest
/// size whose upright width still reaches the detector's ``FaceDetector/inputWidth`` (the detector resizes the
/// rest). The EXIF orientation is applied before detection, and the faces are reported in the coordinates of the
/// upright frame at full resolution.
///
/// **Threading:** owns a libturbojpeg handle and a detector, neither thread-safe: one analyzer per thread.
public final class FrameAnalyzer {
    /// The detector run on each frame.
    public let detector: any FaceDetector
    /// Pixel format decoded for the detector (`.bgr` by default; `.grey` is cheaper for the cascade).
    public let format: PixelImage.Format
    /// What measures each face's attributes (smile, eyes, pose, quality, mesh landmarks), or `nil` to never
    /// measure them.
    public let attributes: (any FaceAttributeMeasurer)?
    private let decoder: JPEGDecoder

    /// Creates an analyzer around `detector`.
    /// - Parameters:
    ///   - detector: the detector to run (owned by this analyzer from now on; do not use it elsewhere).
    ///   - limits: checked against the JPEG header before any pixels are decoded (default 8192 × 8192, 16 MiB).
    ///   - format: the pixel format to decode into.
    ///   - attributes: what measures the faces' attributes (owned by this analyzer from now on), or `nil`.
    /// - Throws: ``ImageError`` if libturbojpeg cannot create a decoder.
    public init(
        detector: any FaceDetector, limits: ImageLimits = .standard, format: PixelImage.Format = .bgr,
        attributes: (any FaceAttributeMeasurer)? = nil
    ) throws {
        self.detector = detector
        self.format = format
        self.attributes = attributes
        self.decoder = try JPEGDecoder(limits: limits)
    }

    /// Analyzes one JPEG frame.
    /// - Parameters:
    ///   - jpeg: the complete JPEG data.
    ///   - orientation: the EXIF orientation, 1–8 (0 means unknown and is treated as 1).
    /// - Throws: ``DetectionError`` `.invalidImage` for an orientation outside 0...8, ``ImageError`` for data that
    ///   is not a JPEG, is truncated or corrupt, or exceeds the limits (checked on the header, before decoding),
    ///   and ``DetectionError`` when detection fails.
    public func analyze(
        jpeg: UnsafeRawBufferPointer, orientation: Int, options: AnalysisOptions = AnalysisOptions()
    ) throws -> FrameAnalysis {
        guard (0...8).contains(orientation) else {
            throw DetectionError(.invalidImage, "orientation \(orientation) is not an EXIF orientation (1...8, or 0 for unknown)")
        }
        return try analyze(jpeg: jpeg, orientation: Orientation(rawValue: orientation), options: options)
    }

    /// Analyzes one JPEG frame. See ``analyze(jpeg:orientation:)-(UnsafeRawBufferPointer,Int)``.
    public func analyze(jpeg: [UInt8], orientation: Int, options: AnalysisOptions = AnalysisOptions()) throws -> FrameAnalysis {
        try jpeg.withUnsafeBytes { try analyze(jpeg: $0, orientation: orientation, options: options) }
    }

    /// Analyzes one JPEG frame, taking the orientation from its EXIF data (upright when there is none).
    public func analyze(jpeg: [UInt8], options: AnalysisOptions = AnalysisOptions()) throws -> FrameAnalysis {
        try jpeg.withUnsafeBytes {
            try analyze(jpeg: $0, orientation: Orientation.exif(inJPEG: $0) ?? .up, options: options)
        }
    }

    /// Analyzes one JPEG frame stored with `orientation`.
    ///
    /// The steps: read the header; decode once, with DCT-domain scaling, to the smallest size whose upright
    /// width reaches what the detector needs and, when attributes are measured, what the measurer asks for (640 px
    /// for the 5-landmark classifiers, so that eyes and mouths keep enough pixels; the full width for the face
    /// mesh); bring it upright; detect at the width `options` asks for; drop faces below the minimum size; keep the
    /// `maxFaces` most confident; measure their attributes on the same pixels; scale the coordinates to the upright
    /// frame at full resolution.
    /// - Throws: ``ImageError`` for bad JPEG data, ``DetectionError`` when the options are invalid or detection
    ///   fails.
    public func analyze(
        jpeg: UnsafeRawBufferPointer, orientation: Orientation, options: AnalysisOptions = AnalysisOptions()
    ) throws -> FrameAnalysis {
        try options.validate()
        let clock = ContinuousClock()
        let decodeStart = clock.now
        let header = try decoder.readHeader(jpeg)
        let upright = orientation.uprightSize(width: header.width, height: header.height)
        if let headerOnly = detector as? HeaderOnlyDetector {
            // A test tool: the header is all it reads; no pixels, so no attributes.
            let decodeMilliseconds = Self.milliseconds(clock.now - decodeStart)
            let detectStart = clock.now
            var faces = try headerOnly.detect(uprightWidth: upright.width, uprightHeight: upright.height)
            if faces.count > options.maxFaces { faces.removeLast(faces.count - options.maxFaces) }
            Self.addFivePointLandmarks(&faces, options: options)
            return FrameAnalysis(
                width: upright.width, height: upright.height, faces: faces, decodeMilliseconds: decodeMilliseconds,
                detectMilliseconds: Self.milliseconds(clock.now - detectStart))
        }
        let detectorWidth = options.detectorWidth(base: detector.inputWidth(forImageWidth: upright.width), imageWidth: upright.width)
        var neededWidth = detectorWidth ?? upright.width
        if measuresAttributes(options), let attributes {
            neededWidth = max(neededWidth, attributes.decodeWidth(for: options, uprightWidth: upright.width))
        }
        let scale = ScalingFactor.smallest(reaching: neededWidth, from: upright.width)
        let stored = try decoder.decode(jpeg, scale: scale, format: format)
        let image = orientation.applied(to: stored)
        let decodeMilliseconds = Self.milliseconds(clock.now - decodeStart)
        return try analyzeUpright(
            image, fullWidth: upright.width, fullHeight: upright.height, detectorWidth: detectorWidth, options: options,
            decodeMilliseconds: decodeMilliseconds)
    }

    /// Analyzes an upright image that is already decoded (for evaluation on image sets): detection and attributes
    /// as for a JPEG frame, in the image's own coordinates; `decodeMilliseconds` is 0.
    /// - Throws: ``DetectionError`` when the options are invalid or detection fails.
    public func analyze(image: PixelImage, options: AnalysisOptions = AnalysisOptions()) throws -> FrameAnalysis {
        try options.validate()
        let detectorWidth = options.detectorWidth(base: detector.inputWidth(forImageWidth: image.width), imageWidth: image.width)
        return try analyzeUpright(
            image, fullWidth: image.width, fullHeight: image.height, detectorWidth: detectorWidth, options: options,
            decodeMilliseconds: 0)
    }

    /// Whether `options` make this analyzer measure attributes.
    func measuresAttributes(_ options: AnalysisOptions) -> Bool {
        attributes != nil && (!options.classifiers.isEmpty || options.landmarks == .mesh)
    }

    private func analyzeUpright(
        _ image: PixelImage, fullWidth: Int, fullHeight: Int, detectorWidth: Int?, options: AnalysisOptions,
        decodeMilliseconds: Double
    ) throws -> FrameAnalysis {
        let clock = ContinuousClock()
        let detectStart = clock.now
        let sx = Float(fullWidth) / Float(max(1, image.width))
        let sy = Float(fullHeight) / Float(max(1, image.height))
        var faces = try detector.detect(image, inputWidth: detectorWidth.map { min($0, 8192) })
        let minimum = options.minimumFaceHeight(width: fullWidth, height: fullHeight) / sy
        if minimum > 0 { faces.removeAll { $0.bounds.height < minimum } }
        if faces.count > options.maxFaces {
            faces.sort { $0.confidence > $1.confidence }
            faces.removeLast(faces.count - options.maxFaces)
        }
        let detectEnd = clock.now

        let measure = measuresAttributes(options)
        if measure, let attributes {
            try attributes.measure(image, faces: &faces, options: options)
            for index in faces.indices { AttributeGate.applyLight(image, to: &faces[index], classifiers: options.classifiers) }
        }
        Self.addFivePointLandmarks(&faces, options: options)
        if options.classifiers.contains(.pulse) {
            for index in faces.indices {
                guard let left = faces[index].leftEye, let right = faces[index].rightEye else { continue }
                faces[index].skin = SkinSampler.sample(image, leftEye: left, rightEye: right)
            }
        }
        let classifyEnd = clock.now
        if sx != 1 || sy != 1 {
            faces = faces.map { $0.scaled(x: sx, y: sy) }
        }
        var analysis = FrameAnalysis(
            width: fullWidth, height: fullHeight, faces: faces, decodeMilliseconds: decodeMilliseconds,
            detectMilliseconds: Self.milliseconds(detectEnd - detectStart),
            classifyMilliseconds: measure || options.classifiers.contains(.pulse) ? Self.milliseconds(classifyEnd - detectEnd) : 0)
        analysis.trackScore = detector.trackScore
        return analysis
    }

    /// When the 5-landmark classifiers run, frames are decoded at least this wide (or at full width when narrower);
    /// the face mesh asks for the full width (``FaceAttributeMeasurer/decodeWidth(for:uprightWidth:)``).
    public static let classifierWidth = 640

    /// Gives each face without a landmark list the detector's 5 points, unless `options` ask for no list.
    static func addFivePointLandmarks(_ faces: inout [DetectedFace], options: AnalysisOptions) {
        guard options.landmarks != .none else { return }
        for index in faces.indices where faces[index].landmarks == nil {
            faces[index].landmarks = faces[index].fivePoints.map { FaceLandmarks(scheme: .five, points: $0) }
        }
    }

    static func milliseconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
    }
}

@available(*, unavailable, message: "FrameAnalyzer owns a decoder and a detector: use one per thread")
extension FrameAnalyzer: Sendable {}
