"""Face attributes from MediaPipe's face mesh and iris models: the reference for the Swift port.

Run with Debian's /usr/bin/python3 (cv2 4.6). Two layers:

* Primitives (C++ side, cv2 here): `run_mesh`, `run_iris`, `run_emotion` on an ROI. An ROI is
  (center_x, center_y, size, angle_degrees): a square of side `size` image px whose x axis runs along
  (cos a, sin a) in the image. Crop pixel q (n x n crop) maps to image p = c + (size/n)·R(a)·(q − n/2); bilinear,
  BORDER_CONSTANT 0. Model outputs (crop px) come back through the same map, z scaled by size/n.
* Pure arithmetic on the returned points (what Swift ports): `mesh_roi`, `mesh_roi_from_mesh`, `eye_rois`,
  `eye_openness`, `eye_openness_mesh`, `smile_score`, `head_pose`, `quality`.

Image coordinates are y-down. "left"/"right" below are the image's sides for an upright face: the mesh eye at
indices 33/133 (the subject's right eye) is the image-left eye.
"""
import math
import os

import numpy as np

MODEL_DIR = os.path.expanduser("~/.cache/facewire/models")
MESH_N = 192
IRIS_N = 64
EMO_N = 64

# ------------------------------------------------------------------------------------------------------------
# Mesh indices (MediaPipe face mesh topology)
EYE_L_OUTER, EYE_L_INNER = 33, 133      # image-left eye (subject's right)
EYE_R_INNER, EYE_R_OUTER = 362, 263     # image-right eye (subject's left)
# Lids, outer corner -> inner corner, upper[k] above lower[k] (from MediaPipe's iris refinement map)
LID_L_LOWER = (7, 163, 144, 145, 153, 154, 155)
LID_L_UPPER = (246, 161, 160, 159, 158, 157, 173)
LID_R_LOWER = (249, 390, 373, 374, 380, 381, 382)
LID_R_UPPER = (466, 388, 387, 386, 385, 384, 398)
MOUTH_L, MOUTH_R = 61, 291              # mouth corners (image-left, image-right)
LIP_UPPER_IN, LIP_LOWER_IN = 13, 14     # inner lip midpoints
LIP_UPPER_OUT, LIP_LOWER_OUT = 0, 17    # outer lip midpoints
NOSE_TIP = 1

# Iris model's 71 eye points: 0..8 the lower lid from the outer corner (0) to the inner corner (8), 9..15 the upper
# lid (excluding corners) from outer to inner; 16..70 halos/brow. Point k of 9..15 lies above point k-8 of 1..7.
# The image-right eye is mirrored before the model, so for both eyes "outer" is as named anatomically.
C_OUTER, C_INNER = 0, 8
C_LOWER = (1, 2, 3, 4, 5, 6, 7)
C_UPPER = (9, 10, 11, 12, 13, 14, 15)

# ROI constants
MESH_ROI_SCALE = 1.5      # MediaPipe: landmark bounding box x 1.5, square
IRIS_ROI_SCALE = 2.3      # MediaPipe: eye-corner distance x 2.3, square


# ------------------------------------------------------------------------------------------------------------
# Primitives (replicated exactly as the C++ side does them)

def roi_matrix(roi, n):
    """2x3 matrix mapping crop pixel q to image p (p = c + s R (q - n/2))."""
    cx, cy, size, ang = roi
    s = size / n
    a = math.radians(ang)
    ca, sa = math.cos(a), math.sin(a)
    A = np.array([[s * ca, -s * sa], [s * sa, s * ca]])
    t = np.array([cx, cy]) - A @ np.array([n / 2.0, n / 2.0])
    return np.hstack([A, t[:, None]])


def warp(bgr, roi, n):
    import cv2
    M = roi_matrix(roi, n)
    return cv2.warpAffine(bgr, M, (n, n), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                          borderMode=cv2.BORDER_CONSTANT, borderValue=0)


def crop_to_image(pts, roi, n):
    """(k,3) crop points (x, y, z in crop px) -> image px (z scaled by size/n)."""
    M = roi_matrix(roi, n)
    out = np.empty_like(pts, dtype=np.float64)
    out[:, :2] = pts[:, :2] @ M[:, :2].T + M[:, 2]
    out[:, 2] = pts[:, 2] * roi[2] / n
    return out


class Models:
    def __init__(self, model_dir=MODEL_DIR):
        import cv2
        self.mesh = cv2.dnn.readNetFromONNX(os.path.join(model_dir, "face_landmark.onnx"))
        self.iris = cv2.dnn.readNetFromONNX(os.path.join(model_dir, "iris_landmark.onnx"))

    def run_mesh(self, bgr, roi):
        """-> (points (468,3) image px, presence 0..1, sharpness)."""
        import cv2
        crop = warp(bgr, roi, MESH_N)
        blob = cv2.dnn.blobFromImage(crop, 1 / 255.0, None, (0, 0, 0), swapRB=True, crop=False)
        self.mesh.setInput(blob)
        pts, logit = self.mesh.forward(["conv2d_20", "conv2d_30"])
        pts = pts.reshape(468, 3).astype(np.float64)
        presence = 1.0 / (1.0 + math.exp(-float(logit.reshape(-1)[0])))
        grey = cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY)
        lap = cv2.Laplacian(grey, cv2.CV_64F, ksize=1)  # 3x3 Laplacian kernel
        q = MESH_N // 4
        sharp = float(lap[q:MESH_N - q, q:MESH_N - q].var())
        return crop_to_image(pts, roi, MESH_N), presence, sharp

    def run_iris(self, bgr, roi, mirror):
        """-> (contour (71,3), iris (5,3)) image px. mirror: the crop is flipped left-right before the model and
        the outputs' x mapped back as x -> (IRIS_N - 1) - x."""
        import cv2
        crop = warp(bgr, roi, IRIS_N)
        if mirror:
            crop = cv2.flip(crop, 1)
        blob = cv2.dnn.blobFromImage(crop, 1 / 255.0, None, (0, 0, 0), swapRB=True, crop=False)
        self.iris.setInput(blob)
        c, i = self.iris.forward(["output_eyes_contours_and_brows", "output_iris"])
        c = c.reshape(71, 3).astype(np.float64)
        i = i.reshape(5, 3).astype(np.float64)
        if mirror:
            c[:, 0] = (IRIS_N - 1) - c[:, 0]
            i[:, 0] = (IRIS_N - 1) - i[:, 0]
        return crop_to_image(c, roi, IRIS_N), crop_to_image(i, roi, IRIS_N)


# ------------------------------------------------------------------------------------------------------------
# Pure arithmetic (ported to Swift)

def ordered5(landmarks5):
    """(left_eye, right_eye, nose, left_mouth, right_mouth) as 2-vectors, left = smaller x."""
    p = [np.array(landmarks5[2 * k:2 * k + 2], np.float64) for k in range(5)]
    le, re_ = (p[0], p[1]) if p[0][0] <= p[1][0] else (p[1], p[0])
    lm, rm = (p[3], p[4]) if p[3][0] <= p[4][0] else (p[4], p[3])
    return le, re_, p[2], lm, rm


# mesh ROI from the detector: calibrated so that it matches the ROI the mesh itself would ask for
# (mesh_roi_from_mesh, after two passes) on 157 of our own labelled frames (median ratios); see RESULTS-mesh.md.
ROI_CENTER_ALONG = 0.44  # centre: eye midpoint + 0.44 x (eye-to-mouth distance) toward the mouth
ROI_SIZE_K = 3.9  # side: 3.9 x max(eye distance, eye-to-mouth distance)


def mesh_roi(box, landmarks5):
    """ROI for the mesh from the detector's 5 landmarks (box unused except as a fallback).

    angle = direction of the eye line (image-left eye -> image-right eye); in the face frame (x along the eye line,
    y perpendicular, y-down), the centre is the eye midpoint moved ROI_CENTER_ALONG x (eye-mouth distance) toward the
    mouth midpoint, and size = ROI_SIZE_K x max(eye distance, eye-midpoint-to-mouth-midpoint distance).
    """
    le, re_, _, lm, rm = ordered5(landmarks5)
    em = (le + re_) / 2
    mm = (lm + rm) / 2
    d = re_ - le
    iod = math.hypot(d[0], d[1])
    if iod < 1e-6:
        x, y, w, h = box
        return (x + w / 2, y + h / 2, MESH_ROI_SCALE * max(w, h), 0.0)
    ang = math.atan2(d[1], d[0])
    u = np.array([math.cos(ang), math.sin(ang)])
    v = np.array([-math.sin(ang), math.cos(ang)])  # "down" in the face frame
    em_mm = mm - em
    down = float(em_mm @ v)
    c = em + ROI_CENTER_ALONG * down * v
    size = ROI_SIZE_K * max(iod, down)
    return (float(c[0]), float(c[1]), float(size), math.degrees(ang))


def mesh_roi_from_mesh(mesh):
    """MediaPipe's tracking ROI: angle of 33 -> 263, bounding box of all points in that rotated frame, x1.5, square."""
    p = np.asarray(mesh)[:, :2]
    d = p[EYE_R_OUTER] - p[EYE_L_OUTER]
    ang = math.atan2(d[1], d[0])
    ca, sa = math.cos(ang), math.sin(ang)
    xr = p[:, 0] * ca + p[:, 1] * sa
    yr = -p[:, 0] * sa + p[:, 1] * ca
    cxr, cyr = (xr.min() + xr.max()) / 2, (yr.min() + yr.max()) / 2
    size = MESH_ROI_SCALE * max(xr.max() - xr.min(), yr.max() - yr.min())
    return (float(cxr * ca - cyr * sa), float(cxr * sa + cyr * ca), float(size), math.degrees(ang))


def _corner_roi(a, b):
    d = b - a
    ang = math.atan2(d[1], d[0])
    c = (a + b) / 2
    return (float(c[0]), float(c[1]), float(IRIS_ROI_SCALE * math.hypot(d[0], d[1])), math.degrees(ang))


def eye_rois(mesh):
    """((roi, mirror) for the image-left eye, (roi, mirror) for the image-right eye), as MediaPipe: the square on
    the two eye corners (outer->inner for the left eye 33->133, inner->outer 362->263 for the right, so the x axis
    runs toward the image's right), side 2.3 x the corner distance. The right eye is mirrored."""
    p = np.asarray(mesh)[:, :2]
    return ((_corner_roi(p[EYE_L_OUTER], p[EYE_L_INNER]), False),
            (_corner_roi(p[EYE_R_INNER], p[EYE_R_OUTER]), True))


def _aperture(pts, outer, inner, upper, lower):
    """Mean lid gap (upper[k] - lower[k] distance, 2-D) over the corner distance."""
    p = np.asarray(pts)[:, :2]
    w = float(np.linalg.norm(p[inner] - p[outer]))
    if w < 1e-6:
        return 0.0
    gap = np.mean([np.linalg.norm(p[u] - p[l]) for u, l in zip(upper, lower)])
    return float(gap / w)


# openness = clamp(aperture / OPEN_FULL, 0, 1); closed when openness < the operating point.
# aperture = mean of the 7 upper-lower lid distances / corner distance (2-D, image px ratios).
# Operating point: closed when aperture < 0.168 (iris contour), i.e. openness < 0.5. Our labelled frames' tune split
# is flat over 0.16-0.17 (max min(P, R)); within that, 0.168 is the largest value at which the product
# (`facewire eval --attributes .../eyes`, MediaPipe's crop sampling and mirroring) reads at most 5 % of CEW/UTK's
# open faces closed (0.17 here: 5.3 %).
EYE_CLOSED_APERTURE = 0.168
OPEN_FULL_IRIS = 2 * EYE_CLOSED_APERTURE
# The mesh's own lids barely move when the eye closes (median aperture 0.187 closed vs 0.189 open on CEW/UTK):
# no usable operating point; the constant below only maps the numbers to 0..1 for the comparison.
OPEN_FULL_MESH = 0.40
EYE_CLOSED_BELOW = 0.5


def eye_aperture_iris(contour71):
    return _aperture(contour71, C_OUTER, C_INNER, C_UPPER, C_LOWER)


def eye_apertures_mesh(mesh):
    """(left, right) apertures from the mesh's own lid points."""
    return (_aperture(mesh, EYE_L_OUTER, EYE_L_INNER, LID_L_UPPER, LID_L_LOWER),
            _aperture(mesh, EYE_R_OUTER, EYE_R_INNER, LID_R_UPPER, LID_R_LOWER))


def eye_openness(contour71):
    """The first version's openness (the aperture over twice its closed point); the product now reads
    eye_openness_lids."""
    return min(1.0, max(0.0, eye_aperture_iris(contour71) / OPEN_FULL_IRIS))


# Issue 32: the upper lid carries the closing (per-eye AUC on CEW/UTK 0.991, the lower lid 0.756); the lower lid's
# weight was fitted on our labelled frames' tune split, the threshold chosen on CEW/UTK (recall >= 0.92 with <= 4 %
# of open faces read closed over 0.1158-0.1208; its centre). MeshGeometry.swift mirrors these.
LOWER_LID_WEIGHT = 0.35
EYE_CLOSED_OPENING = 0.118
EYE_YAW_LIMIT = 45.0


def eye_opening(contour71, mirrored, yaw):
    """(upper lid height above the corner line + LOWER_LID_WEIGHT x lower lid depth below it) / corner distance,
    x cos(min(|yaw|, 45 deg)). mirrored: the image-right eye (its contour runs right to left)."""
    (x0, y0), (x8, y8) = contour71[0][:2], contour71[8][:2]
    ux, uy = x8 - x0, y8 - y0
    w2 = ux * ux + uy * uy
    if not w2 > 1e-12:
        return 0.0
    sign = -1.0 if mirrored else 1.0

    def below(p):
        return sign * (ux * (p[1] - y0) - uy * (p[0] - x0)) / w2
    upper = -sum(below(contour71[k]) for k in range(9, 16)) / 7
    lower = sum(below(contour71[k]) for k in range(1, 8)) / 7
    turn = min(abs(yaw or 0.0), EYE_YAW_LIMIT)
    return (upper + LOWER_LID_WEIGHT * lower) * math.cos(math.radians(turn))


def eye_openness_lids(contour71, mirrored, yaw):
    return min(1.0, max(0.0, eye_opening(contour71, mirrored, yaw) / (2 * EYE_CLOSED_OPENING)))


def eye_openness_mesh(mesh):
    return tuple(min(1.0, max(0.0, a / OPEN_FULL_MESH)) for a in eye_apertures_mesh(mesh))


# ------------------------------------------------------------------------------------------------------------
# Head pose: similarity (weak-perspective) fit of the mesh's rigid points onto MediaPipe's canonical face.
#
# The mesh is turned into a y-up, z-toward-camera frame, Q = (x, -y, -z) (MediaPipe's z is smaller = nearer),
# and Horn's closed form (largest eigenvector of a 4x4 symmetric matrix, Jacobi sweeps) gives the rotation R with
# Q ~ s R C + t over the rigid subset; fit_orthographic refines it on the 2-D points. With R = Rz(rho) Rx(pi) Ry(u)
# (head_pose):
#   yaw   = u                                  > 0: the face turns toward the image's right
#   pitch = -pi                                > 0: looking up
#   roll  = -rho                               in y-down image coords (> 0 clockwise)
# Rigid subset: forehead, nose bridge and tip, eye corners, nose wings: points that do not move with a smile, a
# blink or a talking mouth (no lids, brows, lips, jaw, cheeks or silhouette).
RIGID = (1, 4, 5, 6, 8, 9, 10, 151, 168, 195, 197, 33, 133, 362, 263, 98, 327, 67, 297, 109, 338, 54, 284, 103,
         332, 226, 446, 244, 464)
# canonical_face_model.obj coordinates of RIGID (cm; x toward the image's right, y up, z toward the camera)
CANON = {}
PITCH_ZERO = 0.0


def _load_canon():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "canonical_face_model.obj.txt")
    v = [tuple(float(t) for t in line.split()[1:4]) for line in open(path) if line.startswith("v ")]
    return {i: v[i] for i in range(len(v))}


CANON_ALL = _load_canon()
CANON = {i: CANON_ALL[i] for i in RIGID}


def _jacobi_max_eigvec(N):
    """Eigenvector of the largest eigenvalue of a symmetric 4x4 (list of lists), cyclic Jacobi; pure arithmetic."""
    a = [row[:] for row in N]
    v = [[1.0 if i == j else 0.0 for j in range(4)] for i in range(4)]
    for _sweep in range(30):
        off = sum(a[i][j] * a[i][j] for i in range(4) for j in range(4) if i != j)
        if off < 1e-22:
            break
        for p in range(3):
            for q in range(p + 1, 4):
                if abs(a[p][q]) < 1e-300:
                    continue
                theta = (a[q][q] - a[p][p]) / (2.0 * a[p][q])
                t = (1.0 if theta >= 0 else -1.0) / (abs(theta) + math.sqrt(theta * theta + 1.0))
                c = 1.0 / math.sqrt(t * t + 1.0)
                s = t * c
                for k in range(4):  # A <- A J (columns p, q)
                    akp, akq = a[k][p], a[k][q]
                    a[k][p] = c * akp - s * akq
                    a[k][q] = s * akp + c * akq
                for k in range(4):  # A <- J^T A (rows p, q)
                    apk, aqk = a[p][k], a[q][k]
                    a[p][k] = c * apk - s * aqk
                    a[q][k] = s * apk + c * aqk
                for k in range(4):
                    vkp, vkq = v[k][p], v[k][q]
                    v[k][p] = c * vkp - s * vkq
                    v[k][q] = s * vkp + c * vkq
    j = max(range(4), key=lambda i: a[i][i])
    return [v[k][j] for k in range(4)]


def fit_canonical(mesh, idx=RIGID):
    """-> (s, R (3x3 list, rows), t): Q ~ s R C + t with Q = (x, -y, -z) of the mesh, C the canonical points."""
    Q = [(mesh[i][0], -mesh[i][1], -mesh[i][2]) for i in idx]
    C = [CANON_ALL[i] for i in idx]
    n = float(len(idx))
    qm = [sum(p[k] for p in Q) / n for k in range(3)]
    cm = [sum(p[k] for p in C) / n for k in range(3)]
    S = [[0.0] * 3 for _ in range(3)]  # S[a][b] = sum c_a q_b
    cc = 0.0
    for q, c in zip(Q, C):
        dq = [q[k] - qm[k] for k in range(3)]
        dc = [c[k] - cm[k] for k in range(3)]
        cc += dc[0] * dc[0] + dc[1] * dc[1] + dc[2] * dc[2]
        for a_ in range(3):
            for b in range(3):
                S[a_][b] += dc[a_] * dq[b]
    (sxx, sxy, sxz), (syx, syy, syz), (szx, szy, szz) = S
    N = [[sxx + syy + szz, syz - szy, szx - sxz, sxy - syx],
         [syz - szy, sxx - syy - szz, sxy + syx, szx + sxz],
         [szx - sxz, sxy + syx, -sxx + syy - szz, syz + szy],
         [sxy - syx, szx + sxz, syz + szy, -sxx - syy + szz]]
    w, x, y, z = _jacobi_max_eigvec(N)
    R = [[w * w + x * x - y * y - z * z, 2 * (x * y - w * z), 2 * (x * z + w * y)],
         [2 * (x * y + w * z), w * w - x * x + y * y - z * z, 2 * (y * z - w * x)],
         [2 * (x * z - w * y), 2 * (y * z + w * x), w * w - x * x - y * y + z * z]]
    # scale: sum (R dc) . dq / sum |dc|^2
    num = 0.0
    for q, c in zip(Q, C):
        dq = [q[k] - qm[k] for k in range(3)]
        dc = [c[k] - cm[k] for k in range(3)]
        rc = [sum(R[a_][b] * dc[b] for b in range(3)) for a_ in range(3)]
        num += rc[0] * dq[0] + rc[1] * dq[1] + rc[2] * dq[2]
    s = num / cc if cc > 0 else 0.0
    t = [qm[k] - s * sum(R[k][b] * cm[b] for b in range(3)) for k in range(3)]
    return s, R, t


def _rotvec_to_matrix(w):
    th = math.sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2])
    if th < 1e-12:
        return [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    k = [w[0] / th, w[1] / th, w[2] / th]
    c, s_, v = math.cos(th), math.sin(th), 1 - math.cos(th)
    return [[c + k[0] * k[0] * v, k[0] * k[1] * v - k[2] * s_, k[0] * k[2] * v + k[1] * s_],
            [k[1] * k[0] * v + k[2] * s_, c + k[1] * k[1] * v, k[1] * k[2] * v - k[0] * s_],
            [k[2] * k[0] * v - k[1] * s_, k[2] * k[1] * v + k[0] * s_, c + k[2] * k[2] * v]]


def _matmul(A, B):
    return [[sum(A[i][k] * B[k][j] for k in range(3)) for j in range(3)] for i in range(3)]


def _solve(A, b):
    """Gaussian elimination with partial pivoting (small dense systems)."""
    n = len(b)
    M = [A[i][:] + [b[i]] for i in range(n)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(M[r][c]))
        M[c], M[p] = M[p], M[c]
        if abs(M[c][c]) < 1e-15:
            return [0.0] * n
        for r in range(c + 1, n):
            f = M[r][c] / M[c][c]
            for k in range(c, n + 1):
                M[r][k] -= f * M[c][k]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        x[r] = (M[r][n] - sum(M[r][k] * x[k] for k in range(r + 1, n))) / M[r][r]
    return x


POSE_ITERATIONS = 8


def fit_orthographic(mesh, idx=RIGID):
    """Orthographic (weak-perspective) pose from the mesh's 2-D points only: minimises
    sum |q_i - (s P R c_i + t)|^2 with q = (x, -y), P = the first two rows, over R, s, t. Starts from Horn's fit
    (fit_canonical) and takes POSE_ITERATIONS Gauss-Newton steps with R <- exp([w]x) R. The network's z is used only
    by the start. -> (s, R, t2)."""
    s, R, t = fit_canonical(mesh, idx)
    tx, ty = t[0], t[1]
    C = [CANON_ALL[i] for i in idx]
    Q = [(mesh[i][0], -mesh[i][1]) for i in idx]
    for _ in range(POSE_ITERATIONS):
        JtJ = [[0.0] * 6 for _ in range(6)]
        Jtr = [0.0] * 6
        for c, q in zip(C, Q):
            u = [R[k][0] * c[0] + R[k][1] * c[1] + R[k][2] * c[2] for k in range(3)]
            r = (s * u[0] + tx - q[0], s * u[1] + ty - q[1])
            # d/dw of s P (u + w x u) = s P (-[u]x): rows (0, u_z, -u_y), (-u_z, 0, u_x)
            jx = (0.0, s * u[2], -s * u[1], u[0], 1.0, 0.0)
            jy = (-s * u[2], 0.0, s * u[0], u[1], 0.0, 1.0)
            for a_ in range(6):
                Jtr[a_] += jx[a_] * r[0] + jy[a_] * r[1]
                for b in range(6):
                    JtJ[a_][b] += jx[a_] * jx[b] + jy[a_] * jy[b]
        d = _solve(JtJ, [-v for v in Jtr])
        R = _matmul(_rotvec_to_matrix(d[:3]), R)
        s += d[3]
        tx += d[4]
        ty += d[5]
    return s, R, (tx, ty)


def head_pose(mesh):
    """(yaw, pitch, roll) in degrees from fit_orthographic. R (camera frame: x right, y up, z toward the camera) is
    decomposed as R = Rz(rho) Rx(pi) Ry(upsilon), so that turning the image in its plane changes only rho:
    yaw = upsilon = atan2(-R[2][0], R[2][2]), pitch = -pi = -asin(R[2][1]), roll = -rho = atan2(R[0][1], R[1][1]).
    Close to the forward-vector form (yaw = atan2(f.x, f.z), pitch = atan2(f.y, hypot(f.x, f.z)), f = R (0,0,1)) for
    small angles, but that form mixes roll into yaw and pitch (up to 1.9 deg on the vectors turned by 60 deg).
    Yaw and roll come from fit_orthographic; pitch from the 3-D fit (fit_canonical), which keeps the network's depth:
    on AFLW2000-3D (../shared/data/pose) its mean error is 3.8 deg against 7.0 from the 2-D fit (issue 32)."""
    _, R, _ = fit_orthographic(mesh)
    _, R3, _ = fit_canonical(mesh)
    yaw = math.degrees(math.atan2(-R[2][0], R[2][2]))
    pitch = -math.degrees(math.asin(max(-1.0, min(1.0, R3[2][1])))) - PITCH_ZERO
    roll = math.degrees(math.atan2(R[0][1], R[1][1]))
    return yaw, pitch, roll


def to_canonical(mesh, fit=None):
    """All mesh points in the canonical frame (cm, y up): C' = R^T (Q - t) / s."""
    s, R, t = fit or fit_canonical(mesh)
    out = []
    for p in mesh:
        d = (p[0] - t[0], -p[1] - t[1], -p[2] - t[2])
        out.append(tuple(sum(R[a_][k] * d[a_] for a_ in range(3)) / s for k in range(3)))
    return out


# ------------------------------------------------------------------------------------------------------------
# Smile: geometry of the pose-normalised mesh (canonical frame of fit_canonical, cm; y up).
#   lift   = (P61.y + P291.y)/2 - (P13.y + P14.y)/2        corners above the inner-lip midpoint (> 0 = up)
#   cheek  = (|P61 - P187| + |P291 - P411|)/2              corner to the cheek point beside the nose wing (3-D)
#   open   = P13.y - P14.y                                 inner-lip gap (> 0 = mouth open)
#   uplip  = P0.y - P13.y                                  upper-lip height, outer to inner midpoint: a smile
#                                                          stretches it thin, talking does not
#   raw    = SMILE_W_LIFT*lift + SMILE_W_CHEEK*cheek + SMILE_W_OPEN*open + SMILE_W_UPLIP*uplip
# Weights: Gaussian naive-Bayes weights, (mean_smile - mean_not) / pooled variance (divided by N) per feature, fitted
# on the TUNE split (even positions) of our own labelled frames (188 frames, 61 smiles; mesh1). Threshold: the
# operating point on GENKI-4K with the highest accuracy (only the threshold is chosen there; no weight is fitted on
# GENKI or the eyes sets). Replaces width/lift/cheek (threshold -25.68), which read talking frames as smiles
# (frames test P 0.83); see RESULTS-mesh.md.
SMILE_W_LIFT = 9.499
SMILE_W_CHEEK = -18.985
SMILE_W_OPEN = 0.711
SMILE_W_UPLIP = -78.002
SMILE_THRESHOLD = -112.21
SMILE_SCALE = 1.0
CHEEK_L, CHEEK_R = 187, 411


def smile_features(mesh, fit=None):
    """(lift, cheek, open, uplip) in canonical cm."""
    P = to_canonical(mesh, fit)

    def dist(a, b):
        return math.sqrt(sum((P[a][k] - P[b][k]) ** 2 for k in range(3)))
    lift = (P[MOUTH_L][1] + P[MOUTH_R][1]) / 2 - (P[LIP_UPPER_IN][1] + P[LIP_LOWER_IN][1]) / 2
    cheek = (dist(MOUTH_L, CHEEK_L) + dist(MOUTH_R, CHEEK_R)) / 2
    opening = P[LIP_UPPER_IN][1] - P[LIP_LOWER_IN][1]
    uplip = P[LIP_UPPER_OUT][1] - P[LIP_UPPER_IN][1]
    return lift, cheek, opening, uplip


def smile_raw(mesh, fit=None):
    lift, cheek, opening, uplip = smile_features(mesh, fit)
    return SMILE_W_LIFT * lift + SMILE_W_CHEEK * cheek + SMILE_W_OPEN * opening + SMILE_W_UPLIP * uplip


def smile_score(mesh, fit=None):
    """0..1, 0.5 at the operating point (smile when >= 0.5)."""
    z = (smile_raw(mesh, fit) - SMILE_THRESHOLD) / SMILE_SCALE
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


# ------------------------------------------------------------------------------------------------------------
# Quality for recognition / pulse: product of four factors, each clamped to 0..1.
#   size      = (face_height_px - 40) / (80 - 40)                    < 40 px: 0, >= 80 px: 1
#   sharpness = ln(sharp / 15) / ln(60 / 15)                         sharp = Laplacian variance of the mesh crop;
#               <= 15: 0 (GENKI's blurriest 5% are ~18), >= 60: 1 (GENKI median 93)
#   pose      = (1 - (|yaw| - 20) / 25) * (1 - (|pitch| - 15) / 20)   each factor clamped: 1 within 20 deg yaw and
#               15 deg pitch, 0 beyond 45 deg yaw or 35 deg pitch
#   presence  = (presence - 0.5) / 0.4                               mesh presence 0.5 -> 0, >= 0.9 -> 1
QUALITY_SIZE = (40.0, 80.0)
QUALITY_SHARP = (15.0, 60.0)
QUALITY_YAW = (20.0, 45.0)
QUALITY_PITCH = (15.0, 35.0)
QUALITY_PRESENCE = (0.5, 0.9)


def _ramp(v, lo, hi):
    return min(1.0, max(0.0, (v - lo) / (hi - lo)))


def quality(face_height_px, sharpness, yaw, pitch, presence):
    q_size = _ramp(face_height_px, *QUALITY_SIZE)
    q_sharp = _ramp(math.log(max(sharpness, 1e-9)), math.log(QUALITY_SHARP[0]), math.log(QUALITY_SHARP[1]))
    q_pose = (1.0 - _ramp(abs(yaw), *QUALITY_YAW)) * (1.0 - _ramp(abs(pitch), *QUALITY_PITCH))
    q_pres = _ramp(presence, *QUALITY_PRESENCE)
    return q_size * q_sharp * q_pose * q_pres
