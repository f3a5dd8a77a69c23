import FacewireRuntime
import Foundation
import Testing

/// The inference runtime end to end (README "The runtime"): `facewire detect` on the demo frames with OpenVINO, and in
/// an environment where it is not installed, where it falls back to OpenCV, says so, and finds the same faces.
extension IntegrationTests {
    @Suite("Inference runtime: OpenVINO, and OpenCV without it")
    struct RuntimeFallback {
        /// Where `scripts/setup.sh` put the models, the demo frames and OpenVINO.
        static var cache: String {
            let environment = ProcessInfo.processInfo.environment
            return (environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory() + "/.cache") + "/facewire"
        }

        static var ready: Bool {
            ["openvino/libs/.wheel-sha256", "models/centerface.onnx", "demo/astronaut/frame-0119.jpg"]
                .allSatisfy { FileManager.default.fileExists(atPath: "\(cache)/\($0)") }
        }

        /// Each frame line's faces' boxes, in order.
        static func boxes(_ lines: [String]) -> [[[Double]]] {
            lines.compactMap { line -> [[Double]]? in
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                    let faces = object["faces"] as? [[String: Any]]
                else { return nil }
                return faces.map { face in
                    let bounds = face["bounds"] as? [String: Double] ?? [:]
                    return ["x", "y", "width", "height"].map { bounds[$0] ?? .nan }
                }
            }
        }

        @Test(
            "without OpenVINO the networks run on OpenCV, the process says why, and the faces are OpenVINO's; --runtime openvino then fails",
            .enabled(if: ready, "needs scripts/setup.sh's models, demo frames and OpenVINO in ~/.cache/facewire"),
            .timeLimit(.minutes(5)))
        func fallback() async throws {
            let cluster = try TestCluster("runtime")
            defer { cluster.cleanup() }
            let elsewhere = cluster.directory.appendingPathComponent("cache-without-openvino")
            try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
            let without = ["XDG_CACHE_HOME": elsewhere.path, "FACEWIRE_MODEL_DIR": "\(Self.cache)/models"]
            let arguments = ["detect", "--source", "\(Self.cache)/demo/astronaut", "--frames", "40"]
            let openvino = try cluster.facewire("openvino", arguments + ["--runtime", "openvino"])
            #expect(try await openvino.waitForExit() == 0, "\(openvino.tail(.stderr))")
            let opencv = try cluster.facewire("fallback", arguments, environment: without)
            #expect(try await opencv.waitForExit() == 0, "\(opencv.tail(.stderr))")
            let refused = try cluster.facewire("refused", arguments + ["--runtime", "openvino"], environment: without)
            #expect(try await refused.waitForExit() != 0, "--runtime openvino without OpenVINO must fail")

            #expect(openvino.text(.stderr).contains("runtime=openvino"), "\(openvino.tail(.stderr))")
            #expect(opencv.text(.stderr).contains("runtime=opencv"), "\(opencv.tail(.stderr))")
            #expect(opencv.text(.stderr).contains("OpenVINO was not found in \(elsewhere.path)"), "\(opencv.tail(.stderr))")
            #expect(refused.text(.stderr).contains("OpenVINO was not found"), "\(refused.tail(.stderr))")
            let (a, b) = (Self.boxes(openvino.lines(.stdout)), Self.boxes(opencv.lines(.stdout)))
            #expect(a.count == 40 && b.count == 40)
            #expect(a.map(\.count) == b.map(\.count), "face counts per frame differ")
            let worst = zip(a, b).flatMap { zip($0, $1).flatMap { zip($0, $1).map { abs($0 - $1) } } }.max() ?? .nan
            #expect(a.joined().count >= 40 && worst <= 0.11, "largest box difference \(worst) px (the JSON has 0.1 px)")
        }
    }
}
