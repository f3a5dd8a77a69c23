/// Why a CURVE key file (`--curve-secret-key`, `--curve-server-key`, `--curve-allow`, `--capture-key`) could not
/// be used. Each cause says what is actually wrong, so that a wrong file is not reported as a missing one.
public struct CurveKeyFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong with the file.
    public enum Cause: Sendable, Equatable {
        /// Nothing exists at the path.
        case notFound
        /// The file exists but cannot be opened or read; the system's reason (for example "Permission denied").
        case unreadable(String)
        /// The path is a directory where a key file was expected.
        case isDirectory
        /// The file is larger than any key file (``CurveKeyPair/maxFileBytes``); its size in bytes.
        case tooLarge(Int)
        /// The file is not UTF-8 text.
        case notText
        /// The file has no `public-key = "…"` line and no line that is a key by itself.
        case noPublicKey
        /// A key is there but unusable: which one (`public-key`, `secret-key`, or a bare key's line) and why
        /// (wrong length, not Z85).
        case badKey(name: String, problem: String)
        /// A directory given as a list of keys holds no `.pub` file.
        case noKeyFiles
    }

    /// The file or directory named on the command line.
    public var path: String
    public var cause: Cause

    public init(path: String, cause: Cause) {
        self.path = path
        self.cause = cause
    }

    public var description: String {
        switch cause {
        case .notFound: "key file \(path) not found"
        case .unreadable(let reason): "cannot read the key file \(path): \(reason)"
        case .isDirectory: "\(path) is a directory, not a key file"
        case .tooLarge(let size): "\(path) is \(size) bytes or more: not a key file (those are under 1 KiB)"
        case .notText: "\(path) is not UTF-8 text: not a key file"
        case .noPublicKey: "\(path) holds no public key (a line public-key = \"…\" with 40 characters of Z85)"
        case .badKey(let name, let problem): "\(path): \(name) \(problem)"
        case .noKeyFiles: "\(path) is a directory without .pub files"
        }
    }
}
