/// How the capture sources treat a file, by its extension (case-insensitive).
enum ImageFileKind: Sendable, Equatable {
    /// `.jpg`, `.jpeg`: sent as they are.
    case jpeg
    /// Formats OpenCV decodes (PNG, BMP, PNM, WebP, TIFF): decoded and encoded to JPEG.
    case other

    static let jpegExtensions: Set<String> = ["jpg", "jpeg"]
    static let otherExtensions: Set<String> = ["png", "bmp", "dib", "ppm", "pgm", "pbm", "pnm", "webp", "tif", "tiff"]

    /// The kind for a path, or `nil` when the extension is not an image extension.
    init?(path: String) {
        guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/") else { return nil }
        let ext = path[path.index(after: dot)...].lowercased()
        if Self.jpegExtensions.contains(ext) {
            self = .jpeg
        } else if Self.otherExtensions.contains(ext) {
            self = .other
        } else {
            return nil
        }
    }
}
