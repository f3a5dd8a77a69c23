import CTurboJPEG

/// What a JPEG's header says, read without decoding any pixels.
public struct JPEGHeader: Sendable, Equatable {
    /// Chroma subsampling of the compressed image.
    public enum Subsampling: Sendable, Equatable {
        case s444, s422, s420, grey, s440, s411
        /// A layout libturbojpeg does not name.
        case unknown

        init(turbo value: Int32) {
            switch value {
            case Int32(TJSAMP_444.rawValue): self = .s444
            case Int32(TJSAMP_422.rawValue): self = .s422
            case Int32(TJSAMP_420.rawValue): self = .s420
            case Int32(TJSAMP_GRAY.rawValue): self = .grey
            case Int32(TJSAMP_440.rawValue): self = .s440
            case Int32(TJSAMP_411.rawValue): self = .s411
            default: self = .unknown
            }
        }
    }

    /// Colour space of the compressed image.
    public enum Colorspace: Sendable, Equatable {
        case rgb, yCbCr, grey, cmyk, ycck
        /// A colour space libturbojpeg does not name.
        case unknown

        init(turbo value: Int32) {
            switch value {
            case Int32(TJCS_RGB.rawValue): self = .rgb
            case Int32(TJCS_YCbCr.rawValue): self = .yCbCr
            case Int32(TJCS_GRAY.rawValue): self = .grey
            case Int32(TJCS_CMYK.rawValue): self = .cmyk
            case Int32(TJCS_YCCK.rawValue): self = .ycck
            default: self = .unknown
            }
        }
    }

    /// Stored width in pixels (before any EXIF orientation is applied).
    public var width: Int
    /// Stored height in pixels (before any EXIF orientation is applied).
    public var height: Int
    /// Chroma subsampling.
    public var subsampling: Subsampling
    /// Colour space.
    public var colorspace: Colorspace

    /// Creates a header value.
    public init(width: Int, height: Int, subsampling: Subsampling, colorspace: Colorspace) {
        self.width = width
        self.height = height
        self.subsampling = subsampling
        self.colorspace = colorspace
    }
}
