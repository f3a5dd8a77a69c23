import FacewireImage
import Foundation
import Testing
@testable import FacewireCapture

@Suite("Image folder and image file sources")
struct ImageFolderSourceTests {
    /// Writes `count` JPEGs named frame_00.jpg ... in shuffled creation order; returns their paths sorted.
    private func writeJPEGs(_ count: Int, in folder: String) throws -> [String] {
        let encoder = try JPEGEncoder()
        var paths: [String] = []
        for index in (0..<count).reversed() {
            let path = folder + "/frame_" + (index < 10 ? "0" : "") + "\(index).jpg"
            try TestFiles.write(try encoder.encode(TestFiles.image(width: 40 + index, height: 30, seed: index)), to: path)
            paths.append(path)
        }
        return paths.sorted()
    }

    @Test func jpegsPassThroughInNameOrder() throws {
        let folder = try TestFiles.makeTemporaryFolder()
        defer { TestFiles.remove(folder) }
        let paths = try writeJPEGs(12, in: folder)
        try TestFiles.write(Array("not an image".utf8), to: folder + "/notes.txt")  // ignored: not an image extension
        try TestFiles.write([0xFF, 0xD8], to: folder + "/.hidden.jpg")  // ignored: hidden

        let source = try ImageFolderSource(directory: folder)
        #expect(source.files == paths)
        #expect(source.nominalFPS == nil)
        for (index, path) in paths.enumerated() {
            let frame = try #require(try source.next())
            #expect(frame.jpeg == (try TestFiles.read(path)), "frame \(index) must be the file's bytes")
            #expect(!frame.reencoded)
            #expect(frame.width == 40 + index && frame.height == 30)
            #expect(frame.orientation == .up)
        }
        #expect(try source.next() == nil)
        #expect(try source.next() == nil)
        #expect(source.skippedCount == 0)
        #expect(source.framesRead == 12)
    }

    @Test func aLoopedFolderIsValidatedOncePerContent() throws {
        let folder = try TestFiles.makeTemporaryFolder()
        defer { TestFiles.remove(folder) }
        let paths = try writeJPEGs(3, in: folder)
        let source = try ImageFolderSource(directory: folder, loop: true)
        for pass in 0..<3 {
            for path in paths {
                let frame = try #require(try source.next())
                #expect(frame.jpeg == (try TestFiles.read(path)), "pass \(pass)")
            }
        }
        #expect(source.validations == 3, "each file decoded once, not on every pass")

        // A file that changes between passes is validated again: rewritten whole it passes, truncated it is skipped.
        let encoder = try JPEGEncoder()
        let replacement = try encoder.encode(TestFiles.image(width: 64, height: 48, seed: 99))
        try TestFiles.write(replacement, to: paths[0])
        try TestFiles.write(Array(replacement[0..<(replacement.count * 3 / 4)]), to: paths[1])
        #expect(try source.next()?.jpeg == replacement)
        #expect(try source.next()?.jpeg == (try TestFiles.read(paths[2])), "the truncated file is skipped")
        #expect(source.validations == 4, "the replaced file decoded again (the truncated one failed its decode)")
        #expect(source.skippedCount == 1 && source.skipped[0].path == paths[1])
        #expect(source.skipped.first?.reason.contains("truncated") == true)
    }

    @Test("the content fingerprint tells apart files that differ in one byte anywhere, or only in length")
    func contentFingerprint() {
        var generator = SystemRandomNumberGenerator()
        for count in [0, 1, 7, 8, 9, 63, 4096, 43_211] {
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let base = StillImageLoader.fingerprint(bytes)
            #expect(StillImageLoader.fingerprint(bytes) == base, "\(count) bytes: stable")
            for position in Set([0, count / 2, count - 1]) where count > 0 {
                var changed = bytes
                changed[position] ^= 0x01
                #expect(StillImageLoader.fingerprint(changed) != base, "\(count) bytes: byte \(position) flipped")
            }
            #expect(StillImageLoader.fingerprint(bytes + [0]) != base, "\(count) bytes: one zero byte appended")
        }
    }

    @Test func exifOrientationIsReported() throws {
        let folder = try TestFiles.makeTemporaryFolder()
        defer { TestFiles.remove(folder) }
        let jpeg = try JPEGEncoder().encode(TestFiles.image(width: 32, height: 16, seed: 1))
        // APP1 Exif, big-endian TIFF, IFD0 with Orientation = 6.
        let tiff: [UInt8] = [0x4D, 0x4D, 0, 42, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 6, 0, 0, 0, 0, 0, 0]
        let payload = Array("Exif".utf8) + [0, 0] + tiff
        let segment: [UInt8] = [0xFF, 0xE1, 0, UInt8(payload.count + 2)] + payload
        let rotated = Array(jpeg[0..<2]) + segment + Array(jpeg[2...])
        try TestFiles.write(rotated, to: folder + "/rotated.JPG")

        let frame = try #require(try ImageFolderSource(directory: folder).next())
        #expect(frame.orientation == .right)
        #expect(frame.width == 32 && frame.height == 16)  // stored size
        #expect(frame.jpeg == rotated)
    }

    @Test func pngAndPPMAreReencoded() throws {
        let folder = try TestFiles.makeTemporaryFolder()
        defer { TestFiles.remove(folder) }
        let image = TestFiles.image(width: 50, height: 20, seed: 3)
        try TestFiles.write(TestFiles.png(image), to: folder + "/a.png")
        try TestFiles.write(TestFiles.ppm(image), to: folder + "/b.ppm")
        let source = try ImageFolderSource(directory: folder, jpegQuality: 95)
        let decoder = try JPEGDecoder()
        for _ in 0..<2 {
            let frame = try #require(try source.next())
            #expect(frame.reencoded)
            #expect(frame.orientation == .up)
            #expect(frame.width == 50 && frame.height == 20)
            let decoded = try decoder.decode(frame.jpeg)
            #expect(decoded.width == 50 && decoded.height == 20)
            let meanError = Double(zip(decoded.bytes, image.bytes).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) })
                / Double(image.bytes.count)
            #expect(meanError < 3, "decoded pixels must match the source image")
        }
        #expect(try source.next() == nil)
        #expect(source.skippedCount == 0)
    }

    @Test func loopRestartsAtTheFirstFile() throws {
        let folder = try TestFiles.makeTemporaryFolder()
        defer { TestFiles.remove(folder) }
        let paths = try writeJPEGs(3, in: folder)
        let source = try ImageFolderSource(directory: folder, loop: true)
        var seen: [[UInt8]] = []
        for _ in 0..<7 { seen.append(try #require(try source.next()).jpeg) }
        let files = try paths.map(TestFiles.read)
        #expect(seen == [files[0], files[1], files[2], files[0], files[1], files[2], files[0]])
        #expect(source.framesRead == 7)
    }

    @Test func badFilesAreSkippedAndCounted() throws {
        let folder = try TestFiles.makeTemporaryFolder()
        defer { TestFiles.remove(folder) }
        let paths = try writeJPEGs(2, in: folder)
        let good = try TestFiles.read(paths[0])
        // Cut inside the entropy-coded data of a larger image: the header is fine, the pixels are not.
        let large = try JPEGEncoder().encode(TestFiles.image(width: 200, height: 150, seed: 9))
        try TestFiles.write(Array(large[0..<(large.count * 3 / 4)]), to: folder + "/frame_00a_truncated.jpg")
        try TestFiles.write(Array("garbage".utf8), to: folder + "/frame_00b_garbage.png")
        try TestFiles.write([], to: folder + "/frame_00c_empty.jpeg")

        let source = try ImageFolderSource(directory: folder, loop: true)
        #expect(source.files.count == 5)
        var frames: [[UInt8]] = []
        for _ in 0..<4 { frames.append(try #require(try source.next()).jpeg) }
        #expect(frames == [good, try TestFiles.read(paths[1]), good, try TestFiles.read(paths[1])])
        #expect(source.skippedCount == 3, "each bad file is counted once, not on every loop")
        #expect(source.skipped.map { ($0.path as NSString).lastPathComponent }
            == ["frame_00a_truncated.jpg", "frame_00b_garbage.png", "frame_00c_empty.jpeg"])
        #expect(source.skipped.allSatisfy { !$0.reason.isEmpty })
        #expect(source.skipped[0].reason.contains("truncated"))
        #expect(source.files == paths)
    }

    @Test func folderWithOnlyBadFilesThrows() throws {
        let folder = try TestFiles.makeTemporaryFolder()
        defer { TestFiles.remove(folder) }
        try TestFiles.write(Array("garbage".utf8), to: folder + "/a.jpg")
        let source = try ImageFolderSource(directory: folder, loop: true)
        let error = try #require(throws: FrameSourceError.self) { try source.next() }
        #expect(error.code == .noReadableImages)
        #expect(source.skippedCount == 1)
    }

    @Test func emptyFolderIsAnError() throws {
        let folder = try TestFiles.makeTemporaryFolder()
        defer { TestFiles.remove(folder) }
        try TestFiles.write(Array("x".utf8), to: folder + "/readme.txt")
        let error = try #require(throws: FrameSourceError.self) { try ImageFolderSource(directory: folder) }
        #expect(error.code == .emptyFolder)
        let viaOpen = try #require(throws: FrameSourceError.self) {
            try openFrameSource(folder, loop: false, jpegQuality: 85)
        }
        #expect(viaOpen.code == .emptyFolder)
    }

    @Test func oversizedImagesAreSkipped() throws {
        let folder = try TestFiles.makeTemporaryFolder()
        defer { TestFiles.remove(folder) }
        let image = TestFiles.image(width: 64, height: 8, seed: 0)
        try TestFiles.write(try JPEGEncoder().encode(image), to: folder + "/wide.jpg")
        try TestFiles.write(TestFiles.png(image), to: folder + "/wide.png")
        let source = try ImageFolderSource(directory: folder, limits: ImageLimits(maxWidth: 32))
        let error = try #require(throws: FrameSourceError.self) { try source.next() }
        #expect(error.code == .noReadableImages)
        #expect(source.skipped.count == 2)
        #expect(source.skipped.allSatisfy { $0.reason.contains("tooLarge") })
    }

    @Test func misnamedPNGIsDecodedByOpenCV() throws {
        let folder = try TestFiles.makeTemporaryFolder()
        defer { TestFiles.remove(folder) }
        try TestFiles.write(TestFiles.png(TestFiles.image(width: 20, height: 10, seed: 2)), to: folder + "/really_a_png.jpg")
        let frame = try #require(try ImageFolderSource(directory: folder).next())
        #expect(frame.reencoded && frame.width == 20 && frame.height == 10)
    }

    @Test func singleImageFile() throws {
        let folder = try TestFiles.makeTemporaryFolder()
        defer { TestFiles.remove(folder) }
        let jpegPath = folder + "/one.jpeg"
        try TestFiles.write(try JPEGEncoder().encode(TestFiles.image(width: 24, height: 12, seed: 5)), to: jpegPath)
        let once = try openFrameSource(jpegPath, loop: false, jpegQuality: 85)
        #expect(once is ImageFileSource)
        let frame = try #require(try once.next())
        #expect(frame.jpeg == (try TestFiles.read(jpegPath)) && !frame.reencoded)
        #expect(try once.next() == nil)

        let looping = try openFrameSource(jpegPath, loop: true, jpegQuality: 85)
        for _ in 0..<3 { #expect(try looping.next()?.jpeg == frame.jpeg) }

        let pngPath = folder + "/one.png"
        try TestFiles.write(TestFiles.png(TestFiles.image(width: 24, height: 12, seed: 5)), to: pngPath)
        let png = try #require(try openFrameSource(pngPath, loop: false, jpegQuality: 70).next())
        #expect(png.reencoded && png.width == 24)

        let badPath = folder + "/bad.jpg"
        try TestFiles.write(Array("nope".utf8), to: badPath)
        let error = try #require(throws: FrameSourceError.self) { try openFrameSource(badPath, loop: false, jpegQuality: 85) }
        #expect(error.code == .cannotOpen)
    }
}
