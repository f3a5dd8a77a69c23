import FacewireImage
import FacewireView
import Foundation
import Testing

/// Synthetic images and helpers for the imaging tests.
enum ImagingFixtures {
    /// `../shared/data` next to the repository (absent in a user's clone).
    static let sharedData: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // Imaging
        .deletingLastPathComponent()  // FacewireViewTests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()  // repository root
        .deletingLastPathComponent()
        .appendingPathComponent("shared/data")

    static var sharedDataAvailable: Bool {
        FileManager.default.fileExists(atPath: sharedData.appendingPathComponent("models/face_detection_yunet_2022mar.onnx").path)
    }

    static let sharedDataMissing: Comment = "needs ../shared/data (the YuNet model and face photos) next to the repository; not in a user's clone"

    /// An upright BGR image whose pixel (x, y) is `colour(x, y)`.
    static func image(width: Int, height: Int, _ colour: (Int, Int) -> (b: UInt8, g: UInt8, r: UInt8)) -> PixelImage {
        var bytes = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let c = colour(x, y)
                let at = (y * width + x) * 3
                (bytes[at], bytes[at + 1], bytes[at + 2]) = (c.b, c.g, c.r)
            }
        }
        return PixelImage(width: width, height: height, format: .bgr, bytes: bytes)
    }

    /// The stored image that `orientation` turns into `upright`: the inverse of `Orientation.applied(to:)`, written
    /// independently of it (through `storedPixel`, pixel by pixel).
    static func stored(_ upright: PixelImage, as orientation: Orientation) -> PixelImage {
        let (width, height) = orientation.uprightSize(width: upright.width, height: upright.height)  // its own inverse
        var bytes = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<upright.height {
            for x in 0..<upright.width {
                let s = orientation.storedPixel(uprightX: x, uprightY: y, width: width, height: height)
                for k in 0..<3 { bytes[(s.y * width + s.x) * 3 + k] = upright.bytes[y * upright.stride + x * 3 + k] }
            }
        }
        return PixelImage(width: width, height: height, format: .bgr, bytes: bytes)
    }

    static func jpeg(_ image: PixelImage, quality: Int = 95) throws -> [UInt8] {
        try JPEGEncoder(subsampling: .s444).encode(image, quality: quality)
    }

    static func decode(_ jpeg: [UInt8]) throws -> PixelImage {
        try JPEGDecoder().decode(jpeg, format: .bgr)
    }

    /// Mean absolute difference per byte of two images of the same size; `.infinity` when the sizes differ.
    static func meanDifference(_ a: PixelImage, _ b: PixelImage) -> Double {
        guard a.width == b.width, a.height == b.height, a.format == b.format else { return .infinity }
        var total = 0
        let row = a.width * a.format.channels
        for y in 0..<a.height {
            for i in 0..<row { total += abs(Int(a.bytes[y * a.stride + i]) - Int(b.bytes[y * b.stride + i])) }
        }
        return Double(total) / Double(max(1, row * a.height))
    }

    /// The mean (b, g, r) of a rectangle of `image`.
    static func meanColour(_ image: PixelImage, x: Int, y: Int, width: Int, height: Int) -> (b: Double, g: Double, r: Double) {
        var sum = (0, 0, 0)
        for yy in y..<(y + height) {
            for xx in x..<(x + width) {
                let at = yy * image.stride + xx * 3
                sum.0 += Int(image.bytes[at])
                sum.1 += Int(image.bytes[at + 1])
                sum.2 += Int(image.bytes[at + 2])
            }
        }
        let n = Double(max(1, width * height))
        return (Double(sum.0) / n, Double(sum.1) / n, Double(sum.2) / n)
    }

    /// Which of red, green, blue, grey or black a mean colour is nearest (as a letter: r, g, b, ., k).
    static func name(_ c: (b: Double, g: Double, r: Double)) -> Character {
        let named: [(Character, (Double, Double, Double))] = [
            ("r", (0, 0, 255)), ("g", (0, 255, 0)), ("b", (255, 0, 0)), (".", (128, 128, 128)), ("k", (0, 0, 0)),
        ]
        return named.min { a, b in
            func d(_ t: (Double, Double, Double)) -> Double { abs(c.b - t.0) + abs(c.g - t.1) + abs(c.r - t.2) }
            return d(a.1) < d(b.1)
        }!.0
    }

    /// A 160 × 100 grey scene with a 60 × 60 "face" at (50, 20): its top-left quadrant red, top-right green,
    /// bottom-left blue, bottom-right black. Any turn or mirror of it moves the colours apart.
    static let markerBox = FaceDrawing.Box(x: 50, y: 20, width: 60, height: 60)
    static func markerScene() -> PixelImage {
        image(width: 160, height: 100) { x, y in
            let (bx, by) = (x - 50, y - 20)
            guard (0..<60).contains(bx), (0..<60).contains(by) else { return (128, 128, 128) }
            switch (bx < 30, by < 30) {
            case (true, true): return (0, 0, 255)
            case (false, true): return (0, 255, 0)
            case (true, false): return (255, 0, 0)
            case (false, false): return (0, 0, 0)
            }
        }
    }

    /// The colour names of a crop's four quadrants (centres of each, away from the edges): TL, TR, BL, BR.
    static func quadrants(_ crop: PixelImage) -> String {
        let (w, h) = (crop.width / 4, crop.height / 4)
        let spots = [(w / 2, h / 2), (crop.width / 2 + w / 2, h / 2), (w / 2, crop.height / 2 + h / 2),
                     (crop.width / 2 + w / 2, crop.height / 2 + h / 2)]
        return String(spots.map { name(meanColour(crop, x: $0.0, y: $0.1, width: w, height: h)) })
    }
}
