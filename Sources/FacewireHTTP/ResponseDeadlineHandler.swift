import NIOCore
import NIOHTTPTypes

/// Closes a connection whose request is not over — its body received to the end and its response handed to the kernel
/// in full — within `deadline` of its head arriving (a response written while the body still trickles in gives the
/// body one more `deadline`). Hummingbird's idle timeout deliberately spares a connection with a request in progress,
/// and restarts on every body part; this covers the rest: a client that never reads its response (or pipelines
/// requests without reading), or sends a body that never ends, would otherwise hold its connection, and a place under
/// the connection cap, forever.
final class ResponseDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let deadline: TimeAmount
    private var unanswered = 0
    /// A request's body is still arriving (between its head and its end).
    private var reading = false
    private var timer: Scheduled<Void>?

    init(deadline: TimeAmount) {
        self.deadline = deadline
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            unanswered += 1
            reading = true
            if timer == nil { arm(context) }
        case .end: reading = false
        case .body: break
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .end = unwrapOutboundIn(data) else {
            context.write(data, promise: promise)
            return
        }
        let written = promise ?? context.eventLoop.makePromise()
        let loopBound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        written.futureResult.whenSuccess {
            let (handler, context) = loopBound.value
            handler.unanswered = max(0, handler.unanswered - 1)
            // The next request in line gets a full deadline of its own.
            handler.timer?.cancel()
            handler.timer = nil
            if handler.isOpen { handler.arm(context) }
        }
        context.write(data, promise: written)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    private func arm(_ context: ChannelHandlerContext) {
        let loopBound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: deadline) {
            let (handler, context) = loopBound.value
            handler.timer = nil
            if handler.isOpen { context.close(promise: nil) }
        }
    }

    /// Whether a request is not over: a response still owed, or a body still arriving.
    private var isOpen: Bool { unanswered > 0 || reading }
}
