import FacewireDetection
import FacewireImage
import Foundation
import Testing
import FacewireVocabulary

/// One annotated DEV face with both eyes, read straight from `dev.jsonl` (independently of the evaluator).
struct EyeAnnotatedFace {
    var image: String
    var box: FaceRect
    var leftEye: FacePoint
    var rightEye: FacePoint

    /// The roll of the annotated eye line, in degrees (same convention as ``DetectedFace/faceAngle``).
    var angle: Float { DetectedFace.rollAngle(leftEye: leftEye, rightEye: rightEye) ?? 0 }

    /// DEV faces at least `minHeight` px tall with both eyes annotated, grouped by image.
    static func load(minHeight: Float) throws -> [String: [EyeAnnotatedFace]] {
        let text = try String(contentsOfFile: SharedData.path("faces/dev.jsonl"), encoding: .utf8)
        var result: [String: [EyeAnnotatedFace]] = [:]
        for line in text.split(separator: "\n") {
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let image = object["image"] as? String, let faces = object["faces"] as? [[String: Any]]
            else { continue }
            for face in faces {
                guard let box = face["box"] as? [Double], box.count == 4, box[3] >= Double(minHeight),
                    let marks = face["landmarks"] as? [String: [Double]],
                    let l = marks["left_eye"], let r = marks["right_eye"]
                else { continue }
                result[image, default: []].append(
                    EyeAnnotatedFace(
                        image: image, box: FaceRect(x: Float(box[0]), y: Float(box[1]), width: Float(box[2]), height: Float(box[3])),
                        leftEye: FacePoint(x: Float(l[0]), y: Float(l[1])), rightEye: FacePoint(x: Float(r[0]), y: Float(r[1]))))
            }
        }
        return result
    }
}

/// The detection whose box best overlaps `box`, if the IoU reaches `minimum`.
func bestMatch(_ box: FaceRect, in faces: [DetectedFace], minimum: Float = 0.4) -> DetectedFace? {
    let best = faces.max { box.intersectionOverUnion($0.bounds) < box.intersectionOverUnion($1.bounds) }
    guard let best, box.intersectionOverUnion(best.bounds) >= minimum else { return nil }
    return best
}

/// Signed difference of two angles in degrees, folded into -180...180.
func angleDifference(_ a: Float, _ b: Float) -> Float {
    var d = (a - b).truncatingRemainder(dividingBy: 360)
    if d > 180 { d -= 360 }
    if d < -180 { d += 360 }
    return d
}

func percentile(_ values: [Float], _ p: Double) -> Float {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p + 0.5))]
}

/// Rotates `image` by `degrees` clockwise on screen about its centre onto a canvas of the same size (bilinear;
/// the corners that leave the canvas are cut, the ones that enter it are grey), and returns the rotated image
/// and the point mapping. Keeping the size keeps the faces' scale for the detector.
func rotated(_ image: PixelImage, degrees: Double) -> (PixelImage, (FacePoint) -> FacePoint) {
    let t = degrees * Double.pi / 180
    let (c, s) = (cos(t), sin(t))
    let (w, h) = (Double(image.width), Double(image.height))
    let (outW, outH) = (image.width, image.height)
    let (cx, cy) = (w / 2, h / 2)
    let (ox, oy) = (Double(outW) / 2, Double(outH) / 2)
    let channels = image.format.channels
    var out = [UInt8](repeating: 128, count: outW * outH * channels)
    for y in 0..<outH {
        for x in 0..<outW {
            let dx = Double(x) + 0.5 - ox
            let dy = Double(y) + 0.5 - oy
            let sx = c * dx + s * dy + cx - 0.5
            let sy = -s * dx + c * dy + cy - 0.5
            let x0 = Int(sx.rounded(.down))
            let y0 = Int(sy.rounded(.down))
            guard x0 >= 0, y0 >= 0, x0 + 1 < image.width, y0 + 1 < image.height else { continue }
            let fx = sx - Double(x0)
            let fy = sy - Double(y0)
            for k in 0..<channels {
                func at(_ xx: Int, _ yy: Int) -> Double { Double(image.bytes[yy * image.stride + xx * channels + k]) }
                let top = at(x0, y0) * (1 - fx) + at(x0 + 1, y0) * fx
                let bottom = at(x0, y0 + 1) * (1 - fx) + at(x0 + 1, y0 + 1) * fx
                out[(y * outW + x) * channels + k] = UInt8(max(0, min(255, (top * (1 - fy) + bottom * fy).rounded())))
            }
        }
    }
    let map: (FacePoint) -> FacePoint = { p in
        let dx = Double(p.x) - cx
        let dy = Double(p.y) - cy
        return FacePoint(x: Float(c * dx - s * dy + ox), y: Float(s * dx + c * dy + oy))
    }
    return (PixelImage(width: outW, height: outH, format: image.format, bytes: out), map)
}

@Suite("faceAngle against the annotated eye line", .enabled(if: SharedData.available, SharedData.skipReason), .serialized)
struct FaceAngleTests {
    /// Acceptance: on DEV faces at least 40 px tall with both eyes annotated, the median absolute difference
    /// between `faceAngle` and the annotated eye line's angle is at most 4°.
    @Test("median |faceAngle error| <= 4° on DEV faces >= 40 px", arguments: ["YuNet", "CenterFace"])
    func devSet(backend: String) throws {
        let detector: any FaceDetector =
            backend == "YuNet" ? try YuNetDetector(modelPath: SharedData.yunetModel) : try CenterFaceDetector(modelPath: SharedData.centerFaceModel)
        let annotated = try EyeAnnotatedFace.load(minHeight: 40)
        var errors: [Float] = []
        var total = 0
        for (path, faces) in annotated.sorted(by: { $0.key < $1.key }) {
            let image = try SharedData.image("faces/" + path)
            let found = try detector.detect(image)
            for face in faces {
                total += 1
                guard let match = bestMatch(face.box, in: found), let angle = match.faceAngle else { continue }
                errors.append(abs(angleDifference(angle, face.angle)))
            }
        }
        let median = percentile(errors, 0.5)
        print("faceAngle \(backend): \(errors.count)/\(total) faces matched, |error| median \(median)°, p90 \(percentile(errors, 0.9))°")
        #expect(total > 200, "expected several hundred annotated faces, got \(total)")
        #expect(Double(errors.count) >= 0.9 * Double(total), "matched only \(errors.count) of \(total)")
        #expect(median <= 4, "median |error| \(median)°")
    }

    /// Acceptance: a face rotated 30° in the image plane is still found, with its angle within 5°.
    ///
    /// Against the truth: the rotated frame's `faceAngle` must be the annotated eye line's angle plus the rotation.
    /// The annotation is independent of the detector, but the detector reads the eye line a few degrees off it even
    /// upright (``devSet(backend:)``: median 2.3°, p90 5.7° with the default backend, BENCHMARKS.md, so some 85-90 %
    /// within 5°). The bar: a median of at most 4° (``devSet(backend:)``'s own) and at least 80 % of the faces found
    /// within 5° (chosen from the upright figures; not yet measured on the rotated faces). Against itself: the rotated frame's
    /// `faceAngle` must also be the upright frame's plus the rotation, which isolates what rotating does (measured:
    /// 94-96 % within 5°, a median of 1.3-1.6°). "Found" means a detection whose box holds both rotated annotated eyes.
    @Test("DEV faces rotated ±30° are found, with faceAngle within 5° of the annotated eye line's angle + the rotation on 80 %", arguments: [30.0, -30.0])
    func rotatedFaces(degrees: Double) throws {
        let detector = try makeFaceDetector(DetectorConfiguration())  // the default backend
        // Faces large enough to judge an angle; one image in three keeps the test short.
        let annotated = try EyeAnnotatedFace.load(minHeight: 60).sorted { $0.key < $1.key }.enumerated()
            .filter { $0.offset % 3 == 0 }.map(\.element)
        func holdingEyes(_ detections: [DetectedFace], _ left: FacePoint, _ right: FacePoint) -> DetectedFace? {
            detections.filter { $0.bounds.contains(left) && $0.bounds.contains(right) }.max { $0.confidence < $1.confidence }
        }
        var uprightFound = 0
        var found = 0
        var errors: [Float] = []
        var gtErrors: [Float] = []
        var total = 0
        for (path, faces) in annotated {
            let upright = try SharedData.image("faces/" + path)
            let uprightDetections = try detector.detect(upright)
            let (image, map) = rotated(upright, degrees: degrees)
            let detections = try detector.detect(image)
            for face in faces {
                // Only faces that stay whole inside the rotated canvas.
                let corners = [(face.box.x, face.box.y), (face.box.maxX, face.box.y), (face.box.x, face.box.maxY), (face.box.maxX, face.box.maxY)]
                    .map { map(FacePoint(x: $0.0, y: $0.1)) }
                guard corners.allSatisfy({ $0.x >= 0 && $0.y >= 0 && $0.x < Float(image.width) && $0.y < Float(image.height) }) else { continue }
                total += 1
                let reference = holdingEyes(uprightDetections, face.leftEye, face.rightEye)
                if reference != nil { uprightFound += 1 }
                guard let match = holdingEyes(detections, map(face.leftEye), map(face.rightEye)) else { continue }
                found += 1
                // A face found without an angle counts against the truth (180° off), not as a skip.
                let angle = match.faceAngle
                gtErrors.append(angle.map { abs(angleDifference($0, face.angle + Float(degrees))) } ?? 180)
                if let angle, let expected = reference?.faceAngle {
                    errors.append(abs(angleDifference(angle, expected + Float(degrees))))
                }
            }
        }
        let within = errors.filter { $0 <= 5 }.count
        let withinTruth = gtErrors.filter { $0 <= 5 }.count
        print(
            "rotated \(degrees)°: found \(found)/\(total) (upright \(uprightFound)/\(total)); "
                + "|angle - (upright angle + \(degrees))| median \(percentile(errors, 0.5))°, p90 \(percentile(errors, 0.9))°, "
                + "within 5°: \(within)/\(errors.count); |angle - (annotated + \(degrees))| median \(percentile(gtErrors, 0.5))°, "
                + "p90 \(percentile(gtErrors, 0.9))°, within 5°: \(withinTruth)/\(gtErrors.count)")
        #expect(total >= 50)
        #expect(Double(found) >= 0.9 * Double(total), "found \(found) of \(total) rotated faces")
        // Against the annotated eye line (+ the rotation): every face found is judged.
        #expect(gtErrors.count == found)
        #expect(percentile(gtErrors, 0.5) <= 4, "median |angle - (annotated + \(degrees))| \(percentile(gtErrors, 0.5))°")
        #expect(Double(withinTruth) >= 0.8 * Double(gtErrors.count), "\(withinTruth) of \(gtErrors.count) within 5° of the annotated eye line")
        // Against the same face's upright reading (+ the rotation). Measured with the default backend: 94-96% within
        // 5° and a median of 1.3-1.6° (BENCHMARKS.md). Most misses are the upright reference's: a face tilted under 5°
        // is not refined, and its angle keeps the landmark models' own error.
        #expect(Double(errors.count) >= 0.8 * Double(found), "an upright reading for only \(errors.count) of \(found) faces found")
        #expect(percentile(errors, 0.5) <= 3, "median \(percentile(errors, 0.5))°")
        #expect(Double(within) >= 0.9 * Double(errors.count), "\(within) of \(errors.count) within 5°")
    }
}
