import FacewireProtocol
import Testing
@testable import FacewireCollectorCore

@Suite("ResultValidation (wire values a result may carry)")
struct ResultValidationTests {
    static let wall: Int64 = 1_732_240_000_000_000

    static func result(captureTime: Int64 = 0, faces: [WireFace] = []) -> FrameResult {
        var result = FrameResult()
        result.stream = "cam-1"
        result.captureTimeUs = captureTime
        result.faces = faces
        return result
    }

    static func face(_ change: (inout WireFace) -> Void = { _ in }) -> WireFace {
        var face = WireFace()
        face.bounds = .with {
            $0.x = 10
            $0.y = 20
            $0.width = 100
            $0.height = 120
        }
        face.confidence = 0.9
        change(&face)
        return face
    }

    @Test(arguments: [Int64.min, -1, wall + 86_400_000_001, Int64.max])
    func implausibleCaptureTimesAreRejected(_ time: Int64) {
        #expect(ResultValidation.rejection(of: Self.result(captureTime: time), wallMicroseconds: Self.wall) == .captureTime)
    }

    @Test(arguments: [0, 1, wall, wall + 86_400_000_000])
    func plausibleCaptureTimesPass(_ time: Int64) {
        #expect(ResultValidation.rejection(of: Self.result(captureTime: time), wallMicroseconds: Self.wall) == nil)
    }

    @Test(arguments: [Int64.min, -1, 3_155_760_000_000_001, Int64.max])
    func implausibleMediaTimesAreRejected(_ time: Int64) {
        var result = Self.result(captureTime: Self.wall)
        result.mediaTimeUs = time
        #expect(ResultValidation.rejection(of: result, wallMicroseconds: Self.wall) == .mediaTime)
    }

    @Test(arguments: [0, 1, 12_033_333, 3_155_760_000_000_000])
    func plausibleMediaTimesPass(_ time: Int64) {
        var result = Self.result(captureTime: Self.wall)
        result.mediaTimeUs = time
        #expect(ResultValidation.rejection(of: result, wallMicroseconds: Self.wall) == nil)
    }

    @Test(arguments: [Float.nan, .infinity, -.infinity, -0.01, 1.01, 1e30])
    func implausibleTrackScoresAreRejected(_ score: Float) {
        var result = Self.result(captureTime: Self.wall)
        result.trackScore = score
        #expect(ResultValidation.rejection(of: result, wallMicroseconds: Self.wall) == .trackScore)
    }

    @Test(arguments: [Float(0), 0.5, 0.7, 1])
    func plausibleTrackScoresPass(_ score: Float) {
        var result = Self.result(captureTime: Self.wall)
        result.trackScore = score
        #expect(ResultValidation.rejection(of: result, wallMicroseconds: Self.wall) == nil)
    }

    @Test func aWallClockNearInt64MaxDoesNotTrap() {
        #expect(ResultValidation.rejection(of: Self.result(captureTime: .max), wallMicroseconds: .max) == nil)
    }

    @Test(arguments: [Float.nan, .infinity, -.infinity, 1e30, -1e30])
    func absurdFaceNumbersAreRejected(_ value: Float) {
        let faces: [WireFace] = [
            Self.face { $0.bounds.x = value }, Self.face { $0.bounds.width = value }, Self.face { $0.confidence = value },
            Self.face { $0.leftEye = .with { $0.x = value } }, Self.face { $0.faceAngle = value },
            Self.face { $0.smileScore = value }, Self.face { $0.nose = .with { $0.y = value } },
        ]
        for face in faces {
            #expect(ResultValidation.rejection(of: Self.result(faces: [Self.face(), face]), wallMicroseconds: Self.wall) == .face)
        }
    }

    @Test func aNegativeSizeIsRejectedAndAPlainFacePasses() {
        #expect(ResultValidation.rejection(of: Self.result(faces: [Self.face { $0.bounds.height = -1 }]), wallMicroseconds: Self.wall) == .face)
        #expect(ResultValidation.rejection(of: Self.result(faces: [Self.face()]), wallMicroseconds: Self.wall) == nil)
    }

    @Test func moreFacesThanAWorkerMayReportAreRejected() {
        let many = Array(repeating: Self.face(), count: ResultValidation.maxFaces + 1)
        #expect(ResultValidation.rejection(of: Self.result(faces: many), wallMicroseconds: Self.wall) == .faces)
        #expect(ResultValidation.rejection(of: Self.result(faces: Array(many.dropLast())), wallMicroseconds: Self.wall) == nil)
    }

    @Test func longStringsAreRejected() {
        var result = Self.result()
        result.reason = String(repeating: "r", count: ResultValidation.maxReasonBytes)
        result.worker = String(repeating: "w", count: ResultValidation.maxWorkerBytes)
        #expect(ResultValidation.rejection(of: result, wallMicroseconds: Self.wall) == nil)
        result.reason += "r"
        #expect(ResultValidation.rejection(of: result, wallMicroseconds: Self.wall) == .strings)
        result.reason = ""
        result.worker += "w"
        #expect(ResultValidation.rejection(of: result, wallMicroseconds: Self.wall) == .strings)
    }

    @Test(arguments: [UInt64(1), 2, UInt64.max])
    func aRunLengthFromAWorkerIsRejected(_ runLength: UInt64) {
        var result = Self.result()
        result.status = .dropped
        result.runLength = runLength
        #expect(ResultValidation.rejection(of: result, wallMicroseconds: Self.wall) == .runLength)
    }

    @Test(arguments: [Float.nan, .infinity, 1e30, -2, 3])
    func absurdPoseOpennessAndQualityAreRejected(_ value: Float) {
        let faces: [WireFace] = [
            Self.face { $0.leftEyeOpenness = value }, Self.face { $0.rightEyeOpenness = value },
            Self.face { $0.quality = value },
        ]
        for face in faces {
            #expect(ResultValidation.rejection(of: Self.result(faces: [face]), wallMicroseconds: Self.wall) == .face)
        }
        if !(value.isFinite && abs(value) <= 360) {
            for face in [Self.face { $0.pitch = value }, Self.face { $0.roll = value }] {
                #expect(ResultValidation.rejection(of: Self.result(faces: [face]), wallMicroseconds: Self.wall) == .face)
            }
        }
    }

    @Test func landmarkListsMustMatchTheirScheme() {
        func check(_ scheme: WireLandmarkScheme, _ count: Int, value: Float = 5) -> ResultValidation.Rejection? {
            let face = Self.face {
                $0.landmarkScheme = scheme
                $0.landmarks = Array(repeating: value, count: count)
            }
            return ResultValidation.rejection(of: Self.result(faces: [face]), wallMicroseconds: Self.wall)
        }
        #expect(check(.none, 0) == nil)
        #expect(check(.five, 10) == nil)
        #expect(check(.mesh, 936) == nil)
        #expect(check(.none, 10) == .landmarks)
        #expect(check(.five, 9) == .landmarks)
        #expect(check(.five, 936) == .landmarks)
        #expect(check(.mesh, 938) == .landmarks)
        #expect(check(.five, 10, value: .nan) == .landmarks)
        #expect(check(.mesh, 936, value: 1e9) == .landmarks)
    }

    static func sample(_ region: Facewire_V1_SkinSample.Region, pixels: UInt32 = 400, colour: Float = 128) -> Facewire_V1_SkinSample {
        .with {
            $0.region = region
            ($0.r, $0.g, $0.b) = (colour, colour, colour)
            $0.pixels = pixels
        }
    }

    @Test func skinSamplesAreOnePerRegionWithinTheFrameAndTheColourRange() {
        func check(_ skin: [Facewire_V1_SkinSample], width: UInt32 = 640, height: UInt32 = 480) -> ResultValidation.Rejection? {
            var result = Self.result(faces: [Self.face { $0.skin = skin }])
            result.width = width
            result.height = height
            return ResultValidation.rejection(of: result, wallMicroseconds: Self.wall)
        }
        let all = [Self.sample(.forehead), Self.sample(.leftCheek), Self.sample(.rightCheek)]
        #expect(check(all) == nil)
        #expect(check([]) == nil)
        #expect(check([Self.sample(.rightCheek, pixels: 640 * 480, colour: 255), Self.sample(.forehead, pixels: 1, colour: 0)]) == nil)
        #expect(check(all + [Self.sample(.forehead)]) == .skin, "four samples")
        #expect(check([Self.sample(.leftCheek), Self.sample(.leftCheek)]) == .skin, "two of one region")
        #expect(check([Self.sample(.unspecified)]) == .skin)
        #expect(check([Self.sample(.UNRECOGNIZED(4))]) == .skin)
        #expect(check([Self.sample(.forehead, pixels: 0)]) == .skin)
        #expect(check([Self.sample(.forehead, pixels: 640 * 480 + 1)]) == .skin, "more pixels than the frame has")
        #expect(check([Self.sample(.forehead, pixels: .max)], width: .max, height: .max) == nil, "the frame's size never overflows")
        #expect(check([Self.sample(.forehead, pixels: 1)], width: 0, height: 0) == .skin, "no frame, no pixels")
        for colour in [Float.nan, .infinity, -.infinity, -0.5, 255.5] {
            #expect(check([Self.sample(.forehead, colour: colour)]) == .skin, "\(colour)")
        }
    }

    @Test func meshSkinIsCheckedAsSkinIs() {
        func check(_ meshSkin: [Facewire_V1_SkinSample]) -> ResultValidation.Rejection? {
            var result = Self.result(faces: [Self.face {
                $0.skin = [Self.sample(.forehead), Self.sample(.leftCheek)]
                $0.meshSkin = meshSkin
            }])
            (result.width, result.height) = (640, 480)
            return ResultValidation.rejection(of: result, wallMicroseconds: Self.wall)
        }
        #expect(check([Self.sample(.forehead, pixels: 900, colour: 140)]) == nil)
        #expect(check([Self.sample(.forehead), Self.sample(.forehead)]) == .skin, "two foreheads")
        #expect(check([Self.sample(.forehead), Self.sample(.leftCheek), Self.sample(.rightCheek), Self.sample(.forehead)]) == .skin)
        #expect(check([Self.sample(.UNRECOGNIZED(7))]) == .skin)
        #expect(check([Self.sample(.forehead, pixels: 640 * 480 + 1)]) == .skin, "more pixels than the frame has")
        for colour in [Float.nan, .infinity, -0.5, 255.5, .greatestFiniteMagnitude] {
            #expect(check([Self.sample(.forehead, colour: colour)]) == .skin, "\(colour)")
        }
    }

    @Test func aHeartRateFromAWorkerIsRejected() {
        let face = Self.face { $0.heartRate = .with { $0.bpm = 72 } }
        #expect(ResultValidation.rejection(of: Self.result(faces: [Self.face(), face]), wallMicroseconds: Self.wall) == .heartRate)
        let empty = Self.face { $0.heartRate = Facewire_V1_HeartRate() }
        #expect(ResultValidation.rejection(of: Self.result(faces: [empty]), wallMicroseconds: Self.wall) == .heartRate, "present, even empty")
    }

    @Test func atMostMaxMeshFacesCarryTheMesh() {
        let mesh = Self.face {
            $0.landmarkScheme = .mesh
            $0.landmarks = Array(repeating: 1, count: 936)
        }
        let allowed = Array(repeating: mesh, count: ResultValidation.maxMeshFaces)
        #expect(ResultValidation.rejection(of: Self.result(faces: allowed), wallMicroseconds: Self.wall) == nil)
        #expect(ResultValidation.rejection(of: Self.result(faces: allowed + [mesh]), wallMicroseconds: Self.wall) == .landmarks)
        #expect(ResultValidation.rejection(of: Self.result(faces: allowed + [Self.face()]), wallMicroseconds: Self.wall) == nil)
    }
}
