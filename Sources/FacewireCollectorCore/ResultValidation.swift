import FacewireProtocol
import FacewirePulse

/// What the collector refuses in a well-formed `FrameResult` before it costs tracking or arithmetic (SPEC.md 14.5).
///
/// Pure: the caller passes the collector's wall clock. A refused result is counted by name
/// (`results_rejected_<code>`) and never buffered: its frame then drops as `timeout` like a lost result.
public enum ResultValidation {
    /// Why a result was refused; the raw value is the counter suffix.
    public enum Rejection: String, Sendable, CaseIterable {
        /// `capture_time_us` negative, or more than a day ahead of the collector's wall clock.
        case captureTime = "capture_time"
        /// `media_time_us` present and negative or over ``maxMediaTimeMicroseconds`` (SPEC.md 6.1).
        case mediaTime = "media_time"
        /// `track_score` present and not finite or outside 0...1 (SPEC.md 6.2).
        case trackScore = "track_score"
        /// More faces than a worker may report (`max_faces` ≤ 256).
        case faces
        /// A face with a non-finite or absurd coordinate, size, angle or score.
        case face
        /// A face whose `landmarks` list does not match its scheme (5 or 468 points), or a result whose faces
        /// carry more mesh landmark lists than ``maxMeshFaces``.
        case landmarks
        /// A `reason` over ``maxReasonBytes`` or a `worker` over ``maxWorkerBytes`` (the published message must stay
        /// well under the 1 MiB a subscriber accepts).
        case strings
        /// A `run_length`: only the collector sets it, on the dropped runs it publishes (SPEC.md 6.2); from a worker it
        /// would make subscribers skip any number of sequences.
        case runLength = "run_length"
        /// A face with a `heart_rate`: only the collector sets it, from the track's skin samples over time (SPEC.md 6.2).
        case heartRate = "heart_rate"
        /// A face's skin samples (the pulse classifier) out of bounds: more than ``maxSkinSamples``, two of one region
        /// or a region v1 does not name, a colour not finite or outside 0...255, or a pixel count of 0 or more than the
        /// frame's `width` × `height` (``isPlausible(skin:framePixels:)``).
        case skin
    }

    /// The longest `reason` a result may carry, in bytes.
    public static let maxReasonBytes = 1024
    /// The longest `worker` id a result may carry, in bytes.
    public static let maxWorkerBytes = 256

    /// The most faces a result may carry (SPEC.md 6.1, `max_faces` 1…256).
    public static let maxFaces = 256
    /// The most faces of one result that may carry the 468-point mesh (SPEC.md 11.5, 14.5): 64 × 3.7 KB keeps a published
    /// frame well under the 1 MiB a subscriber accepts.
    public static let maxMeshFaces = 64
    /// How far ahead of the collector's wall clock a capture time may lie, in microseconds (one day).
    public static let maxCaptureTimeAheadMicroseconds: Int64 = 86_400_000_000
    /// The largest media time a result may carry: 100 years of a source's timeline, in microseconds (SPEC.md 6.1).
    public static let maxMediaTimeMicroseconds: Int64 = 3_155_760_000_000_000
    /// The most skin samples a face may carry: one per region.
    public static let maxSkinSamples = 3
    /// The largest coordinate or size a face may have (images are at most 8192 pixels a side; margin for boxes
    /// that stick out before clipping).
    public static let maxCoordinate: Float = 65_536

    /// Why `result` must be refused at wall time `wallMicroseconds`; nil when it is acceptable.
    public static func rejection(of result: FrameResult, wallMicroseconds: Int64) -> Rejection? {
        let (limit, overflow) = wallMicroseconds.addingReportingOverflow(maxCaptureTimeAheadMicroseconds)
        if result.captureTimeUs < 0 || result.captureTimeUs > (overflow ? .max : limit) { return .captureTime }
        if result.hasMediaTimeUs, result.mediaTimeUs < 0 || result.mediaTimeUs > maxMediaTimeMicroseconds { return .mediaTime }
        if result.hasTrackScore, !(result.trackScore.isFinite && (0...1).contains(result.trackScore)) { return .trackScore }
        if result.faces.count > maxFaces { return .faces }
        if result.reason.utf8.count > maxReasonBytes || result.worker.utf8.count > maxWorkerBytes { return .strings }
        if result.runLength != 0 { return .runLength }
        for face in result.faces where !isPlausible(face) { return .face }
        var meshFaces = 0
        for face in result.faces {
            switch landmarkCheck(face) {
            case .invalid: return .landmarks
            case .mesh: meshFaces += 1
            case .fine: break
            }
        }
        if meshFaces > maxMeshFaces { return .landmarks }
        if result.faces.contains(where: \.hasHeartRate) { return .heartRate }
        let framePixels = UInt64(result.width) * UInt64(result.height)
        for face in result.faces
        where !isPlausible(skin: face.skin, framePixels: framePixels) || !isPlausible(skin: face.meshSkin, framePixels: framePixels) {
            return .skin
        }
        return nil
    }

    /// Whether `skin` holds at most one sample per region of v1 (forehead, left cheek, right cheek), each with finite
    /// colours in 0...255 and 1...`framePixels` pixels (the worker counts them in the frame as it decoded it, which is
    /// at most the frame's full size).
    public static func isPlausible(skin: [Facewire_V1_SkinSample], framePixels: UInt64) -> Bool {
        func colour(_ value: Float) -> Bool { value.isFinite && value >= 0 && value <= 255 }
        guard skin.count <= maxSkinSamples else { return false }
        var seen: UInt8 = 0
        for sample in skin {
            guard let region = PulseEstimator.Region(wire: sample.region) else { return false }
            let bit: UInt8 = 1 << region.index
            guard seen & bit == 0, colour(sample.r), colour(sample.g), colour(sample.b), sample.pixels >= 1,
                UInt64(sample.pixels) <= framePixels
            else { return false }
            seen |= bit
        }
        return true
    }

    enum LandmarkCheck { case fine, mesh, invalid }

    /// Whether `face`'s landmark list matches its scheme and holds only plausible coordinates.
    static func landmarkCheck(_ face: WireFace) -> LandmarkCheck {
        let count = face.landmarks.count
        let isMesh: Bool
        switch face.landmarkScheme {
        case .none: return count == 0 ? .fine : .invalid
        case .five: guard count == 10 else { return .invalid }; isMesh = false
        case .mesh: guard count == 936 else { return .invalid }; isMesh = true
        case .UNRECOGNIZED: return .invalid
        }
        for value in face.landmarks where !(value.isFinite && abs(value) <= maxCoordinate) { return .invalid }
        return isMesh ? .mesh : .fine
    }

    /// Whether every number of `face` is finite and within bounds (``WireFace/isPlausible(maxCoordinate:)``).
    public static func isPlausible(_ face: WireFace) -> Bool {
        face.isPlausible(maxCoordinate: maxCoordinate)
    }
}

extension PulseEstimator.RegionColour {
    /// A skin sample from the wire; nil for an unspecified or unknown region.
    init?(wire sample: Facewire_V1_SkinSample) {
        guard let region = PulseEstimator.Region(wire: sample.region) else { return nil }
        self.init(region: region, r: Double(sample.r), g: Double(sample.g), b: Double(sample.b), pixels: Double(sample.pixels))
    }
}

extension PulseEstimator.Region {
    /// The region a skin sample names on the wire; nil for unspecified or unknown (which validation refuses).
    init?(wire: Facewire_V1_SkinSample.Region) {
        switch wire {
        case .forehead: self = .forehead
        case .leftCheek: self = .leftCheek
        case .rightCheek: self = .rightCheek
        case .unspecified, .UNRECOGNIZED: return nil
        }
    }
}
