/// Upper bounds checked before any pixel memory is allocated, so hostile or broken input cannot
/// make a process allocate gigabytes.
public struct ImageLimits: Sendable, Equatable {
    /// Largest accepted image width in pixels (as stored, before orientation).
    public var maxWidth: Int
    /// Largest accepted image height in pixels (as stored, before orientation).
    public var maxHeight: Int
    /// Largest accepted size of the *compressed* input (the JPEG or image file), in bytes.
    public var maxBytes: Int

    /// Creates limits. The defaults are 8192 × 8192 pixels and 16 MiB of compressed data.
    public init(maxWidth: Int = 8192, maxHeight: Int = 8192, maxBytes: Int = 16 << 20) {
        self.maxWidth = maxWidth
        self.maxHeight = maxHeight
        self.maxBytes = maxBytes
    }

    /// 8192 × 8192 pixels, 16 MiB of compressed data.
    public static let standard = ImageLimits()

    /// Throws ``ImageError/Code/tooLarge`` or ``ImageError/Code/invalidHeader`` unless
    /// `1...maxWidth` × `1...maxHeight` contains the size.
    public func check(width: Int, height: Int) throws {
        guard width > 0, height > 0 else {
            throw ImageError(.invalidHeader, "image has an empty size \(width)×\(height)")
        }
        guard width <= maxWidth, height <= maxHeight else {
            throw ImageError(.tooLarge, "image is \(width)×\(height), the limit is \(maxWidth)×\(maxHeight)")
        }
    }

    /// Throws ``ImageError/Code/tooLarge`` when `byteCount` exceeds ``maxBytes``.
    public func check(byteCount: Int) throws {
        guard byteCount <= maxBytes else {
            throw ImageError(.tooLarge, "input is \(byteCount) bytes, the limit is \(maxBytes)")
        }
    }
}
