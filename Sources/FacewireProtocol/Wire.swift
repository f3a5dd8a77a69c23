import Foundation
import SwiftProtobuf

// Short names for the generated protobuf types (protocol/facewire.proto).
public typealias FrameHeader = Facewire_V1_FrameHeader
public typealias Ready = Facewire_V1_Ready
public typealias WireFace = Facewire_V1_Face
public typealias WirePoint = Facewire_V1_Point
public typealias WireRect = Facewire_V1_Rect
public typealias WireLandmarkScheme = Facewire_V1_LandmarkScheme
public typealias WireAttributeSource = Facewire_V1_AttributeSource
public typealias DetectionSettings = Facewire_V1_DetectionSettings
public typealias FrameStatus = Facewire_V1_FrameStatus
public typealias FrameTimings = Facewire_V1_Timings
public typealias FrameResult = Facewire_V1_FrameResult
public typealias NodeRole = Facewire_V1_Role
public typealias Hello = Facewire_V1_Hello
public typealias CaptureInfo = Facewire_V1_CaptureInfo
public typealias Welcome = Facewire_V1_Welcome
public typealias Skipped = Facewire_V1_Skipped
public typealias StreamEnd = Facewire_V1_StreamEnd
public typealias Envelope = Facewire_V1_Envelope
public typealias FaceEvent = Facewire_V1_FaceEvent
public typealias StreamSummary = Facewire_V1_StreamSummary
public typealias StreamMessage = Facewire_V1_StreamMessage
public typealias ResetRequest = Facewire_V1_Reset
public typealias ResetReply = Facewire_V1_ResetReply
public typealias DispatchRequest = Facewire_V1_DispatchRequest
public typealias Assignment = Facewire_V1_Assignment
public typealias Idle = Facewire_V1_Idle
public typealias TrackingReset = Facewire_V1_TrackingReset
public typealias DropCount = Facewire_V1_DropCount
public typealias StreamStatisticsMessage = Facewire_V1_StreamStatistics
public typealias CollectorRole = Facewire_V1_CollectorRole
public typealias TrackCheckpoint = Facewire_V1_TrackCheckpoint
public typealias StreamCheckpoint = Facewire_V1_StreamCheckpoint
public typealias Replication = Facewire_V1_Replication
public typealias ReplicationAck = Facewire_V1_ReplicationAck
public typealias ReplicationMessage = Facewire_V1_ReplicationMessage

/// Constants of protocol version 1 (see protocol/SPEC.md).
public enum Wire {
    /// The protocol version every message carries.
    public static let version: UInt32 = 1
    /// The dispatch protocol (SPEC 3): `Ready.version` and `Hello.dispatch`. Version 1 was credits.
    public static let dispatchVersion: UInt32 = 2

    /// Default TCP ports: capture frames, collector control/intake, collector results stream.
    public static let defaultCapturePort = 5555
    public static let defaultCollectorPort = 5556
    public static let defaultPublishPort = 5557

    /// Largest part of a frame message (in practice the JPEG) a worker accepts; libzmq enforces it per part,
    /// before allocating, and drops the connection of a peer that sends more.
    public static let maxFrameMessageBytes: Int64 = 16 * 1024 * 1024
    /// Largest part of a control message (an envelope) the collector accepts, enforced the same way.
    public static let maxControlMessageBytes: Int64 = 1 * 1024 * 1024
    /// Largest frame header part.
    public static let maxHeaderBytes = 4096
    /// Longest stream id.
    public static let maxStreamIDLength = 64
    /// How often capture nodes and workers say hello to the collector (heartbeat), in milliseconds.
    public static let helloIntervalMilliseconds = 1000

    /// Whether `id` is a valid stream id: 1...64 bytes of `[A-Za-z0-9._-]`.
    public static func isValidStreamID(_ id: String) -> Bool {
        // The length first (O(1) for a native string): a hostile id may be a megabyte long and must not be copied.
        guard !id.utf8.isEmpty, id.utf8.count <= maxStreamIDLength else { return false }
        return id.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2E || byte == 0x5F || byte == 0x2D
        }
    }

    /// The PUB topic of a stream: its id followed by one zero byte, so that subscribing to
    /// "cam1\0" does not also match "cam10".
    public static func topic(forStream stream: String) -> [UInt8] {
        Array(stream.utf8) + [0]
    }
}
