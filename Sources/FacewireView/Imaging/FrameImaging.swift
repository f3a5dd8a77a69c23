import FacewireOpenCV
import FacewireImage
import Foundation

/// Pictures made from a frame's JPEG for the live view: the upright frame with its faces drawn in (a snapshot), and
/// one face cut out upright and level (a track's picture and its event thumbnail).
///
/// The JPEG is decoded with libturbojpeg under FacewireImage's standard ``ImageLimits`` (at most 8192 × 8192 pixels
/// and 16 MiB), its EXIF orientation applied, warped and drawn on with OpenCV, and encoded again with libturbojpeg.
/// The orientation is the frame header's, not read from the JPEG: 1...8, and 0 or any other value means 1 (upright),
/// as in the protocol. Face coordinates are in the upright frame (SPEC §11.3).
///
/// **Threading:** every call makes its own decoder and encoder; calls may run on any thread at once. They block while
/// they decode and encode (a few to some tens of milliseconds for a 1080p frame): call them off the event loop.
public enum FrameImaging {
    /// The frame upright (orientation applied) as a JPEG; with `faces`, each face's box, tracking ID (`#12`), label,
    /// eyes and mouth drawn in, in a colour of its track's own.
    ///
    /// Faces are drawn as they come: parts outside the frame are clipped, and a face whose box has a NaN or infinite
    /// value or a size that is not positive is left out (its points with it); a non-finite point is left out alone.
    /// - Parameters:
    ///   - jpeg: the frame as stored (any orientation).
    ///   - orientation: the frame header's EXIF orientation.
    ///   - faces: the faces to draw, in upright pixels; `[]` for a clean picture.
    ///   - quality: JPEG quality, clamped to `1...100`.
    /// - Throws: `ImageError` when the JPEG cannot be decoded or is over the limits; ``ImagingError`` `.openCVFailed`.
    public static func snapshot(jpeg: [UInt8], orientation: UInt32, faces: [FaceDrawing], quality: Int = 85) throws
        -> [UInt8]
    {
        let frame = try Frame(jpeg: jpeg, orientation: orientation)
        var image = try frame.upright(scale: .one)
        for face in faces {
            try draw(face, into: &image)
        }
        return try JPEGEncoder().encode(image, quality: quality)
    }

    /// The face cut out upright and level: the frame's orientation applied, turned about the face's centre by −roll
    /// so that its eyes are level, with `margin` × the box's size added on each side, and shrunk so that its longer
    /// side is at most `maxSide` pixels (never enlarged). Where the crop reaches past the frame it is black.
    ///
    /// The geometry and its treatment of hostile values are ``FaceCropGeometry``'s: the box is clipped to the frame,
    /// a `nil` or non-finite roll means level, `margin` is clamped to `0...2` and `maxSide` to `1...4096`. Only as many
    /// pixels are decoded as the crop needs (libturbojpeg's DCT scaling), and a crop that still shrinks the frame by
    /// more than 1.5 is averaged rather than sampled.
    /// - Throws: ``ImagingError`` `.invalidFace` (a NaN or infinite value, or a size that is not positive, in the box),
    ///   `.faceOutsideImage` (the box misses the frame), `.openCVFailed`; `ImageError` when the JPEG cannot be decoded
    ///   or is over the limits.
    public static func faceCrop(
        jpeg: [UInt8], orientation: UInt32, face: FaceDrawing, margin: Float = 0.4, maxSide: Int = 256,
        quality: Int = 90
    ) throws -> [UInt8] {
        let frame = try Frame(jpeg: jpeg, orientation: orientation)
        let full = try FaceCropGeometry(
            face: face, frameWidth: frame.size.width, frameHeight: frame.size.height, margin: margin, maxSide: maxSide)
        // Decode at the smallest scale that still gives the crop one frame pixel per crop pixel.
        let target = (Double(frame.size.width) / max(full.shrink, 1)).rounded(.up)
        let image = try frame.upright(
            scale: ScalingFactor.smallest(reaching: Int(min(target, Double(frame.size.width))), from: frame.size.width))
        let crop = full.scaled(
            x: Double(image.width) / Double(frame.size.width), y: Double(image.height) / Double(frame.size.height))
        // Average over s × s samples per crop pixel when the crop still shrinks the decoded frame (at most 4096²
        // samples).
        let samples = crop.shrink > 1.5 ? min(8, Int(crop.shrink.rounded(.up))) : 1
        let supersample = max(1, min(samples, FaceCropGeometry.maxSideLimit / max(crop.width, crop.height)))
        var output = PixelImage(width: crop.width, height: crop.height, format: image.format)
        try withOpenCV("face crop") { () throws(OpenCVError) in
            try OpenCVDrawing.warpAffine(image, matrix: crop.matrix, supersample: supersample, into: &output)
        }
        return try JPEGEncoder().encode(output, quality: quality)
    }

    // MARK: - Private

    /// A frame's JPEG, its header read (and checked against the limits), not yet decoded.
    private struct Frame {
        let jpeg: [UInt8]
        let decoder: JPEGDecoder
        let orientation: Orientation
        /// The upright size at full scale.
        let size: (width: Int, height: Int)

        init(jpeg: [UInt8], orientation: UInt32) throws {
            self.jpeg = jpeg
            decoder = try JPEGDecoder(limits: .standard)
            let header = try decoder.readHeader(jpeg)
            self.orientation = Orientation(rawValue: Int(orientation))
            size = self.orientation.uprightSize(width: header.width, height: header.height)
        }

        /// The frame decoded as BGR at `scale`, upright.
        func upright(scale: ScalingFactor) throws -> PixelImage {
            orientation.applied(to: try decoder.decode(jpeg, scale: scale, format: .bgr))
        }
    }

    /// Draws one face into `image` (BGR) with ``OpenCVDrawing/draw(_:title:detail:into:)``.
    private static func draw(_ face: FaceDrawing, into image: inout PixelImage) throws {
        let points = [face.leftEye, face.rightEye, face.mouth].compactMap { $0 }.map { (x: $0.x, y: $0.y) }
        let colour = trackColour(face.trackingID)
        let mark = OpenCVDrawing.FaceMark(
            x: face.bounds.x, y: face.bounds.y, width: face.bounds.width, height: face.bounds.height, points: points,
            colour: (colour.blue, colour.green, colour.red))
        let title = face.trackingID == 0 ? "" : "#\(face.trackingID)"
        let detail = printableASCII(face.label ?? "", limit: 40)
        try withOpenCV("drawing face \(face.trackingID)") { () throws(OpenCVError) in
            try OpenCVDrawing.draw(mark, title: title, detail: detail, into: &image)
        }
    }

    /// A colour for a track: one of eight bright colours picked by a hash of the ID (so neighbouring IDs differ);
    /// light grey for untracked faces.
    static func trackColour(_ trackingID: UInt64) -> (red: UInt8, green: UInt8, blue: UInt8) {
        guard trackingID != 0 else { return (200, 200, 200) }
        let palette: [(UInt8, UInt8, UInt8)] = [
            (255, 64, 64), (64, 220, 64), (64, 128, 255), (255, 200, 0),
            (255, 64, 255), (0, 220, 220), (255, 140, 0), (160, 96, 255),
        ]
        return palette[Int((trackingID &* 0x9E37_79B9_7F4A_7C15) >> 61)]
    }

    /// `text` with every character outside printable ASCII replaced by `?`, at most `limit` characters (OpenCV's
    /// Hershey fonts draw ASCII only).
    static func printableASCII(_ text: String, limit: Int) -> String {
        String(text.unicodeScalars.prefix(limit).map { (32...126).contains($0.value) ? Character($0) : "?" })
    }

    /// Runs a shim call with an error buffer; a status other than 0 throws ``ImagingError/Code/openCVFailed``.
    private static func withOpenCV(_ what: String, _ call: () throws(OpenCVError) -> Void) throws {
        do {
            try call()
        } catch {
            throw ImagingError(.openCVFailed, "\(what): \(error.message(or: "unknown OpenCV error"))")
        }
    }
}
