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
    private let decoder: JPEGDecoder

    /// Creates an analyzer around `detector`.
    /// - Parameters:
    ///   - detector: the detector to run (owned by this analyzer from now on; do not use it elsewhere).
    ///   - limits: checked against the JPEG header before any pixels are decoded (default 8192 × 8192, 16 MiB).
    ///   - format: the pixel format to decode into.
    /// - Throws: ``ImageError`` if libturbojpeg cannot create a decoder.
    public init(detector: any FaceDetector, limits: ImageLimits = .standard, format: PixelImage.Format = .bgr) throws {
        self.detector = detector
        self.format = format
        self.decoder = try JPEGDecoder(limits: limits)
    }

    /// Analyzes one JPEG frame.
    /// - Parameters:
    ///   - jpeg: the complete JPEG data.
    ///   - orientation: the EXIF orientation, 1–8 (0 means unknown and is treated as 1).
    /// - Throws: ``DetectionError`` `.invalidImage` for an orientation outside 0...8, ``ImageError`` for data that
    ///   is not a JPEG, is truncated or corrupt, or exceeds the limits (checked on the header, before decoding),
    ///   and ``DetectionError`` when detection fails.
    public func analyze(jpeg: UnsafeRawBufferPointer, orientation: Int) throws -> FrameAnalysis {
        guard (0...8).contains(orientation) else {
            throw DetectionError(.invalidImage, "orientation \(orientation) is not an EXIF orientation (1...8, or 0 for unknown)")
        }
        return try analyze(jpeg: jpeg, orientation: Orientation(rawValue: orientation))
    }

    /// Analyzes one JPEG frame. See ``analyze(jpeg:orientation:)-(UnsafeRawBufferPointer,Int)``.
    public func analyze(jpeg: [UInt8], orientation: Int) throws -> FrameAnalysis {
        try jpeg.withUnsafeBytes { try analyze(jpeg: $0, orientation: orientation) }
    }

    /// Analyzes one JPEG frame, taking the orientation from its EXIF data (upright when there is none).
    public func analyze(jpeg: [UInt8]) throws -> FrameAnalysis {
        try jpeg.withUnsafeBytes { try analyze(jpeg: $0, orientation: Orientation.exif(inJPEG: $0) ?? .up) }
    }

    /// Analyzes one JPEG frame stored with `orientation`.
    /// - Throws: ``ImageError`` for bad JPEG data, ``DetectionError`` when detection fails.
    public func analyze(jpeg: UnsafeRawBufferPointer, orientation: Orientation) throws -> FrameAnalysis {
        let clock = ContinuousClock()
        let decodeStart = clock.now
        let header = try decoder.readHeader(jpeg)
        let upright = orientation.uprightSize(width: header.width, height: header.height)
        let scale = ScalingFactor.smallest(reaching: detector.inputWidth ?? 0, from: upright.width)
        let stored = try decoder.decode(jpeg, scale: scale, format: format)
        let image = orientation.applied(to: stored)
        let decodeEnd = clock.now

        var faces = try detector.detect(image)
        let sx = Float(upright.width) / Float(max(1, image.width))
        let sy = Float(upright.height) / Float(max(1, image.height))
        if sx != 1 || sy != 1 {
            faces = faces.map { $0.scaled(x: sx, y: sy) }
        }
        let detectEnd = clock.now
        return FrameAnalysis(
            width: upright.width, height: upright.height, faces: faces,
            decodeMilliseconds: Self.milliseconds(decodeEnd - decodeStart),
            detectMilliseconds: Self.milliseconds(detectEnd - decodeEnd))
    }

    static func milliseconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
    }
}

@available(*, unavailable, message: "FrameAnalyzer owns a decoder and a detector: use one per thread")
extension FrameAnalyzer: Sendable {}
