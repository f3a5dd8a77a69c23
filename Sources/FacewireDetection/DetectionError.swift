/// An error from creating or running a face detector.
///
/// Match on ``code``; ``message`` is for people and names the file or value involved.
public struct DetectionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: String, Sendable, Equatable, CaseIterable {
        /// The model or cascade file does not exist or cannot be read.
        case modelNotFound
        /// The file exists but OpenCV cannot load or run it (wrong or corrupt model).
        case modelLoadFailed
        /// A configuration value is out of range or inconsistent.
        case invalidConfiguration
        /// The image (or frame) handed to the detector is empty or malformed.
        case invalidImage
        /// OpenCV failed while detecting.
        case detectionFailed
    }

    /// The kind of failure.
    public let code: Code
    /// A human-readable explanation.
    public let message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
