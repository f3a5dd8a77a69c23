/// The EXIF orientation of a stored image: how its pixel rows and columns map onto the upright scene.
///
/// Raw values are the EXIF `Orientation` tag values 1–8. `Orientation(rawValue:)` never fails: 0 and
/// every other invalid value mean ``up``, as EXIF readers conventionally treat them.
///
/// | value | case | to make it upright |
/// |---|---|---|
/// | 1 | ``up`` | nothing |
/// | 2 | ``upMirrored`` | flip left↔right |
/// | 3 | ``down`` | rotate 180° |
/// | 4 | ``downMirrored`` | flip top↔bottom |
/// | 5 | ``leftMirrored`` | transpose (swap x and y) |
/// | 6 | ``right`` | rotate 90° clockwise |
/// | 7 | ``rightMirrored`` | transverse (rotate 90° clockwise, then flip left↔right) |
/// | 8 | ``left`` | rotate 90° counter-clockwise |
public enum Orientation: RawRepresentable, CaseIterable, Sendable, Hashable, CustomStringConvertible {
    /// 1: stored upright.
    case up
    /// 2: stored mirrored left↔right.
    case upMirrored
    /// 3: stored upside down.
    case down
    /// 4: stored mirrored top↔bottom.
    case downMirrored
    /// 5: stored transposed (row 0 is the upright left column, column 0 the top row).
    case leftMirrored
    /// 6: stored rotated 90° counter-clockwise.
    case right
    /// 7: stored transversed (row 0 is the upright right column read bottom to top).
    case rightMirrored
    /// 8: stored rotated 90° clockwise.
    case left

    /// Creates an orientation from an EXIF value; values outside 1...8 give ``up``.
    public init(rawValue: Int) {
        switch rawValue {
        case 2: self = .upMirrored
        case 3: self = .down
        case 4: self = .downMirrored
        case 5: self = .leftMirrored
        case 6: self = .right
        case 7: self = .rightMirrored
        case 8: self = .left
        default: self = .up
        }
    }

    /// The EXIF value, 1...8.
    public var rawValue: Int {
        switch self {
        case .up: 1
        case .upMirrored: 2
        case .down: 3
        case .downMirrored: 4
        case .leftMirrored: 5
        case .right: 6
        case .rightMirrored: 7
        case .left: 8
        }
    }

    /// Whether the upright frame has width and height swapped relative to the stored one (values 5–8).
    public var swapsDimensions: Bool { rawValue >= 5 }

    /// The upright size of an image stored as `width` × `height` with this orientation.
    public func uprightSize(width: Int, height: Int) -> (width: Int, height: Int) {
        swapsDimensions ? (height, width) : (width, height)
    }

    /// Maps a pixel position in the upright frame to the stored frame (`width` × `height` is the *stored* size).
    ///
    /// Integer pixel indices: `(0, 0)` is the top-left pixel.
    public func storedPixel(uprightX x: Int, uprightY y: Int, width: Int, height: Int) -> (x: Int, y: Int) {
        switch self {
        case .up: (x, y)
        case .upMirrored: (width - 1 - x, y)
        case .down: (width - 1 - x, height - 1 - y)
        case .downMirrored: (x, height - 1 - y)
        case .leftMirrored: (y, x)
        case .right: (y, height - 1 - x)
        case .rightMirrored: (width - 1 - y, height - 1 - x)
        case .left: (width - 1 - y, x)
        }
    }

    /// Returns `image` rotated and/or flipped from this stored orientation into the upright frame.
    ///
    /// The result is tightly packed (`stride == width * channels`) and has the format of the input.
    /// ``up`` returns a tightly packed input unchanged (no copy).
    /// - Precondition: `image` satisfies the ``PixelImage`` invariants (`stride >= width * channels`,
    ///   `bytes.count >= stride * height`).
    public func applied(to image: PixelImage) -> PixelImage {
        if self == .up, image.stride == image.width * image.format.channels { return image }
        let channels = image.format.channels
        // PixelImage's fields are public vars: re-check its invariants before touching memory directly.
        precondition(
            image.width >= 0 && image.height >= 0 && image.stride >= image.width * channels
                && image.bytes.count >= image.stride * image.height,
            "PixelImage fields were changed inconsistently with its pixel buffer")
        let size = uprightSize(width: image.width, height: image.height)
        let outStride = size.width * channels
        let sourceStride = image.stride
        let width = image.width
        let height = image.height
        // Step through the source in the order of the output: start position and per-x / per-y steps (bytes).
        let origin = storedPixel(uprightX: 0, uprightY: 0, width: width, height: height)
        let nextX = storedPixel(uprightX: min(1, size.width - 1), uprightY: 0, width: width, height: height)
        let nextY = storedPixel(uprightX: 0, uprightY: min(1, size.height - 1), width: width, height: height)
        let start = origin.y * sourceStride + origin.x * channels
        let stepX = (nextX.y - origin.y) * sourceStride + (nextX.x - origin.x) * channels
        let stepY = (nextY.y - origin.y) * sourceStride + (nextY.x - origin.x) * channels
        let count = outStride * size.height
        // Rotations read the source down its columns; 64×64 tiles keep those reads in cache.
        // Flips read whole rows and need no tiling.
        let tileWidth = swapsDimensions ? 64 : max(size.width, 1)
        let tileHeight = swapsDimensions ? 64 : max(size.height, 1)
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            image.bytes.withUnsafeBufferPointer { sourceBuffer in
                // Every address below stays inside both buffers: the steps come from `storedPixel`, which maps
                // the upright rectangle onto the stored one, and the PixelImage invariants cover the strides.
                guard let out = buffer.baseAddress, let source = sourceBuffer.baseAddress else { return }
                for tileY in Swift.stride(from: 0, to: size.height, by: tileHeight) {
                    for tileX in Swift.stride(from: 0, to: size.width, by: tileWidth) {
                        let tileEnd = min(tileX + tileWidth, size.width)
                        for y in tileY..<min(tileY + tileHeight, size.height) {
                            var s = source + (start + y * stepY + tileX * stepX)
                            var o = out + (y * outStride + tileX * channels)
                            if channels == 1 {
                                for _ in tileX..<tileEnd {
                                    o.pointee = s.pointee
                                    o += 1
                                    s += stepX
                                }
                            } else {
                                for _ in tileX..<tileEnd {
                                    o[0] = s[0]
                                    o[1] = s[1]
                                    o[2] = s[2]
                                    o += 3
                                    s += stepX
                                }
                            }
                        }
                    }
                }
            }
            initialized = count
        }
        return PixelImage(width: size.width, height: size.height, format: image.format, stride: outStride, bytes: bytes)
    }

    public var description: String {
        switch self {
        case .up: "up(1)"
        case .upMirrored: "upMirrored(2)"
        case .down: "down(3)"
        case .downMirrored: "downMirrored(4)"
        case .leftMirrored: "leftMirrored(5)"
        case .right: "right(6)"
        case .rightMirrored: "rightMirrored(7)"
        case .left: "left(8)"
        }
    }
}
