import Testing
import FacewireDetection
import FacewireImage
import Foundation
import FacewireEvaluation

/// The real test material in `../shared/data` next to the repository (absent in a user's clone).
enum SharedData {
    /// `<repo>/../shared/data`, computed from this file's path.
    static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // FacewireDetectionTests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()  // repository root
        .deletingLastPathComponent()
        .appendingPathComponent("shared/data")

    /// Whether the shared data folder is there.
    static var available: Bool {
        FileManager.default.fileExists(atPath: root.appendingPathComponent("faces/dev.jsonl").path)
    }

    static let skipReason: Comment = "needs ../shared/data next to the repository (not in a user's clone)"

    static func path(_ relative: String) -> String { root.appendingPathComponent(relative).path }

    static var yunetModel: String { path("models/face_detection_yunet_2022mar.onnx") }
    static var centerFaceModel: String { path("models/centerface.onnx") }

    /// Loads an image file (JPEG or PNG) as BGR.
    static func image(_ relative: String) throws -> PixelImage {
        try EvaluationImageLoader().load(path(relative))
    }

    /// Reads a file's bytes.
    static func bytes(_ relative: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: root.appendingPathComponent(relative)))
    }

    /// The DNN detectors under test, by name.
    static func dnnDetectors() throws -> [(name: String, detector: any FaceDetector)] {
        [
            ("YuNet", try YuNetDetector(modelPath: yunetModel)),
            ("CenterFace", try CenterFaceDetector(modelPath: centerFaceModel)),
        ]
    }
}
