import FacewireOpenCV
import FacewireVocabulary
import FacewireImage

/// The face attributes measured on MediaPipe's face mesh: one mesh pass per face feeds the head pose, the smile
/// (mouth geometry, or the opt-in FER CNN) and the quality; the iris model reads the eyes' openness. Faces too small
/// for the mesh, faces the mesh does not confirm, and faces beyond the frame's mesh budget fall back to the
/// 5-landmark method (``LandmarkAttributeMeasurer``) and say so (``DetectedFace/attributeSource`` `.landmarks`).
///
/// The decisions are ``MeshGeometry``'s pure arithmetic; this class only runs the networks.
public final class MeshAttributeMeasurer: FaceAttributeMeasurer {
    /// Faces shorter than this (px, in the analysed image) get the 5-landmark method: the mesh's crop would be
    /// mostly upsampled.
    public static let minimumFaceHeight: Float = 40
    /// The mesh runs on at most this many faces per frame (the largest); a result carries at most this many mesh
    /// landmark lists (SPEC.md 11.5, 14.5; REFERENCE-NODES.md §3.7).
    public static let maxMeshFaces = 64
    /// Below this mesh presence (the model's own face probability) the crop is taken to hold no usable face.
    public static let minimumPresence: Float = 0.5

    let mesh: FaceMeshModel
    let iris: IrisModel
    let emotion: EmotionModel?
    let fallback: LandmarkAttributeMeasurer

    /// Loads the models (one set per thread), to be run by `runtime`. `emotionModel` switches the smile to the FER CNN.
    /// - Throws: ``DetectionError`` `.modelNotFound` when a model cannot be loaded.
    public init(
        meshModel: String, irisModel: String, emotionModel: String? = nil, runtime: InferenceRuntime = .opencv,
        fallback: LandmarkAttributeMeasurer
    ) throws {
        mesh = try FaceMeshModel(modelPath: meshModel, runtime: runtime)
        iris = try IrisModel(modelPath: irisModel, runtime: runtime)
        emotion = try emotionModel.map { try EmotionModel(modelPath: $0, runtime: runtime) }
        self.fallback = fallback
    }

    /// The full width when the mesh runs, so that every face at least ``minimumFaceHeight`` pixels tall in the frame
    /// gets it; else the 5-landmark classifiers' width. (Decoding a 1920-pixel frame at 3/8, as for the classifiers,
    /// sent faces under 107 px to the fallback: 63 of 86 faces on a 1080p clip. A second, full-resolution decode
    /// only for frames with such faces saved 12 % of the CPU but, with the landmarks found at 3/8, lost the mesh on
    /// 14 of 74 faces: BENCHMARKS.md.)
    public func decodeWidth(for options: AnalysisOptions, uprightWidth: Int) -> Int {
        options.wantsMesh ? uprightWidth : min(uprightWidth, FrameAnalyzer.classifierWidth)
    }

    public func measure(_ image: PixelImage, faces: inout [DetectedFace], options: AnalysisOptions) throws {
        guard options.wantsMesh else {
            try fallback.measure(image, faces: &faces, options: options)
            return
        }
        // The mesh budget goes to the largest faces.
        let bySize = faces.indices.sorted { faces[$0].bounds.height > faces[$1].bounds.height }
        for (rank, index) in bySize.enumerated() {
            let measured = rank < Self.maxMeshFaces ? try measureWithMesh(image, face: &faces[index], options: options) : false
            if !measured { try fallback.measure(image, face: &faces[index], options: options) }
        }
    }

    /// Measures one face on the mesh; false (the face untouched) when the mesh cannot be used for it.
    func measureWithMesh(_ image: PixelImage, face: inout DetectedFace, options: AnalysisOptions) throws -> Bool {
        guard face.bounds.height >= Self.minimumFaceHeight, let five = face.fivePoints,
            let roi = MeshGeometry.meshROI(fivePoints: five), Self.isUsable(roi)
        else { return false }
        let output = try mesh.run(image, roi: roi)
        guard output.presence >= Self.minimumPresence, output.points.count == MeshGeometry.meshPointCount else { return false }
        let points = output.points
        let classifiers = options.classifiers
        let pose = MeshGeometry.headPose(mesh: points)

        if classifiers.contains(.pose), let pose {
            face.yaw = pose.yaw
            face.pitch = pose.pitch
            face.roll = pose.roll
            face.faceAngle = pose.roll
        }
        if classifiers.contains(.smile) {
            let score: Float?
            if let emotion {
                let emotionROI = FaceROI(center: roi.center, size: roi.size / 1.5, angleDegrees: roi.angleDegrees)
                let probabilities = try emotion.run(image, roi: emotionROI)
                score = probabilities.count > 3 && probabilities[3].isFinite ? min(1, max(0, probabilities[3])) : nil
            } else {
                score = MeshGeometry.smileScore(mesh: points, fit: MeshGeometry.fitCanonical(mesh: points))
            }
            if let score {
                face.expression.smileScore = score
                face.expression.hasSmile = score >= 0.5
            }
        }
        if classifiers.contains(.eyes), let eyes = MeshGeometry.eyeROIs(mesh: points), Self.isUsable(eyes.left),
            Self.isUsable(eyes.right)
        {
            let left = MeshGeometry.eyeAperture(contour: try iris.run(image, roi: eyes.left, mirror: false).contour)
            let right = MeshGeometry.eyeAperture(contour: try iris.run(image, roi: eyes.right, mirror: true).contour)
            let leftOpenness = MeshGeometry.eyeOpenness(aperture: left)
            let rightOpenness = MeshGeometry.eyeOpenness(aperture: right)
            face.expression.leftEyeOpenness = leftOpenness
            face.expression.rightEyeOpenness = rightOpenness
            face.expression.leftEyeClosedScore = 1 - leftOpenness
            face.expression.leftEyeClosed = left < MeshGeometry.eyeClosedAperture
            face.expression.rightEyeClosedScore = 1 - rightOpenness
            face.expression.rightEyeClosed = right < MeshGeometry.eyeClosedAperture
        }
        if classifiers.contains(.quality) {
            face.quality = FaceQuality.score(
                faceHeight: face.bounds.height, sharpness: output.sharpness, yaw: pose?.yaw ?? face.yaw, pitch: pose?.pitch,
                presence: output.presence)
        }
        if options.landmarks == .mesh {
            face.landmarks = FaceLandmarks(scheme: .mesh, points: points.map { FacePoint(x: $0.x, y: $0.y) })
        }
        face.attributeSource = .mesh
        return true
    }

    /// Whether an ROI is one the networks can be run on: finite, at least 2 px and at most 65,536 px wide, its centre
    /// within 4 × 65,536 px of the origin (the C shim refuses anything else, which would fail the whole frame).
    static func isUsable(_ roi: FaceROI) -> Bool {
        let limit: Float = 65_536
        return roi.center.x.isFinite && roi.center.y.isFinite && roi.angleDegrees.isFinite && roi.size.isFinite
            && roi.size >= 2 && roi.size <= limit && abs(roi.center.x) <= 4 * limit && abs(roi.center.y) <= 4 * limit
    }
}
