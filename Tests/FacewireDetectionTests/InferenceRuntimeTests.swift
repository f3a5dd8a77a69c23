import FacewireDetection
import FacewireOpenCV
import FacewireVocabulary
import Foundation
import Testing

/// Where OpenVINO is looked for and what happens without it: no library is loaded by these (a process loads one once).
@Suite("Inference runtime: finding OpenVINO, and the fallback to OpenCV")
struct InferenceRuntimeSearchTests {
    static func directory(_ files: [String]) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("fw-openvino-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        for file in files { try Data().write(to: url.appendingPathComponent(file)) }
        return url.path
    }

    @Test func searchOrderIsTheVariableThenTheCache() {
        #expect(DetectorConfiguration.openVINOSearchPaths(environment: ["FACEWIRE_OPENVINO": "/opt/ov", "HOME": "/home/u"])
            == ["/opt/ov", "/home/u/.cache/facewire/openvino/libs"])
        #expect(DetectorConfiguration.openVINOSearchPaths(environment: ["XDG_CACHE_HOME": "/c", "HOME": "/home/u"])
            == ["/c/facewire/openvino/libs"])
    }

    @Test func aDirectoryGivesItsLibraryTheUnversionedNameFirstThenTheHighestVersion() throws {
        let versioned = try Self.directory(["libopenvino_c.so.2541", "libopenvino_c.so.2641", "libopenvino.so.2641"])
        defer { try? FileManager.default.removeItem(atPath: versioned) }
        #expect(DetectorConfiguration.findOpenVINOLibrary(environment: ["FACEWIRE_OPENVINO": versioned, "HOME": "/nowhere"])
            == "\(versioned)/libopenvino_c.so.2641")
        let both = try Self.directory(["libopenvino_c.so.2641", "libopenvino_c.so"])
        defer { try? FileManager.default.removeItem(atPath: both) }
        #expect(DetectorConfiguration.findOpenVINOLibrary(environment: ["FACEWIRE_OPENVINO": both, "HOME": "/nowhere"])
            == "\(both)/libopenvino_c.so")
        // A file given directly is taken as it is.
        #expect(DetectorConfiguration.findOpenVINOLibrary(environment: ["FACEWIRE_OPENVINO": "\(both)/libopenvino_c.so.2641", "HOME": "/nowhere"])
            == "\(both)/libopenvino_c.so.2641")
        let empty = try Self.directory(["libopenvino.so.2641", "readme"])
        defer { try? FileManager.default.removeItem(atPath: empty) }
        #expect(DetectorConfiguration.findOpenVINOLibrary(environment: ["FACEWIRE_OPENVINO": empty, "HOME": "/nowhere"]) == nil)
    }

    @Test func withoutOpenVINOAutoFallsBackToOpenCVAndSaysWhyAndAnExplicitRequestFails() throws {
        let empty = try Self.directory([])
        defer { try? FileManager.default.removeItem(atPath: empty) }
        let model = try Self.directory(["centerface.onnx"])
        defer { try? FileManager.default.removeItem(atPath: model) }
        let environment = ["FACEWIRE_OPENVINO": empty, "HOME": "/nowhere", "FACEWIRE_MODEL_DIR": model]
        var configuration = DetectorConfiguration(backend: .centerface)
        let resolved = try configuration.resolve(environment: environment)
        #expect(resolved.runtime == .opencv)
        #expect(resolved.note?.contains("OpenVINO was not found in \(empty)") == true, "\(resolved.note ?? "no note")")
        configuration.runtime = .openvino
        #expect(throws: DetectionError.self) { try configuration.resolve(environment: environment) }
        configuration.runtime = .opencv
        let opencv = try configuration.resolve(environment: environment)
        #expect(opencv.runtime == .opencv && opencv.note == nil, "asked for OpenCV: nothing to say")
        // The cascade has no network: OpenVINO cannot run it, and auto does not mention OpenVINO.
        var cascade = DetectorConfiguration(backend: .cascade)
        #expect(try cascade.resolve(environment: environment).note == nil)
        cascade.runtime = .openvino
        #expect(throws: DetectionError.self) { try cascade.resolve(environment: environment) }
    }
}

/// Both runtimes on real images: OpenVINO gives the faces OpenCV gives (f32 throughout).
@Suite(
    "Inference runtime: OpenVINO and OpenCV find the same faces",
    .enabled(if: SharedData.available, SharedData.skipReason),
    .enabled(if: DetectorConfiguration.findOpenVINOLibrary(environment: ProcessInfo.processInfo.environment) != nil,
             "OpenVINO is not installed (scripts/setup.sh unpacks it into ~/.cache/facewire/openvino/libs)"))
struct InferenceRuntimeAgreementTests {
    static func images() throws -> [String] {
        let folder = SharedData.path("faces/images/caltech")
        return try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".jpg") }.sorted()
            .prefix(40).map { "faces/images/caltech/\($0)" }
    }

    @Test("YuNet and CenterFace, 40 photographs of many sizes: the same faces, boxes and landmarks within 0.05 px, scores within 1e-4",
          arguments: ["yunet", "centerface"])
    func sameFaces(backend: String) throws {
        let library = try #require(DetectorConfiguration.findOpenVINOLibrary(environment: ProcessInfo.processInfo.environment))
        try OpenVINOLibrary.load(library)
        func detector(_ runtime: InferenceRuntime) throws -> any FaceDetector {
            backend == "yunet"
                ? try YuNetDetector(modelPath: SharedData.yunetModel, refineLandmarks: false, runtime: runtime)
                : try CenterFaceDetector(modelPath: SharedData.centerFaceModel, refineLandmarks: false, runtime: runtime)
        }
        let (opencv, openvino) = (try detector(.opencv), try detector(.openvino))
        var faces = 0
        var worst: Float = 0
        for path in try Self.images() {
            let image = try SharedData.image(path)
            let a = try opencv.detect(image, inputWidth: 320), b = try openvino.detect(image, inputWidth: 320)
            #expect(a.count == b.count, "\(path): \(a.count) faces on OpenCV, \(b.count) on OpenVINO")
            for (x, y) in zip(a, b) {
                let points = [x.bounds.x - y.bounds.x, x.bounds.y - y.bounds.y, x.bounds.width - y.bounds.width,
                              x.bounds.height - y.bounds.height]
                    + zip(x.landmarks?.points ?? [], y.landmarks?.points ?? []).flatMap { [$0.x - $1.x, $0.y - $1.y] }
                worst = max(worst, points.map(abs).max() ?? 0)
                #expect(abs(x.confidence - y.confidence) < 1e-4, "\(path): scores \(x.confidence) and \(y.confidence)")
            }
            faces += a.count
        }
        #expect(faces > 100, "too few faces to compare: \(faces)")
        #expect(worst < 0.05, "largest coordinate difference \(worst) px")
        print("[runtime] \(backend): \(faces) faces on 40 photographs, largest coordinate difference \(worst) px (OpenVINO \(OpenVINOLibrary.version))")
    }
}
