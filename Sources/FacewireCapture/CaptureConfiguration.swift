import FacewireRuntime
import FacewireImage
import FacewireProtocol
import ZeroMQ
import FacewireCaptureCore

/// How a capture node reads, paces and publishes frames.
public struct CaptureConfiguration: Sendable {
    /// How fast frames are read from the source.
    public enum Pacing: Sendable, Equatable {
        /// At the source's own frame rate (a file plays in real time). Frames no worker has room for
        /// are dropped at the source and reported to the collector.
        case realTime
        /// At a fixed rate, with the same drop rule as ``realTime``.
        case fixed(Double)
        /// As fast as the workers take them: the capture node waits for a worker with room, nothing is
        /// dropped at the source. For files and folders that are not live.
        case asFastAsPossible
    }

    /// A video file, an image folder or an image file.
    public var source: String
    /// The stream id (`[A-Za-z0-9._-]`, at most 64 bytes).
    public var stream: String
    /// Where workers connect for frames (a ROUTER); `tcp://*:5555` by default.
    public var bind: String
    /// The address announced to the collector when `bind` has a wildcard host or port; by default the
    /// bound endpoint with its wildcard host replaced by the address the collector sees this node at.
    public var advertise: String?
    /// The collector's control endpoint; nil runs without a collector (workers then need `--capture`).
    public var collector: String?
    public var pacing: Pacing
    /// Start again at the end of the source.
    public var loop: Bool
    /// Stop after this many frames (nil: at the end of the source).
    public var maxFrames: Int?
    /// Quality for frames that must be encoded (video, PNG); JPEG files are sent unchanged.
    public var jpegQuality: Int
    /// Workers skip frames older than this (ms after capture) and report them as dropped; 0: never.
    /// Only used for live pacing: with ``Pacing/asFastAsPossible`` frames carry no deadline.
    public var maxAgeMilliseconds: Int
    /// The epoch announced for this run (a new one every start by default).
    public var epoch: UInt64
    /// The stream's detection settings, sent in every frame header; `nil` leaves them to each worker.
    public var settings: DetectionSettings?
    /// What to ask a camera for (`--size`, `--camera-fps`).
    public var camera = V4L2Camera.Settings()
    /// `--max-fps`: frames beyond this rate (by capture time) are never numbered or sent. Nil: no limit.
    public var maxFPS: Double?
    /// `--weight`: the stream's share of the workers under overload, relative to other streams (SPEC 3.3).
    public var weight: Double = 1
    /// `--orientation`: the EXIF orientation sent with every frame, overriding what the source says.
    public var orientation: Orientation?
    /// Seconds between the capture statistics lines on the log (0: none).
    public var statisticsIntervalSeconds: Double = 5
    /// CURVE: this node's keys, the collector's public key, and the worker keys allowed to take frames.
    public var security: CurveSecurity?
    /// Seconds between attempts to reopen a camera that disappeared.
    public var reopenIntervalSeconds: Double = 1
    /// `--max-workers`: worker connections that may hold a credit at once; a Ready from one more is refused and
    /// counted (`credits_refused_cap`).
    public var maxWorkers: Int = Self.defaultMaxWorkers
    /// `--max-workers` default.
    public static let defaultMaxWorkers = CaptureCore<[UInt8]>.defaultMaxWorkers
    /// `--preview-fps`: at most this many frames a second go to live views (SPEC 7.5); 0: no preview socket at all.
    public var previewFPS: Double = Self.defaultPreviewFPS
    /// `--preview-fps` default.
    public static let defaultPreviewFPS = 10.0
    /// The values `--preview-fps` takes.
    public static let previewFPSRange = 0.0...1000
    /// `--preview-bind`: where views connect (an XPUB); nil: the frame socket's host with a port libzmq picks
    /// (``defaultPreviewBind(frameBind:)``).
    public var previewBind: String?
    /// `--preview-advertise`: the preview endpoint announced instead of the bound one.
    public var previewAdvertise: String?

    public init(
        source: String,
        stream: String = "default",
        bind: String = "tcp://*:\(Wire.defaultCapturePort)",
        advertise: String? = nil,
        collector: String? = nil,
        pacing: Pacing = .realTime,
        loop: Bool = false,
        maxFrames: Int? = nil,
        jpegQuality: Int = 85,
        maxAgeMilliseconds: Int = 2000,
        epoch: UInt64 = UInt64(Clock.wallMicroseconds()),
        settings: DetectionSettings? = nil
    ) {
        self.source = source
        self.stream = stream
        self.bind = bind
        self.advertise = advertise
        self.collector = collector
        self.pacing = pacing
        self.loop = loop
        self.maxFrames = maxFrames
        self.jpegQuality = jpegQuality
        self.maxAgeMilliseconds = maxAgeMilliseconds
        self.epoch = epoch
        self.settings = settings
    }
}

extension CaptureConfiguration {
    /// The preview socket's endpoint when `--preview-bind` is not given: the frame socket's host with a wildcard port
    /// (`tcp://*:5555` → `tcp://*:*`), or for `ipc://PATH` the path with `.preview` appended; nil for any other
    /// transport (`--preview-bind` is then needed).
    public static func defaultPreviewBind(frameBind: String) -> String? {
        if frameBind.hasPrefix("tcp://"), let host = Endpoint.host(of: frameBind), !host.isEmpty { return "tcp://\(host):*" }
        if frameBind.hasPrefix("ipc://"), frameBind.count > "ipc://".count { return frameBind + ".preview" }
        return nil
    }

    /// The preview endpoint announced in hellos once the preview socket is bound at `bound`: `--preview-advertise`;
    /// else, with `--advertise` (a NAT address or DNS name), its host with the bound port; else `bound` (a wildcard
    /// host is replaced by the collector, SPEC 7.1).
    public func advertisedPreviewEndpoint(bound: String) -> String {
        if let previewAdvertise { return previewAdvertise }
        if let advertise, advertise.hasPrefix("tcp://"), bound.hasPrefix("tcp://"), let host = Endpoint.host(of: advertise), !host.isEmpty,
           let port = Endpoint.port(of: bound)
        {
            return "tcp://\(host):\(port)"
        }
        return bound
    }
}
