import FacewireProtocol
import FacewireVocabulary
import SwiftProtobuf

/// Every decision of the live view, pure: no sockets, no clock (times come in as arguments), no pixels.
///
/// It takes the capture nodes' preview frames (``preview(_:at:)``) and the collector's results stream
/// (``receive(_:at:)``) and joins them by (stream, epoch, seq): a frame is shown only with its own result, never a
/// neighbour's. Previews wait for their result (and results for their preview) in bounded rings; whichever comes
/// second completes the pair. It also keeps, per stream, the drop counts, the collector's statistics, the events and
/// each track's best picture: the face scored best (``init(limits:score:)``) among the previewed frames it was
/// seen in; the shell crops it (``ViewOutput/crops``) and hands the crop back (``setCrop(_:stream:epoch:trackingID:)``).
///
/// Bounded by ``ViewLimits`` everywhere a peer could make it grow; what is refused is counted by name.
public struct ViewCore: Sendable {
    /// A preview frame with its own result.
    public struct JoinedFrame: Sendable {
        public var preview: PreviewFrame
        /// The result, landmarks removed (the page does not draw the mesh).
        public var result: FrameResult
    }

    /// A picture to crop for a track (the shell runs the imaging and calls ``setCrop(_:stream:epoch:trackingID:)``).
    public struct CropRequest: Sendable {
        public var stream: String
        public var epoch: UInt64
        public var trackingID: UInt64
        public var jpeg: [UInt8]
        public var orientation: UInt32
        public var face: WireFace
    }

    /// A track that left, with what is known of it (for `--save-faces`).
    public struct LeftTrack: Sendable {
        public var stream: String
        public var epoch: UInt64
        public var track: TrackAlbum.Track
    }

    public let limits: ViewLimits
    private let score: @Sendable (WireFace) -> Float
    private var streams: [String: StreamView] = [:]

    /// - Parameter score: how good a face is as its track's picture (larger is better; 0 or less: never).
    public init(limits: ViewLimits = .init(), score: @escaping @Sendable (WireFace) -> Float) {
        self.limits = limits
        self.score = score
    }

    // MARK: Inputs

    /// A capture node's preview frame, received at `now` (the view keeps wall-clock milliseconds).
    public mutating func preview(_ frame: PreviewFrame, at now: Instant) -> ViewOutput {
        var out = ViewOutput()
        let nowMs = now.wallMs
        let header = frame.header
        guard frame.jpeg.count <= limits.maxJPEGBytes else {
            out.count("view_previews_rejected_size")
            return out
        }
        guard var view = stream(header.stream, epoch: header.epoch, nowMs: nowMs, &out) else { return out }
        defer { streams[header.stream] = view }
        view.previews &+= 1
        if let index = view.results.firstIndex(where: { $0.seq == header.seq }) {
            let result = view.results.remove(at: index)
            join(frame, result, into: &view, &out)
        } else if view.pending.contains(where: { $0.header.seq == header.seq }) || header.seq < view.nextResultSeq {
            // A duplicate preview, or one whose result was already seen as dropped or beyond the ring.
            out.count("view_previews_unjoined")
        } else {
            view.pending.append(frame)
            if view.pending.count > limits.framesPerStream {
                view.pending.removeFirst(view.pending.count - limits.framesPerStream)
                out.count("view_previews_unjoined")
            }
            // Every stream's waiting frames together stay within the byte budget: this stream's oldest go first, the
            // new one last (the view of this stream is out of `streams` while it changes).
            let others = streams.values.reduce(0) { $0 + $1.pendingBytes }
            while !view.pending.isEmpty, others + view.pendingBytes > limits.maxPendingPreviewBytes {
                view.pending.removeFirst()
                out.count("view_previews_over_budget")
            }
        }
        return out
    }

    /// A message of the collector's results stream, received at `now`.
    public mutating func receive(_ message: StreamMessage, at now: Instant) -> ViewOutput {
        var out = ViewOutput()
        let nowMs = now.wallMs
        guard let body = message.body else { return out }  // heartbeat
        guard var view = stream(message.stream, epoch: message.epoch, nowMs: nowMs, &out) else { return out }
        defer { streams[message.stream] = view }
        switch body {
        case .frame(let result): receive(result, into: &view, nowMs: nowMs, &out)
        case .event(let event): receive(event, into: &view, nowMs: nowMs, &out)
        case .statistics(let statistics): view.window = PageModel.Window(statistics)
        case .end: view.ended = true
        case .reset: break  // the tracks it ended came as left events just before
        }
        out.act(.statusChanged)
        return out
    }

    /// The crop the shell made for a ``CropRequest``.
    public mutating func setCrop(_ crop: [UInt8], stream: String, epoch: UInt64, trackingID: UInt64) {
        guard streams[stream]?.epoch == epoch else { return }
        streams[stream]!.album.setCrop(crop, for: trackingID)
    }

    // MARK: Queries

    /// The streams shown, sorted.
    public var streamIDs: [String] { streams.keys.sorted() }

    /// The newest processed frame of `stream` that had a preview (for its snapshot).
    public func latest(_ stream: String) -> JoinedFrame? { streams[stream]?.latest }

    /// The best picture of track `trackingID` of `stream`'s current epoch, live or ended.
    public func crop(_ stream: String, trackingID: UInt64) -> [UInt8]? {
        streams[stream]?.album.track(trackingID)?.crop
    }

    /// A track of `stream`'s current epoch.
    public func track(_ stream: String, trackingID: UInt64) -> TrackAlbum.Track? {
        streams[stream]?.album.track(trackingID)
    }

    /// One stream's state for the page.
    public func status(_ stream: String) -> PageModel.Status? {
        streams[stream]?.status
    }

    /// Every stream's state and the newest events of all streams (at most ``ViewLimits/eventsPerStream``), oldest
    /// first.
    public func state() -> PageModel.State {
        let events = streams.values.flatMap(\.events).sorted { ($0.atMs, $0.stream, $0.seq) < ($1.atMs, $1.stream, $1.seq) }
        return .init(streams: streamIDs.compactMap(status), events: Array(events.suffix(limits.eventsPerStream)))
    }

    // MARK: Decisions

    /// The view of (stream, epoch), new or replaced for a newer epoch, marked active at `nowMs` and out of `streams`
    /// until the caller puts it back; nil (counted) for an invalid id, an older epoch, or a new stream when
    /// ``ViewLimits/maxStreams`` are shown and none of them has ended or been silent for ``idleMs`` (the least recently
    /// active such one makes room).
    private mutating func stream(_ id: String, epoch: UInt64, nowMs: Int64, _ out: inout ViewOutput) -> StreamView? {
        guard Wire.isValidStreamID(id) else {
            out.count("view_invalid_stream")
            return nil
        }
        if let current = streams[id]?.epoch {
            if epoch == current {
                // Taken out while the caller changes it (it puts it back): a copy left in `streams` would make every
                // change copy the stream's rings and tracks.
                var view = streams.removeValue(forKey: id)!
                view.lastActiveMs = max(view.lastActiveMs, nowMs)
                return view
            }
            guard epoch > current else {
                out.count("view_stale_epoch")
                return nil
            }
            streams[id] = nil  // the older epoch's view goes now: its frames no longer count against the budget
        } else if streams.count >= limits.maxStreams {
            let idle = streams.values.filter { $0.ended || nowMs.subtractingReportingOverflow($0.lastActiveMs).partialValue >= Self.idleMs }
            guard let oldest = idle.min(by: { $0.lastActiveMs < $1.lastActiveMs }) else {
                out.count("view_streams_refused_cap")
                return nil
            }
            streams[oldest.stream] = nil
            out.count("view_streams_forgotten")
        }
        out.act(.statusChanged)
        var view = StreamView(stream: id, epoch: epoch, limits: limits)
        view.lastActiveMs = nowMs
        return view
    }

    /// A stream silent this long (ms) may make room for a new one when ``ViewLimits/maxStreams`` are shown.
    public static let idleMs: Int64 = 60_000

    private mutating func receive(_ result: FrameResult, into view: inout StreamView, nowMs: Int64, _ out: inout ViewOutput) {
        let count = result.runLength > 1 ? result.runLength : 1
        view.frames = view.frames.addingSaturating(count)
        let (end, overflow) = result.seq.addingReportingOverflow(count)
        view.nextResultSeq = max(view.nextResultSeq, overflow ? .max : end)
        switch result.status {
        case .processed:
            view.processed &+= 1
        case .error:
            view.errors = view.errors.addingSaturating(count)
            view.noteDrop(result, count: count, nowMs: nowMs)
        case .dropped, .UNRECOGNIZED:
            view.noteDrop(result, count: count, nowMs: nowMs)
        }
        // A preview waiting for a frame that will never be shown, and every older one, goes.
        let before = view.pending.count
        var joinable: PreviewFrame?
        view.pending.removeAll { frame in
            if frame.header.seq == result.seq, result.status == .processed { joinable = frame }
            return frame.header.seq <= result.seq
        }
        if view.pending.count + (joinable == nil ? 0 : 1) < before { out.count("view_previews_unjoined") }
        guard result.status == .processed else { return }
        var trimmed = result
        // Kept are the fields the page and the crops use: not the mesh, nor the skin samples, nor fields this view does
        // not know (a result can carry up to 1 MiB of them, and up to 64 results wait per stream).
        trimmed.unknownFields = UnknownStorage()
        for index in trimmed.faces.indices {
            trimmed.faces[index].landmarks = []
            trimmed.faces[index].skin = []
            trimmed.faces[index].unknownFields = UnknownStorage()
        }
        if trimmed.faces.count > Self.maxFacesKept { trimmed.faces.removeLast(trimmed.faces.count - Self.maxFacesKept) }
        for face in trimmed.faces where face.trackingID != 0 {
            if !view.album.saw(face.trackingID, seq: result.seq, captureTimeUs: result.captureTimeUs), view.album.track(face.trackingID) == nil {
                out.count("view_tracks_refused_cap")
            }
        }
        if let joinable {
            join(joinable, trimmed, into: &view, &out)
        } else {
            view.results.append(trimmed)
            if view.results.count > limits.resultsPerStream { view.results.removeFirst(view.results.count - limits.resultsPerStream) }
        }
    }

    /// Most faces of one result the view keeps (the collector already bounds them; this bounds the view alone).
    static let maxFacesKept = 256

    private func join(_ frame: PreviewFrame, _ result: FrameResult, into view: inout StreamView, _ out: inout ViewOutput) {
        let joined = JoinedFrame(preview: frame, result: result)
        view.latest = joined
        view.joined &+= 1
        out.act(.joined(joined))
        for face in result.faces where face.trackingID != 0 {
            let value = score(face)
            guard view.album.isBetter(value, for: face.trackingID) else { continue }
            view.album.keepBest(face, score: value, for: face.trackingID)
            out.act(.crop(CropRequest(
                stream: frame.header.stream, epoch: frame.header.epoch, trackingID: face.trackingID, jpeg: frame.jpeg,
                orientation: frame.header.orientation, face: face)))
        }
    }

    private func receive(_ event: FaceEvent, into view: inout StreamView, nowMs: Int64, _ out: inout ViewOutput) {
        var track: TrackAlbum.Track?
        switch event.kind {
        case .appeared:
            track = view.album.track(event.trackingID)
        case .left:
            track = view.album.end(event.trackingID, frameCount: event.trackingFrameCount)
            if let track { out.act(.left(LeftTrack(stream: view.stream, epoch: view.epoch, track: track))) }
        case .UNRECOGNIZED:
            return
        }
        let page = PageModel.Event(
            kind: event.kind == .appeared ? "appeared" : "left", stream: view.stream, epoch: view.epoch, trackingID: event.trackingID,
            seq: event.seq, frames: track?.frameCount ?? event.trackingFrameCount, durationMs: track?.durationMs ?? 0, atMs: nowMs,
            hasPicture: track?.crop != nil, bpm: event.hasHeartRate ? beatsPerMinute(event.heartRate) : nil)
        out.act(.event(page))
        view.events.append(page)
        if view.events.count > limits.eventsPerStream { view.events.removeFirst(view.events.count - limits.eventsPerStream) }
    }
}

/// What one input changed, for the shell to carry out: the shared ``Effects`` shape with the view's actions.
public typealias ViewOutput = Effects<ViewAction>

/// One thing the view's shell does besides counting, in order.
public enum ViewAction: Sendable {
    /// A frame to push to the pages.
    case joined(ViewCore.JoinedFrame)
    /// A picture to crop.
    case crop(ViewCore.CropRequest)
    /// An event to push.
    case event(PageModel.Event)
    /// A track that left (for `--save-faces`).
    case left(ViewCore.LeftTrack)
    /// The stream's status changed (the shell pushes it, at most a few times a second).
    case statusChanged
}

extension Effects where Action == ViewAction {
    /// The frames joined, in order.
    public var joined: [ViewCore.JoinedFrame] { actions.compactMap { if case .joined(let frame) = $0 { frame } else { nil } } }
    /// The crops requested, in order.
    public var crops: [ViewCore.CropRequest] { actions.compactMap { if case .crop(let request) = $0 { request } else { nil } } }
    /// The events, in order.
    public var events: [PageModel.Event] { actions.compactMap { if case .event(let event) = $0 { event } else { nil } } }
    /// The tracks that left, in order.
    public var left: [ViewCore.LeftTrack] { actions.compactMap { if case .left(let track) = $0 { track } else { nil } } }
    /// Whether the stream's status changed.
    public var statusChanged: Bool { actions.contains { if case .statusChanged = $0 { true } else { false } } }
}

extension Instant {
    /// The wall clock in milliseconds (the view's times).
    var wallMs: Int64 { wallUs / 1000 }
}

/// One stream's state in the view.
struct StreamView: Sendable {
    let stream: String
    let epoch: UInt64
    var ended = false
    /// Previews waiting for their result, in arrival order.
    var pending: [PreviewFrame] = []
    /// The JPEG bytes of the previews waiting (at most ``ViewLimits/framesPerStream`` of them).
    var pendingBytes: Int { pending.reduce(0) { $0 + $1.jpeg.count } }
    /// Processed results waiting for their preview (landmarks removed), in arrival order.
    var results: [FrameResult] = []
    /// One past the newest sequence a result covered: previews below it will find no result.
    var nextResultSeq: UInt64 = 0
    var latest: ViewCore.JoinedFrame?
    var album: TrackAlbum
    var events: [PageModel.Event] = []
    var frames: UInt64 = 0
    var processed: UInt64 = 0
    var errors: UInt64 = 0
    var dropped: [String: UInt64] = [:]
    var lastDrop: PageModel.Drop?
    var window: PageModel.Window?
    var previews: UInt64 = 0
    var joined: UInt64 = 0
    /// When the stream was last heard of (wall-clock ms).
    var lastActiveMs: Int64 = .min

    init(stream: String, epoch: UInt64, limits: ViewLimits) {
        self.stream = stream
        self.epoch = epoch
        album = TrackAlbum(maxLive: limits.liveTracksPerStream, maxEnded: limits.endedTracksPerStream)
    }

    /// Most distinct drop reasons kept per stream (reasons are short codes; a peer could invent many).
    static let maxReasons = 32

    mutating func noteDrop(_ result: FrameResult, count: UInt64, nowMs: Int64) {
        let code = ViewCore.reasonCode(result.reason)
        if dropped[code] != nil || dropped.count < Self.maxReasons - 1 {  // one slot left for "other"
            dropped[code, default: 0] = dropped[code, default: 0].addingSaturating(count)
        } else {
            dropped["other", default: 0] = dropped["other", default: 0].addingSaturating(count)
        }
        lastDrop = .init(seq: result.seq, reason: code, atMs: nowMs)
    }

    var status: PageModel.Status {
        .init(
            stream: stream, epoch: epoch, ended: ended, frames: frames, processed: processed, errors: errors, dropped: dropped,
            lastDrop: lastDrop, window: window, previews: previews, joined: joined, liveTracks: album.live.count)
    }
}

extension ViewCore {
    /// The reason code of a drop: the part before any `:`, at most 32 printable ASCII bytes; `unknown` if empty.
    static func reasonCode(_ reason: String) -> String {
        let code = reason.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        let clean = String(decoding: code.utf8.prefix(32).filter { (0x21...0x7E).contains($0) }, as: UTF8.self)
        return clean.isEmpty ? "unknown" : clean
    }
}

extension PageModel.Window {
    init(_ s: StreamStatisticsMessage) {
        var dropped: [String: UInt64] = [:]
        for entry in s.dropped.prefix(StreamView.maxReasons) {
            let code = ViewCore.reasonCode(entry.reason)
            dropped[code] = dropped[code, default: 0].addingSaturating(entry.count)
        }
        self.init(
            seconds: finite(s.windowSeconds) ?? 0, fps: finite(s.fps) ?? 0, frames: s.frames, processed: s.processed, dropped: dropped,
            latencyP50Ms: s.hasLatencyP50Ms ? finite(s.latencyP50Ms) : nil, latencyP99Ms: s.hasLatencyP99Ms ? finite(s.latencyP99Ms) : nil)
    }
}

extension UInt64 {
    func addingSaturating(_ other: UInt64) -> UInt64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? .max : sum
    }
}
