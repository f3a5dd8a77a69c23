import FacewireVocabulary
import Foundation

/// The pure arithmetic that turns the face-mesh and iris models' points into attributes: where to run the models
/// (regions of interest), eye openness, the smile's geometry and the head pose. No pixels, no OpenCV: tested on
/// stored vectors from the Python reference `evaluation/expressions/meshattr.py` (method and measurements:
/// `evaluation/expressions/RESULTS-mesh.md`).
///
/// Image coordinates are y-down. "Left" and "right" are the image's sides for an upright face: the mesh eye at
/// indices 33/133 (the subject's right eye) is the image-left eye.
public enum MeshGeometry {
    // MARK: - Mesh indices (MediaPipe face-mesh topology)

    static let eyeLeftOuter = 33, eyeLeftInner = 133
    static let eyeRightInner = 362, eyeRightOuter = 263
    static let mouthLeft = 61, mouthRight = 291
    static let lipUpperInner = 13, lipLowerInner = 14
    static let cheekLeft = 187, cheekRight = 411
    public static let noseTip = 1
    /// The number of mesh points.
    public static let meshPointCount = 468

    // MARK: - Regions of interest

    /// The mesh ROI's centre lies this many eye-to-mouth distances below the eye midpoint.
    static let roiCenterAlong = 0.44
    /// The mesh ROI's side is this many times the larger of the eye distance and the eye-to-mouth distance.
    static let roiSizeFactor = 3.9
    /// The iris ROI's side is this many times the eye-corner distance (as MediaPipe).
    static let irisROIScale = 2.3

    /// Where to run the mesh for a face with the detector's 5 points (`[leftEye, rightEye, nose, mouthLeft,
    /// mouthRight]`, see ``DetectedFace/fivePoints``): turned by the eye line, centred between the eyes and the
    /// mouth, sized from the larger of the eye distance and the eye-to-mouth distance. Calibrated to match the ROI
    /// MediaPipe's tracking derives from the mesh itself. `nil` when the eyes coincide.
    public static func meshROI(fivePoints points: [FacePoint]) -> FaceROI? {
        guard points.count == 5 else { return nil }
        var (left, right) = (points[0], points[1])
        if left.x > right.x { swap(&left, &right) }
        var (mouthL, mouthR) = (points[3], points[4])
        if mouthL.x > mouthR.x { swap(&mouthL, &mouthR) }
        let eyeMidX = Double(left.x + right.x) / 2, eyeMidY = Double(left.y + right.y) / 2
        let mouthMidX = Double(mouthL.x + mouthR.x) / 2, mouthMidY = Double(mouthL.y + mouthR.y) / 2
        let dx = Double(right.x - left.x), dy = Double(right.y - left.y)
        let eyeDistance = (dx * dx + dy * dy).squareRoot()
        guard eyeDistance > 1e-6, eyeDistance.isFinite else { return nil }
        let angle = atan2(dy, dx)
        let vx = -sin(angle), vy = cos(angle)
        let down = (mouthMidX - eyeMidX) * vx + (mouthMidY - eyeMidY) * vy
        let centerX = eyeMidX + roiCenterAlong * down * vx
        let centerY = eyeMidY + roiCenterAlong * down * vy
        let size = roiSizeFactor * max(eyeDistance, down)
        guard centerX.isFinite, centerY.isFinite, size.isFinite, size > 0 else { return nil }
        return FaceROI(center: FacePoint(x: Float(centerX), y: Float(centerY)), size: Float(size), angleDegrees: Float(angle * 180 / .pi))
    }

    /// The iris model's ROIs on the mesh's eye corners, as MediaPipe places them: a square on the two corners,
    /// side 2.3 × their distance, turned so that its x axis runs toward the image's right. The image-right eye is
    /// mirrored (the model was trained on one eye side). `nil` when the mesh has fewer than 468 points.
    public static func eyeROIs(mesh: [SIMD3<Float>]) -> (left: FaceROI, right: FaceROI)? {
        guard mesh.count >= meshPointCount else { return nil }
        func roi(_ a: SIMD3<Float>, _ b: SIMD3<Float>) -> FaceROI {
            let dx = Double(b.x - a.x), dy = Double(b.y - a.y)
            return FaceROI(
                center: FacePoint(x: (a.x + b.x) / 2, y: (a.y + b.y) / 2),
                size: Float(irisROIScale * (dx * dx + dy * dy).squareRoot()), angleDegrees: Float(atan2(dy, dx) * 180 / .pi))
        }
        return (roi(mesh[eyeLeftOuter], mesh[eyeLeftInner]), roi(mesh[eyeRightInner], mesh[eyeRightOuter]))
    }

    // MARK: - Eyes

    /// The lower lid's weight in ``eyeOpening(contour:mirrored:yaw:)``: the upper lid carries the closing (per-eye
    /// AUC on CEW/UTK 0.991 against 0.756 for the lower lid), but our own frames' grimace winks and downward looks need
    /// some of the lower. Fitted on the tune split of our labelled frames (flat over 0.30–0.40).
    public static let eyeLowerLidWeight = 0.35
    /// Closed when ``eyeOpening(contour:mirrored:yaw:)`` is below this: the centre of the range (0.1158–0.1208) at
    /// which CEW/UTKFace's closed eyes are read with recall ≥ 0.92 and ≤ 4 % of open faces read closed (0.928 and
    /// 3.7 % here; BENCHMARKS.md, "Eyes with margin"). The only constant chosen on CEW/UTK.
    public static let eyeClosedOpening = 0.118
    /// Beyond this yaw (degrees) the foreshortening correction stops growing.
    static let eyeYawLimit = 45.0

    /// How open an eye is on the iris model's contour (0 outer corner … 8 inner corner along the lower lid, 9…15 the
    /// upper lid): the upper lid's mean height above the corner line plus ``eyeLowerLidWeight`` × the lower lid's depth
    /// below it, over the corner distance, times cos(|yaw|) (at most ``eyeYawLimit``): a turned head shortens the eye's
    /// width, not its height. `mirrored`: the image-right eye, whose contour runs right to left. 0 for fewer than 16
    /// points, coinciding corners or non-finite values.
    public static func eyeOpening(contour: [SIMD3<Float>], mirrored: Bool, yaw: Float?) -> Double {
        guard contour.count >= 16 else { return 0 }
        let x0 = Double(contour[0].x), y0 = Double(contour[0].y)
        let ux = Double(contour[8].x) - x0, uy = Double(contour[8].y) - y0
        let width2 = ux * ux + uy * uy
        guard width2 > 1e-12, width2.isFinite else { return 0 }
        let sign = mirrored ? -1.0 : 1.0
        // Signed distance below the corner line, over the width (positive: below, for the image-left eye).
        func below(_ p: SIMD3<Float>) -> Double { sign * (ux * (Double(p.y) - y0) - uy * (Double(p.x) - x0)) / width2 }
        let upper = -(9...15).reduce(0.0) { $0 + below(contour[$1]) } / 7
        let lower = (1...7).reduce(0.0) { $0 + below(contour[$1]) } / 7
        let turn = min(abs(Double(yaw ?? 0)), eyeYawLimit)
        let opening = (upper + eyeLowerLidWeight * lower) * cos((turn.isFinite ? turn : 0) * .pi / 180)
        return opening.isFinite ? opening : 0
    }

    /// Eye openness 0...1 from the opening: 0.5 at the closed operating point, 1 at twice it or more.
    public static func eyeOpenness(opening: Double) -> Float {
        Float(min(1, max(0, opening / (2 * eyeClosedOpening))))
    }

    // MARK: - Head pose

    /// The rigid points fitted for the pose: forehead, nose bridge and tip, eye corners, nose wings, which do not
    /// move with a smile, a blink or a talking mouth.
    static let rigidIndices = [
        1, 4, 5, 6, 8, 9, 10, 151, 168, 195, 197, 33, 133, 362, 263, 98, 327, 67, 297, 109, 338, 54, 284, 103, 332, 226,
        446, 244, 464,
    ]
    /// MediaPipe's canonical face model (`canonical_face_model.obj`, Apache-2.0, Google LLC) at ``rigidIndices``:
    /// cm, x toward the image's right for a face looking at the camera, y up, z toward the camera.
    static let canonicalRigid: [SIMD3<Double>] = [
        [0, -1.126865, 7.475604], [0, -0.46317, 7.58658], [0, 0.365669, 7.24287], [0, 2.473255, 5.788627],
        [0, 4.019042, 5.284764], [0, 4.885979, 5.385258], [0, 8.261778, 4.481535], [0, 6.54539, 5.027311],
        [0, 3.271027, 5.236015], [0, 1.059413, 6.774605], [0, 1.728369, 6.31675], [-4.445859, 2.663991, 3.173422],
        [-1.856432, 2.585245, 3.757904], [1.856432, 2.585245, 3.757904], [4.445859, 2.663991, 3.173422],
        [-1.405627, -1.714196, 5.241087], [1.405627, -1.714196, 5.241087], [-3.523964, 8.005976, 3.729163],
        [3.523964, 8.005976, 3.729163], [-1.891399, 8.236377, 4.274997], [1.891399, 8.236377, 4.274997],
        [-6.279331, 6.615427, 1.42585], [6.279331, 6.615427, 1.42585], [-5.133204, 7.485602, 2.660442],
        [5.133204, 7.485602, 2.660442], [-5.171755, 2.535753, 2.670867], [5.171755, 2.535753, 2.670867],
        [-1.255645, 2.467144, 4.2038], [1.255645, 2.467144, 4.2038],
    ]

    /// A similarity transform `q ≈ s·R·c + t` from the canonical face to the mesh in a y-up, z-toward-camera frame
    /// (`q = (x, −y, −z)` of the mesh).
    public struct Fit: Sendable, Equatable {
        public var scale: Double
        /// Row-major 3 × 3 rotation.
        public var rotation: [[Double]]
        public var translation: SIMD3<Double>
    }

    /// Horn's closed-form similarity fit of the mesh's rigid points onto the canonical face (the eigenvector of the
    /// largest eigenvalue of Horn's 4 × 4 matrix, by Jacobi sweeps). `nil` for a mesh with fewer than 468 points or
    /// non-finite values.
    public static func fitCanonical(mesh: [SIMD3<Float>]) -> Fit? {
        guard mesh.count >= meshPointCount else { return nil }
        let q = rigidIndices.map { SIMD3<Double>(Double(mesh[$0].x), -Double(mesh[$0].y), -Double(mesh[$0].z)) }
        guard q.allSatisfy({ $0.x.isFinite && $0.y.isFinite && $0.z.isFinite }) else { return nil }
        let c = canonicalRigid
        let n = Double(q.count)
        let qMean = q.reduce(SIMD3<Double>(), +) / n
        let cMean = c.reduce(SIMD3<Double>(), +) / n
        var s = [[Double]](repeating: [0, 0, 0], count: 3)
        var cc = 0.0
        for (qi, ci) in zip(q, c) {
            let dq = qi - qMean, dc = ci - cMean
            cc += (dc * dc).sum()
            for a in 0..<3 { for b in 0..<3 { s[a][b] += dc[a] * dq[b] } }
        }
        let (sxx, sxy, sxz) = (s[0][0], s[0][1], s[0][2])
        let (syx, syy, syz) = (s[1][0], s[1][1], s[1][2])
        let (szx, szy, szz) = (s[2][0], s[2][1], s[2][2])
        let horn = [
            [sxx + syy + szz, syz - szy, szx - sxz, sxy - syx],
            [syz - szy, sxx - syy - szz, sxy + syx, szx + sxz],
            [szx - sxz, sxy + syx, -sxx + syy - szz, syz + szy],
            [sxy - syx, szx + sxz, syz + szy, -sxx - syy + szz],
        ]
        let e = largestEigenvector(horn)
        let (w, x, y, z) = (e[0], e[1], e[2], e[3])
        let r = [
            [w * w + x * x - y * y - z * z, 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), w * w - x * x + y * y - z * z, 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), w * w - x * x - y * y + z * z],
        ]
        var numerator = 0.0
        for (qi, ci) in zip(q, c) {
            let dq = qi - qMean, dc = ci - cMean
            numerator += (apply(r, dc) * dq).sum()
        }
        let scale = cc > 0 ? numerator / cc : 0
        let translation = qMean - scale * apply(r, cMean)
        guard scale.isFinite, translation.x.isFinite, translation.y.isFinite else { return nil }
        return Fit(scale: scale, rotation: r, translation: translation)
    }

    /// Gauss–Newton steps of the orthographic refinement in ``headPose(mesh:)``.
    static let poseIterations = 8

    /// The orthographic (weak-perspective) pose from the mesh's 2-D points: starts from ``fitCanonical(mesh:)`` and
    /// minimises Σ|(x, −y) − (s·P·R·c + t)|² over R, s, t (P: the first two rows) with Gauss–Newton steps,
    /// R ← exp([w]×)·R. The network's z enters only through the start.
    public static func fitOrthographic(mesh: [SIMD3<Float>]) -> Fit? {
        fitCanonical(mesh: mesh).flatMap { fitOrthographic(mesh: mesh, from: $0) }
    }

    /// ``fitOrthographic(mesh:)`` from a 3-D fit already made.
    static func fitOrthographic(mesh: [SIMD3<Float>], from start: Fit) -> Fit? {
        var fit = start
        let c = canonicalRigid
        let q = rigidIndices.map { SIMD2<Double>(Double(mesh[$0].x), -Double(mesh[$0].y)) }
        var tx = fit.translation.x, ty = fit.translation.y
        var scale = fit.scale
        var r = fit.rotation
        for _ in 0..<poseIterations {
            var jtj = [[Double]](repeating: [Double](repeating: 0, count: 6), count: 6)
            var jtr = [Double](repeating: 0, count: 6)
            for (ci, qi) in zip(c, q) {
                let u = apply(r, ci)
                let residual = (scale * u.x + tx - qi.x, scale * u.y + ty - qi.y)
                let jx = [0, scale * u.z, -scale * u.y, u.x, 1, 0]
                let jy = [-scale * u.z, 0, scale * u.x, u.y, 0, 1]
                for a in 0..<6 {
                    jtr[a] += jx[a] * residual.0 + jy[a] * residual.1
                    for b in 0..<6 { jtj[a][b] += jx[a] * jx[b] + jy[a] * jy[b] }
                }
            }
            let step = solve(jtj, jtr.map { -$0 })
            r = multiply(rotation(from: SIMD3(step[0], step[1], step[2])), r)
            scale += step[3]
            tx += step[4]
            ty += step[5]
        }
        guard scale.isFinite, tx.isFinite, ty.isFinite, r.allSatisfy({ $0.allSatisfy(\.isFinite) }) else { return nil }
        fit.rotation = r
        fit.scale = scale
        fit.translation = SIMD3(tx, ty, fit.translation.z)
        return fit
    }

    /// Yaw, pitch and roll in degrees from the mesh. The rotation R of ``fitOrthographic(mesh:)`` (camera frame:
    /// x right, y up, z toward the camera) is decomposed as R = R_z(ρ)·R_x(π)·R_y(υ), so that turning the image in
    /// its plane changes only ρ: yaw = υ = atan2(−R₂₀, R₂₂) (positive: the face turns toward the image's right),
    /// pitch = −π = −asin(R₂₁) (positive: the face turns up; 0: the canonical face's frontal), roll = −ρ =
    /// atan2(R₀₁, R₁₁) (positive: clockwise on screen, the sense of ``DetectedFace/faceAngle``).
    ///
    /// Yaw and roll come from that 2-D fit; **pitch** from the 3-D fit (``fitCanonical(mesh:)``), which keeps the
    /// network's depth: a nod moves the 2-D points little and the depth a lot. On AFLW2000-3D (`../shared/data/pose`,
    /// 1,046 faces; `facewire eval --attributes …/pose/labels.tsv`) pitch's mean error falls from 7.0° to 3.8° with
    /// no constant fitted, while yaw and roll stay those GENKI-4K was measured with (the 3-D fit's yaw is worse there).
    public static func headPose(mesh: [SIMD3<Float>]) -> (yaw: Float, pitch: Float, roll: Float)? {
        fitCanonical(mesh: mesh).flatMap { headPose(mesh: mesh, fit: $0) }
    }

    /// ``headPose(mesh:)`` from the 3-D fit already made.
    public static func headPose(mesh: [SIMD3<Float>], fit solid: Fit) -> (yaw: Float, pitch: Float, roll: Float)? {
        guard let fit = fitOrthographic(mesh: mesh, from: solid),
            let flat = angles(of: fit.rotation)
        else { return nil }
        guard let deep = angles(of: solid.rotation) else { return flat }
        return (flat.yaw, deep.pitch, flat.roll)
    }

    /// The yaw, pitch and roll of a rotation (see ``headPose(mesh:)``).
    static func angles(of r: [[Double]]) -> (yaw: Float, pitch: Float, roll: Float)? {
        let degrees = 180 / Double.pi
        let yaw = atan2(-r[2][0], r[2][2]) * degrees
        let pitch = -asin(min(1, max(-1, r[2][1]))) * degrees
        let roll = atan2(r[0][1], r[1][1]) * degrees
        guard yaw.isFinite, pitch.isFinite, roll.isFinite else { return nil }
        return (Float(yaw), Float(pitch), Float(roll))
    }

    // MARK: - Smile

    /// Weights of the smile's features (Gaussian naive-Bayes weights from the tune split of our own labelled
    /// frames) and its operating point (chosen on GENKI-4K for the best accuracy): `RESULTS-mesh.md`.
    static let smileWeightLift = 9.499
    static let smileWeightCheek = -18.985
    static let smileWeightOpen = 0.711
    static let smileWeightUpperLip = -78.002
    static let smileThreshold = -112.21
    static let lipUpperOuter = 0

    /// A mesh point in the canonical frame of `fit` (cm, y up, z toward the camera): Rᵀ·((x, −y, −z) − t) / s.
    public static func canonicalPoint(_ p: SIMD3<Float>, fit: Fit) -> SIMD3<Double> {
        let d = SIMD3<Double>(Double(p.x), -Double(p.y), -Double(p.z)) - fit.translation
        let r = fit.rotation
        return SIMD3(
            r[0][0] * d.x + r[1][0] * d.y + r[2][0] * d.z, r[0][1] * d.x + r[1][1] * d.y + r[2][1] * d.z,
            r[0][2] * d.x + r[1][2] * d.y + r[2][2] * d.z) / fit.scale
    }

    /// The mouth's shape in the canonical frame of `fit` (cm, y up): `lift`, how far the corners (61, 291) sit
    /// above the inner-lip midpoint (13, 14); `cheek`, the mean 3-D distance of each corner to the cheek point
    /// beside the nose wing (187, 411); `open`, the inner lips' gap; `upperLip`, the upper lip's height from its
    /// outer (0) to its inner (13) midpoint, which a smile stretches thin and talking does not.
    public static func smileFeatures(
        mesh: [SIMD3<Float>], fit: Fit
    ) -> (lift: Double, cheek: Double, open: Double, upperLip: Double) {
        func canonical(_ index: Int) -> SIMD3<Double> { canonicalPoint(mesh[index], fit: fit) }
        func distance(_ a: SIMD3<Double>, _ b: SIMD3<Double>) -> Double { ((a - b) * (a - b)).sum().squareRoot() }
        let left = canonical(mouthLeft), right = canonical(mouthRight)
        let upperInner = canonical(lipUpperInner), lowerInner = canonical(lipLowerInner)
        let lift = (left.y + right.y) / 2 - (upperInner.y + lowerInner.y) / 2
        let cheek = (distance(left, canonical(cheekLeft)) + distance(right, canonical(cheekRight))) / 2
        return (lift, cheek, upperInner.y - lowerInner.y, canonical(lipUpperOuter).y - upperInner.y)
    }

    /// The smile's raw score: the weighted sum of ``smileFeatures(mesh:fit:)``; a smile at ``smileThreshold`` or
    /// above.
    public static func smileRaw(mesh: [SIMD3<Float>], fit: Fit) -> Double {
        let f = smileFeatures(mesh: mesh, fit: fit)
        return smileWeightLift * f.lift + smileWeightCheek * f.cheek + smileWeightOpen * f.open + smileWeightUpperLip * f.upperLip
    }

    /// The smile score 0...1: a logistic of the raw score, 0.5 at the operating point. `nil` when the fit failed or
    /// the score is not finite.
    public static func smileScore(mesh: [SIMD3<Float>], fit: Fit?) -> Float? {
        guard let fit, fit.scale > 0, mesh.count >= meshPointCount else { return nil }
        let raw = smileRaw(mesh: mesh, fit: fit)
        guard raw.isFinite else { return nil }
        let z = min(60, max(-60, raw - smileThreshold))
        return Float(1 / (1 + exp(-z)))
    }

    // MARK: - Small linear algebra

    static func apply(_ r: [[Double]], _ v: SIMD3<Double>) -> SIMD3<Double> {
        SIMD3(
            r[0][0] * v.x + r[0][1] * v.y + r[0][2] * v.z, r[1][0] * v.x + r[1][1] * v.y + r[1][2] * v.z,
            r[2][0] * v.x + r[2][1] * v.y + r[2][2] * v.z)
    }

    static func multiply(_ a: [[Double]], _ b: [[Double]]) -> [[Double]] {
        (0..<3).map { i in (0..<3).map { j in (0..<3).reduce(0) { $0 + a[i][$1] * b[$1][j] } } }
    }

    /// The rotation matrix of a rotation vector (Rodrigues).
    static func rotation(from w: SIMD3<Double>) -> [[Double]] {
        let theta = (w * w).sum().squareRoot()
        guard theta > 1e-12, theta.isFinite else { return [[1, 0, 0], [0, 1, 0], [0, 0, 1]] }
        let k = w / theta
        let c = cos(theta), s = sin(theta), v = 1 - c
        return [
            [c + k.x * k.x * v, k.x * k.y * v - k.z * s, k.x * k.z * v + k.y * s],
            [k.y * k.x * v + k.z * s, c + k.y * k.y * v, k.y * k.z * v - k.x * s],
            [k.z * k.x * v - k.y * s, k.z * k.y * v + k.x * s, c + k.z * k.z * v],
        ]
    }

    /// Solves a small dense system by Gaussian elimination with partial pivoting; zeros when it is singular.
    static func solve(_ a: [[Double]], _ b: [Double]) -> [Double] {
        let n = b.count
        var m = (0..<n).map { a[$0] + [b[$0]] }
        for column in 0..<n {
            let pivot = (column..<n).max { abs(m[$0][column]) < abs(m[$1][column]) } ?? column
            m.swapAt(column, pivot)
            guard abs(m[column][column]) >= 1e-15 else { return [Double](repeating: 0, count: n) }
            for row in (column + 1)..<n where column + 1 < n {
                let factor = m[row][column] / m[column][column]
                for k in column...n { m[row][k] -= factor * m[column][k] }
            }
        }
        var x = [Double](repeating: 0, count: n)
        for row in stride(from: n - 1, through: 0, by: -1) {
            var sum = m[row][n]
            for k in (row + 1)..<n where row + 1 < n { sum -= m[row][k] * x[k] }
            x[row] = sum / m[row][row]
        }
        return x
    }

    /// The eigenvector of the largest eigenvalue of a symmetric 4 × 4 matrix (cyclic Jacobi).
    static func largestEigenvector(_ matrix: [[Double]]) -> [Double] {
        var a = matrix
        var v = (0..<4).map { i in (0..<4).map { j in i == j ? 1.0 : 0.0 } }
        for _ in 0..<30 {
            var off = 0.0
            for i in 0..<4 { for j in 0..<4 where i != j { off += a[i][j] * a[i][j] } }
            if off < 1e-22 { break }
            for p in 0..<3 {
                for q in (p + 1)..<4 {
                    if abs(a[p][q]) < 1e-300 { continue }
                    let theta = (a[q][q] - a[p][p]) / (2 * a[p][q])
                    let t = (theta >= 0 ? 1.0 : -1.0) / (abs(theta) + (theta * theta + 1).squareRoot())
                    let c = 1 / (t * t + 1).squareRoot()
                    let s = t * c
                    for k in 0..<4 {
                        let (akp, akq) = (a[k][p], a[k][q])
                        a[k][p] = c * akp - s * akq
                        a[k][q] = s * akp + c * akq
                    }
                    for k in 0..<4 {
                        let (apk, aqk) = (a[p][k], a[q][k])
                        a[p][k] = c * apk - s * aqk
                        a[q][k] = s * apk + c * aqk
                    }
                    for k in 0..<4 {
                        let (vkp, vkq) = (v[k][p], v[k][q])
                        v[k][p] = c * vkp - s * vkq
                        v[k][q] = s * vkp + c * vkq
                    }
                }
            }
        }
        let best = (0..<4).max { a[$0][$0] < a[$1][$1] } ?? 0
        return (0..<4).map { v[$0][best] }
    }
}
