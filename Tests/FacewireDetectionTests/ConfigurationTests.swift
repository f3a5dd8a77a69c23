import FacewireDetection
import FacewireOpenCV
import Foundation
import Testing

@Suite("Detector configuration")
struct ConfigurationTests {
    private func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("facewire-models-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test("search paths: $FACEWIRE_MODEL_DIR, then $XDG_CACHE_HOME or ~/.cache")
    func searchPaths() {
        #expect(
            DetectorConfiguration.defaultModelSearchPaths(environment: ["FACEWIRE_MODEL_DIR": "/m", "XDG_CACHE_HOME": "/c", "HOME": "/h"])
                == ["/m", "/c/facewire/models"])
        #expect(DetectorConfiguration.defaultModelSearchPaths(environment: ["HOME": "/h"]) == ["/h/.cache/facewire/models"])
    }

    @Test("the backend is inferred from the model file name")
    func inferBackend() throws {
        #expect(DetectorConfiguration.backend(forModelPath: "/x/face_detection_yunet_2022mar.onnx") == .yunet)
        #expect(DetectorConfiguration.backend(forModelPath: "/x/CenterFace.onnx") == .centerface)
        #expect(DetectorConfiguration.backend(forModelPath: "/x/haarcascade_frontalface_alt.xml") == .cascade)
        #expect(DetectorConfiguration.backend(forModelPath: "/x/model.onnx") == nil)
        let resolved = try DetectorConfiguration(modelPath: "/x/my-yunet.onnx").resolve(environment: [:])
        #expect(resolved.backend == .yunet)
        #expect(resolved.inputWidth == YuNetDetector.defaultInputWidth)
        #expect(throws: DetectionError.self) { try DetectorConfiguration(modelPath: "/x/model.onnx").resolve(environment: [:]) }
    }

    @Test("auto without a model falls back to the cascade with a note")
    func fallback() throws {
        let empty = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: empty) }
        let resolved = try DetectorConfiguration().resolve(environment: ["FACEWIRE_MODEL_DIR": empty.path, "HOME": empty.path])
        #expect(resolved.backend == .cascade)
        #expect(resolved.modelPath == nil)
        let note = try #require(resolved.note)
        #expect(note.contains(empty.path))
    }

    @Test("auto finds models in the search directories, preferring the measured best")
    func autoFindsModels() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let env = ["FACEWIRE_MODEL_DIR": dir.path, "HOME": dir.path]
        try Data([0]).write(to: dir.appendingPathComponent(YuNetDetector.modelFileName))
        #expect(try DetectorConfiguration().resolve(environment: env).backend == .yunet)
        try Data([0]).write(to: dir.appendingPathComponent(CenterFaceDetector.modelFileName))
        var onOpenCV = DetectorConfiguration()
        onOpenCV.runtime = .opencv  // auto would add a note that OpenVINO is not in this HOME
        let both = try onOpenCV.resolve(environment: env)
        #expect(both.backend == DetectorConfiguration.preferredModels[0].backend)
        #expect(both.note == nil, "a model was found: nothing to say")
        // An explicit backend without a path finds its own file.
        let yunet = try DetectorConfiguration(backend: .yunet, inputWidth: 640).resolve(environment: env)
        #expect(yunet.modelPath == dir.appendingPathComponent(YuNetDetector.modelFileName).path)
        #expect(yunet.inputWidth == 640)
    }

    @Test("an explicit DNN backend without any model file is a clear error")
    func missingModel() throws {
        let empty = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: empty) }
        #expect {
            try DetectorConfiguration(backend: .centerface).resolve(environment: ["FACEWIRE_MODEL_DIR": empty.path, "HOME": empty.path])
        } throws: { error in
            (error as? DetectionError)?.code == .modelNotFound
        }
        #expect {
            _ = try makeFaceDetector(DetectorConfiguration(backend: .yunet, modelPath: "/nonexistent/yunet.onnx"))
        } throws: { error in
            (error as? DetectionError)?.code == .modelNotFound
        }
    }

    @Test("makeFaceDetector builds each backend", .enabled(if: SharedData.available, SharedData.skipReason))
    func makesDetectors() throws {
        #expect(try makeFaceDetector(DetectorConfiguration(modelPath: SharedData.yunetModel)) is YuNetDetector)
        let centerFace = try makeFaceDetector(DetectorConfiguration(modelPath: SharedData.centerFaceModel, inputWidth: 480))
        #expect(centerFace is CenterFaceDetector)
        #expect(centerFace.inputWidth == 480)
        #expect(try makeFaceDetector(DetectorConfiguration(backend: .cascade)) is CascadeDetector)
        let auto = try makeFaceDetector(DetectorConfiguration())
        #expect(auto.inputWidth != nil)
    }
}
