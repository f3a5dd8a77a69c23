import FacewireImage
import FacewireView
import Testing

@Suite("FrameImaging.snapshot")
struct SnapshotTests {
    typealias F = ImagingFixtures

    /// For every orientation, the clean snapshot is the upright scene: its size (5–8 swap width and height) and its
    /// pixels.
    @Test("clean snapshot is the upright frame", arguments: 1...8)
    func cleanIsUpright(orientation: Int) throws {
        let scene = F.markerScene()
        let jpeg = try F.jpeg(F.stored(scene, as: Orientation(rawValue: orientation)))
        let snapshot = try F.decode(FrameImaging.snapshot(jpeg: jpeg, orientation: UInt32(orientation), faces: []))
        #expect((snapshot.width, snapshot.height) == (160, 100))
        let difference = F.meanDifference(snapshot, scene)
        #expect(difference < 4, "mean difference \(difference) from the upright scene")
        #expect(F.quadrants(try F.decode(FrameImaging.faceCrop(
            jpeg: jpeg, orientation: UInt32(orientation), face: FaceDrawing(bounds: F.markerBox), margin: 0))) == "rgbk")
    }

    /// A drawn face changes the pixels of its box's border and of its label, and leaves the middle of the box alone.
    @Test func facesAreDrawn() throws {
        let scene = F.image(width: 400, height: 300) { _, _ in (128, 128, 128) }
        let jpeg = try F.jpeg(scene)
        let clean = try F.decode(FrameImaging.snapshot(jpeg: jpeg, orientation: 1, faces: []))
        let face = FaceDrawing(
            bounds: .init(x: 100, y: 120, width: 120, height: 140), trackingID: 12, roll: 3,
            leftEye: .init(x: 130, y: 170), rightEye: .init(x: 190, y: 170), mouth: .init(x: 160, y: 230), label: "smile")
        let drawn = try F.decode(FrameImaging.snapshot(jpeg: jpeg, orientation: 1, faces: [face]))
        #expect((drawn.width, drawn.height) == (400, 300))
        func changed(_ x: Int, _ y: Int, _ w: Int, _ h: Int) -> Double {
            F.meanDifference(crop(drawn, x, y, w, h), crop(clean, x, y, w, h))
        }
        // The four sides of the box (a 3 px band on the line).
        #expect(changed(100, 119, 120, 3) > 40, "top edge")
        #expect(changed(100, 259, 120, 3) > 40, "bottom edge")
        #expect(changed(99, 120, 3, 140) > 40, "left edge")
        #expect(changed(219, 120, 3, 140) > 40, "right edge")
        // The label sits above the box, from its left edge.
        #expect(changed(100, 95, 30, 20) > 40, "label")
        // The eyes and the mouth.
        #expect(changed(129, 169, 3, 3) > 40, "left eye")
        #expect(changed(159, 229, 3, 3) > 40, "mouth")
        // Inside the box, away from its edges and the points: untouched.
        #expect(changed(110, 190, 40, 20) < 2, "middle of the box")
        #expect(changed(300, 20, 80, 80) < 2, "outside the box")
    }

    /// Without room above, the label goes inside the box; an untracked face without a label has none.
    @Test func labelPlacement() throws {
        let jpeg = try F.jpeg(F.image(width: 320, height: 240) { _, _ in (40, 40, 40) })
        let clean = try F.decode(FrameImaging.snapshot(jpeg: jpeg, orientation: 1, faces: []))
        let atTop = try F.decode(FrameImaging.snapshot(
            jpeg: jpeg, orientation: 1, faces: [FaceDrawing(bounds: .init(x: 50, y: 2, width: 100, height: 100), trackingID: 7)]))
        #expect(F.meanDifference(crop(atTop, 60, 10, 20, 10), crop(clean, 60, 10, 20, 10)) > 40)
        let untracked = try F.decode(FrameImaging.snapshot(
            jpeg: jpeg, orientation: 1, faces: [FaceDrawing(bounds: .init(x: 50, y: 100, width: 100, height: 100))]))
        #expect(F.meanDifference(crop(untracked, 50, 80, 30, 15), crop(clean, 50, 80, 30, 15)) < 2)
    }

    /// Hostile faces: none crashes; those with nothing drawable leave the picture exactly as clean, the rest are
    /// clipped.
    @Test func hostileFaces() throws {
        let jpeg = try F.jpeg(F.markerScene())
        let clean = try FrameImaging.snapshot(jpeg: jpeg, orientation: 1, faces: [])
        let nan = Float.nan, inf = Float.infinity, huge = Float.greatestFiniteMagnitude
        let undrawable: [FaceDrawing.Box] = [
            .init(x: nan, y: 10, width: 20, height: 20), .init(x: 10, y: 10, width: nan, height: 20),
            .init(x: inf, y: 10, width: 20, height: 20), .init(x: -inf, y: -inf, width: inf, height: inf),
            .init(x: 10, y: 10, width: -20, height: 20), .init(x: 10, y: 10, width: 0, height: 0),
            .init(x: 5000, y: 5000, width: 20, height: 20), .init(x: -huge, y: -huge, width: 10, height: 10),
        ]
        for box in undrawable {
            let face = FaceDrawing(bounds: box, trackingID: 5, leftEye: .init(x: nan, y: inf), label: "x")
            #expect(try FrameImaging.snapshot(jpeg: jpeg, orientation: 1, faces: [face]) == clean, "\(box)")
        }
        let clipped: [FaceDrawing] = [
            FaceDrawing(bounds: .init(x: -huge, y: -huge, width: huge, height: huge), trackingID: .max, roll: nan),
            FaceDrawing(bounds: .init(x: -50, y: -50, width: 100, height: 100), trackingID: 1, leftEye: .init(x: -1e30, y: 1e30)),
            FaceDrawing(bounds: .init(x: 150, y: 90, width: 1e9, height: 1e9), trackingID: 2, label: String(repeating: "ünïcode 😀", count: 500)),
        ]
        let drawn = try F.decode(FrameImaging.snapshot(jpeg: jpeg, orientation: 1, faces: clipped))
        #expect((drawn.width, drawn.height) == (160, 100))
        #expect(F.meanDifference(drawn, try F.decode(clean)) > 1)
    }

    /// Orientation 0 and values above 8 mean upright, as in the protocol.
    @Test("out-of-range orientations mean upright", arguments: [UInt32(0), 9, 255, .max])
    func outOfRangeOrientation(orientation: UInt32) throws {
        let jpeg = try F.jpeg(F.markerScene())
        #expect(try FrameImaging.snapshot(jpeg: jpeg, orientation: orientation, faces: [])
            == FrameImaging.snapshot(jpeg: jpeg, orientation: 1, faces: []))
    }

    /// Garbage, empty, truncated and oversized JPEGs throw FacewireImage's errors.
    @Test func badJPEGs() throws {
        let good = try F.jpeg(F.markerScene())
        let cases: [(String, [UInt8], ImageError.Code)] = [
            ("empty", [], .notJPEG),
            ("garbage", Array("not a jpeg at all".utf8), .notJPEG),
            ("SOI only", [0xFF, 0xD8], .invalidHeader),
            ("truncated", Array(good.prefix(good.count / 2)), .truncated),
            ("9000 px wide", try F.jpeg(F.image(width: 9000, height: 8) { _, _ in (0, 0, 0) }), .tooLarge),
        ]
        for (name, jpeg, code) in cases {
            let calls: [() throws -> [UInt8]] = [
                { try FrameImaging.snapshot(jpeg: jpeg, orientation: 6, faces: []) },
                { try FrameImaging.faceCrop(jpeg: jpeg, orientation: 6, face: FaceDrawing(bounds: F.markerBox)) },
            ]
            for call in calls {
                let error = #expect(throws: ImageError.self, "\(name)") { try call() }
                #expect(error?.code == code, "\(name): \(String(describing: error))")
            }
        }
    }

    /// A rectangle of an image, as its own image.
    func crop(_ image: PixelImage, _ x: Int, _ y: Int, _ w: Int, _ h: Int) -> PixelImage {
        var bytes: [UInt8] = []
        for row in y..<(y + h) { bytes += image.bytes[(row * image.stride + x * 3)..<(row * image.stride + (x + w) * 3)] }
        return PixelImage(width: w, height: h, format: .bgr, bytes: bytes)
    }
}
