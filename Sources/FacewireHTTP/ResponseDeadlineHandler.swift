import NIOCore
import NIOHTTPTypes

/// Closes a connection whose request has not been answered — the response handed to the kernel in full — within
/// `deadline` of its head arriving. Hummingbird's idle timeout deliberately spares a connection with a request in
/// progress; this covers the rest: a client that never reads its response (or pipelines requests without reading)
/// would otherwise hold its connection, and a place under the connection cap, forever.
final class ResponseDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let deadline: TimeAmount
    private var unanswered = 0
    private var timer: Scheduled<Void>?

    init(deadline: TimeAmount) {
        self.deadline = deadline
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data) {
            unanswered += 1
            if timer == nil { arm(context) }
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
            if handler.unanswered > 0 { handler.arm(context) }
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
            if handler.unanswered > 0 { context.close(promise: nil) }
        }
    }
}
