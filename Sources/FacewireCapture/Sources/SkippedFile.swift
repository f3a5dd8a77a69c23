/// A file an ``ImageFolderSource`` left out, with the reason.
public struct SkippedFile: Sendable, Equatable, CustomStringConvertible {
    /// Full path of the file.
    public var path: String
    /// Why it was skipped (the underlying error message).
    public var reason: String

    /// Creates a record.
    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    public var description: String { "\(path): \(reason)" }
}
