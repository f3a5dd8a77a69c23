/// Something that produces JPEG frames for the capture node: a video file, a folder of images or a single image.
///
/// **Threading:** a source is not thread-safe. Create it and call ``next()`` on one thread (the capture loop).
public protocol FrameSource: AnyObject {
    /// A short human-readable description for logs, for example `video /data/a.mp4 (640×360, 29.97 fps)`.
    var description: String { get }
    /// The rate the source was recorded at, when it has one (video files). `nil` for still images:
    /// the caller chooses a pace.
    var nominalFPS: Double? { get }
    /// Returns the next frame, or `nil` at the end of the source.
    ///
    /// Sources opened with `loop: true` start again at the end and return `nil` only if a whole pass
    /// produced no frame.
    /// - Throws: ``FrameSourceError`` when the source fails in a way that ends it (a video decode error,
    ///   or a folder in which no file is readable).
    func next() throws -> SourceFrame?
}
