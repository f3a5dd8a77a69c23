import Foundation
import Testing

/// The shared footage and its manifest (frame counts decoded with OpenCV), when this machine has them.
enum SharedFootage {
    static let data = Locations.sharedData
    static var yunet: URL? {
        data.map { $0.appendingPathComponent("models/face_detection_yunet_2022mar.onnx") }
            .flatMap { FileManager.default.fileExists(atPath: $0.path) ? $0 : nil }
    }

    static func video(_ name: String) -> URL? {
        data.map { $0.appendingPathComponent("video/\(name)") }.flatMap { FileManager.default.fileExists(atPath: $0.path) ? $0 : nil }
    }

    static var missingMessage: String {
        "needs the shared footage (video/manifest.json, liveportrait_d19.mp4, facenet_pytorch_video.mp4) and "
            + "models/face_detection_yunet_2022mar.onnx under \(Locations.repository.deletingLastPathComponent().path)/shared/data "
            + "(or FACEWIRE_SHARED_DATA)"
    }

    static var isAvailable: Bool {
        yunet != nil && video("liveportrait_d19.mp4") != nil && video("facenet_pytorch_video.mp4") != nil
            && data.map { FileManager.default.fileExists(atPath: $0.appendingPathComponent("video/manifest.json").path) } == true
    }

    /// `frames_decoded_opencv46` for `file` in video/manifest.json.
    static func frameCount(_ file: String) throws -> Int {
        let url = try #require(data).appendingPathComponent("video/manifest.json")
        let manifest = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let videos = try #require(manifest["videos"] as? [[String: Any]])
        let entry = try #require(videos.first { $0["file"] as? String == file }, "\(file) is not in \(url.path)")
        return try #require((entry["frames_decoded_opencv46"] as? NSNumber)?.intValue)
    }
}

extension IntegrationTests {
    @Suite("Acceptance on real footage (/work/shared/data)")
    struct Acceptance {
        /// Runs the acceptance command line on one clip and checks completeness and order.
        private func runLocal(_ clip: String, label: String) async throws -> [FrameLine] {
            let video = try #require(SharedFootage.video(clip))
            let model = try #require(SharedFootage.yunet)
            let expected = try SharedFootage.frameCount(clip)
            let cluster = try TestCluster(label)
            defer { cluster.cleanup() }
            let local = try cluster.facewire("local", [
                "--role", "local", "--source", video.path, "--workers", "2", "--fps", "max", "--model", model.path,
            ])
            let status = try await local.waitForExit()
            #expect(status == 0, "\(local.tail(.stderr))")
            let rawLines = local.lines(.stdout)
            let lines = try FrameLine.parseAll(rawLines)
            #expect(rawLines.count == expected, "\(clip): one line per frame of the clip (manifest: \(expected))")
            let problems = orderProblems(lines, count: expected)
            #expect(problems.isEmpty, "\(clip): \(problems)")
            #expect(!lines.contains { $0.status == "error" }, "\(clip): error lines: \(lines.filter { $0.status == "error" }.map(\.seq))")
            let faceHistogram = Dictionary(grouping: lines, by: \.faces).mapValues(\.count).sorted { $0.key < $1.key }
            let statuses = Dictionary(grouping: lines, by: \.status).mapValues(\.count)
            print("[acceptance] \(clip): \(lines.count) lines, statuses \(statuses), faces per frame \(faceHistogram)")
            return lines
        }

        @Test("liveportrait_d19.mp4: every frame, in order, ≥95% with exactly one face",
              .enabled(if: SharedFootage.isAvailable, "\(SharedFootage.missingMessage)"),
              .timeLimit(.minutes(15)))
        func singleFaceClip() async throws {
            let lines = try await runLocal("liveportrait_d19.mp4", label: "d19")
            let oneFace = lines.filter { $0.status == "processed" && $0.faces == 1 }.count
            #expect(Double(oneFace) >= 0.95 * Double(lines.count), "only \(oneFace) of \(lines.count) lines have exactly one face")
        }

        @Test("facenet_pytorch_video.mp4 (1080p crowd): every frame, in order, most with ≥2 faces",
              .enabled(if: SharedFootage.isAvailable, "\(SharedFootage.missingMessage)"),
              .timeLimit(.minutes(15)))
        func crowdClip() async throws {
            let lines = try await runLocal("facenet_pytorch_video.mp4", label: "crowd")
            let multi = lines.filter { $0.status == "processed" && $0.faces >= 2 }.count
            // Measured with YuNet: every frame has 2-6 faces (105 of 105). Require a clear majority.
            #expect(Double(multi) >= 0.8 * Double(lines.count), "only \(multi) of \(lines.count) lines have two or more faces")
        }
    }
}
