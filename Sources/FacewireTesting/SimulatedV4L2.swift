import FacewireCapture
import FacewireRuntime
import CV4L2
import FacewireImage
import FacewireProtocol
import Foundation

/// A scripted camera behind the same calls as libv4l2 (``V4L2Backend``): it answers `VIDIOC_QUERYCAP`, the format,
/// size and interval enumerations, `S_FMT`/`G_FMT`, `S_PARM`/`G_PARM`, `REQBUFS`, `QUERYBUF`, `mmap`, `QBUF`/`DQBUF`,
/// `STREAMON`/`STREAMOFF` and `poll` as a UVC driver does, delivering frames at the negotiated rate with monotonic
/// timestamps. The script decides what it offers and what goes wrong: corrupt or torn buffers, MJPEG without
/// Huffman tables, padding, and unplugging for a while.
///
/// There is no camera on the machines Facewire is built and tested on; this is how the camera path is tested. The
/// capture node uses it instead of libv4l2 when `FACEWIRE_V4L2_SIMULATION` names a script file (for tests and
/// demonstrations; it says so in its log).
public final class SimulatedV4L2: V4L2Backend, @unchecked Sendable {
    /// What the simulation offers and does. JSON, for `FACEWIRE_V4L2_SIMULATION`.
    public struct Script: Codable, Sendable {
        public var devices: [Device]

        public init(devices: [Device]) { self.devices = devices }

        public struct Size: Codable, Sendable, Equatable {
            public var width: Int
            public var height: Int
            public var fps: [Int]

            public init(width: Int, height: Int, fps: [Int]) {
                self.width = width
                self.height = height
                self.fps = fps
            }
        }

        public struct Format: Codable, Sendable {
            /// `MJPG`, `YUYV` or `NV12`.
            public var fourcc: String
            public var sizes: [Size]

            public init(fourcc: String, sizes: [Size]) {
                self.fourcc = fourcc
                self.sizes = sizes
            }
        }

        /// Something that happens when frame `frame` (counting every frame the device produced since it was
        /// first plugged in, from 0) is due.
        public struct Event: Codable, Sendable {
            public enum Kind: String, Codable, Sendable {
                /// The buffer holds random bytes.
                case garbage
                /// The buffer is cut off halfway (no end marker).
                case truncate
                /// The MJPEG frame comes without its Huffman tables, as many UVC cameras send it.
                case stripHuffmanTables = "strip-dht"
                /// 100 zero bytes follow the end marker.
                case pad
                /// The device disappears for `seconds` (then `open` works again and frames continue).
                case unplug
            }

            public var frame: Int
            public var kind: Kind
            public var seconds: Double?

            public init(frame: Int, kind: Kind, seconds: Double? = nil) {
                self.frame = frame
                self.kind = kind
                self.seconds = seconds
            }
        }

        public struct Device: Codable, Sendable {
            public var path: String
            public var driver: String?
            public var card: String?
            public var bus: String?
            public var formats: [Format]
            public var events: [Event]?

            public init(path: String, card: String? = nil, formats: [Format], events: [Event] = []) {
                self.path = path
                self.card = card
                self.formats = formats
                self.events = events
            }
        }
    }

    public let script: Script
    private let lock = NSLock()
    private var handles: [Int32: Handle] = [:]
    private var nextFD: Int32 = 1000
    /// Per device path: frames produced so far, and until when it is unplugged.
    private var produced: [String: Int] = [:]
    private var goneUntil: [String: UInt64] = [:]
    private let encoder: JPEGEncoder

    private final class Handle {
        let device: Script.Device
        var fourcc: UInt32
        var width: Int
        var height: Int
        var fps: Int
        var buffers: [UnsafeMutableRawPointer] = []
        var bufferLength = 0
        var queued: [Int] = []
        var streaming = false
        var streamStart: UInt64 = 0
        /// Frames due since STREAMON, delivered or dropped for want of a queued buffer.
        var due = 0
        var sequence: UInt32 = 0

        init(device: Script.Device) {
            self.device = device
            let format = device.formats[0]
            fourcc = V4L2.fourCC(format.fourcc)
            width = format.sizes[0].width
            height = format.sizes[0].height
            fps = format.sizes[0].fps.first ?? 30
        }

        func freeBuffers() {
            buffers.forEach { $0.deallocate() }
            buffers = []
            queued = []
        }

        deinit { freeBuffers() }
    }

    public init(script: Script) throws {
        self.script = script
        encoder = try JPEGEncoder(subsampling: .s420)
    }

    /// Reads a script from a JSON file.
    public convenience init(scriptFile path: String) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        try self.init(script: JSONDecoder().decode(Script.self, from: data))
    }

    // MARK: - What the simulated camera films

    /// Frame `index` as BGR pixels: a diagonal gradient with a bright square that moves a little each frame.
    public static func pattern(index: Int, width: Int, height: Int) -> PixelImage {
        var bytes = [UInt8](repeating: 0, count: width * height * 3)
        let size = max(8, min(width, height) / 4)
        let left = (index * 7) % max(1, width - size)
        let top = (index * 3) % max(1, height - size)
        for y in 0..<height {
            for x in 0..<width {
                let offset = (y * width + x) * 3
                let inSquare = x >= left && x < left + size && y >= top && y < top + size
                bytes[offset] = inSquare ? 40 : UInt8((x * 255) / max(1, width - 1))
                bytes[offset + 1] = inSquare ? 220 : UInt8((y * 255) / max(1, height - 1))
                bytes[offset + 2] = inSquare ? 230 : UInt8(((x + y) * 127) / max(1, width + height - 2))
            }
        }
        return PixelImage(width: width, height: height, format: .bgr, bytes: bytes)
    }

    /// The MJPEG bytes the camera sends for frame `index` when nothing goes wrong with it.
    public func mjpegFrame(index: Int, width: Int, height: Int) -> [UInt8] {
        lock.withLock { (try? encoder.encode(Self.pattern(index: index, width: width, height: height), quality: 90)) ?? [] }
    }

    /// Frame `index` as packed YUYV (BT.601 full range, the JPEG convention).
    public static func yuyvFrame(index: Int, width: Int, height: Int) -> [UInt8] {
        let image = pattern(index: index, width: width, height: height)
        var out = [UInt8](repeating: 0, count: width * height * 2)
        for y in 0..<height {
            for x in stride(from: 0, to: width - 1, by: 2) {
                let (y0, u0, v0) = ycbcr(image, x, y)
                let (y1, u1, v1) = ycbcr(image, x + 1, y)
                let o = (y * width + x) * 2
                out[o] = y0
                out[o + 1] = UInt8((Int(u0) + Int(u1) + 1) / 2)
                out[o + 2] = y1
                out[o + 3] = UInt8((Int(v0) + Int(v1) + 1) / 2)
            }
        }
        return out
    }

    /// Frame `index` as NV12: the luma plane, then interleaved Cb Cr at half size.
    public static func nv12Frame(index: Int, width: Int, height: Int) -> [UInt8] {
        let image = pattern(index: index, width: width, height: height)
        var out = [UInt8](repeating: 0, count: width * height + width * ((height + 1) / 2))
        for y in 0..<height {
            for x in 0..<width { out[y * width + x] = ycbcr(image, x, y).0 }
        }
        for y in stride(from: 0, to: height, by: 2) {
            for x in stride(from: 0, to: width, by: 2) {
                var u = 0
                var v = 0
                var n = 0
                for dy in 0..<2 where y + dy < height {
                    for dx in 0..<2 where x + dx < width {
                        let (_, cb, cr) = ycbcr(image, x + dx, y + dy)
                        u += Int(cb)
                        v += Int(cr)
                        n += 1
                    }
                }
                let o = width * height + (y / 2) * width + x
                out[o] = UInt8((u + n / 2) / n)
                out[o + 1] = UInt8((v + n / 2) / n)
            }
        }
        return out
    }

    private static func ycbcr(_ image: PixelImage, _ x: Int, _ y: Int) -> (UInt8, UInt8, UInt8) {
        let o = y * image.stride + x * 3
        let b = Double(image.bytes[o])
        let g = Double(image.bytes[o + 1])
        let r = Double(image.bytes[o + 2])
        func clamp(_ v: Double) -> UInt8 { UInt8(max(0, min(255, v.rounded()))) }
        return (
            clamp(0.299 * r + 0.587 * g + 0.114 * b),
            clamp(128 - 0.168736 * r - 0.331264 * g + 0.5 * b),
            clamp(128 + 0.5 * r - 0.418688 * g - 0.081312 * b)
        )
    }

    // MARK: - V4L2Backend

    public func devicePaths() -> [String] { script.devices.map(\.path).sorted() }

    private func fail(_ code: Int32) -> Int32 {
        errno = code
        return -1
    }

    private func isGone(_ path: String, now: UInt64) -> Bool {
        if let until = goneUntil[path] {
            if now < until { return true }
            goneUntil[path] = nil
        }
        return false
    }

    public func open(_ path: String, flags: Int32) -> Int32 {
        lock.withLock {
            guard let device = script.devices.first(where: { $0.path == path }), !device.formats.isEmpty,
                !isGone(path, now: Clock.monotonicNanoseconds())
            else { return fail(ENOENT) }
            let fd = nextFD
            nextFD += 1
            handles[fd] = Handle(device: device)
            return fd
        }
    }

    public func close(_ fd: Int32) -> Int32 {
        lock.withLock { handles.removeValue(forKey: fd) == nil ? fail(EBADF) : 0 }
    }

    public func mmap(length: Int, fd: Int32, offset: Int64) -> UnsafeMutableRawPointer? {
        lock.withLock {
            guard let handle = handles[fd], offset >= 0, Int(offset >> 24) < handle.buffers.count, length <= handle.bufferLength
            else {
                errno = EINVAL
                return nil
            }
            return handle.buffers[Int(offset >> 24)]
        }
    }

    public func munmap(_ start: UnsafeMutableRawPointer, length: Int) -> Int32 { 0 }

    public func poll(_ fd: Int32, timeoutMilliseconds: Int32) -> Int32 {
        let deadline = Clock.monotonicNanoseconds() + UInt64(max(0, timeoutMilliseconds)) * 1_000_000
        while true {
            let (state, wait): (Int32?, UInt64) = lock.withLock {
                guard let handle = handles[fd] else { return (-1, 0) }
                let now = Clock.monotonicNanoseconds()
                if isGone(handle.device.path, now: now) { return (-2, 0) }
                guard handle.streaming else { return (-1, 0) }
                let nextDue = frameTime(handle, handle.due)
                if now >= nextDue {
                    // The next frame is due: ready if a buffer is queued to take it (else the driver drops it).
                    return handle.queued.isEmpty ? (nil, 1_000_000) : (1, 0)
                }
                return (nil, nextDue - now)
            }
            if let state {
                if state == -1 { errno = EBADF }
                return state
            }
            let now = Clock.monotonicNanoseconds()
            if now >= deadline { return 0 }
            let sleep = min(wait, deadline - now)
            if sleep > 0 { usleep(useconds_t(max(1, sleep / 1000))) }
        }
    }

    private func frameTime(_ handle: Handle, _ index: Int) -> UInt64 {
        handle.streamStart + UInt64(Double(index) * 1e9 / Double(max(1, handle.fps)))
    }

    public func ioctl(_ fd: Int32, _ request: UInt, _ argument: UnsafeMutableRawPointer) -> Int32 {
        lock.withLock {
            guard let handle = handles[fd] else { return fail(EBADF) }
            if isGone(handle.device.path, now: Clock.monotonicNanoseconds()) { return fail(ENODEV) }
            switch request {
            case V4L2.queryCapability: return queryCapability(handle, argument.assumingMemoryBound(to: v4l2_capability.self))
            case V4L2.enumerateFormat: return enumerateFormat(handle, argument.assumingMemoryBound(to: v4l2_fmtdesc.self))
            case V4L2.enumerateFrameSizes: return enumerateSizes(handle, argument.assumingMemoryBound(to: v4l2_frmsizeenum.self))
            case V4L2.enumerateFrameIntervals:
                return enumerateIntervals(handle, argument.assumingMemoryBound(to: v4l2_frmivalenum.self))
            case V4L2.getFormat, V4L2.setFormat:
                return format(handle, argument.assumingMemoryBound(to: v4l2_format.self), set: request == V4L2.setFormat)
            case V4L2.getParameters, V4L2.setParameters:
                return parameters(handle, argument.assumingMemoryBound(to: v4l2_streamparm.self), set: request == V4L2.setParameters)
            case V4L2.requestBuffers: return requestBuffers(handle, argument.assumingMemoryBound(to: v4l2_requestbuffers.self))
            case V4L2.queryBuffer: return queryBuffer(handle, argument.assumingMemoryBound(to: v4l2_buffer.self))
            case V4L2.queueBuffer: return queueBuffer(handle, argument.assumingMemoryBound(to: v4l2_buffer.self))
            case V4L2.dequeueBuffer: return dequeueBuffer(handle, argument.assumingMemoryBound(to: v4l2_buffer.self))
            case V4L2.streamOn:
                guard !handle.buffers.isEmpty else { return fail(EINVAL) }
                if !handle.streaming {
                    handle.streaming = true
                    handle.streamStart = Clock.monotonicNanoseconds()
                    handle.due = 0
                }
                return 0
            case V4L2.streamOff:
                handle.streaming = false
                handle.queued = []
                return 0
            default: return fail(ENOTTY)
            }
        }
    }

    private static func copy(_ text: String, into pointer: UnsafeMutableRawPointer, capacity: Int) {
        let bytes = Array(text.utf8.prefix(capacity - 1))
        pointer.initializeMemory(as: UInt8.self, repeating: 0, count: capacity)
        bytes.withUnsafeBytes { pointer.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
    }

    private func queryCapability(_ handle: Handle, _ cap: UnsafeMutablePointer<v4l2_capability>) -> Int32 {
        cap.pointee = v4l2_capability()
        withUnsafeMutableBytes(of: &cap.pointee.driver) { Self.copy(handle.device.driver ?? "facewire-sim", into: $0.baseAddress!, capacity: $0.count) }
        withUnsafeMutableBytes(of: &cap.pointee.card) { Self.copy(handle.device.card ?? "Simulated camera", into: $0.baseAddress!, capacity: $0.count) }
        withUnsafeMutableBytes(of: &cap.pointee.bus_info) { Self.copy(handle.device.bus ?? "simulated", into: $0.baseAddress!, capacity: $0.count) }
        cap.pointee.version = 0x0006_0100
        let caps = UInt32(V4L2_CAP_VIDEO_CAPTURE) | UInt32(V4L2_CAP_STREAMING)
        cap.pointee.device_caps = caps
        cap.pointee.capabilities = caps | UInt32(V4L2_CAP_DEVICE_CAPS)
        return 0
    }

    private func enumerateFormat(_ handle: Handle, _ desc: UnsafeMutablePointer<v4l2_fmtdesc>) -> Int32 {
        let index = Int(desc.pointee.index)
        guard desc.pointee.type == V4L2.captureType, index < handle.device.formats.count else { return fail(EINVAL) }
        let format = handle.device.formats[index]
        desc.pointee.pixelformat = V4L2.fourCC(format.fourcc)
        desc.pointee.flags = format.fourcc == "MJPG" ? UInt32(V4L2_FMT_FLAG_COMPRESSED) : 0
        let name = switch format.fourcc {
        case "MJPG": "Motion-JPEG"
        case "YUYV": "YUYV 4:2:2"
        case "NV12": "Y/UV 4:2:0"
        default: format.fourcc
        }
        withUnsafeMutableBytes(of: &desc.pointee.description) { Self.copy(name, into: $0.baseAddress!, capacity: $0.count) }
        return 0
    }

    private func sizes(_ handle: Handle, _ fourcc: UInt32) -> [Script.Size]? {
        handle.device.formats.first { V4L2.fourCC($0.fourcc) == fourcc }?.sizes
    }

    private func enumerateSizes(_ handle: Handle, _ size: UnsafeMutablePointer<v4l2_frmsizeenum>) -> Int32 {
        guard let sizes = sizes(handle, size.pointee.pixel_format), Int(size.pointee.index) < sizes.count else { return fail(EINVAL) }
        let chosen = sizes[Int(size.pointee.index)]
        size.pointee.type = UInt32(V4L2_FRMSIZE_TYPE_DISCRETE.rawValue)
        size.pointee.discrete.width = UInt32(chosen.width)
        size.pointee.discrete.height = UInt32(chosen.height)
        return 0
    }

    private func enumerateIntervals(_ handle: Handle, _ interval: UnsafeMutablePointer<v4l2_frmivalenum>) -> Int32 {
        guard let sizes = sizes(handle, interval.pointee.pixel_format),
            let size = sizes.first(where: { $0.width == Int(interval.pointee.width) && $0.height == Int(interval.pointee.height) }),
            Int(interval.pointee.index) < size.fps.count
        else { return fail(EINVAL) }
        interval.pointee.type = UInt32(V4L2_FRMIVAL_TYPE_DISCRETE.rawValue)
        interval.pointee.discrete.numerator = 1
        interval.pointee.discrete.denominator = UInt32(size.fps[Int(interval.pointee.index)])
        return 0
    }

    private static func bufferSize(_ fourcc: UInt32, _ width: Int, _ height: Int) -> (bytesPerLine: Int, size: Int) {
        switch fourcc {
        case V4L2.yuyv: (width * 2, width * height * 2)
        case V4L2.nv12: (width, width * height + width * ((height + 1) / 2))
        default: (0, max(width * height * 3 / 2, 65_536))  // compressed: room for any frame at quality 90
        }
    }

    private func format(_ handle: Handle, _ format: UnsafeMutablePointer<v4l2_format>, set: Bool) -> Int32 {
        guard format.pointee.type == V4L2.captureType else { return fail(EINVAL) }
        if set {
            guard !handle.streaming, handle.buffers.isEmpty else { return fail(EBUSY) }
            // As a driver does: an unknown format becomes the first one, a size the nearest offered.
            let asked = format.pointee.fmt.pix.pixelformat
            let chosen = handle.device.formats.first { V4L2.fourCC($0.fourcc) == asked } ?? handle.device.formats[0]
            let width = Int(format.pointee.fmt.pix.width)
            let height = Int(format.pointee.fmt.pix.height)
            let size = chosen.sizes.min { abs($0.width * $0.height - width * height) < abs($1.width * $1.height - width * height) }!
            handle.fourcc = V4L2.fourCC(chosen.fourcc)
            handle.width = size.width
            handle.height = size.height
            if !size.fps.contains(handle.fps) { handle.fps = size.fps.first ?? 30 }
        }
        let (bytesPerLine, sizeImage) = Self.bufferSize(handle.fourcc, handle.width, handle.height)
        format.pointee.fmt.pix.pixelformat = handle.fourcc
        format.pointee.fmt.pix.width = UInt32(handle.width)
        format.pointee.fmt.pix.height = UInt32(handle.height)
        format.pointee.fmt.pix.bytesperline = UInt32(bytesPerLine)
        format.pointee.fmt.pix.sizeimage = UInt32(sizeImage)
        format.pointee.fmt.pix.field = UInt32(V4L2_FIELD_NONE.rawValue)
        return 0
    }

    private func parameters(_ handle: Handle, _ parm: UnsafeMutablePointer<v4l2_streamparm>, set: Bool) -> Int32 {
        guard parm.pointee.type == V4L2.captureType else { return fail(EINVAL) }
        let offered = sizes(handle, handle.fourcc)?.first { $0.width == handle.width && $0.height == handle.height }?.fps ?? [30]
        if set {
            let frame = parm.pointee.parm.capture.timeperframe
            if frame.numerator > 0 {
                let asked = Double(frame.denominator) / Double(frame.numerator)
                handle.fps = offered.min { abs(Double($0) - asked) < abs(Double($1) - asked) } ?? handle.fps
            }
        }
        parm.pointee.parm.capture.capability = UInt32(V4L2_CAP_TIMEPERFRAME)
        parm.pointee.parm.capture.timeperframe = v4l2_fract(numerator: 1, denominator: UInt32(handle.fps))
        return 0
    }

    private func requestBuffers(_ handle: Handle, _ request: UnsafeMutablePointer<v4l2_requestbuffers>) -> Int32 {
        guard request.pointee.type == V4L2.captureType, request.pointee.memory == V4L2.memoryMap else { return fail(EINVAL) }
        guard !handle.streaming else { return fail(EBUSY) }
        handle.freeBuffers()
        let count = request.pointee.count == 0 ? 0 : min(max(Int(request.pointee.count), 2), 32)
        let length = Self.bufferSize(handle.fourcc, handle.width, handle.height).size
        handle.bufferLength = length
        handle.buffers = (0..<count).map { _ in UnsafeMutableRawPointer.allocate(byteCount: length, alignment: 64) }
        request.pointee.count = UInt32(count)
        return 0
    }

    private func queryBuffer(_ handle: Handle, _ buffer: UnsafeMutablePointer<v4l2_buffer>) -> Int32 {
        let index = Int(buffer.pointee.index)
        guard index < handle.buffers.count else { return fail(EINVAL) }
        buffer.pointee.length = UInt32(handle.bufferLength)
        buffer.pointee.m.offset = UInt32(index << 24)
        buffer.pointee.memory = V4L2.memoryMap
        return 0
    }

    private func queueBuffer(_ handle: Handle, _ buffer: UnsafeMutablePointer<v4l2_buffer>) -> Int32 {
        let index = Int(buffer.pointee.index)
        guard index < handle.buffers.count, !handle.queued.contains(index) else { return fail(EINVAL) }
        handle.queued.append(index)
        return 0
    }

    private func dequeueBuffer(_ handle: Handle, _ buffer: UnsafeMutablePointer<v4l2_buffer>) -> Int32 {
        guard handle.streaming else { return fail(EINVAL) }
        let now = Clock.monotonicNanoseconds()
        let path = handle.device.path
        // Frames that came due with no buffer queued were dropped by the "driver", as a real one does.
        while handle.queued.isEmpty, now >= frameTime(handle, handle.due) {
            handle.due += 1
            handle.sequence &+= 1
            produced[path, default: 0] += 1
        }
        guard !handle.queued.isEmpty, now >= frameTime(handle, handle.due) else { return fail(EAGAIN) }
        let number = produced[path, default: 0]
        let events = (handle.device.events ?? []).filter { $0.frame == number }
        if let unplug = events.first(where: { $0.kind == .unplug }) {
            produced[path] = number + 1
            goneUntil[path] = now + UInt64((unplug.seconds ?? 1) * 1e9)
            return fail(ENODEV)
        }
        let index = handle.queued.removeFirst()
        let target = handle.buffers[index]
        var bytes: [UInt8]
        switch handle.fourcc {
        case V4L2.yuyv: bytes = Self.yuyvFrame(index: number, width: handle.width, height: handle.height)
        case V4L2.nv12: bytes = Self.nv12Frame(index: number, width: handle.width, height: handle.height)
        default:
            bytes = (try? encoder.encode(Self.pattern(index: number, width: handle.width, height: handle.height), quality: 90)) ?? []
            for event in events {
                switch event.kind {
                case .stripHuffmanTables: bytes = Self.withoutHuffmanTables(bytes)
                case .pad: bytes += [UInt8](repeating: 0, count: 100)
                default: break
                }
            }
        }
        for event in events {
            switch event.kind {
            case .garbage:
                var generator = SystemRandomNumberGenerator()
                bytes = (0..<bytes.count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            case .truncate: bytes = Array(bytes.prefix(bytes.count / 2))
            default: break
            }
        }
        let count = min(bytes.count, handle.bufferLength)
        bytes.withUnsafeBytes { target.copyMemory(from: $0.baseAddress!, byteCount: count) }
        let due = frameTime(handle, handle.due)
        handle.due += 1
        produced[path] = number + 1
        buffer.pointee.index = UInt32(index)
        buffer.pointee.bytesused = UInt32(count)
        buffer.pointee.length = UInt32(handle.bufferLength)
        buffer.pointee.flags = UInt32(V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC)
        buffer.pointee.sequence = handle.sequence
        handle.sequence &+= 1
        buffer.pointee.timestamp = timeval(tv_sec: Int(due / 1_000_000_000), tv_usec: Int((due % 1_000_000_000) / 1000))
        return 0
    }

    /// The same JPEG without its DHT segments.
    public static func withoutHuffmanTables(_ jpeg: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0xFF, 0xD8]
        var i = 2
        while i + 4 <= jpeg.count, jpeg[i] == 0xFF {
            let marker = jpeg[i + 1]
            let length = Int(jpeg[i + 2]) << 8 | Int(jpeg[i + 3])
            if marker == 0xDA {
                out += jpeg[i...]
                return out
            }
            if marker != 0xC4 { out += jpeg[i..<(i + 2 + length)] }
            i += 2 + length
        }
        return jpeg
    }
}
