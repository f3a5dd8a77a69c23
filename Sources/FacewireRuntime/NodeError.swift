/// A node cannot start or continue; the message says why, for the user.
public struct NodeError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
