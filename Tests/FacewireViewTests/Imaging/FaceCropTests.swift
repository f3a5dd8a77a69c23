import FacewireImage
import FacewireView
import Foundation
import Testing

@Suite("FrameImaging.faceCrop and its geometry")
struct FaceCropTests {
    typealias F = ImagingFixtures

    /// For every orientation and roll in quarter turns, the marker comes out where levelling puts it: quadrants
    /// TL, TR, BL, BR of the crop. A face rolled +90° (clockwise) is turned back counter-clockwise: the frame's
    /// top-right quadrant (green) comes to the crop's top left.
    @Test("marker lands where expected", arguments: 1...8)
    func marker(orientation: Int) throws {
        let jpeg = try F.jpeg(F.stored(F.markerScene(), as: Orientation(rawValue: orientation)))
        let expected: [(Float?, String)] = [(nil, "rgbk"), (0, "rgbk"), (90, "gkrb"), (-90, "brkg"), (180, "kbgr"), (-270, "gkrb")]
        for (roll, quadrants) in expected {
            let face = FaceDrawing(bounds: F.markerBox, roll: roll)
            let crop = try F.decode(FrameImaging.faceCrop(jpeg: jpeg, orientation: UInt32(orientation), face: face, margin: 0))
            #expect((crop.width, crop.height) == (60, 60))
            #expect(F.quadrants(crop) == quadrants, "orientation \(orientation), roll \(String(describing: roll))")
        }
    }

    /// The margin adds the grey surroundings, and a small roll keeps the marker's colours in their quadrants.
    @Test func marginAndSmallRoll() throws {
        let jpeg = try F.jpeg(F.stored(F.markerScene(), as: .right))
        let crop = try F.decode(FrameImaging.faceCrop(
            jpeg: jpeg, orientation: 6, face: FaceDrawing(bounds: F.markerBox, roll: 10), margin: 0.25, maxSide: 256))
        #expect((crop.width, crop.height) == (90, 90))
        // Corners: grey scene around the face; the middle of each quadrant: the marker.
        #expect(F.name(F.meanColour(crop, x: 2, y: 2, width: 6, height: 6)) == ".")
        #expect(F.name(F.meanColour(crop, x: 30, y: 30, width: 8, height: 8)) == "r")
        #expect(F.name(F.meanColour(crop, x: 52, y: 30, width: 8, height: 8)) == "g")
        #expect(F.name(F.meanColour(crop, x: 30, y: 52, width: 8, height: 8)) == "b")
    }

    /// The crop is shrunk to `maxSide` with its aspect kept, averaged rather than aliased: a 1 px black-and-white
    /// checkerboard face in a large frame comes out an even grey.
    @Test func shrinksAndAverages() throws {
        let frame = F.image(width: 2400, height: 1600) { x, y in
            (200...1800).contains(x) && (300...1500).contains(y)
                ? ((x + y) % 2 == 0 ? (255, 255, 255) : (0, 0, 0)) : (128, 128, 128)
        }
        let jpeg = try JPEGEncoder(subsampling: .s444).encode(frame, quality: 100)
        let face = FaceDrawing(bounds: .init(x: 400, y: 400, width: 1200, height: 900))
        let crop = try F.decode(FrameImaging.faceCrop(jpeg: jpeg, orientation: 1, face: face, margin: 0.1, maxSide: 64))
        #expect((crop.width, crop.height) == (64, 48))
        var extremes = 0
        for y in 4..<44 {
            for x in 4..<60 where abs(Int(crop.bytes[y * crop.stride + x * 3 + 1]) - 128) > 40 { extremes += 1 }
        }
        #expect(extremes == 0, "\(extremes) of 2240 pixels are far from grey: aliasing")
    }

    // MARK: - Geometry (pure)

    @Test func geometryOfABox() throws {
        let face = FaceDrawing(bounds: .init(x: 10, y: 20, width: 40, height: 30))
        let g = try FaceCropGeometry(face: face, frameWidth: 100, frameHeight: 100, margin: 0.5, maxSide: 1000)
        #expect((g.width, g.height) == (80, 60))
        // Crop pixel (0, 0) is frame pixel (−10, 5); the crop's centre is the box's.
        #expect(close(g.framePixel(cropX: 0, cropY: 0), (-10, 5)))
        #expect(close(g.framePixel(cropX: 39.5, cropY: 29.5), (29.5, 34.5)))
        let small = try FaceCropGeometry(face: face, frameWidth: 100, frameHeight: 100, margin: 0.5, maxSide: 20)
        #expect((small.width, small.height) == (20, 15))
        #expect(abs(small.shrink - 4) < 1e-9)
        // Roll 90°: the crop's x axis runs down the frame.
        let rolled = try FaceCropGeometry(
            face: FaceDrawing(bounds: face.bounds, roll: 90), frameWidth: 100, frameHeight: 100, margin: 0, maxSide: 1000)
        let (a, b) = (rolled.framePixel(cropX: 0, cropY: 0), rolled.framePixel(cropX: 1, cropY: 0))
        #expect(close((b.x - a.x, b.y - a.y), (0, 1)))
    }

    @Test func geometryOfHostileValues() throws {
        let nan = Float.nan, inf = Float.infinity, huge = Float.greatestFiniteMagnitude
        func geometry(_ box: FaceDrawing.Box, roll: Float? = nil, margin: Float = 0.4, maxSide: Int = 256) throws -> FaceCropGeometry {
            try FaceCropGeometry(
                face: FaceDrawing(bounds: box, roll: roll), frameWidth: 640, frameHeight: 480, margin: margin, maxSide: maxSide)
        }
        let invalid: [FaceDrawing.Box] = [
            .init(x: nan, y: 0, width: 10, height: 10), .init(x: 0, y: 0, width: nan, height: 10),
            .init(x: inf, y: 0, width: 10, height: 10), .init(x: 0, y: 0, width: inf, height: 10),
            .init(x: -inf, y: 0, width: inf, height: 10), .init(x: 0, y: 0, width: -10, height: 10),
            .init(x: 0, y: 0, width: 10, height: 0),
        ]
        for box in invalid {
            expect(.invalidFace, "\(box)") { try geometry(box) }
        }
        let outside: [FaceDrawing.Box] = [
            .init(x: 640, y: 0, width: 10, height: 10), .init(x: -10, y: 0, width: 10, height: 10),
            .init(x: 0, y: 1e30, width: 10, height: 10), .init(x: -huge, y: -huge, width: 100, height: 100),
        ]
        for box in outside {
            expect(.faceOutsideImage, "\(box)") { try geometry(box) }
        }
        // Huge boxes are clipped to the frame; hostile rolls, margins and sizes are clamped. All finite.
        let clipped = try geometry(.init(x: -1e30, y: -1e30, width: huge, height: huge), margin: 0, maxSide: 640)
        #expect((clipped.width, clipped.height) == (640, 480))
        for roll: Float in [nan, inf, -inf, huge, -1e30, 1e7] {
            #expect(try geometry(.init(x: 10, y: 10, width: 50, height: 50), roll: roll).matrix.allSatisfy(\.isFinite))
        }
        for (margin, maxSide) in [(nan, 0), (inf, Int.max), (-inf, Int.min), (huge, -5), (-1, 1)] {
            let g = try geometry(.init(x: 10, y: 10, width: 50, height: 50), margin: margin, maxSide: maxSide)
            #expect((1...4096).contains(g.width) && (1...4096).contains(g.height) && g.matrix.allSatisfy(\.isFinite))
        }
    }

    /// The same hostile values through `faceCrop`: clear errors or a clipped crop, never a crash.
    @Test func hostileCrops() throws {
        let jpeg = try F.jpeg(F.markerScene())
        let nan = Float.nan, huge = Float.greatestFiniteMagnitude
        for box: FaceDrawing.Box in [.init(x: nan, y: 0, width: 10, height: 10), .init(x: 0, y: 0, width: -1, height: 5)] {
            expect(.invalidFace, "\(box)") { try FrameImaging.faceCrop(jpeg: jpeg, orientation: 1, face: FaceDrawing(bounds: box)) }
        }
        for orientation: UInt32 in [1, 6] {  // 160 × 100 stored: upright 100 × 160 for 6
            expect(.faceOutsideImage, "orientation \(orientation)") {
                try FrameImaging.faceCrop(jpeg: jpeg, orientation: orientation, face: FaceDrawing(bounds: .init(x: 160, y: 0, width: 5, height: 5)))
            }
        }
        let whole = try F.decode(FrameImaging.faceCrop(
            jpeg: jpeg, orientation: 9, face: FaceDrawing(bounds: .init(x: -1e30, y: -1e30, width: huge, height: huge), roll: .infinity),
            margin: .nan, maxSide: .max))
        #expect((whole.width, whole.height) == (160, 100))
        #expect(F.meanDifference(whole, F.markerScene()) < 4)
        for orientation: UInt32 in [0, 9, .max] {
            #expect(try FrameImaging.faceCrop(jpeg: jpeg, orientation: orientation, face: FaceDrawing(bounds: F.markerBox))
                == FrameImaging.faceCrop(jpeg: jpeg, orientation: 1, face: FaceDrawing(bounds: F.markerBox)))
        }
        let tiny = try F.decode(FrameImaging.faceCrop(
            jpeg: jpeg, orientation: 1, face: FaceDrawing(bounds: .init(x: 159.9, y: 99.9, width: 1e-3, height: 1e-3))))
        #expect((tiny.width, tiny.height) == (1, 1))
    }

    func expect(
        _ code: ImagingError.Code, _ comment: Comment, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Any
    ) {
        let error = #expect(throws: ImagingError.self, comment, sourceLocation: sourceLocation) { try body() }
        #expect(error?.code == code, comment, sourceLocation: sourceLocation)
    }

    func close(_ a: (x: Double, y: Double), _ b: (Double, Double)) -> Bool { abs(a.x - b.0) < 1e-6 && abs(a.y - b.1) < 1e-6 }
}
