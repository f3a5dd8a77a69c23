import FacewireVocabulary
import FacewireProtocol

/// What the page is sent, as JSON (the shell encodes these with `JSONEncoder`). Every float is finite: non-finite
/// values from the wire become absent.
public enum PageModel {
    public struct Point: Codable, Sendable, Equatable {
        public var x: Float
        public var y: Float
    }

    /// One face of a frame, in upright pixels.
    public struct Face: Codable, Sendable, Equatable {
        public var id: UInt64
        public var x: Float
        public var y: Float
        public var w: Float
        public var h: Float
        public var leftEye: Point?
        public var rightEye: Point?
        public var mouth: Point?
        public var roll: Float?
        public var yaw: Float?
        public var smile: Float?
        public var hasSmile: Bool
        public var leftEyeClosed: Bool
        public var rightEyeClosed: Bool
        /// The verdicts the worker withheld because the face cannot tell (SPEC 11.7): "smile", "eyes"; drawn as "?".
        public var withheld: [String]
        /// The expressions present (SPEC 11.8), by their command-line names (`brow-raise`, …).
        public var expressions: [String]
        public var frames: UInt32
        /// The face's heart rate (`heart_rate`, set by the collector) in whole beats per minute; nil when it has none.
        public var bpm: Int?

        public init?(_ face: WireFace) {
            guard face.hasBounds, let x = finite(face.bounds.x), let y = finite(face.bounds.y), let w = finite(face.bounds.width),
                let h = finite(face.bounds.height)
            else { return nil }
            id = face.trackingID
            self.x = x
            self.y = y
            self.w = w
            self.h = h
            leftEye = face.hasLeftEye ? point(face.leftEye) : nil
            rightEye = face.hasRightEye ? point(face.rightEye) : nil
            mouth = face.hasMouth ? point(face.mouth) : nil
            roll = face.hasFaceAngle ? finite(face.faceAngle) : nil
            yaw = face.hasYaw ? finite(face.yaw) : nil
            smile = face.hasSmileScore ? finite(face.smileScore) : nil
            hasSmile = face.hasSmile_p
            leftEyeClosed = face.leftEyeClosed
            rightEyeClosed = face.rightEyeClosed
            withheld = face.withheldNames.filter(WireFace.withholdable.contains)
            expressions = face.expressions.compactMap { $0.present ? FacialAction(rawValue: $0.expression.rawValue)?.name : nil }
            frames = face.trackingFrameCount
            bpm = face.hasHeartRate ? beatsPerMinute(face.heartRate) : nil
        }
    }

    /// A previewed frame joined with its own result (sent before the JPEG on the live channel).
    public struct Frame: Codable, Sendable, Equatable {
        public var type = "frame"
        public var stream: String
        public var epoch: UInt64
        /// The preview's sequence number (from the capture node's FrameHeader).
        public var frameSeq: UInt64
        /// The result's sequence number (from the collector's FrameResult): always equal to `frameSeq`.
        public var resultSeq: UInt64
        public var captureTimeUs: Int64
        /// Upright size of the image sent.
        public var width: UInt32
        public var height: UInt32
        public var faces: [Face]
        public var worker: String
        public var detectMs: Float?

        public init(
            stream: String, epoch: UInt64, frameSeq: UInt64, resultSeq: UInt64, captureTimeUs: Int64, width: UInt32,
            height: UInt32, faces: [Face], worker: String, detectMs: Float?
        ) {
            self.stream = stream
            self.epoch = epoch
            self.frameSeq = frameSeq
            self.resultSeq = resultSeq
            self.captureTimeUs = captureTimeUs
            self.width = width
            self.height = height
            self.faces = faces
            self.worker = worker
            self.detectMs = detectMs
        }
    }

    /// A face appeared or left.
    public struct Event: Codable, Sendable, Equatable {
        public var type = "event"
        public var kind: String  // "appeared" | "left"
        public var stream: String
        public var epoch: UInt64
        public var trackingID: UInt64
        public var seq: UInt64
        public var frames: UInt32
        public var durationMs: Int64
        /// Wall-clock time the view heard of it (Unix ms).
        public var atMs: Int64
        /// Whether the track has a picture (`/streams/{stream}/tracks/{trackingID}.jpg`).
        public var hasPicture: Bool
        /// `left`: the last heart rate the collector reported for the track, in whole beats per minute; nil when none.
        public var bpm: Int?
    }

    /// Drops by reason code and the newest drop.
    public struct Drop: Codable, Sendable, Equatable {
        public var seq: UInt64
        public var reason: String
        public var atMs: Int64
    }

    /// The collector's latest statistics window of the stream.
    public struct Window: Codable, Sendable, Equatable {
        public var seconds: Float
        public var fps: Float
        public var frames: UInt64
        public var processed: UInt64
        public var dropped: [String: UInt64]
        public var latencyP50Ms: Float?
        public var latencyP99Ms: Float?
    }

    /// One stream's state.
    public struct Status: Codable, Sendable, Equatable {
        public var type = "status"
        public var stream: String
        public var epoch: UInt64
        public var ended: Bool
        /// Results seen by the view since the epoch began (each run counts its length).
        public var frames: UInt64
        public var processed: UInt64
        public var errors: UInt64
        public var dropped: [String: UInt64]
        public var lastDrop: Drop?
        public var window: Window?
        /// Preview frames received and joined with their result.
        public var previews: UInt64
        public var joined: UInt64
        public var liveTracks: Int
    }

    /// Everything at once (`GET /api/state`), for a page that just opened.
    public struct State: Codable, Sendable, Equatable {
        public var type = "state"
        public var streams: [Status]
        public var events: [Event]
    }
}

/// `value` when it is finite, else nil (what the page is sent instead of NaN or infinity).
public func finite(_ value: Float) -> Float? { value.isFinite ? value : nil }

/// A heart rate as the page shows it: whole beats per minute; nil for a value no heart has (not finite, or outside
/// 1...999), which a conforming collector never sends (SPEC.md 6.2: 40...180).
func beatsPerMinute(_ rate: Facewire_V1_HeartRate) -> Int? {
    guard rate.bpm.isFinite, rate.bpm >= 0.5, rate.bpm < 999.5 else { return nil }
    return Int(rate.bpm.rounded())
}

private func point(_ p: WirePoint) -> PageModel.Point? {
    guard let x = finite(p.x), let y = finite(p.y) else { return nil }
    return .init(x: x, y: y)
}
