import Foundation
import SwiftProtobuf

/// A frame as it travels from a capture node to a worker: `[FrameHeader][JPEG]`.
public struct FrameMessage: Sendable {
    public var header: FrameHeader
    public var jpeg: [UInt8]

    public init(header: FrameHeader, jpeg: [UInt8]) {
        self.header = header
        self.jpeg = jpeg
    }

    /// The two ZeroMQ message parts. The JPEG is its own part, never copied into the protobuf.
    public func parts() throws -> [[UInt8]] {
        [try header.serializedBytes(), jpeg]
    }

    /// Parses and checks the two parts of a frame message.
    /// - Throws: ``ProtocolError`` for anything that is not a well-formed version-1 frame.
    public init(parts: [[UInt8]]) throws {
        guard parts.count == 2 else {
            throw ProtocolError(.malformed, "a frame message has 2 parts, got \(parts.count)")
        }
        guard parts[0].count <= Wire.maxHeaderBytes else {
            throw ProtocolError(.tooLarge, "frame header of \(parts[0].count) bytes")
        }
        let header = try decodeVersioned(FrameHeader.self, parts[0], version: \.version)
        guard Wire.isValidStreamID(header.stream) else {
            throw ProtocolError(.invalidStream, "stream id \(header.stream.debugDescription)")
        }
        guard !parts[1].isEmpty else { throw ProtocolError(.malformed, "empty image part") }
        self.header = header
        self.jpeg = parts[1]
    }
}

extension Envelope {
    /// Wraps a body in a version-1 envelope.
    public init(_ body: Envelope.OneOf_Body) {
        self.init()
        self.version = Wire.version
        self.body = body
    }

    /// Parses and checks a one-part control message.
    public init(part: [UInt8]) throws {
        let envelope = try decodeVersioned(Envelope.self, part, version: \.version)
        guard envelope.body != nil else { throw ProtocolError(.missingBody, "envelope without a body") }
        self = envelope
    }
}

extension StreamMessage {
    /// Builds a results-stream message for (stream, epoch).
    public init(stream: String, epoch: UInt64, body: StreamMessage.OneOf_Body?) {
        self.init()
        self.version = Wire.version
        self.stream = stream
        self.epoch = epoch
        self.body = body
    }

    /// The two PUB parts: `[topic][StreamMessage]`.
    public func parts() throws -> [[UInt8]] {
        [Wire.topic(forStream: stream), try serializedBytes()]
    }

    /// Parses the two parts of a results-stream message.
    public init(parts: [[UInt8]]) throws {
        guard parts.count == 2 else {
            throw ProtocolError(.malformed, "a stream message has 2 parts, got \(parts.count)")
        }
        self = try decodeVersioned(StreamMessage.self, parts[1], version: \.version)
    }
}

extension Ready {
    /// Worker thread `worker` attaching to a capture node (dispatch protocol 2).
    public init(worker: String) {
        self.init()
        self.version = Wire.dispatchVersion
        self.worker = worker
    }

    /// Parses and checks a one-part Ready message: version 2 (dispatch protocol 2). Version 1, a credit of dispatch
    /// protocol 1, is `.unsupportedVersion` like any other (the capture node refuses it by name: SPEC 3.4).
    public init(part: [UInt8]) throws {
        guard part.count <= Wire.maxHeaderBytes else { throw ProtocolError(.tooLarge, "ready of \(part.count) bytes") }
        self = try decodeVersioned(Ready.self, part, version: \.version, expected: Wire.dispatchVersion)
    }
}

/// Decodes one protobuf part and checks its version field: the checks every message of the protocol shares.
/// - Throws: ``ProtocolError`` `.malformed` for bytes that are not a `M`, `.unsupportedVersion` for a version
///   other than ``Wire/version``.
private func decodeVersioned<M: SwiftProtobuf.Message>(
    _: M.Type, _ bytes: [UInt8], version: KeyPath<M, UInt32>, expected: UInt32 = Wire.version
) throws -> M {
    let message: M
    do {
        message = try M(serializedBytes: bytes)
    } catch {
        throw ProtocolError(.malformed, "not a \(M.protoMessageName) protobuf: \(error)")
    }
    guard message[keyPath: version] == expected else {
        throw ProtocolError(.unsupportedVersion, "\(M.protoMessageName) version \(message[keyPath: version])")
    }
    return message
}
