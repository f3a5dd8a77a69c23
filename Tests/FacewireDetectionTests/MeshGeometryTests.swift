@testable import FacewireDetection
import Foundation
import Testing
@testable import FacewireVocabulary

/// One case of `Fixtures/mesh-attribute-vectors.json`: the Python reference's (`evaluation/expressions/meshattr.py`)
/// inputs and outputs on the public-domain astronaut photograph.
private struct Vector {
    var name: String
    var landmarks5: [Float]
    var mesh: [SIMD3<Float>]
    var contours: [[SIMD3<Float>]]
    var presence: Float
    var sharpness: Float
    var faceHeight: Float
    var outputs: [String: Any]

    static func load() throws -> [Vector] {
        let url = Fixtures.url("mesh-attribute-vectors.json")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let cases = try #require(root["cases"] as? [[String: Any]])
        return try cases.map { item in
            let inputs = try #require(item["inputs"] as? [String: Any])
            func floats(_ value: Any?) throws -> [Float] { try #require(value as? [Double]).map(Float.init) }
            func triples(_ flat: [Float]) -> [SIMD3<Float>] {
                stride(from: 0, to: flat.count - 2, by: 3).map { SIMD3(flat[$0], flat[$0 + 1], flat[$0 + 2]) }
            }
            let contours = try #require(inputs["eye_contours"] as? [[Double]]).map { triples($0.map(Float.init)) }
            return Vector(
                name: try #require(item["name"] as? String), landmarks5: try floats(inputs["landmarks5"]),
                mesh: triples(try floats(inputs["mesh"])), contours: contours,
                presence: Float(try #require(inputs["presence"] as? Double)),
                sharpness: Float(try #require(inputs["sharpness"] as? Double)),
                faceHeight: Float(try #require(inputs["face_height"] as? Double)),
                outputs: try #require(item["outputs"] as? [String: Any]))
        }
    }

    func number(_ key: String) -> Double? { outputs[key] as? Double }
    func numbers(_ key: String) -> [Double] { outputs[key] as? [Double] ?? [] }
}

@Suite("Mesh geometry (the Python reference's vectors)")
struct MeshGeometryTests {
    private static func close(_ a: Double, _ b: Double, relative: Double = 1e-4, absolute: Double = 1e-4) -> Bool {
        abs(a - b) <= max(absolute, relative * max(abs(a), abs(b)))
    }

    @Test func theVectorsCoverSeveralCases() throws {
        let vectors = try Vector.load()
        #expect(vectors.count >= 5)
        #expect(vectors.allSatisfy { $0.mesh.count == 468 && $0.contours.count == 2 && $0.contours[0].count == 71 })
    }

    @Test func meshAndEyeROIs() throws {
        for vector in try Vector.load() {
            let points = stride(from: 0, to: 10, by: 2).map { FacePoint(x: vector.landmarks5[$0], y: vector.landmarks5[$0 + 1]) }
            let roi = try #require(MeshGeometry.meshROI(fivePoints: points))
            let expected = vector.numbers("mesh_roi")
            for (got, want) in zip([roi.center.x, roi.center.y, roi.size, roi.angleDegrees].map(Double.init), expected) {
                #expect(Self.close(got, want, absolute: 1e-3), "\(vector.name): mesh ROI \(roi) against \(expected)")
            }
            let eyes = try #require(MeshGeometry.eyeROIs(mesh: vector.mesh))
            let expectedEyes = try #require(vector.outputs["eye_rois"] as? [[String: Any]])
            for (eye, item) in zip([eyes.left, eyes.right], expectedEyes) {
                let want = try #require(item["roi"] as? [Double])
                for (got, value) in zip([eye.center.x, eye.center.y, eye.size, eye.angleDegrees].map(Double.init), want) {
                    #expect(Self.close(got, value, absolute: 1e-3), "\(vector.name): eye ROI \(eye) against \(want)")
                }
            }
        }
    }

    @Test("the six expressions match the Python reference (evaluation/expressions/mesh_expressions.py) on every vector")
    func expressionsMatchTheReference() throws {
        for vector in try Vector.load() {
            let fit = try #require(MeshGeometry.fitCanonical(mesh: vector.mesh))
            let features = try #require(MeshExpressions.features(mesh: vector.mesh, fit: fit))
            for (action, want) in zip(FacialAction.allCases, vector.numbers("expression_logits")) {
                let got = MeshExpressions.logit(action, features)
                #expect(abs(got - want) < 1e-3, "\(vector.name): \(action.name) \(got) against \(want)")
            }
            let withIris = try #require(MeshExpressions.features(mesh: vector.mesh, fit: fit, eyeContours: vector.contours))
            let want = try #require(vector.number("eye_widen_logit_iris"))
            #expect(withIris.lidsFromIris && abs(MeshExpressions.logit(.eyeWiden, withIris) - want) < 1e-3, "\(vector.name)")
            let readings = MeshExpressions.readings(features, actions: [.lipPucker, .browRaise])
            #expect(readings.map(\.action) == [.browRaise, .lipPucker], "in FacialAction order")
            #expect(readings.allSatisfy { (0...100).contains($0.score) && $0.present == ($0.score >= 50) })
        }
        #expect(MeshExpressions.features(mesh: Array(repeating: SIMD3<Float>(1, 2, 3), count: 10), fit: try #require(
            MeshGeometry.fitCanonical(mesh: try Vector.load()[0].mesh))) == nil, "too few points")
    }

    @Test func eyeOpeningAndOpenness() throws {
        for vector in try Vector.load() {
            let yaw = try #require(vector.number("yaw"))
            let openings = zip(vector.contours, [false, true]).map {
                MeshGeometry.eyeOpening(contour: $0, mirrored: $1, yaw: Float(yaw))
            }
            for (got, want) in zip(openings, vector.numbers("eye_opening")) {
                #expect(Self.close(got, want, absolute: 1e-5), "\(vector.name): opening \(got) against \(want)")
            }
            for (got, want) in zip(openings.map(MeshGeometry.eyeOpenness(opening:)), vector.numbers("eye_openness")) {
                #expect(Self.close(Double(got), want, absolute: 2e-4), "\(vector.name): openness \(got) against \(want)")
            }
        }
        // A shut lid: the upper points on the corner line, the lower ones on it too.
        var shut = (0..<71).map { SIMD3<Float>(Float($0 % 9) * 4, 10, 0) }
        for k in 9...15 { shut[k] = shut[k - 8] }
        #expect(MeshGeometry.eyeOpening(contour: shut, mirrored: false, yaw: 0) == 0)
        // An open eye: upper lid 8 px above a 32 px corner line, lower lid 4 px below; mirrored, the same eye read the
        // other way round gives the same opening.
        var open = shut
        for k in 9...15 { open[k].y = 2 }
        for k in 1...7 { open[k].y = 14 }
        let opening = MeshGeometry.eyeOpening(contour: open, mirrored: false, yaw: 0)
        #expect(abs(opening - (8.0 / 32 + MeshGeometry.eyeLowerLidWeight * 4 / 32)) < 1e-9)
        let reversed = open.map { SIMD3<Float>(100 - $0.x, $0.y, 0) }
        #expect(abs(MeshGeometry.eyeOpening(contour: reversed, mirrored: true, yaw: 0) - opening) < 1e-9)
        #expect(abs(MeshGeometry.eyeOpening(contour: open, mirrored: false, yaw: 60) - opening * cos(Double.pi / 4)) < 1e-9, "yaw stops at 45°")
        #expect(MeshGeometry.eyeOpenness(opening: 0) == 0)
        #expect(MeshGeometry.eyeOpenness(opening: MeshGeometry.eyeClosedOpening) == 0.5)
        #expect(MeshGeometry.eyeOpening(contour: Array(shut.prefix(10)), mirrored: false, yaw: 0) == 0, "too few points")
        #expect(MeshGeometry.eyeOpening(contour: open, mirrored: false, yaw: .nan).isFinite)
    }

    @Test func headPoseMatchesTheReference() throws {
        for vector in try Vector.load() {
            let pose = try #require(MeshGeometry.headPose(mesh: vector.mesh))
            for (got, key) in [(pose.yaw, "yaw"), (pose.pitch, "pitch"), (pose.roll, "roll")] {
                let want = try #require(vector.number(key))
                #expect(abs(Double(got) - want) < 0.01, "\(vector.name): \(key) \(got) against \(want)")
            }
        }
    }

    @Test func headPoseFollowsARotatedMesh() throws {
        // Turning the image by θ about a point turns the measured roll by θ and leaves yaw and pitch.
        let vector = try #require(try Vector.load().first)
        let base = try #require(MeshGeometry.headPose(mesh: vector.mesh))
        for degrees: Float in [-40, -10, 15, 60] {
            let a = degrees * .pi / 180
            let turned = vector.mesh.map { p in
                SIMD3<Float>(cos(a) * p.x - sin(a) * p.y, sin(a) * p.x + cos(a) * p.y, p.z)
            }
            let pose = try #require(MeshGeometry.headPose(mesh: turned))
            #expect(abs(pose.roll - (base.roll + degrees)) < 0.05, "roll \(pose.roll) after turning by \(degrees)")
            #expect(abs(pose.yaw - base.yaw) < 0.05)
            #expect(abs(pose.pitch - base.pitch) < 0.05)
        }
    }

    @Test(arguments: [(10.0, -5.0, 3.0), (-35.0, 20.0, -60.0), (0.0, 0.0, 0.0), (60.0, -30.0, 170.0)])
    func anglesComeBackFromTheirRotation(_ angles: (Double, Double, Double)) throws {
        let (yaw, pitch, roll) = angles
        let radians = Double.pi / 180
        let u = yaw * radians, p = -pitch * radians, r = -roll * radians
        let ry: [[Double]] = [[cos(u), 0, sin(u)], [0, 1, 0], [-sin(u), 0, cos(u)]]
        let rx: [[Double]] = [[1, 0, 0], [0, cos(p), -sin(p)], [0, sin(p), cos(p)]]
        let rz: [[Double]] = [[cos(r), -sin(r), 0], [sin(r), cos(r), 0], [0, 0, 1]]
        let got = try #require(MeshGeometry.angles(of: MeshGeometry.multiply(rz, MeshGeometry.multiply(rx, ry))))
        #expect(abs(Double(got.yaw) - yaw) < 1e-3 && abs(Double(got.pitch) - pitch) < 1e-3 && abs(Double(got.roll) - roll) < 1e-3, "\(got)")
        // A face turned toward the image's right has its forward axis toward +x; one turned up, toward +y.
        let forward = MeshGeometry.apply(MeshGeometry.multiply(rz, MeshGeometry.multiply(rx, ry)), SIMD3(0, 0, 1))
        if roll == 0, pitch == 0 { #expect((forward.x > 0) == (yaw > 0) || yaw == 0) }
        if roll == 0, yaw == 0 { #expect((forward.y > 0) == (pitch > 0) || pitch == 0) }
    }

    @Test func smileFeaturesMatchTheReference() throws {
        for vector in try Vector.load() {
            let fit = try #require(MeshGeometry.fitCanonical(mesh: vector.mesh))
            let features = MeshGeometry.smileFeatures(mesh: vector.mesh, fit: fit)
            for (got, want) in zip([features.lift, features.cheek, features.open, features.upperLip], vector.numbers("smile_features")) {
                #expect(Self.close(got, want, absolute: 1e-3), "\(vector.name): smile feature \(got) against \(want)")
            }
            let raw = MeshGeometry.smileRaw(mesh: vector.mesh, fit: fit)
            #expect(Self.close(raw, try #require(vector.number("smile_raw")), absolute: 2e-3))
            let score = try #require(MeshGeometry.smileScore(mesh: vector.mesh, fit: fit))
            #expect(Self.close(Double(score), try #require(vector.number("smile_score")), absolute: 1e-3))
        }
    }

    @Test func aMouthPulledStraightScoresLowerThanTheSmile() throws {
        // Lower the corners (61, 291) to the inner-lip height and pull them in: the raw score must drop.
        let vector = try #require(try Vector.load().first)
        var flat = vector.mesh
        let lipY = (flat[13].y + flat[14].y) / 2
        let midX = (flat[61].x + flat[291].x) / 2
        for index in [61, 291] {
            flat[index].y = lipY + 4
            flat[index].x = midX + (flat[index].x - midX) * 0.8
        }
        let smiling = MeshGeometry.smileRaw(mesh: vector.mesh, fit: try #require(MeshGeometry.fitCanonical(mesh: vector.mesh)))
        let straight = MeshGeometry.smileRaw(mesh: flat, fit: try #require(MeshGeometry.fitCanonical(mesh: flat)))
        #expect(straight < smiling - 1)
    }

    @Test func qualityMatchesTheReferenceAndItsRamps() throws {
        for vector in try Vector.load() {
            let pose = try #require(MeshGeometry.headPose(mesh: vector.mesh))
            let quality = FaceQuality.score(
                faceHeight: vector.faceHeight, sharpness: vector.sharpness, yaw: pose.yaw, pitch: pose.pitch, presence: vector.presence)
            #expect(Self.close(Double(quality), try #require(vector.number("quality")), absolute: 1e-3), "\(vector.name)")
        }
        #expect(FaceQuality.score(faceHeight: 39, sharpness: nil, yaw: nil, pitch: nil, presence: nil) == 0)
        #expect(FaceQuality.score(faceHeight: 60, sharpness: nil, yaw: nil, pitch: nil, presence: nil) == 0.5)
        #expect(FaceQuality.score(faceHeight: 200, sharpness: 60, yaw: 20, pitch: -15, presence: 0.95) == 1)
        #expect(FaceQuality.score(faceHeight: 200, sharpness: 30, yaw: 0, pitch: 0, presence: 1) == 0.5)
        #expect(FaceQuality.score(faceHeight: 200, sharpness: nil, yaw: -50, pitch: 0, presence: nil) == 0)
        #expect(FaceQuality.score(faceHeight: .nan, sharpness: .infinity, yaw: .nan, pitch: nil, presence: nil) == 0)
    }

    @Test func onlyUsableROIsReachTheNetworks() {
        let centre = FacePoint(x: 100, y: 100)
        #expect(MeshAttributeMeasurer.isUsable(FaceROI(center: centre, size: 150, angleDegrees: 10)))
        for roi in [
            FaceROI(center: centre, size: 0), FaceROI(center: centre, size: 1.5), FaceROI(center: centre, size: .nan),
            FaceROI(center: centre, size: 70_000), FaceROI(center: FacePoint(x: .infinity, y: 0), size: 50),
            FaceROI(center: FacePoint(x: 1e7, y: 0), size: 50), FaceROI(center: centre, size: 50, angleDegrees: .nan),
        ] {
            #expect(!MeshAttributeMeasurer.isUsable(roi), "\(roi)")
        }
    }

    @Test func degenerateInputsGiveNilNotATrap() {
        #expect(MeshGeometry.meshROI(fivePoints: []) == nil)
        let same = FacePoint(x: 5, y: 5)
        #expect(MeshGeometry.meshROI(fivePoints: [same, same, same, same, same]) == nil)
        #expect(MeshGeometry.headPose(mesh: []) == nil)
        #expect(MeshGeometry.eyeROIs(mesh: Array(repeating: SIMD3(1, 1, 1), count: 10)) == nil)
        #expect(MeshGeometry.headPose(mesh: Array(repeating: SIMD3(.nan, 1, 1), count: 468)) == nil)
        let flat = Array(repeating: SIMD3<Float>(3, 3, 3), count: 468)
        _ = MeshGeometry.headPose(mesh: flat)  // all points equal: any answer, no trap
        _ = MeshGeometry.smileScore(mesh: flat, fit: MeshGeometry.fitCanonical(mesh: flat))
    }
}
