import Foundation
import Testing
@testable import FacewireCapture

@Suite("openFrameSource errors")
struct OpenFrameSourceTests {
    @Test func missingPath() throws {
        let error = try #require(throws: FrameSourceError.self) {
            try openFrameSource("/nonexistent/facewire/clip.mp4", loop: false, jpegQuality: 85)
        }
        #expect(error.code == .notFound)
        #expect(error.message.contains("/nonexistent/facewire/clip.mp4"))
    }

    @Test func missingCameraIsNotFound() throws {
        let error = try #require(throws: FrameSourceError.self) {
            try openFrameSource("/dev/video-facewire-absent", loop: false, jpegQuality: 85, backend: LibV4L2())
        }
        #expect(error.code == .notFound)
        #expect(error.message.contains("/dev/video-facewire-absent"))
    }

    @Test func unopenableVideo() throws {
        let folder = try TestFiles.makeTemporaryFolder()
        defer { TestFiles.remove(folder) }
        let path = folder + "/broken.mp4"
        try TestFiles.write(Array(repeating: 0x42, count: 4096), to: path)
        let error = try #require(throws: FrameSourceError.self) { try openFrameSource(path, loop: false, jpegQuality: 85) }
        #expect(error.code == .cannotOpen)
        #expect(error.message.contains("broken.mp4"))
    }
}
