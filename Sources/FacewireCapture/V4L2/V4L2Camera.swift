import CV4L2
import FacewireImage
import FacewireProtocol
import FacewireRuntime
import Foundation

/// A V4L2 camera as a ``FrameSource``, through libv4l2 (or a ``SimulatedV4L2``).
///
/// It prefers the camera's own JPEG (MJPEG), which it sends as it is after checking that each buffer is a complete
/// JPEG (MJPEG without Huffman tables gets the standard ones, padding after the end marker is cut off; torn or
/// broken buffers are dropped and counted). Otherwise it takes YUYV or NV12 and encodes them with libjpeg-turbo
/// straight from the Y'CbCr planes. Formats libv4l2 merely emulates are never used. Buffers are memory-mapped
/// (four by default) and each frame's capture time is the driver's monotonic timestamp.
///
/// When the camera disappears, ``next()`` throws ``FrameSourceError/Code/deviceLost``; ``reopen()`` tries to open it
/// again with the same settings.
///
/// **Threading:** like every source, use it from one thread (the capture loop); the calls block.
public final class V4L2Camera: FrameSource {
    /// What to ask the camera for.
    public struct Settings: Sendable {
        /// `--size`: the frame size; nil = the largest the camera offers up to 1280×720.
        public var size: (width: Int, height: Int)?
        /// `--camera-fps`: the rate asked of the driver; nil = the driver's default for the size.
        public var fps: Int?
        /// Quality for YUYV and NV12 frames (MJPEG is never re-encoded).
        public var jpegQuality: Int
        /// mmap buffers requested.
        public var bufferCount: Int
        /// A camera that delivers nothing for this long counts as lost.
        public var stallSeconds: Double

        public init(size: (width: Int, height: Int)? = nil, fps: Int? = nil, jpegQuality: Int = 85, bufferCount: Int = 4, stallSeconds: Double = 5) {
            self.size = size
            self.fps = fps
            self.jpegQuality = jpegQuality
            self.bufferCount = bufferCount
            self.stallSeconds = stallSeconds
        }
    }

    /// The formats taken, in order of preference.
    static let preferredFormats: [UInt32] = [V4L2.mjpeg, V4L2.jpeg, V4L2.yuyv, V4L2.nv12]

    public let path: String
    public let settings: Settings
    private let backend: V4L2Backend
    private let counters: Counters?
    private var fd: Int32 = -1
    private var buffers: [(pointer: UnsafeMutableRawPointer, length: Int)] = []
    private var encoder: JPEGEncoder?
    private var lumaPlane: [UInt8] = []
    private var cbPlane: [UInt8] = []
    private var crPlane: [UInt8] = []

    /// The negotiated format.
    public private(set) var fourcc: UInt32 = 0
    public private(set) var width = 0
    public private(set) var height = 0
    private var bytesPerLine = 0
    public private(set) var fps: Double?
    public private(set) var card = ""
    /// Frames dropped because their buffer was unusable, by defect (also added to the counters).
    public private(set) var defects: [String: Int] = [:]

    public var nominalFPS: Double? { fps }
    public var description: String {
        "camera \(path) '\(card)' (\(V4L2.name(ofFourCC: fourcc)) \(width)×\(height)\(fps.map { String(format: ", %.4g fps", $0) } ?? ""))"
    }

    /// Opens the camera and starts streaming.
    /// - Throws: ``FrameSourceError`` `.notFound` (no such device), `.notSupported` (not a capture device, or no
    ///   format Facewire takes), `.cannotOpen` (the driver refused a step).
    public init(path: String, backend: V4L2Backend, settings: Settings, counters: Counters? = nil) throws {
        self.path = path
        self.backend = backend
        self.settings = settings
        self.counters = counters
        try start()
    }

    deinit { stop() }

    /// Opens the camera again after it was lost, with the same settings.
    public func reopen() throws {
        stop()
        try start()
    }

    // MARK: - Setup

    private func fail(_ code: FrameSourceError.Code, _ what: String) -> FrameSourceError {
        let reason = String(cString: strerror(errno))
        return FrameSourceError(code, "\(path): \(what): \(reason)")
    }

    private func call(_ request: UInt, _ what: String, _ argument: UnsafeMutableRawPointer) throws {
        guard backend.ioctl(fd, request, argument) == 0 else {
            throw fail(errno == ENODEV || errno == ENOENT ? .deviceLost : .cannotOpen, what)
        }
    }

    private func start() throws {
        fd = backend.open(path, flags: O_RDWR | O_NONBLOCK)
        guard fd >= 0 else {
            throw fail(errno == ENOENT || errno == ENODEV ? .notFound : .cannotOpen, "cannot open")
        }
        do {
            try negotiate()
            try startStreaming()
        } catch {
            stop()
            throw error
        }
    }

    private func negotiate() throws {
        var capability = v4l2_capability()
        try call(V4L2.queryCapability, "VIDIOC_QUERYCAP", &capability)
        card = withUnsafeBytes(of: capability.card) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let caps = capability.capabilities & UInt32(V4L2_CAP_DEVICE_CAPS) != 0 ? capability.device_caps : capability.capabilities
        guard caps & UInt32(V4L2_CAP_VIDEO_CAPTURE) != 0, caps & UInt32(V4L2_CAP_STREAMING) != 0 else {
            throw FrameSourceError(.notSupported, "\(path) ('\(card)') is not a streaming video capture device (a UVC camera's second node carries metadata)")
        }
        let offered = try V4L2DeviceList.formats(fd: fd, backend: backend)
        let usable = offered.filter { !$0.emulated && Self.preferredFormats.contains($0.fourcc) }
        guard !usable.isEmpty else {
            let names = offered.filter { !$0.emulated }.map(\.name).joined(separator: ", ")
            throw FrameSourceError(.notSupported, "\(path) offers no format Facewire takes (MJPG, JPEG, YUYV, NV12); it offers: \(names)")
        }
        let ranked = usable.sorted { Self.preferredFormats.firstIndex(of: $0.fourcc)! < Self.preferredFormats.firstIndex(of: $1.fourcc)! }
        // The preferred format that has the requested size exactly; else the preferred one at its nearest size.
        let (format, size) = Self.choose(ranked, size: settings.size)
        var request = v4l2_format()
        request.type = V4L2.captureType
        request.fmt.pix.pixelformat = format.fourcc
        request.fmt.pix.width = UInt32(size.width)
        request.fmt.pix.height = UInt32(size.height)
        request.fmt.pix.field = UInt32(V4L2_FIELD_NONE.rawValue)
        try call(V4L2.setFormat, "VIDIOC_S_FMT", &request)
        fourcc = request.fmt.pix.pixelformat
        width = Int(request.fmt.pix.width)
        height = Int(request.fmt.pix.height)
        bytesPerLine = Int(request.fmt.pix.bytesperline)
        guard Self.preferredFormats.contains(fourcc), width > 0, height > 0 else {
            throw FrameSourceError(.notSupported, "\(path): the driver set \(V4L2.name(ofFourCC: fourcc)) \(width)×\(height) instead")
        }
        if fourcc == V4L2.yuyv { bytesPerLine = max(bytesPerLine, width * 2) }
        if fourcc == V4L2.nv12 { bytesPerLine = max(bytesPerLine, width) }

        var parameters = v4l2_streamparm()
        parameters.type = V4L2.captureType
        if let wanted = settings.fps, backend.ioctl(fd, V4L2.getParameters, &parameters) == 0,
            parameters.parm.capture.capability & UInt32(V4L2_CAP_TIMEPERFRAME) != 0
        {
            parameters.parm.capture.timeperframe = v4l2_fract(numerator: 1, denominator: UInt32(wanted))
            _ = backend.ioctl(fd, V4L2.setParameters, &parameters)
        }
        parameters = v4l2_streamparm()
        parameters.type = V4L2.captureType
        if backend.ioctl(fd, V4L2.getParameters, &parameters) == 0, parameters.parm.capture.timeperframe.numerator > 0 {
            let frame = parameters.parm.capture.timeperframe
            fps = Double(frame.denominator) / Double(frame.numerator)
        }
    }

    /// The format and size to ask for, from the usable formats in order of preference.
    static func choose(_ ranked: [V4L2DeviceList.Format], size wanted: (width: Int, height: Int)?) -> (V4L2DeviceList.Format, (width: Int, height: Int)) {
        func sizes(_ format: V4L2DeviceList.Format) -> [(width: Int, height: Int)] { format.sizes.map { ($0.width, $0.height) } }
        if let wanted {
            if let exact = ranked.first(where: { sizes($0).contains { $0 == wanted } }) { return (exact, wanted) }
            let first = ranked[0]
            let nearest = sizes(first).min { abs($0.width * $0.height - wanted.width * wanted.height) < abs($1.width * $1.height - wanted.width * wanted.height) }
            return (first, nearest ?? wanted)
        }
        let first = ranked[0]
        let all = sizes(first)
        let fitting = all.filter { $0.width * $0.height <= 1280 * 720 }
        let pick = fitting.max { $0.width * $0.height < $1.width * $1.height } ?? all.min { $0.width * $0.height < $1.width * $1.height }
        return (first, pick ?? (640, 480))
    }

    private func startStreaming() throws {
        var request = v4l2_requestbuffers()
        request.count = UInt32(max(2, settings.bufferCount))
        request.type = V4L2.captureType
        request.memory = V4L2.memoryMap
        try call(V4L2.requestBuffers, "VIDIOC_REQBUFS", &request)
        guard request.count >= 2 else { throw FrameSourceError(.cannotOpen, "\(path): the driver gave \(request.count) buffers") }
        for index in 0..<request.count {
            var buffer = v4l2_buffer()
            buffer.type = V4L2.captureType
            buffer.memory = V4L2.memoryMap
            buffer.index = index
            try call(V4L2.queryBuffer, "VIDIOC_QUERYBUF", &buffer)
            guard let pointer = backend.mmap(length: Int(buffer.length), fd: fd, offset: Int64(buffer.m.offset)) else {
                throw fail(.cannotOpen, "mmap of buffer \(index)")
            }
            buffers.append((pointer, Int(buffer.length)))
            try call(V4L2.queueBuffer, "VIDIOC_QBUF", &buffer)
        }
        var type = Int32(V4L2.captureType)
        try call(V4L2.streamOn, "VIDIOC_STREAMON", &type)
    }

    private func stop() {
        guard fd >= 0 else { return }
        var type = Int32(V4L2.captureType)
        _ = backend.ioctl(fd, V4L2.streamOff, &type)
        for buffer in buffers { _ = backend.munmap(buffer.pointer, length: buffer.length) }
        buffers = []
        var release = v4l2_requestbuffers()
        release.type = V4L2.captureType
        release.memory = V4L2.memoryMap
        _ = backend.ioctl(fd, V4L2.requestBuffers, &release)
        _ = backend.close(fd)
        fd = -1
    }

    // MARK: - Frames

    /// Waits up to `timeoutMilliseconds` for a filled buffer. Returns whether one is ready.
    /// - Throws: ``FrameSourceError/Code/deviceLost`` when the device reports an error or hung up.
    public func waitForFrame(timeoutMilliseconds: Int) throws -> Bool {
        guard fd >= 0 else { throw FrameSourceError(.deviceLost, "\(path) is closed") }
        switch backend.poll(fd, timeoutMilliseconds: Int32(timeoutMilliseconds)) {
        case 1: return true
        case 0: return false
        case -2: throw FrameSourceError(.deviceLost, "\(path) disappeared (the device reported an error or hung up)")
        default: throw fail(.deviceLost, "poll")
        }
    }

    /// The next usable frame; waits for it (up to ``Settings/stallSeconds``). Unusable buffers are counted and skipped.
    public func next() throws -> SourceFrame? {
        let giveUp = Clock.monotonicNanoseconds() + UInt64(settings.stallSeconds * 1e9)
        while Clock.monotonicNanoseconds() < giveUp {
            guard try waitForFrame(timeoutMilliseconds: 100) else { continue }
            var buffer = v4l2_buffer()
            buffer.type = V4L2.captureType
            buffer.memory = V4L2.memoryMap
            guard backend.ioctl(fd, V4L2.dequeueBuffer, &buffer) == 0 else {
                if errno == EAGAIN { continue }
                throw fail(.deviceLost, "VIDIOC_DQBUF")
            }
            let frame = convert(buffer)
            guard backend.ioctl(fd, V4L2.queueBuffer, &buffer) == 0 else { throw fail(.deviceLost, "VIDIOC_QBUF") }
            if let frame { return frame }
        }
        throw FrameSourceError(.deviceLost, "\(path) delivered no frame for \(settings.stallSeconds) s")
    }

    private func count(_ defect: String) {
        defects[defect, default: 0] += 1
        counters?.add("camera_dropped_\(defect)")
    }

    /// The buffer as a frame, or nil (counted) when it is unusable.
    private func convert(_ buffer: v4l2_buffer) -> SourceFrame? {
        let index = Int(buffer.index)
        guard index < buffers.count else {
            count("bad-index")
            return nil
        }
        if buffer.flags & UInt32(V4L2_BUF_FLAG_ERROR) != 0 {
            count("driver-error")
            return nil
        }
        let data = UnsafeRawBufferPointer(start: buffers[index].pointer, count: min(Int(buffer.bytesused), buffers[index].length))
        let captureTime = Self.wallTime(of: buffer)
        switch fourcc {
        case V4L2.mjpeg, V4L2.jpeg:
            switch MJPEGFrame.check(data, expectedSize: (width, height)) {
            case .success(let checked):
                if checked.insertedHuffmanTables { counters?.add("camera_repaired_dht") }
                if checked.trimmedBytes > 0 { counters?.add("camera_trimmed_padding") }
                var frame = SourceFrame(jpeg: checked.jpeg, width: width, height: height, orientation: .up, reencoded: false)
                frame.captureTimeUs = captureTime
                return frame
            case .failure(let defect):
                count(defect.rawValue)
                return nil
            }
        default:
            let started = Clock.monotonicNanoseconds()
            guard let jpeg = encodeRaw(data) else { return nil }
            counters?.add("encode_us", (Clock.monotonicNanoseconds() - started) / 1000)
            counters?.add("frames_encoded")
            var frame = SourceFrame(jpeg: jpeg, width: width, height: height, orientation: .up, reencoded: true)
            frame.captureTimeUs = captureTime
            return frame
        }
    }

    /// YUYV or NV12 to JPEG, straight from the planes.
    private func encodeRaw(_ data: UnsafeRawBufferPointer) -> [UInt8]? {
        let chromaWidth = (width + 1) / 2
        let isNV12 = fourcc == V4L2.nv12
        let chromaHeight = isNV12 ? (height + 1) / 2 : height
        let needed = isNV12 ? bytesPerLine * height + bytesPerLine * (chromaHeight - 1) + chromaWidth * 2 : bytesPerLine * (height - 1) + width * 2
        guard data.count >= needed, let base = data.baseAddress else {
            count("short-buffer")
            return nil
        }
        if encoder == nil { encoder = try? JPEGEncoder() }
        guard let encoder else { return nil }
        let bytes = base.assumingMemoryBound(to: UInt8.self)
        if lumaPlane.count != width * height { lumaPlane = [UInt8](repeating: 0, count: width * height) }
        if cbPlane.count != chromaWidth * chromaHeight {
            cbPlane = [UInt8](repeating: 0, count: chromaWidth * chromaHeight)
            crPlane = cbPlane
        }
        let (w, h, stride) = (width, height, bytesPerLine)
        lumaPlane.withUnsafeMutableBufferPointer { y in
            cbPlane.withUnsafeMutableBufferPointer { cb in
                crPlane.withUnsafeMutableBufferPointer { cr in
                    if isNV12 {
                        for row in 0..<h { (0..<w).forEach { y[row * w + $0] = bytes[row * stride + $0] } }
                        let uv = bytes + stride * h
                        for row in 0..<chromaHeight {
                            for x in 0..<chromaWidth {
                                cb[row * chromaWidth + x] = uv[row * stride + 2 * x]
                                cr[row * chromaWidth + x] = uv[row * stride + 2 * x + 1]
                            }
                        }
                    } else {
                        // YUYV: Y0 Cb Y1 Cr for each pair of pixels.
                        for row in 0..<h {
                            let line = bytes + row * stride
                            for x in 0..<chromaWidth {
                                let o = 4 * x
                                y[row * w + 2 * x] = line[o]
                                if 2 * x + 1 < w { y[row * w + 2 * x + 1] = line[o + 2] }
                                cb[row * chromaWidth + x] = line[o + 1]
                                cr[row * chromaWidth + x] = line[o + 3]
                            }
                        }
                    }
                }
            }
        }
        do {
            return try lumaPlane.withUnsafeBytes { y in
                try cbPlane.withUnsafeBytes { cb in
                    try crPlane.withUnsafeBytes { cr in
                        try encoder.encodePlanes(
                            y: y, cb: cb, cr: cr, width: w, height: h, yStride: w, chromaStride: chromaWidth,
                            subsampling: isNV12 ? .s420 : .s422, quality: settings.jpegQuality)
                    }
                }
            }
        } catch {
            count("encode-failed")
            return nil
        }
    }

    /// The buffer's timestamp as Unix microseconds: drivers stamp with the monotonic clock; anything else is taken
    /// as "now".
    static func wallTime(of buffer: v4l2_buffer) -> Int64 {
        let now = Clock.wallMicroseconds()
        guard buffer.flags & UInt32(V4L2_BUF_FLAG_TIMESTAMP_MASK) == UInt32(V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC) else { return now }
        let stamp = Int64(buffer.timestamp.tv_sec) * 1_000_000 + Int64(buffer.timestamp.tv_usec)
        let monotonicNow = Int64(Clock.monotonicNanoseconds() / 1000)
        let age = monotonicNow - stamp
        return age >= 0 && age < 10_000_000 ? now - age : now
    }
}
