/// Why a face crop or a snapshot could not be made from values that decoded fine.
///
/// Undecodable or oversized JPEGs throw FacewireImage's `ImageError` instead (`.notJPEG`, `.truncated`, `.tooLarge`,
/// `.invalidHeader`, `.decodeFailed`), and a failed encode `ImageError.encodeFailed`.
public struct ImagingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is.
    public enum Code: String, Sendable, Equatable {
        /// The face's box has a NaN or infinite value, or a width or height that is not positive.
        case invalidFace
        /// The face's box does not overlap the (upright) frame.
        case faceOutsideImage
        /// OpenCV failed (the message has its own).
        case openCVFailed
    }

    /// The kind of failure.
    public let code: Code
    /// A human-readable explanation.
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
