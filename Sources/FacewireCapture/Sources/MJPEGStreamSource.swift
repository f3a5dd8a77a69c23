import FacewireImage
import FacewireProtocol
import FacewireRuntime
import Foundation

/// A source that paces itself (a camera, a pipe): the capture node waits for its frames instead of timing them.
public protocol LiveFrameSource: FrameSource {
    /// Waits up to `timeoutMilliseconds` for the next frame; returns whether ``next()`` will not block long.
    func waitForFrame(timeoutMilliseconds: Int) throws -> Bool
}

/// Splits a motion-JPEG byte stream (JPEG images back to back, as `ffmpeg -f mjpeg -` writes them) into frames.
///
/// Pure and incremental: feed it bytes as they come; it walks each image's marker segments by their lengths up to
/// the scan (so an EXIF thumbnail's end marker is not mistaken for the image's), then scans the entropy-coded data
/// for the end marker. Bytes between images are skipped and counted; an image larger than the limit is dropped and
/// the splitter resynchronises on the next start marker.
public struct MJPEGSplitter: Sendable {
    public let maxFrameBytes: Int
    private var buffer: [UInt8] = []
    /// Where the walk of the current image got to, so that bytes are not looked at twice.
    private var position = 0
    private var inScan = false
    /// Bytes skipped outside any image, and images dropped for size.
    public private(set) var skippedBytes = 0
    public private(set) var oversizedFrames = 0

    public init(maxFrameBytes: Int = 16 << 20) { self.maxFrameBytes = maxFrameBytes }

    /// Bytes held for an image not yet complete.
    public var pendingBytes: Int { buffer.count }

    /// Appends bytes; returns the images they completed, in order.
    public mutating func append(_ bytes: some Collection<UInt8>) -> [[UInt8]] {
        buffer.append(contentsOf: bytes)
        var frames: [[UInt8]] = []
        while let frame = nextFrame() { frames.append(frame) }
        return frames
    }

    private mutating func restart(droppingFirst count: Int) {
        buffer.removeFirst(min(count, buffer.count))
        position = 0
        inScan = false
    }

    private mutating func nextFrame() -> [UInt8]? {
        while true {
            // Find the start of an image.
            if position == 0 {
                var start = 0
                while start + 1 < buffer.count, !(buffer[start] == 0xFF && buffer[start + 1] == 0xD8) { start += 1 }
                if start + 1 >= buffer.count {
                    // Keep a last 0xFF: it may begin a start marker.
                    let keep = buffer.last == 0xFF ? 1 : 0
                    skippedBytes += buffer.count - keep
                    buffer.removeFirst(buffer.count - keep)
                    return nil
                }
                if start > 0 {
                    skippedBytes += start
                    buffer.removeFirst(start)
                }
                position = 2
            }
            if !inScan {
                // Marker segments up to the start of scan.
                while true {
                    guard position + 4 <= buffer.count else { return nil }
                    guard buffer[position] == 0xFF else {
                        restart(droppingFirst: 2)  // not a JPEG after all: look for the next start
                        break
                    }
                    let marker = buffer[position + 1]
                    if marker == 0xFF {
                        position += 1
                        continue
                    }
                    if marker == 0xD8 || marker == 0xD9 {
                        restart(droppingFirst: position)
                        break
                    }
                    let length = Int(buffer[position + 2]) << 8 | Int(buffer[position + 3])
                    guard length >= 2 else {
                        restart(droppingFirst: 2)
                        break
                    }
                    position += 2 + length
                    if position > maxFrameBytes { break }
                    if marker == 0xDA {
                        inScan = true
                        break
                    }
                }
                if position > maxFrameBytes {
                    oversizedFrames += 1
                    restart(droppingFirst: 2)
                    continue
                }
                if !inScan { continue }
            }
            // Entropy-coded data: 0xFF is followed by 0x00 (stuffing) or a restart marker, except at the end marker.
            while position + 1 < buffer.count {
                if position > maxFrameBytes {
                    oversizedFrames += 1
                    restart(droppingFirst: 2)
                    break
                }
                if buffer[position] == 0xFF {
                    let next = buffer[position + 1]
                    if next == 0xD9 {
                        let frame = Array(buffer[0..<(position + 2)])
                        restart(droppingFirst: position + 2)
                        return frame
                    }
                    if next == 0xD8 {
                        // A new image began before this one ended: this one is torn.
                        skippedBytes += position
                        restart(droppingFirst: position)
                        break
                    }
                }
                position += 1
            }
            if position == 0 { continue }
            return nil
        }
    }
}

/// Frames from a motion-JPEG byte stream on a file descriptor (`--source -`: standard input), so that
/// `ffmpeg -re -i clip.mp4 -f mjpeg - | facewire --role capture --source -` works. Each image is checked (and
/// repaired where safe) like a camera's MJPEG buffer and sent as it is; the capture time is when its last byte
/// arrived. The stream ends when the writer closes the pipe.
public final class MJPEGStreamSource: LiveFrameSource {
    private let fd: Int32
    private var splitter = MJPEGSplitter()
    private var ready: [[UInt8]] = []
    private var finished = false
    private var chunk = [UInt8](repeating: 0, count: 1 << 16)
    private let counters: Counters?
    private var seenSize: (width: Int, height: Int)?

    public let description: String
    public var nominalFPS: Double? { nil }

    public init(fd: Int32 = 0, name: String = "standard input", counters: Counters? = nil) {
        self.fd = fd
        self.counters = counters
        description = "motion-JPEG stream on \(name)"
    }

    /// Reads what is there (at most one chunk); returns false at the end of the stream.
    private func fill(timeoutMilliseconds: Int) throws -> Bool {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let result = Glibc.poll(&poller, 1, Int32(timeoutMilliseconds))
        if result < 0 {
            if errno == EINTR { return true }
            throw FrameSourceError(.readFailed, "\(description): poll: \(String(cString: strerror(errno)))")
        }
        if result == 0 { return true }
        let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count < 0 {
            if errno == EINTR || errno == EAGAIN { return true }
            throw FrameSourceError(.readFailed, "\(description): read: \(String(cString: strerror(errno)))")
        }
        if count == 0 { return false }
        let skippedBefore = splitter.skippedBytes
        let oversizedBefore = splitter.oversizedFrames
        ready += splitter.append(chunk[0..<count])
        if splitter.skippedBytes > skippedBefore { counters?.add("stream_bytes_skipped", UInt64(splitter.skippedBytes - skippedBefore)) }
        if splitter.oversizedFrames > oversizedBefore { counters?.add("stream_dropped_oversized", UInt64(splitter.oversizedFrames - oversizedBefore)) }
        return true
    }

    public func waitForFrame(timeoutMilliseconds: Int) throws -> Bool {
        if !ready.isEmpty || finished { return true }
        let deadline = Clock.monotonicNanoseconds() + UInt64(max(0, timeoutMilliseconds)) * 1_000_000
        repeat {
            let left = Int((deadline - min(deadline, Clock.monotonicNanoseconds())) / 1_000_000)
            if try !fill(timeoutMilliseconds: left) {
                finished = true
                return true
            }
            if !ready.isEmpty { return true }
        } while Clock.monotonicNanoseconds() < deadline
        return false
    }

    public func next() throws -> SourceFrame? {
        while true {
            while ready.isEmpty, !finished {
                _ = try waitForFrame(timeoutMilliseconds: 1000)
            }
            guard !ready.isEmpty else {
                if splitter.pendingBytes > 0 { counters?.add("stream_dropped_truncated") }
                return nil
            }
            let bytes = ready.removeFirst()
            switch MJPEGFrame.check(bytes) {
            case .success(let checked):
                if checked.insertedHuffmanTables { counters?.add("stream_repaired_dht") }
                if let seenSize, seenSize != (checked.width, checked.height) { counters?.add("stream_size_changes") }
                seenSize = (checked.width, checked.height)
                var frame = SourceFrame(
                    jpeg: checked.jpeg, width: checked.width, height: checked.height,
                    orientation: Orientation.exif(inJPEG: checked.jpeg) ?? .up, reencoded: false)
                frame.captureTimeUs = Clock.wallMicroseconds()
                return frame
            case .failure(let defect):
                counters?.add("stream_dropped_\(defect.rawValue)")
            }
        }
    }
}

extension V4L2Camera: LiveFrameSource {}
