import FacewireProtocol
import FacewireRuntime
import Foundation

/// Turns a source that blocks at its own pace (a network stream: RTSP, HTTP) into a live one that always has the
/// newest frame: a thread of its own reads the wrapped source continuously and keeps only the latest frame.
///
/// This is what keeps a network camera's latency down: FFmpeg buffers a stream that is read more slowly than it
/// arrives, and every frame then comes out late. Reading it at its own rate and replacing the frame not yet taken
/// means a frame is never older than one interval when the capture node numbers it. Frames replaced before they
/// were taken are counted (`frames_replaced_at_source`); they were never numbered.
public final class LatestFrameSource: LiveFrameSource, @unchecked Sendable {
    private let source: any FrameSource
    private let counters: Counters?
    private let condition = NSCondition()
    private var latest: SourceFrame?
    private var finished = false
    private var failure: Error?
    private var stopping = false
    private var thread: Thread?

    public let description: String
    public let nominalFPS: Double?

    /// Starts reading `source` on a new thread. The source must not be used by anyone else from now on.
    public init(wrapping source: sending any FrameSource, counters: Counters? = nil) {
        self.source = source
        self.counters = counters
        description = source.description + " (read continuously, newest frame kept)"
        nominalFPS = source.nominalFPS
        // The thread holds the source until it ends, fails or is closed.
        let thread = Thread { self.readLoop() }
        thread.name = "facewire-source"
        self.thread = thread
        thread.start()
    }

    /// Stops reading (after the read in progress).
    public func close() {
        condition.withLock {
            stopping = true
            condition.broadcast()
        }
    }

    private func readLoop() {
        while true {
            if condition.withLock({ stopping }) { return }
            let frame: SourceFrame?
            do {
                frame = try source.next()
            } catch {
                condition.withLock {
                    failure = error
                    condition.broadcast()
                }
                return
            }
            condition.withLock {
                if var frame {
                    if frame.captureTimeUs == nil { frame.captureTimeUs = Clock.wallMicroseconds() }
                    // A live stream's time is when it was read: no media time (SPEC 6.1).
                    frame.mediaTimeSeconds = nil
                    if latest != nil { counters?.add("frames_replaced_at_source") }
                    latest = frame
                } else {
                    finished = true
                }
                condition.broadcast()
            }
            if frame == nil { return }
        }
    }

    public func waitForFrame(timeoutMilliseconds: Int) throws -> Bool {
        let deadline = Date().addingTimeInterval(Double(max(0, timeoutMilliseconds)) / 1000)
        return condition.withLock {
            while latest == nil, !finished, failure == nil {
                if !condition.wait(until: deadline) { break }
            }
            return latest != nil || finished || failure != nil
        }
    }

    public func next() throws -> SourceFrame? {
        try condition.withLock {
            while latest == nil, !finished, failure == nil { condition.wait() }
            if let frame = latest {
                latest = nil
                return frame
            }
            if let failure { throw failure }
            return nil
        }
    }
}
