import CTurboJPEG

/// Encodes ``PixelImage``s to JPEG with libturbojpeg.
///
/// **Threading:** an instance owns one libturbojpeg handle and one reusable output buffer and is *not*
/// thread-safe. Create one encoder per thread and reuse it. The type is deliberately not `Sendable`.
public final class JPEGEncoder {
    /// Chroma subsampling used for colour images (grey images are always encoded as greyscale JPEGs).
    public enum ColorSubsampling: Sendable, Equatable {
        /// 4:2:0, the usual choice for camera frames (smallest output).
        case s420
        /// 4:2:2.
        case s422
        /// 4:4:4, no chroma subsampling (largest output, best colour edges).
        case s444

        var turbo: TJSAMP {
            switch self {
            case .s420: TJSAMP_420
            case .s422: TJSAMP_422
            case .s444: TJSAMP_444
            }
        }
    }

    /// Subsampling used for BGR images.
    public let subsampling: ColorSubsampling
    private let handle: tjhandle
    /// Worst-case-sized output buffer reused between calls (allocated with `tjAlloc`).
    private var buffer: UnsafeMutablePointer<UInt8>?
    private var bufferSize: UInt = 0

    /// Creates an encoder with its own libturbojpeg handle.
    /// - Throws: ``ImageError/Code/resourceFailed`` if libturbojpeg cannot allocate a handle.
    public init(subsampling: ColorSubsampling = .s420) throws {
        guard let handle = tjInitCompress() else {
            throw ImageError(.resourceFailed, "tjInitCompress failed")
        }
        self.handle = handle
        self.subsampling = subsampling
    }

    deinit {
        if let buffer { tjFree(buffer) }
        tjDestroy(handle)
    }

    /// Encodes an image as a baseline JPEG.
    ///
    /// - Parameters:
    ///   - image: a grey or BGR image with a non-empty size; any `stride` is accepted.
    ///   - quality: JPEG quality, clamped to `1...100`.
    /// - Returns: the complete JPEG file bytes (no EXIF; the stored frame is the image as given).
    /// - Throws: ``ImageError/Code/encodeFailed`` for an empty image or a libturbojpeg failure.
    public func encode(_ image: PixelImage, quality: Int = 85) throws -> [UInt8] {
        try image.bytes.withUnsafeBytes { pixels in
            try encode(
                pixels: pixels, width: image.width, height: image.height, stride: image.stride,
                format: image.format, quality: quality)
        }
    }

    /// Encodes pixels in memory you own (for example an OpenCV frame) without copying them into a
    /// ``PixelImage`` first.
    ///
    /// - Parameters:
    ///   - pixels: at least `stride * (height - 1) + width * format.channels` bytes.
    ///   - width: image width in pixels (> 0).
    ///   - height: image height in pixels (> 0).
    ///   - stride: bytes from one row to the next (≥ `width * format.channels`).
    ///   - format: `.grey` or `.bgr`.
    ///   - quality: JPEG quality, clamped to `1...100`.
    /// - Throws: ``ImageError/Code/encodeFailed`` for a bad size or buffer, or a libturbojpeg failure.
    public func encode(
        pixels: UnsafeRawBufferPointer, width: Int, height: Int, stride: Int, format: PixelImage.Format,
        quality: Int = 85
    ) throws -> [UInt8] {
        guard width > 0, height > 0 else {
            throw ImageError(.encodeFailed, "cannot encode an empty \(width)×\(height) image")
        }
        guard width <= Int(Int32.max) / 4, height <= Int(Int32.max) / 4, stride <= Int(Int32.max),
              stride >= width * format.channels
        else {
            throw ImageError(.encodeFailed, "image \(width)×\(height) (stride \(stride)) cannot be encoded")
        }
        guard let base = pixels.baseAddress, pixels.count >= stride * (height - 1) + width * format.channels else {
            throw ImageError(.encodeFailed, "pixel buffer of \(pixels.count) bytes is too small for \(width)×\(height)")
        }
        let samp: TJSAMP = format == .grey ? TJSAMP_GRAY : subsampling.turbo
        let pixelFormat: TJPF = format == .grey ? TJPF_GRAY : TJPF_BGR
        var (outputPointer, outputSize, needed) = try output(width: width, height: height, samp: samp)
        let status = tjCompress2(
            handle, base.assumingMemoryBound(to: UInt8.self), Int32(width), Int32(stride), Int32(height),
            Int32(pixelFormat.rawValue), &outputPointer, &outputSize, Int32(samp.rawValue),
            Int32(min(max(quality, 1), 100)), TJFLAG_NOREALLOC)
        guard status == 0, let result = outputPointer, outputSize <= needed else {
            throw ImageError(.encodeFailed, "cannot encode JPEG: \(lastError())")
        }
        return Array(UnsafeBufferPointer(start: result, count: Int(outputSize)))
    }

    /// Encodes planar Y'CbCr straight from its planes (no colour conversion): what a camera's YUYV or NV12 buffer
    /// becomes once its chroma is de-interleaved.
    ///
    /// - Parameters:
    ///   - y: `width` × `height` luma samples, rows `yStride` bytes apart.
    ///   - cb, cr: the chroma planes at the subsampling's size (4:2:2: ⌈width/2⌉ × height; 4:2:0: ⌈width/2⌉ × ⌈height/2⌉),
    ///     rows `chromaStride` bytes apart.
    ///   - subsampling: `.s422` or `.s420` (`.s444` takes full-size chroma planes).
    ///   - quality: JPEG quality, clamped to `1...100`.
    /// - Throws: ``ImageError/Code/encodeFailed`` for a bad size or too small a plane, or a libturbojpeg failure.
    public func encodePlanes(
        y: UnsafeRawBufferPointer, cb: UnsafeRawBufferPointer, cr: UnsafeRawBufferPointer, width: Int, height: Int,
        yStride: Int, chromaStride: Int, subsampling planeSubsampling: ColorSubsampling, quality: Int = 85
    ) throws -> [UInt8] {
        guard width > 0, height > 0, width <= 65_535, height <= 65_535 else {
            throw ImageError(.encodeFailed, "cannot encode a \(width)×\(height) image")
        }
        let chromaWidth = planeSubsampling == .s444 ? width : (width + 1) / 2
        let chromaHeight = planeSubsampling == .s420 ? (height + 1) / 2 : height
        guard yStride >= width, chromaStride >= chromaWidth,
            y.count >= yStride * (height - 1) + width,
            cb.count >= chromaStride * (chromaHeight - 1) + chromaWidth,
            cr.count >= chromaStride * (chromaHeight - 1) + chromaWidth,
            let yBase = y.baseAddress, let cbBase = cb.baseAddress, let crBase = cr.baseAddress
        else {
            throw ImageError(.encodeFailed, "Y'CbCr planes too small for \(width)×\(height)")
        }
        let samp = planeSubsampling.turbo
        var (outputPointer, outputSize, needed) = try output(width: width, height: height, samp: samp)
        var planes: [UnsafePointer<UInt8>?] = [
            yBase.assumingMemoryBound(to: UInt8.self), cbBase.assumingMemoryBound(to: UInt8.self),
            crBase.assumingMemoryBound(to: UInt8.self),
        ]
        var strides: [Int32] = [Int32(yStride), Int32(chromaStride), Int32(chromaStride)]
        let status = tjCompressFromYUVPlanes(
            handle, &planes, Int32(width), &strides, Int32(height), Int32(samp.rawValue), &outputPointer, &outputSize,
            Int32(min(max(quality, 1), 100)), TJFLAG_NOREALLOC)
        guard status == 0, let result = outputPointer, outputSize <= needed else {
            throw ImageError(.encodeFailed, "cannot encode JPEG from Y'CbCr planes: \(lastError())")
        }
        return Array(UnsafeBufferPointer(start: result, count: Int(outputSize)))
    }

    // MARK: - Private

    /// The reusable output buffer sized for the worst case of a `width`×`height` image: the pointer and size to pass
    /// to libturbojpeg, and that worst case (what a successful call must stay within).
    private func output(width: Int, height: Int, samp: TJSAMP) throws -> (UnsafeMutablePointer<UInt8>?, UInt, UInt) {
        let needed = tjBufSize(Int32(width), Int32(height), Int32(samp.rawValue))
        guard needed != UInt.max, needed > 0 else {
            throw ImageError(.encodeFailed, "cannot size the output buffer for \(width)×\(height)")
        }
        return (try outputBuffer(capacity: needed), needed, needed)
    }

    private func outputBuffer(capacity: UInt) throws -> UnsafeMutablePointer<UInt8> {
        if let buffer, bufferSize >= capacity { return buffer }
        if let buffer { tjFree(buffer) }
        buffer = nil
        bufferSize = 0
        guard capacity <= UInt(Int32.max), let fresh = tjAlloc(Int32(capacity)) else {
            throw ImageError(.resourceFailed, "cannot allocate \(capacity) bytes for JPEG output")
        }
        buffer = fresh
        bufferSize = capacity
        return fresh
    }

    private func lastError() -> String {
        guard let text = tjGetErrorStr2(handle) else { return "unknown libturbojpeg error" }
        return String(cString: text)
    }
}

@available(*, unavailable, message: "JPEGEncoder owns a libturbojpeg handle: use one per thread")
extension JPEGEncoder: Sendable {}
