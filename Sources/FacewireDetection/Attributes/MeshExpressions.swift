import FacewireVocabulary
import Foundation

/// Six expressions read from the face mesh, one classifier each (SPEC 11.8), as Affdex reported them: a score
/// 0...100 and a flag at the operating point 50.
///
/// Every feature is measured in MediaPipe's canonical face frame (``MeshGeometry/canonicalPoint(_:fit:)``: cm, y up,
/// z toward the camera), so pose, size and position drop out. Each score is 100 / (1 + e^−(w·f + b)); w and b are an
/// L2-regularised logistic regression fitted **only on our own labelled frames** (491 frames of 19 shared clips,
/// `Tests/FacewireDetectionTests/Fixtures/action-labels.md`), the fit split being each clip's even-numbered labelled frames;
/// the operating point (best F1 on the fit split) is folded into b. Held-back and leave-one-clip-out precision and
/// recall: BENCHMARKS.md, "Expressions". Only mouth open holds across people; the other five read one person's
/// resting face as another's expression (a child's wide eyes as widened, high brows as raised).
///
/// Reference: `evaluation/expressions/mesh_expressions.py` (the same features and constants, and the vectors the
/// tests compare against). Pure.
public enum MeshExpressions {
    /// The measured features (canonical cm, ratios).
    public struct Features: Sendable, Equatable {
        /// Mean height of the upper brow contour (70, 63, 105, 66, 107 and mirrored) over the forehead point 151.
        public var browHeight = 0.0
        /// Depth of the inner brows' lower edge (55, 285) over the glabella (9).
        public var browInnerDepth = 0.0
        /// Mean distance from each inner brow's lower edge (55, 285) to its eye's inner corner (133, 362).
        public var browLowToEye = 0.0
        /// The same from the inner brows' upper edge (107, 336).
        public var browTopToEye = 0.0
        /// Horizontal gap between the inner brows' upper edges (336 − 107).
        public var browInnerGap = 0.0
        /// The inner lips' gap (13 over 14).
        public var lipGap = 0.0
        /// Mouth width (61–291) over the inner eye corners' distance (133–362).
        public var mouthWidthRatio = 0.0
        /// The outer lips' midpoints (0, 17) in front of the nose tip (1).
        public var lipProtrusion = 0.0
        /// The mouth corners (61, 291) over the inner lips' midline (13, 14): negative when pulled down.
        public var cornerLift = 0.0
        /// Mean over both eyes of the upper lid's height over the lower lid's, over the eye's width: from the iris
        /// model's contours when they ran, else the mesh's own lids.
        public var lidGap = 0.0
        /// Whether ``lidGap`` comes from the iris model's contours.
        public var lidsFromIris = false

        /// Reads ``lidGap`` on the iris model's contours (image-left eye first, at least 16 points each) instead of
        /// the mesh's lids: image x, y from the contour, z from the mesh point each contour point stands for. Other
        /// contours leave the features as they are.
        public mutating func useIrisLids(_ eyeContours: [[SIMD3<Float>]], mesh: [SIMD3<Float>], fit: MeshGeometry.Fit) {
            guard eyeContours.count == 2, eyeContours.allSatisfy({ $0.count >= 16 }), mesh.count >= MeshGeometry.meshPointCount
            else { return }
            let gap = MeshExpressions.lidGap(zip(eyeContours, MeshExpressions.lidMap).map { contour, map in
                (0..<16).map { k in MeshGeometry.canonicalPoint(SIMD3(contour[k].x, contour[k].y, mesh[map[k]].z), fit: fit) }
            })
            guard gap.isFinite else { return }
            lidGap = gap
            lidsFromIris = true
        }
    }

    /// The lid points: contour index k (0 outer corner, 1...7 lower lid, 8 inner corner, 9...15 upper lid) and the
    /// mesh point it stands for, image-left eye then image-right eye.
    static let lidMap: [[Int]] = [
        [33, 7, 163, 144, 145, 153, 154, 155, 133, 246, 161, 160, 159, 158, 157, 173],
        [263, 249, 390, 373, 374, 380, 381, 382, 362, 466, 388, 387, 386, 385, 384, 398],
    ]

    /// The features of `mesh` (468 points, image px) under `fit`; the lids from `eyeContours` (the iris model's
    /// contours, image-left eye first, at least 16 points each) when given.
    public static func features(mesh: [SIMD3<Float>], fit: MeshGeometry.Fit, eyeContours: [[SIMD3<Float>]]? = nil) -> Features? {
        guard mesh.count >= MeshGeometry.meshPointCount, fit.scale > 0, fit.scale.isFinite else { return nil }
        func p(_ index: Int) -> SIMD3<Double> { MeshGeometry.canonicalPoint(mesh[index], fit: fit) }
        func distance(_ a: Int, _ b: Int) -> Double { length(p(a) - p(b)) }
        var f = Features()
        let brows = [70, 63, 105, 66, 107, 300, 293, 334, 296, 336]
        f.browHeight = brows.reduce(0.0) { $0 + p($1).y } / Double(brows.count) - p(151).y
        f.browInnerDepth = (p(55).z + p(285).z) / 2 - p(9).z
        f.browLowToEye = (distance(55, 133) + distance(285, 362)) / 2
        f.browTopToEye = (distance(107, 133) + distance(336, 362)) / 2
        f.browInnerGap = p(336).x - p(107).x
        f.lipGap = p(13).y - p(14).y
        let eyeDistance = distance(133, 362)
        f.mouthWidthRatio = eyeDistance > 1e-9 ? distance(61, 291) / eyeDistance : 0
        f.lipProtrusion = (p(0).z + p(17).z) / 2 - p(1).z
        f.cornerLift = (p(61).y + p(291).y) / 2 - (p(13).y + p(14).y) / 2
        f.lidGap = lidGap(lidMap.map { $0.map(p) })
        if let eyeContours { f.useIrisLids(eyeContours, mesh: mesh, fit: fit) }
        let values = [f.browHeight, f.browInnerDepth, f.browLowToEye, f.browTopToEye, f.browInnerGap, f.lipGap,
                      f.mouthWidthRatio, f.lipProtrusion, f.cornerLift, f.lidGap]
        return values.allSatisfy(\.isFinite) ? f : nil
    }

    /// Mean over the eyes of (mean upper-lid y − mean lower-lid y) / the corners' 3-D distance.
    static func lidGap(_ eyes: [[SIMD3<Double>]]) -> Double {
        let gaps = eyes.map { points -> Double in
            let width = length(points[0] - points[8])
            guard width > 1e-9 else { return 0 }
            let upper = points[9...15].reduce(0.0) { $0 + $1.y } / 7
            let lower = points[1...7].reduce(0.0) { $0 + $1.y } / 7
            return (upper - lower) / width
        }
        return gaps.reduce(0, +) / Double(max(1, gaps.count))
    }

    /// The linear value w·f + b of `action` (the score's logit; ≥ 0: present).
    public static func logit(_ action: FacialAction, _ f: Features) -> Double {
        switch action {
        case .browRaise: 7.17141 * f.browHeight + 51.3452 * f.browInnerDepth + 24.7242
        case .browFurrow: -22.9111 * f.browLowToEye + 12.7633 * f.browTopToEye - 0.523995 * f.browInnerGap + 14.2548
        case .mouthOpen: 6.50263 * f.lipGap - 4.02702
        case .eyeWiden: f.lidsFromIris ? 69.559 * f.lidGap - 18.6896 : 78.4559 * f.lidGap - 15.5259
        case .lipPucker: -17.5897 * f.mouthWidthRatio + 1.18338 * f.lipProtrusion + 26.1546
        case .lipCornerDepressor: -12.9114 * f.cornerLift - 3.55016 * f.lipGap - 0.352797
        }
    }

    /// One reading per action of `actions`, in ``FacialAction`` order.
    public static func readings(_ f: Features, actions: [FacialAction]) -> [ActionReading] {
        actions.sorted().map { action in
            let v = logit(action, f)
            let score = 100 / (1 + exp(-min(60, max(-60, v))))
            return ActionReading(action: action, score: Float(score), present: v >= 0)
        }
    }

    static func length(_ v: SIMD3<Double>) -> Double { (v * v).sum().squareRoot() }
}
