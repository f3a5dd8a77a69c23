import FacewireProtocol
import FacewireView
import Testing

@Suite struct FaceDrawingTests {
    /// A wire face's bounds, tracking ID, face_angle, eyes and mouth carry over; absent fields stay absent.
    @Test func fromWireFace() {
        var face = Facewire_V1_Face()
        face.bounds = .with { $0.x = 10; $0.y = 20; $0.width = 30; $0.height = 40 }
        face.trackingID = 7
        face.leftEye = .with { $0.x = 15; $0.y = 30 }
        face.mouth = .with { $0.x = 25; $0.y = 50 }
        face.roll = 12  // the mesh's roll is not what the crop uses: face_angle is
        let drawing = FaceDrawing(face: face, label: "smile")
        #expect(drawing == FaceDrawing(
            bounds: .init(x: 10, y: 20, width: 30, height: 40), trackingID: 7, roll: nil, leftEye: .init(x: 15, y: 30),
            rightEye: nil, mouth: .init(x: 25, y: 50), label: "smile"))
        face.faceAngle = -20
        #expect(FaceDrawing(face: face).roll == -20)
    }
}
