import COpenCV
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
        var pixels: UnsafeMutablePointer<UInt8>?
        var width: Int32 = 0
        var height: Int32 = 0
        var errorText = [CChar](repeating: 0, count: 512)
        let status = errorText.withUnsafeMutableBufferPointer { err in
            fwcv_image_read(path, &pixels, &width, &height, err.baseAddress, err.count)
        }
        guard status == 0, let pixels, width > 0, height > 0 else {
            let message = cErrorMessage(errorText)
            throw DetectionError(.invalidImage, "cannot read \(path): \(message)")
        }
        defer { fwcv_free(pixels) }
        let count = Int(width) * Int(height) * 3
        let bytes = [UInt8](UnsafeBufferPointer(start: pixels, count: count))
        return PixelImage(width: Int(width), height: Int(height), format: .bgr, bytes: bytes)
    }
}
