/// An error from image decoding, encoding or reading.
///
/// A plain `Sendable` value: safe to pass between threads. Match on ``code`` (for example
/// `catch let error as ImageError where error.code == .truncated`); ``message`` is for people.
public struct ImageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is. New codes may be added; switch with a `default` case.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Sendable {
            case notJPEG
            case truncated
            case tooLarge
            case invalidHeader
            case decodeFailed
            case encodeFailed
            case unreadableFile
            case unsupportedFormat
            case resourceFailed
        }

        private let value: Value

        private init(_ value: Value) {
            self.value = value
        }

        /// The data does not start with a JPEG start-of-image marker.
        public static let notJPEG = Code(.notJPEG)
        /// The JPEG data ends before the image is complete.
        public static let truncated = Code(.truncated)
        /// The image or the data is larger than the configured ``ImageLimits``.
        public static let tooLarge = Code(.tooLarge)
        /// The JPEG header is malformed (zero size, bad markers).
        public static let invalidHeader = Code(.invalidHeader)
        /// The JPEG data is corrupt or uses a feature the decoder cannot handle.
        public static let decodeFailed = Code(.decodeFailed)
        /// The encoder rejected the image or failed.
        public static let encodeFailed = Code(.encodeFailed)
        /// A file could not be opened or read.
        public static let unreadableFile = Code(.unreadableFile)
        /// The file or pixel layout is not supported.
        public static let unsupportedFormat = Code(.unsupportedFormat)
        /// A library handle could not be created (out of memory).
        public static let resourceFailed = Code(.resourceFailed)

        public var description: String { value.rawValue }
    }

    /// The kind of failure.
    public let code: Code
    /// A human-readable explanation, including the library's own message where there is one.
    public let message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
