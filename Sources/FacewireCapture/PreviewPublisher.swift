import CoreMetrics
import FacewireProtocol
import FacewireRuntime
import ZeroMQ
import FacewireCaptureCore

/// The capture node's preview socket (SPEC 7.5): an XPUB that live views subscribe to. Every frame handed to a worker
/// is offered to it; ``PreviewGate`` decides whether it goes (a view subscribed, within `--preview-fps`), and then the
/// very bytes the worker got go out as `[topic][FrameHeader][JPEG]`, never waiting.
///
/// Not thread-safe: it belongs to the capture thread.
final class PreviewPublisher {
    /// The ZAP domain of the preview socket, so that a refused view is told from a refused worker in the log.
    static let zapDomain = "facewire-preview"
    /// Subscription messages read per call, so that a flood cannot hold the capture loop.
    static let subscriptionsPerRead = 256

    private let socket: ZMQSocket
    private var gate: PreviewGate
    private let counters: Counters
    private let subscribers = Gauge(label: "facewire_capture_preview_subscribers")

    /// The endpoint actually bound.
    let endpoint: String

    /// - Parameter curveSecretKey: CURVE: make the preview socket a CURVE server with this key (the context's ZAP
    ///   handler lets in the same clients as on the frame socket).
    init(context: ZMQContext, bind: String, stream: String, fps: Double, curveSecretKey: String?, counters: Counters) throws {
        socket = try ZMQSocket(context: context, kind: .xpub)
        if let curveSecretKey { try socket.makeCurveServer(secretKey: curveSecretKey, zapDomain: Self.zapDomain) }
        // A slow view loses frames instead of queueing them: libzmq drops a message for a subscriber whose queue is
        // full (the XPUB is lossy), and a small kernel buffer keeps few frames in flight behind it.
        try socket.setHighWaterMarks(send: 2, receive: 100)
        try socket.setKernelBuffers(send: 256 * 1024)
        // Subscribers send subscriptions (at most 1 + 65 useful octets): nothing larger is ever allocated.
        try socket.setMaxMessageSize(4096)
        try socket.setTCPKeepalive(idleSeconds: 10, intervalSeconds: 2, count: 3)
        try socket.setLinger(milliseconds: 0)
        gate = PreviewGate(stream: stream, fps: fps)
        self.counters = counters
        endpoint = try socket.bind(bind)
        subscribers.record(0)
    }

    /// The socket to poll beside the frame socket: it has input when a view subscribes or leaves.
    var pollable: ZMQSocket { socket }

    /// Applies the subscriptions that arrived, without waiting.
    func readSubscriptions() throws {
        var read = 0
        while read < Self.subscriptionsPerRead, let parts = try socket.receive(dontWait: true) {
            read += 1
            if let counter = gate.receive(parts).counter { counters.add(counter) }
        }
        if read > 0 { subscribers.record(gate.subscriptions) }
    }

    /// Offers the frame just handed to a worker: `frame` is the `[FrameHeader][JPEG]` the worker got. Costs one
    /// comparison when no view is subscribed.
    func offer(_ frame: [[UInt8]]) {
        guard gate.isWanted else { return }
        let offer = gate.offer(atNs: Clock.monotonicNanoseconds())
        if let counter = offer.counter { counters.add(counter) }
        guard offer == .previewed else { return }
        do {
            if try socket.send([gate.topic] + frame, dontWait: true) {
                counters.add("preview_frames_sent")
                return
            }
        } catch {}
        counters.add("preview_send_failed")
    }

    func close() {
        socket.close()
    }
}
