/// An error from opening or reading a ``FrameSource``.
///
/// A plain `Sendable` value. Match on ``code``; ``message`` names the path and the cause.
public struct FrameSourceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is. New codes may be added; switch with a `default` case.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Sendable {
            case notFound
            case notSupported
            case cannotOpen
            case emptyFolder
            case noReadableImages
            case readFailed
            case deviceLost
        }

        private let value: Value

        private init(_ value: Value) {
            self.value = value
        }

        /// The path does not exist.
        public static let notFound = Code(.notFound)
        /// The path names something this build cannot capture from yet (for example a camera).
        public static let notSupported = Code(.notSupported)
        /// The file or folder exists but cannot be opened or decoded.
        public static let cannotOpen = Code(.cannotOpen)
        /// A folder holds no image files.
        public static let emptyFolder = Code(.emptyFolder)
        /// A folder has image files but none of them could be read.
        public static let noReadableImages = Code(.noReadableImages)
        /// Reading the next frame failed (for example a video decode error).
        public static let readFailed = Code(.readFailed)
        /// A camera disappeared or stopped delivering; it may come back (``V4L2Camera/reopen()``).
        public static let deviceLost = Code(.deviceLost)

        public var description: String { value.rawValue }
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

    public var description: String { message }
}
