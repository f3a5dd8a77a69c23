/// An 8-bit image in memory: grey (1 channel) or BGR (3 channels, OpenCV's order), rows `stride` bytes apart.
///
/// A value type: copies share storage until written (the array is copy-on-write).
public struct PixelImage: Sendable, Equatable {
    /// Pixel layouts Facewire works with.
    public enum Format: Int, Sendable, Equatable {
        case grey = 1
        case bgr = 3

        /// Bytes per pixel.
        public var channels: Int { rawValue }
    }

    public var width: Int
    public var height: Int
    public var format: Format
    /// Bytes from the start of one row to the start of the next (at least `width * format.channels`).
    public var stride: Int
    public var bytes: [UInt8]

    /// Creates an image over existing bytes.
    /// - Precondition: `bytes.count >= stride * height` and `stride >= width * format.channels`.
    public init(width: Int, height: Int, format: Format, stride: Int? = nil, bytes: [UInt8]) {
        let rowBytes = stride ?? width * format.channels
        precondition(width >= 0 && height >= 0, "negative image size")
        precondition(rowBytes >= width * format.channels, "stride shorter than a row")
        precondition(bytes.count >= rowBytes * height, "pixel buffer too small")
        self.width = width
        self.height = height
        self.format = format
        self.stride = rowBytes
        self.bytes = bytes
    }

    /// Creates an image filled with zeros.
    public init(width: Int, height: Int, format: Format) {
        self.init(width: width, height: height, format: format, bytes: [UInt8](repeating: 0, count: width * height * format.channels))
    }
}
