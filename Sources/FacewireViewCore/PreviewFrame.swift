import FacewireProtocol

/// One message of a capture node's preview socket (SPEC 7.5): `[topic][FrameHeader][JPEG]`, the frame message a
/// worker received for that frame behind the stream's topic.
public struct PreviewFrame: Sendable {
    public var header: FrameHeader
    public var jpeg: [UInt8]

    public init(header: FrameHeader, jpeg: [UInt8]) {
        self.header = header
        self.jpeg = jpeg
    }

    /// Largest stored width or height a preview may announce (as a worker decodes).
    public static let maxSide: UInt32 = 8192

    /// Parses and checks the three parts; the frame part is checked as a worker checks it (``FrameMessage``), the
    /// topic must be the header's stream's, and the announced size must be within ``maxSide``.
    /// - Throws: ``ProtocolError``.
    public init(parts: [[UInt8]]) throws {
        guard parts.count == 3 else { throw ProtocolError(.malformed, "a preview message has 3 parts, got \(parts.count)") }
        let frame = try FrameMessage(parts: Array(parts[1...]))
        guard parts[0] == Wire.topic(forStream: frame.header.stream) else {
            throw ProtocolError(.malformed, "preview topic is not its stream's")
        }
        guard (1...Self.maxSide).contains(frame.header.width), (1...Self.maxSide).contains(frame.header.height) else {
            throw ProtocolError(.tooLarge, "preview of \(frame.header.width)x\(frame.header.height)")
        }
        header = frame.header
        jpeg = frame.jpeg
    }
}
