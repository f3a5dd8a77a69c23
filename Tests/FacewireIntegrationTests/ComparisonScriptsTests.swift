import Foundation
import Testing

/// The benchmark scripts of issue 14 run briefly (`--smoke`) against the binary under test, so that they keep working
/// as the code changes: `benchmarks/bench-transport.py` (the noop detector plain and CURVE, next to raw libzmq) and
/// `benchmarks/bench-python.py` (Facewire beside the imagezmq and ZeroMQ-pool pipelines in OpenCV-Python). Nothing here
/// asserts a time or a rate: only that every configuration ran to the end (the scripts exit 1 when a stream came
/// short, out of order, or, for the detectors, without a single face) and printed its row.
extension IntegrationTests {
    @Suite("benchmark scripts (smoke)")
    struct ComparisonScripts {
        static let python = "/usr/bin/python3"

        static func script(_ name: String) -> String {
            Locations.repository.appendingPathComponent("benchmarks/\(name)").path
        }

        /// Whether Debian's python3 imports these modules (python3-opencv, python3-zmq: scripts/setup.sh installs both).
        static func imports(_ modules: String) -> Bool {
            (try? runCommand(python, ["-c", "import \(modules)"]).status) == 0
        }

        /// The demo footage scripts/setup.sh renders, if it is installed.
        static var demoFootage: String? {
            let environment = ProcessInfo.processInfo.environment
            let cache = environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
                ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache").path
            let path = cache + "/facewire/demo/astronaut"
            return FileManager.default.fileExists(atPath: path + "/frame-0000.jpg") ? path : nil
        }

        /// The YuNet model: the shared data set's copy, else one installed beside the other models. scripts/setup.sh
        /// does not install it (it is not on PyPI), so a user's clone usually has none.
        static var yunetModel: String? {
            let name = "face_detection_yunet_2022mar.onnx"
            let environment = ProcessInfo.processInfo.environment
            let cache = environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
                ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache").path
            let candidates: [String?] = [Locations.sharedData?.appendingPathComponent("models/\(name)").path, cache + "/facewire/models/\(name)"]
            return candidates.compactMap { $0 }.first { FileManager.default.fileExists(atPath: $0) }
        }

        static var transportReady: Bool { demoFootage != nil && imports("cv2, zmq") }
        static var pipelinesReady: Bool { transportReady && yunetModel != nil }

        @Test("benchmarks/bench-transport.py --smoke: every size, plain and CURVE, facewire and raw libzmq, complete and in order",
              .enabled(if: transportReady, "needs the demo footage and /usr/bin/python3 with cv2 and zmq: run scripts/setup.sh"),
              .timeLimit(.minutes(15)))
        func transport() throws {
            let binary = try Locations.facewireBinary()
            let run = try runCommand(Self.python, [Self.script("bench-transport.py"), "--smoke", "--binary", binary,
                                              "--source", Self.demoFootage!])
            #expect(run.status == 0, "\(run.output)")
            for size in ["40 KB", "150 KB"] {
                for security in ["plain", "CURVE"] {
                    for path in ["raw PUSH->PULL", "raw ROUTER<->DEALER", "facewire"] {
                        #expect(run.output.contains("| \(size) | \(security) | \(path) |"), "no row for \(size) \(security) \(path):\n\(run.output)")
                    }
                }
            }
            #expect(!run.output.contains("FAILED"), "\(run.output)")
        }

        @Test("benchmarks/bench-python.py --smoke: imagezmq, the ZeroMQ pool and facewire each give a line per frame with faces",
              .enabled(if: pipelinesReady,
                       "needs the demo footage, /usr/bin/python3 with cv2 and zmq (scripts/setup.sh) and the YuNet model (face_detection_yunet_2022mar.onnx in ../shared/data/models or ~/.cache/facewire/models): skipped"),
              .timeLimit(.minutes(15)))
        func pythonPipelines() throws {
            let binary = try Locations.facewireBinary()
            let run = try runCommand(Self.python, [Self.script("bench-python.py"), "--smoke", "--binary", binary,
                                              "--source", Self.demoFootage!, "--model", Self.yunetModel!])
            #expect(run.status == 0, "\(run.output)")
            for pipeline in ["imagezmq", "pool", "pool-reduced", "facewire-detect", "facewire-default"] {
                // Each pipeline's row: name, frames/s, CPU, whole-run CPU, processes, then faces per frame (1.00 on
                // the demo clip, one face in every frame).
                let row = run.output.split(separator: "\n").first { $0.hasPrefix("| \(pipeline) | ") && $0.contains(" | 1.00 | ") }
                #expect(row != nil, "no row with one face per frame for \(pipeline):\n\(run.output)")
            }
            #expect(run.output.contains("| facewire-detect against | CPU ms/frame ratio"), "no ratio table:\n\(run.output)")
        }
    }
}
