import FacewireImage
import FacewireVocabulary
import Foundation

/// The mean colour of a face's skin regions, for the pulse estimate (remote photoplethysmography, issue 16).
///
/// Regions are placed from the eyes (in the coordinates of the image given, which is the frame as the worker
/// decoded it, upright): with `d` the distance between the eyes, `u` the unit vector from the image-left eye to the
/// image-right one and `v` perpendicular to it, towards the mouth,
/// - forehead: centred `0.55 d` above the eyes' midpoint along `−v`, `0.9 d` wide along `u`, `0.35 d` tall;
/// - each cheek: centred `0.6 d` below its eye along `v`, `0.4 d` wide, `0.35 d` tall.
/// These keep clear of the eyes, brows, nose and mouth on a frontal face. Within a region only skin-coloured pixels
/// count (YCrCb: 135 ≤ Cr ≤ 180, 85 ≤ Cb ≤ 135, 40 ≤ Y ≤ 240), so hair, glasses and background are left out. A
/// region with fewer than ``minPixels`` skin pixels, or partly outside the image, is not reported.
public enum SkinSampler {
    public typealias Region = SkinSample.Region

    public typealias Sample = SkinSample

    /// Regions with fewer skin pixels are not reported.
    public static let minPixels = 16
    /// Eye distances below this (px) give regions too small to mean anything.
    public static let minEyeDistance: Float = 8

    /// The regions of the face whose eyes are `leftEye` (image-left) and `rightEye`, measured in `image` (BGR).
    public static func sample(_ image: PixelImage, leftEye: FacePoint, rightEye: FacePoint) -> [Sample] {
        guard image.format == .bgr, [leftEye.x, leftEye.y, rightEye.x, rightEye.y].allSatisfy(\.isFinite) else { return [] }
        let dx = rightEye.x - leftEye.x
        let dy = rightEye.y - leftEye.y
        let d = (dx * dx + dy * dy).squareRoot()
        guard d >= minEyeDistance, d <= Float(max(image.width, image.height)) else { return [] }
        let u = (x: dx / d, y: dy / d)
        let v = (x: -u.y, y: u.x)  // image y grows downwards: v points from the eyes towards the mouth
        let mid = (x: (leftEye.x + rightEye.x) / 2, y: (leftEye.y + rightEye.y) / 2)
        let regions: [(Region, (x: Float, y: Float), Float, Float)] = [
            (.forehead, (mid.x - 0.55 * d * v.x, mid.y - 0.55 * d * v.y), 0.9 * d, 0.35 * d),
            (.leftCheek, (leftEye.x + 0.6 * d * v.x, leftEye.y + 0.6 * d * v.y), 0.4 * d, 0.35 * d),
            (.rightCheek, (rightEye.x + 0.6 * d * v.x, rightEye.y + 0.6 * d * v.y), 0.4 * d, 0.35 * d),
        ]
        return regions.compactMap { region, centre, width, height in
            mean(image, region: region, centre: centre, u: u, v: v, width: width, height: height)
        }
    }

    /// The face mesh's points (MediaPipe's 468-point topology) that outline the forehead: from the hairline (109,
    /// 10, 338) down the temples (69, 299) to the brows' middle (9), with 108 and 337 between. Drawn on our clips,
    /// their hull stays on the forehead's skin as the head nods, turns and talks.
    public static let meshForeheadPoints = [109, 10, 338, 337, 299, 9, 69, 108]

    /// The forehead outlined by the face `mesh` (468 points in `image`'s coordinates): the mean colour of the skin
    /// pixels inside the convex hull of ``meshForeheadPoints``, with the same skin test as the regions placed from the
    /// eyes. Nil for another image format or mesh size, points that are not finite, a hull partly outside the
    /// image, narrower than ``minEyeDistance`` or with fewer than ``minPixels`` skin pixels.
    ///
    /// Why: regions placed from the eyes slide over the brows and the hairline as a head nods or talks, and that colour
    /// change comes at the motion's rate; the mesh's forehead stays on skin. On the synthetic clips with rhythmic head
    /// motion it read the pulse within 5 bpm on more of the reported seconds and reported more of them, but gave more
    /// false rates on faces without a pulse (BENCHMARKS.md, "Heads that move"); on still real faces it read no better.
    /// So the collector reads it only when asked (`--pulse-mesh-forehead`) and only for a face that moves
    /// (``PulseEstimator``).
    public static func meshForehead(_ image: PixelImage, mesh: [SIMD3<Float>]) -> Sample? {
        guard image.format == .bgr, mesh.count == 468 else { return nil }
        let points = meshForeheadPoints.map { SIMD2(mesh[$0].x, mesh[$0].y) }
        guard points.allSatisfy({ $0.x.isFinite && $0.y.isFinite }) else { return nil }
        let hull = convexHull(points)
        guard hull.count >= 3, let x0 = hull.map(\.x).min(), let x1 = hull.map(\.x).max(), let y0 = hull.map(\.y).min(),
            let y1 = hull.map(\.y).max(), x0 >= 0, y0 >= 0, x1 < Float(image.width), y1 < Float(image.height),
            x1 - x0 >= minEyeDistance
        else { return nil }
        return skinMean(image, region: .forehead, columns: Int(x0)...Int(x1), rows: Int(y0)...Int(y1)) { contains(hull, $0) }
    }

    /// The convex hull of `points`, counter-clockwise in image coordinates' sense (Andrew's monotone chain).
    static func convexHull(_ points: [SIMD2<Float>]) -> [SIMD2<Float>] {
        let sorted = points.sorted { $0.x != $1.x ? $0.x < $1.x : $0.y < $1.y }
        guard sorted.count >= 3 else { return sorted }
        func cross(_ o: SIMD2<Float>, _ a: SIMD2<Float>, _ b: SIMD2<Float>) -> Float {
            (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x)
        }
        var lower: [SIMD2<Float>] = []
        for p in sorted {
            while lower.count >= 2 && cross(lower[lower.count - 2], lower[lower.count - 1], p) <= 0 { lower.removeLast() }
            lower.append(p)
        }
        var upper: [SIMD2<Float>] = []
        for p in sorted.reversed() {
            while upper.count >= 2 && cross(upper[upper.count - 2], upper[upper.count - 1], p) <= 0 { upper.removeLast() }
            upper.append(p)
        }
        return Array(lower.dropLast() + upper.dropLast())
    }

    /// Whether `p` lies inside or on the convex polygon `hull` (from ``convexHull(_:)``).
    static func contains(_ hull: [SIMD2<Float>], _ p: SIMD2<Float>) -> Bool {
        for i in hull.indices {
            let a = hull[i]
            let b = hull[(i + 1) % hull.count]
            if (b.x - a.x) * (p.y - a.y) - (b.y - a.y) * (p.x - a.x) < 0 { return false }
        }
        return true
    }

    private static func mean(
        _ image: PixelImage, region: Region, centre: (x: Float, y: Float), u: (x: Float, y: Float), v: (x: Float, y: Float),
        width: Float, height: Float
    ) -> Sample? {
        // The rotated rectangle's bounding box, which must lie inside the image.
        let hw = width / 2
        let hh = height / 2
        let extentX = abs(u.x) * hw + abs(v.x) * hh
        let extentY = abs(u.y) * hw + abs(v.y) * hh
        let x0 = centre.x - extentX, x1 = centre.x + extentX
        let y0 = centre.y - extentY, y1 = centre.y + extentY
        guard x0 >= 0, y0 >= 0, x1 < Float(image.width), y1 < Float(image.height) else { return nil }
        return skinMean(image, region: region, columns: Int(x0)...Int(x1), rows: Int(y0)...Int(y1)) { p in
            let (px, py) = (p.x - centre.x, p.y - centre.y)
            return abs(px * u.x + py * u.y) <= hw && abs(px * v.x + py * v.y) <= hh
        }
    }

    /// The mean colour of the skin pixels of `image` (BGR) in `columns` × `rows` (inside it) whose centre is
    /// `inside` the region; nil with fewer than ``minPixels``.
    private static func skinMean(
        _ image: PixelImage, region: Region, columns: ClosedRange<Int>, rows: ClosedRange<Int>, inside: (SIMD2<Float>) -> Bool
    ) -> Sample? {
        var sum = (b: 0, g: 0, r: 0)
        var count = 0
        image.bytes.withUnsafeBufferPointer { bytes in
            for y in rows {
                let row = y * image.stride
                for x in columns where inside(SIMD2(Float(x) + 0.5, Float(y) + 0.5)) {
                    let i = row + 3 * x
                    let (b, g, r) = (Int(bytes[i]), Int(bytes[i + 1]), Int(bytes[i + 2]))
                    guard isSkin(r: r, g: g, b: b) else { continue }
                    sum.b += b
                    sum.g += g
                    sum.r += r
                    count += 1
                }
            }
        }
        guard count >= minPixels else { return nil }
        let n = Float(count)
        return Sample(region: region, r: Float(sum.r) / n, g: Float(sum.g) / n, b: Float(sum.b) / n, pixels: count)
    }

    /// A mean colour, 0...255 per channel.
    public struct Colour: Sendable, Equatable {
        public var r: Double
        public var g: Double
        public var b: Double

        public init(r: Double, g: Double, b: Double) {
            self.r = r
            self.g = g
            self.b = b
        }
    }

    /// The mean colour of a whole image over its skin pixels and over all its pixels.
    public struct ImageMeans: Sendable, Equatable {
        /// Over the pixels that pass the skin test; nil when none does.
        public var skin: Colour?
        public var skinPixels: Int
        /// Over every pixel.
        public var all: Colour
        public var pixels: Int

        public init(skin: Colour?, skinPixels: Int, all: Colour, pixels: Int) {
            self.skin = skin
            self.skinPixels = skinPixels
            self.all = all
            self.pixels = pixels
        }
    }

    /// The means of a whole BGR image (nil for another format or an empty image), with the same skin test as the
    /// regions: for clips that are skin crops already, such as the pulse evaluation's region videos.
    public static func means(ofWholeImage image: PixelImage) -> ImageMeans? {
        guard image.format == .bgr else { return nil }
        return image.bytes.withUnsafeBufferPointer {
            means(bgr: $0, width: image.width, height: image.height, stride: image.stride)
        }
    }

    /// The same over BGR pixels in memory, rows `stride` bytes apart (a decoded video frame, without a copy); nil when
    /// the image is empty or the buffer too short.
    public static func means(bgr bytes: UnsafeBufferPointer<UInt8>, width: Int, height: Int, stride: Int) -> ImageMeans? {
        guard width > 0, height > 0, stride >= width * 3, bytes.count >= stride * (height - 1) + width * 3 else { return nil }
        var skin = (b: 0, g: 0, r: 0, count: 0)
        var all = (b: 0, g: 0, r: 0)
        for y in 0..<height {
            var i = y * stride
            for _ in 0..<width {
                let (b, g, r) = (Int(bytes[i]), Int(bytes[i + 1]), Int(bytes[i + 2]))
                all.b += b
                all.g += g
                all.r += r
                if isSkin(r: r, g: g, b: b) {
                    skin.b += b
                    skin.g += g
                    skin.r += r
                    skin.count += 1
                }
                i += 3
            }
        }
        let pixels = width * height
        func colour(_ r: Int, _ g: Int, _ b: Int, _ n: Int) -> Colour {
            Colour(r: Double(r) / Double(n), g: Double(g) / Double(n), b: Double(b) / Double(n))
        }
        return ImageMeans(
            skin: skin.count > 0 ? colour(skin.r, skin.g, skin.b, skin.count) : nil, skinPixels: skin.count,
            all: colour(all.r, all.g, all.b, pixels), pixels: pixels)
    }

    /// The YCrCb skin range (ITU-R BT.601, as OpenCV's `COLOR_BGR2YCrCb`).
    static func isSkin(r: Int, g: Int, b: Int) -> Bool {
        let y = 0.299 * Float(r) + 0.587 * Float(g) + 0.114 * Float(b)
        let cr = (Float(r) - y) * 0.713 + 128
        let cb = (Float(b) - y) * 0.564 + 128
        return (40...240).contains(y) && (135...180).contains(cr) && (85...135).contains(cb)
    }
}
