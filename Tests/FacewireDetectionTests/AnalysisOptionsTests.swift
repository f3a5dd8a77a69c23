import FacewireDetection
import Testing
import FacewireVocabulary

@Suite("Analysis options")
struct AnalysisOptionsTests {
    @Test("classifier lists parse, print and reject unknown names")
    func classifiers() throws {
        #expect(try AnalysisOptions.Classifiers.parse("smile,eyes") == [.smile, .eyes])
        #expect(try AnalysisOptions.Classifiers.parse("smile,eyes,pose,quality,pulse,expressions") == .all)
        // The expressions, each by name (SPEC 11.8: bits 8...13), or all six as `expressions`; none by default.
        #expect(try AnalysisOptions.Classifiers.parse("brow-raise,lipPucker") == [.browRaise, .lipPucker])
        #expect(AnalysisOptions.Classifiers.browRaise.rawValue == 1 << 8 && AnalysisOptions.Classifiers.lipCornerDepressor.rawValue == 1 << 13)
        #expect(try AnalysisOptions.Classifiers.parse("expressions").facialActions == FacialAction.allCases)
        #expect(AnalysisOptions().classifiers.isDisjoint(with: .actions))
        #expect(try AnalysisOptions.Classifiers.parse("heart-rate") == [.pulse])
        #expect(try AnalysisOptions.Classifiers.parse("pose") == [.pose])
        #expect(try AnalysisOptions.Classifiers.parse(" Eyes ") == [.eyes])
        #expect(try AnalysisOptions.Classifiers.parse("none").isEmpty)
        #expect(try AnalysisOptions.Classifiers.parse("").isEmpty)
        #expect(try AnalysisOptions.Classifiers.parse("all") == .all)
        // A heart rate is health data: it is measured only when asked for, never by default.
        #expect(!AnalysisOptions().classifiers.contains(.pulse))
        #expect(AnalysisOptions().classifiers == [.smile, .eyes, .pose, .quality])
        #expect(throws: DetectionError.self) { try AnalysisOptions.Classifiers.parse("smile,frown") }
        #expect(AnalysisOptions.Classifiers.all.description
            == "smile,eyes,pose,quality,pulse,brow-raise,brow-furrow,mouth-open,eye-widen,lip-pucker,lip-corner-depressor")
        #expect(try AnalysisOptions.Classifiers.parse(AnalysisOptions.Classifiers.all.description) == .all)
        #expect(AnalysisOptions.Classifiers([]).description == "none")
        #expect(try AnalysisOptions.Classifiers.parse(AnalysisOptions.Classifiers.eyes.description) == .eyes)
    }

    @Test("landmark lists parse; the mesh runs for any mesh classifier or for the mesh list")
    func landmarks() {
        #expect(AnalysisOptions.Landmarks(parsing: "5") == .five)
        #expect(AnalysisOptions.Landmarks(parsing: "MESH") == .mesh)
        #expect(AnalysisOptions.Landmarks(parsing: "none") == AnalysisOptions.Landmarks.none)
        #expect(AnalysisOptions.Landmarks(parsing: "68") == nil)
        #expect(AnalysisOptions().landmarks == .five)
        #expect(AnalysisOptions().wantsMesh)
        #expect(!AnalysisOptions(classifiers: []).wantsMesh)
        #expect(AnalysisOptions(classifiers: [], landmarks: .mesh).wantsMesh)
        #expect(AnalysisOptions(classifiers: [.quality]).wantsMesh)
        #expect(!AnalysisOptions(classifiers: [.pulse]).wantsMesh, "the pulse alone is read on regions placed from the eyes")
        #expect(AnalysisOptions(classifiers: [.pulse, .smile]).wantsMesh)
    }

    @Test("accuracy doubles the detector width, large-face mode halves it")
    func detectorWidth() {
        #expect(AnalysisOptions().detectorWidth(base: 320, imageWidth: 1280) == 320)
        #expect(AnalysisOptions(accuracy: .high).detectorWidth(base: 320, imageWidth: 1280) == 640)
        #expect(AnalysisOptions(faceMode: .large).detectorWidth(base: 320, imageWidth: 1280) == 160)
        #expect(AnalysisOptions(accuracy: .high, faceMode: .large).detectorWidth(base: 320, imageWidth: 1280) == 320)
        // A detector that runs at the image's own size scales from the image's width.
        #expect(AnalysisOptions().detectorWidth(base: nil, imageWidth: 500) == nil)
        #expect(AnalysisOptions(accuracy: .high).detectorWidth(base: nil, imageWidth: 500) == 1000)
        // Never below 64 px (YuNet fails on smaller inputs).
        #expect(AnalysisOptions(faceMode: .large).detectorWidth(base: 100, imageWidth: 1280) == 64)
    }

    @Test("the minimum face height: min-face, raised to 1/8 of the shorter side in large-face mode")
    func minimumFaceHeight() {
        #expect(AnalysisOptions().minimumFaceHeight(width: 640, height: 480) == 0)
        #expect(AnalysisOptions(minFace: 30).minimumFaceHeight(width: 640, height: 480) == 30)
        #expect(AnalysisOptions(faceMode: .large).minimumFaceHeight(width: 640, height: 480) == 60)
        #expect(AnalysisOptions(faceMode: .large, minFace: 100).minimumFaceHeight(width: 640, height: 480) == 100)
    }

    @Test("out-of-range values are rejected")
    func validation() {
        #expect(throws: Never.self) { try AnalysisOptions().validate() }
        #expect(throws: DetectionError.self) { try AnalysisOptions(maxFaces: 0).validate() }
        #expect(throws: DetectionError.self) { try AnalysisOptions(maxFaces: AnalysisOptions.maxFacesLimit + 1).validate() }
        #expect(throws: DetectionError.self) { try AnalysisOptions(minFace: -1).validate() }
    }

    @Test("yaw from the landmarks: 0 when the nose is centred, signed toward the image's right, roll-invariant")
    func yaw() throws {
        let left = FacePoint(x: 100, y: 100)
        let right = FacePoint(x: 140, y: 100)
        let centred = try #require(DetectedFace.yawAngle(leftEye: left, rightEye: right, nose: FacePoint(x: 120, y: 125)))
        #expect(abs(centred) < 0.001)
        let toRight = try #require(DetectedFace.yawAngle(leftEye: left, rightEye: right, nose: FacePoint(x: 130, y: 125)))
        #expect(toRight > 0)
        let toLeft = try #require(DetectedFace.yawAngle(leftEye: left, rightEye: right, nose: FacePoint(x: 110, y: 125)))
        #expect(abs(toLeft + toRight) < 0.001)
        // The same face rolled by 90°: the eye line is vertical; the nose offset is measured along it.
        let rolled = try #require(
            DetectedFace.yawAngle(
                leftEye: FacePoint(x: 100, y: 100), rightEye: FacePoint(x: 100, y: 140), nose: FacePoint(x: 75, y: 130)))
        #expect(abs(rolled - toRight) < 0.001)
        #expect(DetectedFace.yawAngle(leftEye: left, rightEye: right, nose: nil) == nil)
        #expect(DetectedFace.yawAngle(leftEye: left, rightEye: left, nose: FacePoint(x: 1, y: 1)) == nil)
        // A face built with landmarks gets its yaw; scaling keeps it (a uniform scale does not change angles).
        let face = DetectedFace(
            bounds: FaceRect(x: 80, y: 70, width: 80, height: 100), leftEye: left, rightEye: right,
            nose: FacePoint(x: 130, y: 125), confidence: 0.9)
        #expect(face.yaw == toRight)
        #expect(abs((face.scaled(x: 2, y: 2).yaw ?? 0) - toRight) < 0.001)
    }

    @Test("yaw's nose depth d/e is 1/0.92, and SPEC 11.3's worked example holds: 24.70° for a 10 px offset at 20 px")
    func yawConstant() throws {
        #expect(abs(DetectedFace.noseDepthRatio - 1.0870) < 0.0001)
        let yaw = try #require(
            DetectedFace.yawAngle(leftEye: FacePoint(x: 100, y: 100), rightEye: FacePoint(x: 140, y: 100), nose: FacePoint(x: 130, y: 125)))
        #expect(abs(yaw - 24.70) < 0.005, "\(yaw)")
    }
}
