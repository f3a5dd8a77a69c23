/// A message that breaks the wire protocol: what was wrong, for the log and the counters.
public struct ProtocolError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Kinds of protocol violations. A struct with static members, so new ones break nobody's `switch`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Hashable, Sendable {
            case malformed, unsupportedVersion, invalidStream, tooLarge, missingBody
        }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// The bytes are not the expected framing or protobuf.
        public static let malformed = Code(.malformed)
        /// The version field is not one this node speaks.
        public static let unsupportedVersion = Code(.unsupportedVersion)
        /// The stream id is empty, too long or has characters outside `[A-Za-z0-9._-]`.
        public static let invalidStream = Code(.invalidStream)
        /// A part is larger than the limits in SPEC.md.
        public static let tooLarge = Code(.tooLarge)
        /// An envelope without a body.
        public static let missingBody = Code(.missingBody)

        public var description: String { value.rawValue }
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
