import FacewireDetection
import FacewireOpenCV
import FacewireImage
import Foundation

/// Loads evaluation images from files: JPEGs with libturbojpeg, other formats (PNG, BMP, ...) with OpenCV.
/// Not thread-safe (owns a JPEG decoder).
public final class EvaluationImageLoader {
    private let decoder: JPEGDecoder

    /// Creates a loader.
    /// - Throws: ``ImageError`` if libturbojpeg cannot create a decoder.
    public init() throws {
        decoder = try JPEGDecoder(limits: ImageLimits(maxBytes: 64 << 20))
    }

    /// Loads `path` as BGR, in its stored orientation (evaluation annotations refer to the stored pixels).
    /// - Throws: ``ImageError`` (JPEG) or ``DetectionError`` `.invalidImage` (other formats).
    public func load(_ path: String) throws -> PixelImage {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        if data.count >= 2, data[data.startIndex] == 0xFF, data[data.startIndex + 1] == 0xD8 {
            return try data.withUnsafeBytes { try decoder.decode($0, scale: .one, format: .bgr) }
        }
        return try Self.readWithOpenCV(path)
    }

    private static func readWithOpenCV(_ path: String) throws -> PixelImage {
        do {
            return try OpenCVImageFile.withBGR(path: path) { pixels, width, height in
                guard width > 0, height > 0 else { throw OpenCVError(message: "") }
                return PixelImage(width: width, height: height, format: .bgr, bytes: [UInt8](pixels.bindMemory(to: UInt8.self)))
            }
        } catch let error as OpenCVError {
            throw DetectionError(.invalidImage, "cannot read \(path): \(error.message)")
        }
    }
}
