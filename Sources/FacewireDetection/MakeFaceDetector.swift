import Foundation

/// Builds a detector from a configuration: ``DetectorConfiguration/resolve(environment:)`` then
/// ``ResolvedDetector/makeDetector()``.
///
/// Use `resolve` directly to learn which backend and file were picked (and any fallback note) before loading.
/// - Throws: ``DetectionError``.
public func makeFaceDetector(_ configuration: DetectorConfiguration) throws -> any FaceDetector {
    try configuration.resolve().makeDetector()
}
