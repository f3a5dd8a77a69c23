"""Facewire expression/eye/yaw reference implementation (Python, OpenCV 4.6).

Shared by measure.py and ../research/ (cache_mesh.py, measure_mesh.py). Run with Debian's /usr/bin/python3
(it has cv2 4.6).
"""
import math
import os

import cv2
import numpy as np

DATA = "/work/shared/data"
VIDEO_DIR = os.path.join(DATA, "video")
MODEL_DIR = os.path.join(DATA, "models")
CASCADE_DIR = "/usr/share/opencv4/haarcascades"

# ---------------------------------------------------------------------------------------------------------
# Detectors (same settings as Sources/COpenCV/detect.cpp). Landmarks come back in image coordinates, detector
# order: subject-right eye, subject-left eye, nose, subject-right mouth corner, subject-left mouth corner.


class YuNet:
    def __init__(self, score=0.6, nms=0.3):
        self.model = cv2.FaceDetectorYN.create(os.path.join(MODEL_DIR, "face_detection_yunet_2022mar.onnx"), "",
                                               (320, 320), score, nms, 5000)
        self.size = None

    def detect(self, bgr):
        h, w = bgr.shape[:2]
        if w < 64 or h < 64:
            bgr = cv2.copyMakeBorder(bgr, 0, max(0, 64 - h), 0, max(0, 64 - w), cv2.BORDER_CONSTANT, 0)
        size = (bgr.shape[1], bgr.shape[0])
        if size != self.size:
            self.model.setInputSize(size)
            self.size = size
        _, rows = self.model.detect(bgr)
        out = []
        if rows is None:
            return out
        for r in rows:
            out.append({"box": [float(v) for v in r[:4]], "score": float(r[14]),
                        "landmarks": [float(v) for v in r[4:14]]})
        out.sort(key=lambda f: -f["score"])
        return out


class CenterFace:
    def __init__(self, score=0.5, nms=0.3):
        self.path = os.path.join(MODEL_DIR, "centerface.onnx")
        self.nets = {}
        self.score = score
        self.nms_thr = nms

    def detect(self, bgr):
        h, w = bgr.shape[:2]
        pw = (max(w, 32) + 31) // 32 * 32
        ph = (max(h, 32) + 31) // 32 * 32
        inp = cv2.copyMakeBorder(bgr, 0, ph - h, 0, pw - w, cv2.BORDER_CONSTANT, 0) if (pw, ph) != (w, h) else bgr
        net = self.nets.get((pw, ph))
        if net is None:
            net = cv2.dnn.readNetFromONNX(self.path)
            self.nets[(pw, ph)] = net
        net.setInput(cv2.dnn.blobFromImage(inp, 1.0, None, (0, 0, 0), True, False))
        heat, scale, off, lm = net.forward(["537", "538", "539", "540"])
        heat, scale, off, lm = heat[0, 0], scale[0], off[0], lm[0]
        ys, xs = np.where(heat > self.score)
        order = np.argsort(-heat[ys, xs], kind="stable")[:3000]
        faces = []
        for k in order:
            cy, cx = ys[k], xs[k]
            s0 = math.exp(scale[0, cy, cx]) * 4
            s1 = math.exp(scale[1, cy, cx]) * 4
            o0, o1 = off[0, cy, cx], off[1, cy, cx]
            x0 = (cx + o1 + 0.5) * 4 - s1 / 2
            y0 = (cy + o0 + 0.5) * 4 - s0 / 2
            x1, y1 = min(max(x0, 0), w), min(max(y0, 0), h)
            x2, y2 = min(x1 + s1, w), min(y1 + s0, h)
            if x2 <= x1 or y2 <= y1:
                continue
            lms = []
            for j in range(5):
                lms += [float(lm[2 * j + 1, cy, cx] * s1 + x0), float(lm[2 * j, cy, cx] * s0 + y0)]
            faces.append({"box": [float(x1), float(y1), float(x2 - x1), float(y2 - y1)],
                          "score": float(heat[cy, cx]), "landmarks": lms})
        kept = []
        for f in faces:
            if all(_iou(f["box"], g["box"]) < self.nms_thr for g in kept):
                kept.append(f)
        return kept


def detect_scaled(detector, bgr, input_width=320):
    """Runs `detector` on `bgr` scaled to `input_width` (as fwcv_detect does); coordinates in `bgr`'s pixels."""
    h, w = bgr.shape[:2]
    if input_width and input_width != w:
        ih = max(1, round(h * input_width / w))
        interp = cv2.INTER_AREA if input_width < w else cv2.INTER_LINEAR
        small = cv2.resize(bgr, (input_width, ih), interpolation=interp)
        sx, sy = input_width / w, ih / h
    else:
        small, sx, sy = bgr, 1.0, 1.0
    faces = detector.detect(small)
    for f in faces:
        b = f["box"]
        f["box"] = [b[0] / sx, b[1] / sy, b[2] / sx, b[3] / sy]
        f["landmarks"] = [v / (sx if k % 2 == 0 else sy) for k, v in enumerate(f["landmarks"])]
    return faces


def labelled_frames(labels, video):
    """Yields (clip, frame index, BGR image) for every frame `labels` (dicts with "clip" and "frame") name, clip by
    clip in name order, each clip read from its start with cv2.VideoCapture(...).read() and no seeking (the numbering
    of the label files), stopping after its last labelled frame or at its end."""
    wanted = {}
    for item in labels:
        wanted.setdefault(item["clip"], set()).add(item["frame"])
    for clip, frames in sorted(wanted.items()):
        capture, index = cv2.VideoCapture(os.path.join(video, clip)), -1
        while index < max(frames):
            ok, image = capture.read()
            index += 1
            if not ok:
                break
            if index in frames:
                yield clip, index, image


def largest_face_mesh(detector, models, bgr, input_width=320):
    """The largest face `detector` finds at `input_width`, then meshattr's mesh and the iris model's two eye contours:
    (mesh (468, 3), contours (2, 71, 3)), float64 image px, each rounded through float32 as the worker keeps them; or
    None without a face. `models` is a meshattr.Models()."""
    import meshattr as ma
    faces = detect_scaled(detector, bgr, input_width)
    if not faces:
        return None
    face = max(faces, key=lambda g: g["box"][2] * g["box"][3])
    mesh, _, _ = models.run_mesh(bgr, ma.mesh_roi(face["box"], face["landmarks"]))
    mesh = np.asarray(np.float32(mesh), np.float64)
    contours = [np.float32(models.run_iris(bgr, roi, mirrored)[0]) for roi, mirrored in ma.eye_rois(mesh)]
    return mesh, np.array(contours, np.float64)


def _iou(a, b):
    ax2, ay2, bx2, by2 = a[0] + a[2], a[1] + a[3], b[0] + b[2], b[1] + b[3]
    iw = max(0.0, min(ax2, bx2) - max(a[0], b[0]))
    ih = max(0.0, min(ay2, by2) - max(a[1], b[1]))
    inter = iw * ih
    uni = a[2] * a[3] + b[2] * b[3] - inter
    return inter / uni if uni > 0 else 0.0


def read_frames(clip, max_width=640):
    """Yields (index, bgr) reading sequentially; frames wider than max_width are scaled down (INTER_AREA)."""
    cap = cv2.VideoCapture(os.path.join(VIDEO_DIR, clip))
    i = 0
    while True:
        ok, frame = cap.read()
        if not ok:
            break
        if max_width and frame.shape[1] > max_width:
            s = max_width / frame.shape[1]
            frame = cv2.resize(frame, (max_width, round(frame.shape[0] * s)), interpolation=cv2.INTER_AREA)
        yield i, frame
        i += 1
    cap.release()


# ---------------------------------------------------------------------------------------------------------
# Alignment: one similarity warp puts the eyes level at fixed positions in a CROP x CROP grey crop.

def _rint(v):
    return int(math.floor(v + 0.5))


CROP = 128
EYE_Y = 48.0
EYE_DIST = 48.0  # inter-ocular distance in the crop
EYE_LX = (CROP - EYE_DIST) / 2  # 40: image-left eye
EYE_RX = (CROP + EYE_DIST) / 2  # 88: image-right eye


def ordered_points(landmarks):
    """(left_eye, right_eye, nose, left_mouth, right_mouth) with left = image left (smaller x)."""
    p = np.asarray(landmarks, np.float64).reshape(5, 2)
    le, re_ = (p[0], p[1]) if p[0][0] <= p[1][0] else (p[1], p[0])
    lm, rm = (p[3], p[4]) if p[3][0] <= p[4][0] else (p[4], p[3])
    return le, re_, p[2], lm, rm


def align_matrix(landmarks):
    """2x3 matrix mapping image coordinates to the aligned crop."""
    le, re_, _, _, _ = ordered_points(landmarks)
    dx, dy = re_[0] - le[0], re_[1] - le[1]
    d = math.hypot(dx, dy)
    if d < 1e-3:
        return None
    s = EYE_DIST / d
    c, si = s * dx / d, s * dy / d  # rotation by -angle, scaled
    # [x'; y'] = [c si; -si c] [x; y] + t, with the image-left eye going to (EYE_LX, EYE_Y)
    m = np.array([[c, si, 0.0], [-si, c, 0.0]])
    m[0, 2] = EYE_LX - (c * le[0] + si * le[1])
    m[1, 2] = EYE_Y - (-si * le[0] + c * le[1])
    return m


def aligned_crop(grey, landmarks):
    """CROP x CROP aligned grey crop and the 2x3 image->crop matrix.

    Only the image region the crop covers is touched (its bounding box + 2 px, clipped to the image). When the
    face is larger than the crop (the usual case) that region is first shrunk with INTER_AREA (anti-aliased) to the
    crop's scale, then rotated with one warpAffine; smaller faces are warped directly. Outside the image the border
    pixels are repeated.
    """
    m = align_matrix(landmarks)
    if m is None:
        return None, None
    h, w = grey.shape[:2]
    inv = cv2.invertAffineTransform(m)
    xs = [inv[0, 0] * X + inv[0, 1] * Y + inv[0, 2] for X, Y in ((0, 0), (CROP, 0), (0, CROP), (CROP, CROP))]
    ys = [inv[1, 0] * X + inv[1, 1] * Y + inv[1, 2] for X, Y in ((0, 0), (CROP, 0), (0, CROP), (CROP, CROP))]
    x0 = min(max(int(math.floor(min(xs))) - 2, 0), w - 1)
    y0 = min(max(int(math.floor(min(ys))) - 2, 0), h - 1)
    x1 = max(min(int(math.ceil(max(xs))) + 2, w), x0 + 1)
    y1 = max(min(int(math.ceil(max(ys))) + 2, h), y0 + 1)
    roi = grey[y0:y1, x0:x1]
    a = m[:, :2]
    s = math.hypot(m[0, 0], m[0, 1])
    rw, rh = max(1, _rint((x1 - x0) * s)), max(1, _rint((y1 - y0) * s))
    if s >= 1.0 or rw < 2 or rh < 2:
        # roi pixel q = p - o
        t = np.array([m[0, 2] + (a[0, 0] * x0 + a[0, 1] * y0), m[1, 2] + (a[1, 0] * x0 + a[1, 1] * y0)])
        m2 = np.array([[a[0, 0], a[0, 1], t[0]], [a[1, 0], a[1, 1], t[1]]])
        src = roi
    else:
        src = cv2.resize(roi, (rw, rh), interpolation=cv2.INTER_AREA)
        sx, sy = rw / (x1 - x0), rh / (y1 - y0)
        # small pixel q = S (p - o) + (S/2 - 1/2)  =>  p = S^-1 (q - c) + o ; crop = A p + t
        a2 = np.array([[a[0, 0] * (1 / sx), a[0, 1] * (1 / sy)], [a[1, 0] * (1 / sx), a[1, 1] * (1 / sy)]])
        c0, c1 = sx / 2 - 0.5, sy / 2 - 0.5
        t = np.array([m[0, 2] + (a[0, 0] * x0 + a[0, 1] * y0) - (a2[0, 0] * c0 + a2[0, 1] * c1),
                      m[1, 2] + (a[1, 0] * x0 + a[1, 1] * y0) - (a2[1, 0] * c0 + a2[1, 1] * c1)])
        m2 = np.array([[a2[0, 0], a2[0, 1], t[0]], [a2[1, 0], a2[1, 1], t[1]]])
    crop = cv2.warpAffine(src, m2, (CROP, CROP), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return crop, m


def transform_points(m, landmarks):
    p = np.asarray(landmarks, np.float64).reshape(-1, 2)
    return p @ m[:, :2].T + m[:, 2]


# ---------------------------------------------------------------------------------------------------------
# Classifiers on the aligned crop. Every constant below is part of the operating point: keep
# Sources/COpenCV/attributes.cpp in step.

EYE_CASCADE = "haarcascade_eye.xml"
SMILE_CASCADE = "haarcascade_smile.xml"

# Eyes: raw haarcascade_eye windows (minNeighbors 0) in a 48x40 patch around each eye. An open eye gives tens of
# windows, a closed one almost none. Closed when the count is <= EYE_CLOSED_MAX_HITS.
EYE_PATCH_HALF_W, EYE_PATCH_HALF_H = 24, 20
EYE_MIN, EYE_MAX = 18, 44
EYE_SCALE = 1.1
EYE_CLOSED_MAX_HITS = 7

# Smile: raw = cascade/100 + FOLD_WEIGHT * fold + CURVE_WEIGHT * curve; smile when raw >= SMILE_THRESHOLD.
SMILE_ROI = (72, 124, 16, 112)  # rows y0:y1, cols x0:x1 of the crop (0.5 to 1.6 IOD below the eyes, +-1 IOD)
SMILE_MIN = (43, 21)
SMILE_SCALE = 1.1
FOLD_WEIGHT = 0.5
CURVE_WEIGHT = 2.0
SMILE_THRESHOLD = 0.956
SKIN_RECT = (60, 80, 30, 98)  # rows, cols: cheeks/nose band used to normalise gradients
LEFT_CHEEK = (66, 104, 16, 46)
RIGHT_CHEEK = (66, 104, 82, 112)
CURVE_COLUMNS = 13
CURVE_HALF_WINDOW = 8

# Yaw: nose offset from the eye midpoint over half the inter-ocular distance (roll removed), times
# YAW_K = E/D of a generic head (eye half-distance 3.4 over nose-tip depth in front of the eyes 3.7, MediaPipe's
# canonical face model), through atan. Positive yaw: the face turns toward the image's right.
YAW_K = 0.92

# Below these eye distances (image pixels) a classifier does not run (RESULTS.md, minimum face size): P and R stay
# >= 0.8 down to about 20 px for the eyes and 32 px for the smile.
MIN_EYE_DISTANCE_EYES = 20.0
MIN_EYE_DISTANCE_SMILE = 32.0


class Classifiers:
    def __init__(self, cascade_dir=CASCADE_DIR):
        self.eye = cv2.CascadeClassifier(os.path.join(cascade_dir, EYE_CASCADE))
        self.smile = cv2.CascadeClassifier(os.path.join(cascade_dir, SMILE_CASCADE))
        if self.eye.empty() or self.smile.empty():
            raise RuntimeError("cascades not found in " + cascade_dir)

    def eye_hits(self, crop, cx, cy):
        roi = crop[cy - EYE_PATCH_HALF_H:cy + EYE_PATCH_HALF_H, cx - EYE_PATCH_HALF_W:cx + EYE_PATCH_HALF_W]
        return len(self.eye.detectMultiScale(roi, EYE_SCALE, 0, 0, (EYE_MIN, EYE_MIN), (EYE_MAX, EYE_MAX)))

    def smile_features(self, crop, mouth_left, mouth_right):
        y0, y1, x0, x1 = SMILE_ROI
        hits = len(self.smile.detectMultiScale(crop[y0:y1, x0:x1], SMILE_SCALE, 0, 0, SMILE_MIN))
        f = crop.astype(np.float32)
        skin = float(cv2.mean(f[SKIN_RECT[0]:SKIN_RECT[1], SKIN_RECT[2]:SKIN_RECT[3]])[0]) + 1.0
        b = cv2.GaussianBlur(f, (0, 0), 1.0)
        gx = cv2.Sobel(b, cv2.CV_32F, 1, 0)
        gy = cv2.Sobel(b, cv2.CV_32F, 0, 1)
        ly0, ly1, lx0, lx1 = LEFT_CHEEK
        ry0, ry1, rx0, rx1 = RIGHT_CHEEK
        # the nasolabial folds deepen in a smile: gradient energy along the fold's normal in each cheek
        gx, gy = gx.astype(np.float64), gy.astype(np.float64)
        fold = (float(np.abs(gx[ly0:ly1, lx0:lx1] + gy[ly0:ly1, lx0:lx1]).mean())
                + float(np.abs(gx[ry0:ry1, rx0:rx1] - gy[ry0:ry1, rx0:rx1]).mean())) / skin
        curve = lip_curvature(cv2.GaussianBlur(f, (0, 0), 1.5), mouth_left, mouth_right)
        return hits, fold, curve

    def classify(self, grey, landmarks, smile=True, eyes=True, enforce_minimum=True):
        """Returns a dict with the scores and decisions (left = image left) and yaw; None when no crop."""
        # the C API takes float landmarks: round through float32 so both implementations see the same numbers
        landmarks = np.asarray(landmarks, np.float32).astype(np.float64).reshape(-1)
        crop, m = aligned_crop(grey, landmarks)
        if crop is None:
            return None
        out = {"yaw": yaw_degrees(landmarks)}
        le, re_, _, _, _ = ordered_points(landmarks)
        eye_distance = math.hypot(re_[0] - le[0], re_[1] - le[1])
        if enforce_minimum:
            eyes = eyes and eye_distance >= MIN_EYE_DISTANCE_EYES
            smile = smile and eye_distance >= MIN_EYE_DISTANCE_SMILE
        if not (eyes or smile):
            return out
        if eyes:
            for side, cx in (("left", _rint(EYE_LX)), ("right", _rint(EYE_RX))):
                n = self.eye_hits(crop, cx, _rint(EYE_Y))
                out[side + "_eye_hits"] = n
                out[side + "_eye_closed_score"] = (EYE_CLOSED_MAX_HITS + 0.5) / (EYE_CLOSED_MAX_HITS + 0.5 + n)
                out[side + "_eye_closed"] = n <= EYE_CLOSED_MAX_HITS
        if smile:
            pts = transform_points(m, landmarks)
            _, _, _, ml, mr = ordered_points(pts.reshape(-1))
            hits, fold, curve = self.smile_features(crop, ml, mr)
            raw = hits / 100.0 + FOLD_WEIGHT * fold + CURVE_WEIGHT * curve
            out.update(smile_hits=hits, smile_fold=fold, smile_curve=curve, smile_raw=raw,
                       smile_score=1.0 / (1.0 + math.exp(-(raw - SMILE_THRESHOLD) / 0.1)),
                       has_smile=raw >= SMILE_THRESHOLD)
        return out


def lip_curvature(blurred, mouth_left, mouth_right):
    """(centre - ends) height of the darkest row across the mouth, in inter-ocular units; > 0 for a U shape."""
    h, w = blurred.shape
    cy = (mouth_left[1] + mouth_right[1]) / 2
    cx = (mouth_left[0] + mouth_right[0]) / 2
    half = (mouth_right[0] - mouth_left[0]) / 2
    y0 = min(max(_rint(cy - CURVE_HALF_WINDOW), 0), h - 1)
    y1 = min(max(_rint(cy + CURVE_HALF_WINDOW), y0 + 1), h)
    ys = []
    for k in range(CURVE_COLUMNS):
        x = cx - half + 2 * half * k / (CURVE_COLUMNS - 1)
        xi = min(max(_rint(x), 1), w - 2)
        col = blurred[y0:y1, xi - 1:xi + 2].astype(np.float64).sum(axis=1)
        ys.append(y0 + int(np.argmin(col)))
    ys = np.array(ys, np.float64)
    n = CURVE_COLUMNS
    ends = (np.median(ys[:3]) + np.median(ys[n - 3:])) / 2
    mid = np.median(ys[n // 2 - 2:n // 2 + 3])
    return float((mid - ends) / EYE_DIST)


def yaw_degrees(landmarks, k=YAW_K):
    """Head yaw from the 5 landmarks: positive when the face turns toward the image's right."""
    m = align_matrix(landmarks)
    if m is None:
        return None
    le, re_, nose, _, _ = ordered_points(transform_points(m, landmarks).reshape(-1))
    half = (re_[0] - le[0]) / 2
    return math.degrees(math.atan(k * (nose[0] - (le[0] + re_[0]) / 2) / half))
