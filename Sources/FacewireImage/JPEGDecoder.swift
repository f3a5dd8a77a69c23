import CTurboJPEG

/// Decodes JPEG data into ``PixelImage``s with libturbojpeg.
///
/// **Threading:** an instance owns one libturbojpeg handle and is *not* thread-safe. Create one decoder
/// per thread (or per task that stays on one thread) and reuse it for every frame; creating one is cheap
/// but not free. The type is deliberately not `Sendable`.
///
/// Every input is checked before pixel memory is allocated: the start-of-image marker, the
/// compressed size and the stored dimensions against ``limits``. Bad data throws ``ImageError``;
/// it never crashes the process.
public final class JPEGDecoder {
    /// The limits checked by ``readHeader(_:)`` and ``decode(_:scale:format:)``.
    public let limits: ImageLimits
    /// Replaced after a failed header read: libturbojpeg 2.x returns from `tjDecompressHeader3` errors without
    /// aborting the decompressor, and the stale state makes every later call on that handle fail.
    private var handle: tjhandle

    /// Creates a decoder with its own libturbojpeg handle.
    /// - Throws: ``ImageError/Code/resourceFailed`` if libturbojpeg cannot allocate a handle.
    public init(limits: ImageLimits = .standard) throws {
        guard let handle = tjInitDecompress() else {
            throw ImageError(.resourceFailed, "tjInitDecompress failed")
        }
        self.handle = handle
        self.limits = limits
    }

    deinit {
        tjDestroy(handle)
    }

    // MARK: - Header

    /// Reads the size and layout of a JPEG without decoding pixels.
    /// - Throws: ``ImageError`` with `.notJPEG` (no SOI marker), `.tooLarge` (over ``limits``),
    ///   `.invalidHeader` / `.truncated` (malformed header).
    public func readHeader(_ jpeg: UnsafeRawBufferPointer) throws -> JPEGHeader {
        try limits.check(byteCount: jpeg.count)
        guard jpeg.count >= 2, jpeg[0] == 0xFF, jpeg[1] == 0xD8, let base = jpeg.baseAddress else {
            throw ImageError(.notJPEG, "data (\(jpeg.count) bytes) does not start with a JPEG SOI marker")
        }
        var width: Int32 = 0
        var height: Int32 = 0
        var subsampling: Int32 = 0
        var colorspace: Int32 = 0
        let status = tjDecompressHeader3(
            handle, base.assumingMemoryBound(to: UInt8.self), UInt(jpeg.count),
            &width, &height, &subsampling, &colorspace)
        if status != 0 {
            let message = lastError()
            resetHandle()
            let code: ImageError.Code = Self.looksTruncated(message) ? .truncated : .invalidHeader
            throw ImageError(code, "cannot read JPEG header: \(message)")
        }
        try limits.check(width: Int(width), height: Int(height))
        return JPEGHeader(
            width: Int(width), height: Int(height),
            subsampling: JPEGHeader.Subsampling(turbo: subsampling),
            colorspace: JPEGHeader.Colorspace(turbo: colorspace))
    }

    /// Reads the size and layout of a JPEG without decoding pixels. See ``readHeader(_:)``.
    public func readHeader(_ jpeg: [UInt8]) throws -> JPEGHeader {
        try jpeg.withUnsafeBytes { try readHeader($0) }
    }

    // MARK: - Decode

    /// Decodes a JPEG, optionally scaled down in the DCT domain.
    ///
    /// - Parameters:
    ///   - jpeg: the complete JPEG data.
    ///   - scale: one of ``ScalingFactor/supported``; the result is `scale.scaled(width)` ×
    ///     `scale.scaled(height)` pixels. Use ``ScalingFactor/smallest(reaching:from:)`` to pick one.
    ///   - format: `.bgr` (OpenCV order) or `.grey` (the luma channel, cheaper).
    /// - Returns: a tightly packed image (`stride == width * channels`) in the *stored* orientation;
    ///   apply ``Orientation/applied(to:)`` for the upright frame.
    /// - Throws: ``ImageError`` with `.notJPEG`, `.tooLarge`, `.invalidHeader`, `.truncated` (data ends
    ///   before the last scan) or `.decodeFailed` (corrupt data, unsupported scale or colour space).
    ///   Recoverable corruption warnings (for example extraneous bytes before a marker) are tolerated.
    public func decode(
        _ jpeg: UnsafeRawBufferPointer, scale: ScalingFactor = .one, format: PixelImage.Format = .bgr
    ) throws -> PixelImage {
        let header = try readHeader(jpeg)
        guard scale.isSupported else {
            throw ImageError(.decodeFailed, "scaling factor \(scale) is not supported by libturbojpeg")
        }
        guard let base = jpeg.baseAddress else {
            throw ImageError(.notJPEG, "empty input")
        }
        let width = scale.scaled(header.width)
        let height = scale.scaled(header.height)
        let stride = width * format.channels
        let pixelFormat: TJPF = format == .grey ? TJPF_GRAY : TJPF_BGR
        var status: Int32 = 0
        let bytes = [UInt8](unsafeUninitializedCapacity: stride * height) { buffer, count in
            status = tjDecompress2(
                handle, base.assumingMemoryBound(to: UInt8.self), UInt(jpeg.count), buffer.baseAddress,
                Int32(width), Int32(stride), Int32(height), Int32(pixelFormat.rawValue), 0)
            // libturbojpeg fills every row even on failure (or we throw below), so the buffer is initialised.
            count = status == 0 || tjGetErrorCode(handle) == TJERR_WARNING.rawValue ? stride * height : 0
        }
        if status != 0 {
            let message = lastError()
            let isWarning = tjGetErrorCode(handle) == TJERR_WARNING.rawValue
            resetHandle()
            if Self.looksTruncated(message) {
                throw ImageError(.truncated, "JPEG data ends early: \(message)")
            }
            if !isWarning || bytes.count != stride * height {
                throw ImageError(.decodeFailed, "cannot decode JPEG: \(message)")
            }
            // A recoverable warning on otherwise complete data: keep the image.
        }
        return PixelImage(width: width, height: height, format: format, stride: stride, bytes: bytes)
    }

    /// Decodes a JPEG. See ``decode(_:scale:format:)``.
    public func decode(
        _ jpeg: [UInt8], scale: ScalingFactor = .one, format: PixelImage.Format = .bgr
    ) throws -> PixelImage {
        try jpeg.withUnsafeBytes { try decode($0, scale: scale, format: format) }
    }

    // MARK: - Private

    /// Starts over with a fresh handle so no state from a failed call leaks into the next one.
    /// Keeps the old handle if a new one cannot be allocated (out of memory).
    private func resetHandle() {
        guard let fresh = tjInitDecompress() else { return }
        tjDestroy(handle)
        handle = fresh
    }

    private func lastError() -> String {
        guard let text = tjGetErrorStr2(handle) else { return "unknown libturbojpeg error" }
        return String(cString: text)
    }

    /// libjpeg reports missing data as "Premature end of JPEG file" (JWRN_JPEG_EOF).
    private static func looksTruncated(_ message: String) -> Bool {
        message.contains("Premature end")
    }
}

@available(*, unavailable, message: "JPEGDecoder owns a libturbojpeg handle: use one per thread")
extension JPEGDecoder: Sendable {}
