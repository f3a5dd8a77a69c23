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
        // The mesh budget goes to the largest faces. Every face it can run on goes through in one batch (one inference
        // on OpenVINO), then the eyes of the faces it found in a second; the rest are measured on their 5 landmarks.
        let bySize = faces.indices.sorted { faces[$0].bounds.height > faces[$1].bounds.height }
        let meshed = bySize.prefix(Self.maxMeshFaces).compactMap { index in Self.meshROI(faces[index]).map { (index, $0) } }
        let outputs = try mesh.run(image, rois: meshed.map(\.1))
        var measured = Set<Int>()
        var eyes: [(index: Int, left: FaceROI, right: FaceROI, mesh: [SIMD3<Float>], applied: Applied)] = []
        // Eye widen reads the lids on the iris model's contours too (the mesh's own lids barely follow them).
        let wantsIris = options.classifiers.contains(.eyes) || options.classifiers.contains(.eyeWiden)
        for ((index, roi), output) in zip(meshed, outputs) {
            guard let applied = try apply(output, roi: roi, image: image, face: &faces[index], options: options) else { continue }
            measured.insert(index)
            if wantsIris, let pair = MeshGeometry.eyeROIs(mesh: output.points), Self.isUsable(pair.left), Self.isUsable(pair.right) {
                eyes.append((index, pair.left, pair.right, output.points, applied))
            }
        }
        if !eyes.isEmpty {
            let irises = try iris.run(image, rois: eyes.flatMap { [($0.left, false), ($0.right, true)] })
            for (k, eye) in eyes.enumerated() {
                if options.classifiers.contains(.eyeWiden), let fit = eye.applied.fit, var features = eye.applied.features,
                    let slot = faces[eye.index].actions.firstIndex(where: { $0.action == .eyeWiden })
                {
                    // The mesh's features, the lids read again on the iris model's contours.
                    features.useIrisLids([irises[2 * k].contour, irises[2 * k + 1].contour], mesh: eye.mesh, fit: fit)
                    if let reading = MeshExpressions.readings(features, actions: [.eyeWiden]).first { faces[eye.index].actions[slot] = reading }
                }
                guard options.classifiers.contains(.eyes) else { continue }
                let left = MeshGeometry.eyeOpening(contour: irises[2 * k].contour, mirrored: false, yaw: eye.applied.yaw)
                let right = MeshGeometry.eyeOpening(contour: irises[2 * k + 1].contour, mirrored: true, yaw: eye.applied.yaw)
                let leftOpenness = MeshGeometry.eyeOpenness(opening: left)
                let rightOpenness = MeshGeometry.eyeOpenness(opening: right)
                faces[eye.index].expression.leftEyeOpenness = leftOpenness
                faces[eye.index].expression.rightEyeOpenness = rightOpenness
                faces[eye.index].expression.leftEyeClosedScore = 1 - leftOpenness
                faces[eye.index].expression.leftEyeClosed = left < MeshGeometry.eyeClosedOpening
                faces[eye.index].expression.rightEyeClosedScore = 1 - rightOpenness
                faces[eye.index].expression.rightEyeClosed = right < MeshGeometry.eyeClosedOpening
            }
        }
        for index in bySize where !measured.contains(index) {
            try fallback.measure(image, face: &faces[index], options: options)
        }
    }

    /// The mesh ROI of a face the mesh can run on: tall enough, with the detector's five points, a usable ROI.
    static func meshROI(_ face: DetectedFace) -> FaceROI? {
        guard face.bounds.height >= minimumFaceHeight, let five = face.fivePoints, let roi = MeshGeometry.meshROI(fivePoints: five),
            isUsable(roi)
        else { return nil }
        return roi
    }

    /// What ``apply(_:roi:image:face:options:)`` measured that the eyes need: the head's yaw, the fit and the
    /// expressions' features (eye widen is read again on the iris model's lids).
    struct Applied {
        var yaw: Float?
        /// The mesh's fit to the canonical face, when it could be made.
        var fit: MeshGeometry.Fit?
        /// The expressions' features, when an expression was asked for.
        var features: MeshExpressions.Features?
    }

    /// Sets what the mesh `output` of `roi` says about `face` (all but the eyes, which the iris model reads); nil
    /// (the face untouched) when the mesh found no usable face there.
    func apply(_ output: FaceMeshOutput, roi: FaceROI, image: PixelImage, face: inout DetectedFace, options: AnalysisOptions) throws -> Applied? {
        guard output.presence >= Self.minimumPresence, output.points.count == MeshGeometry.meshPointCount else { return nil }
        let points = output.points
        let classifiers = options.classifiers
        let fit = MeshGeometry.fitCanonical(mesh: points)
        let pose = fit.flatMap { MeshGeometry.headPose(mesh: points, fit: $0) }

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
                score = MeshGeometry.smileScore(mesh: points, fit: fit)
            }
            if let score {
                face.expression.smileScore = score
                face.expression.hasSmile = score >= 0.5
            }
        }
        if classifiers.contains(.quality) {
            face.quality = FaceQuality.score(
                faceHeight: face.bounds.height, sharpness: output.sharpness, yaw: pose?.yaw ?? face.yaw, pitch: pose?.pitch,
                presence: output.presence)
        }
        if classifiers.contains(.pulse), let forehead = SkinSampler.meshForehead(image, mesh: points) {
            face.meshSkin = [forehead]
        }
        if options.landmarks == .mesh {
            face.landmarks = FaceLandmarks(scheme: .mesh, points: points.map { FacePoint(x: $0.x, y: $0.y) })
        }
        let actions = classifiers.facialActions
        let features = actions.isEmpty ? nil : fit.flatMap { MeshExpressions.features(mesh: points, fit: $0) }
        if let features {
            // Eye widen is read again on the iris model's lids when they run (measure(_:faces:options:)).
            face.actions = MeshExpressions.readings(features, actions: actions)
        }
        face.attributeSource = .mesh
        return Applied(yaw: pose?.yaw, fit: fit, features: features)
    }

    /// Whether an ROI is one the networks can be run on: finite, at least 2 px and at most 65,536 px wide, its centre
    /// within 4 × 65,536 px of the origin (the C shim refuses anything else, which would fail the whole frame).
    static func isUsable(_ roi: FaceROI) -> Bool {
        let limit: Float = 65_536
        return roi.center.x.isFinite && roi.center.y.isFinite && roi.angleDegrees.isFinite && roi.size.isFinite
            && roi.size >= 2 && roi.size <= limit && abs(roi.center.x) <= 4 * limit && abs(roi.center.y) <= 4 * limit
    }
}
