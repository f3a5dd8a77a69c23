#!/usr/bin/env python3
"""OpenCV-Python baseline for `facewire eval`: the same model, input width, thresholds and metrics, in Python.

Usage (from the repository root; defaults read ../shared/data):
  evaluation/eval-baseline.py [--backend yunet|centerface] [--input-width 320] [--json FILE|-] [--dump FILE]
      Runs cv2.FaceDetectorYN (YuNet) or cv2.dnn (CenterFace) over the annotated set and prints the same table and
      JSON summary as `facewire eval`.
  evaluation/eval-baseline.py --score DUMP.jsonl [--backend B | --score-threshold T]
      Scores a `facewire eval --dump` file with this script's port of the metrics (a cross-check of both ports:
      the figures must equal `facewire eval`'s).
  evaluation/eval-baseline.py --compare [--facewire .build/release/facewire] [--backends yunet,centerface] [--rounds 2]
      Runs `facewire eval` and the baseline alternately in one run (the order flips every round) and prints a
      side-by-side table with the AP difference and the ms/image ratio.

The first run creates a virtual environment at ${XDG_CACHE_HOME:-~/.cache}/facewire/baseline-venv with the pinned
PyPI packages below and re-runs itself there (--no-venv uses the current interpreter's cv2 instead, for example
Debian's python3-opencv).

What is measured, on both sides: every image is decoded once before timing (cv2.imread with EXIF orientation
ignored, as the annotations refer to the stored pixels); each image is detected once at the evaluation threshold (the
detections scored), then a second detector at the operating threshold runs twice on it and the second call is timed:
resizing to the input width (INTER_AREA when shrinking, INTER_LINEAR when enlarging, height rounded like
std::lround), the model with its own post-processing, and mapping the boxes back to the image. OpenCV runs on one
thread (cv2.setNumThreads(1)). The metric code is a line-by-line port of Sources/FacewireEvaluation.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

OPENCV_PIN = "opencv-python-headless==4.6.0.66"  # matches Debian's OpenCV 4.6; loads YuNet 2022mar
NUMPY_PIN = "numpy==1.26.4"  # opencv-python 4.6 wheels are built against numpy 1.x
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(os.path.dirname(REPO), "shared", "data")
CACHE = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
VENV = os.path.join(CACHE, "facewire", "baseline-venv")

# The Swift defaults (YuNetDetector.swift, CenterFaceDetector.swift, detect.cpp, EvalCommand.swift).
BACKENDS = {
    "yunet": {"model": "face_detection_yunet_2022mar.onnx", "width": 320, "eval_threshold": 0.3,
              "operating_threshold": 0.6, "nms": 0.3, "top_k": 5000},
    "centerface": {"model": "centerface.onnx", "width": 320, "eval_threshold": 0.1,
                   "operating_threshold": 0.5, "nms": 0.3, "top_k": None},
}
MAX_FACES = 256  # AnalysisOptions.maxFacesLimit: the most faces `facewire eval` keeps per image
TIMING_WHAT = ("second (warm) detect call per already decoded image, at the operating threshold: resize to the "
               "input width, detection and post-processing, mapping boxes back; JPEG/PNG decode excluded")


# MARK: - Virtual environment


def ensure_venv(argv):
    """Re-runs this script inside the pinned virtual environment, creating it first if needed."""
    if os.path.realpath(sys.prefix) == os.path.realpath(VENV):
        return
    python = os.path.join(VENV, "bin", "python")
    marker = os.path.join(VENV, "facewire-pins.txt")
    wanted = f"{OPENCV_PIN}\n{NUMPY_PIN}\n"
    current = open(marker).read() if os.path.exists(marker) else None
    if current != wanted:
        log(f"creating {VENV} with {OPENCV_PIN} {NUMPY_PIN} (once)")
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
        subprocess.run([python, "-m", "pip", "install", "--quiet", "--no-input", OPENCV_PIN, NUMPY_PIN], check=True)
        with open(marker, "w") as handle:
            handle.write(wanted)
    os.execv(python, [python, os.path.abspath(__file__)] + argv)


def log(line):
    print(line, file=sys.stderr, flush=True)


# MARK: - Annotations and images


class Truth:
    __slots__ = ("box", "ignore", "left_eye", "right_eye")

    def __init__(self, box, ignore, eyes):
        self.box = [f32(v) for v in box]
        self.ignore = ignore
        self.left_eye, self.right_eye = order_eyes(*eyes) if eyes else (None, None)


class Face:
    __slots__ = ("box", "score", "left_eye", "right_eye", "nose", "mouth", "points")

    def __init__(self, box, score, left_eye=None, right_eye=None, nose=None, mouth=None, points=None):
        self.box = [f32(v) for v in box]
        self.score = f32(score)
        self.left_eye, self.right_eye = order_eyes(left_eye, right_eye) if left_eye and right_eye else (None, None)
        self.nose, self.mouth = nose, mouth
        self.points = points  # the detector's five points in its own order (None when rescoring a dump)

    def set_points(self, points):
        """New landmarks in the detector's order, as NativeDetector.convert reads them (32-bit floats)."""
        points = [(np.float32(x), np.float32(y)) for x, y in points]
        self.points = points
        self.left_eye, self.right_eye = order_eyes(points[0], points[1])
        self.nose = points[2]
        self.mouth = ((points[3][0] + points[4][0]) / np.float32(2), (points[3][1] + points[4][1]) / np.float32(2))


def f32(value):
    """The value rounded to a 32-bit float (Swift's Float), as a Python float."""
    return float(np.float32(value))


def f32_out(value):
    """A Float for JSON: the shortest decimal that reads back as the same 32-bit float (what Swift writes)."""
    return float(str(np.float32(value)))


def order_eyes(a, b):
    """Eyes in x order (image-left first), as GroundTruthFace and DetectedFace hold them."""
    a = [f32(v) for v in a]
    b = [f32(v) for v in b]
    return (a, b) if a[0] <= b[0] else (b, a)


def load_annotations(path):
    images = []
    with open(path) as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                faces = []
                for face in record["faces"]:
                    if len(face["box"]) != 4:
                        raise ValueError(f"box with {len(face['box'])} values")
                    marks = face.get("landmarks") or {}
                    eyes = None
                    if len(marks.get("left_eye") or []) == 2 and len(marks.get("right_eye") or []) == 2:
                        eyes = (marks["left_eye"], marks["right_eye"])
                    faces.append(Truth(face["box"], bool(face.get("ignore", False)), eyes))
                images.append({"image": record["image"], "source": record.get("source", ""), "faces": faces})
            except (KeyError, ValueError, TypeError) as error:
                sys.exit(f"error: {path} line {number}: {error}")
    return images


def decode_images(annotations, base):
    images = []
    for entry in annotations:
        path = os.path.join(base, entry["image"])
        image = cv2.imread(path, cv2.IMREAD_COLOR | cv2.IMREAD_IGNORE_ORIENTATION)
        if image is None:
            sys.exit(f"error: cannot load {path}")
        images.append(image)
    return images


# MARK: - Detectors (the same pre- and post-processing as detect.cpp's fwcv_detect)


def resize_for(image, width):
    """Scales to `width` (aspect kept) like fwcv_detect; returns the image and the x/y scale factors (32-bit, as
    detect.cpp computes them)."""
    height, original = image.shape[:2]
    if not width or width == original:
        return image, np.float32(1), np.float32(1)
    new_height = max(1, int(math.floor(height * width / original + 0.5)))  # std::lround for positive values
    interpolation = cv2.INTER_AREA if width < original else cv2.INTER_LINEAR
    resized = cv2.resize(image, (width, new_height), interpolation=interpolation)
    return resized, np.float32(width) / np.float32(original), np.float32(new_height) / np.float32(height)


def pad_right_bottom(image, min_width, min_height, multiple):
    height, width = image.shape[:2]
    w, h = max(width, min_width), max(height, min_height)
    if multiple > 1:
        w = (w + multiple - 1) // multiple * multiple
        h = (h + multiple - 1) // multiple * multiple
    if (w, h) == (width, height):
        return image
    return cv2.copyMakeBorder(image, 0, h - height, 0, w - width, cv2.BORDER_CONSTANT, value=(0, 0, 0))


def finish(rows, sx, sy, width, height, threshold):
    """rows: float32 arrays (x, y, w, h, 10 landmark values, score) in resized coordinates. Like fwcv_detect and
    NativeDetector: sorts best first (ties by y, then x), maps back, clips to the image, writes at most MAX_FACES,
    then keeps the scores at or above `threshold`. All in 32-bit floats."""
    rows = sorted(rows, key=lambda r: (-float(r[14]), float(r[1]), float(r[0])))
    right, bottom, zero = np.float32(width), np.float32(height), np.float32(0)
    written = []
    for r in rows:
        if len(written) >= MAX_FACES:
            break
        x, y, w, h = r[0] / sx, r[1] / sy, r[2] / sx, r[3] / sy
        x1, y1 = max(x, zero), max(y, zero)  # cv::Rect2f intersection with the image
        x2, y2 = min(x + w, right), min(y + h, bottom)
        if not (x2 - x1 > 0 and y2 - y1 > 0):
            continue
        points = [(r[4 + 2 * k] / sx, r[5 + 2 * k] / sy) for k in range(5)]
        mouth = ((points[3][0] + points[4][0]) / np.float32(2), (points[3][1] + points[4][1]) / np.float32(2))
        written.append(Face([x1, y1, x2 - x1, y2 - y1], r[14], points[0], points[1], points[2], mouth, points))
    return [face for face in written if face.score >= threshold]


# Landmark refinement of tilted faces (NativeDetector.refineAngle / refineMinHeight, fwcv_refine_tilted).
REFINE_ANGLE = 5.0
REFINE_MIN_HEIGHT = 40.0
REFINE_CROP = 128
REFINE_RESIDUAL = 3.0


def refine_tilted(raw, image, faces):
    """A port of detect.cpp's fwcv_refine_tilted, for --refine: each face at least REFINE_MIN_HEIGHT px tall whose
    eye line is at least REFINE_ANGLE degrees off level is turned upright into a REFINE_CROP-square patch, detected
    again there with `raw` (rows in patch coordinates) and its five landmarks mapped back; a second pass when the
    first leaves REFINE_RESIDUAL degrees or more. Boxes and scores are kept."""
    crop = REFINE_CROP
    for face in faces:
        if face.points is None or face.box[3] < REFINE_MIN_HEIGHT:
            continue
        for _ in range(2):
            (ax, ay), (bx, by) = order_eyes(face.points[0], face.points[1])
            angle = math.degrees(math.atan2(by - ay, bx - ax))
            if abs(angle) < REFINE_ANGLE:
                break
            centre = ((ax + bx + face.points[3][0] + face.points[4][0]) / 4,
                      (ay + by + face.points[3][1] + face.points[4][1]) / 4)
            side = 1.6 * max(face.box[2], face.box[3])
            forward = cv2.getRotationMatrix2D(centre, angle, crop / side)
            forward[0, 2] += crop / 2 - centre[0]
            forward[1, 2] += crop / 2 - centre[1]
            patch = cv2.warpAffine(image, forward, (crop, crop), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
            best, best_distance = None, crop * 0.25  # near the patch centre: the same face
            for row in raw(patch):
                distance = math.hypot(row[0] + row[2] / 2 - crop / 2, row[1] + row[3] / 2 - crop / 2)
                if distance < best_distance:
                    best, best_distance = row, distance
            if best is None:
                break
            (px, py), (qx, qy) = order_eyes(best[4:6], best[6:8])
            residual = math.degrees(math.atan2(qy - py, qx - px))
            inverse = cv2.invertAffineTransform(forward)
            face.set_points([(inverse[0, 0] * best[4 + 2 * k] + inverse[0, 1] * best[5 + 2 * k] + inverse[0, 2],
                              inverse[1, 0] * best[4 + 2 * k] + inverse[1, 1] * best[5 + 2 * k] + inverse[1, 2])
                             for k in range(5)])
            if abs(residual) < REFINE_RESIDUAL:
                break
    return faces


class YuNet:
    def __init__(self, model, threshold, nms, top_k, refine=False):
        self.args = (model, "", (320, 320), threshold, nms, top_k)
        self.threshold = f32(threshold)
        self.refine = refine
        self.models = {}  # one FaceDetectorYN per input size, as detect.cpp keeps them

    def raw(self, image):
        # FaceDetectorYN in OpenCV 4.6 fails on inputs below ~64 px: pad, as detect.cpp does.
        padded = pad_right_bottom(image, 64, 64, 1)
        size = (padded.shape[1], padded.shape[0])
        model = self.models.get(size)
        if model is None:
            model = self.models[size] = cv2.FaceDetectorYN.create(*self.args)
            model.setInputSize(size)
        _, rows = model.detect(padded)
        return [] if rows is None else [row.astype(np.float32) for row in rows]

    def detect(self, image, width):
        resized, sx, sy = resize_for(image, width)
        faces = finish(self.raw(resized), sx, sy, image.shape[1], image.shape[0], self.threshold)
        return refine_tilted(self.raw, image, faces) if self.refine else faces


class CenterFace:
    def __init__(self, model, threshold, nms, refine=False):
        self.model = model
        self.threshold = np.float32(threshold)
        self.nms = np.float32(nms)
        self.refine = refine
        self.nets = {}  # one Net per input size: OpenCV 4.6 gives wrong outputs when one Net sees several sizes

    def raw(self, image):
        padded = pad_right_bottom(image, 32, 32, 32)
        size = (padded.shape[1], padded.shape[0])
        net = self.nets.get(size)
        if net is None:
            net = self.nets[size] = cv2.dnn.readNetFromONNX(self.model)
        net.setInput(cv2.dnn.blobFromImage(padded, scalefactor=1.0, swapRB=True, crop=False))
        heat, scale, offset, marks = net.forward(["537", "538", "539", "540"])
        return self.decode(heat, scale, offset, marks, image.shape[1], image.shape[0])

    def detect(self, image, width):
        resized, sx, sy = resize_for(image, width)
        faces = finish(self.raw(resized), sx, sy, image.shape[1], image.shape[0], f32(self.threshold))
        return refine_tilted(self.raw, image, faces) if self.refine else faces

    def decode(self, heat, scale, offset, marks, width, height):
        fw = heat.shape[3]
        heat = heat[0, 0].ravel()
        index = np.nonzero(heat > self.threshold)[0]
        index = index[np.argsort(-heat[index], kind="stable")][:3000]
        if index.size == 0:
            return []
        cy, cx = (index // fw).astype(np.float32), (index % fw).astype(np.float32)
        four, half = np.float32(4), np.float32(0.5)
        s0 = np.exp(scale[0, 0].ravel()[index]) * four  # height
        s1 = np.exp(scale[0, 1].ravel()[index]) * four  # width
        o0, o1 = offset[0, 0].ravel()[index], offset[0, 1].ravel()[index]
        x0 = (cx + o1 + half) * four - s1 / np.float32(2)
        y0 = (cy + o0 + half) * four - s0 / np.float32(2)
        x1 = np.clip(x0, np.float32(0), np.float32(width))
        y1 = np.clip(y0, np.float32(0), np.float32(height))
        x2 = np.minimum(x1 + s1, np.float32(width))
        y2 = np.minimum(y1 + s0, np.float32(height))
        keep = (x2 > x1) & (y2 > y1)
        boxes = np.stack([x1, y1, x2 - x1, y2 - y1], axis=1)[keep]
        scores = heat[index][keep]
        points = []
        for j in range(5):  # channels alternate (y, x); offsets from the unclipped corner
            points.append(marks[0, 2 * j + 1].ravel()[index] * s1 + x0)
            points.append(marks[0, 2 * j].ravel()[index] * s0 + y0)
        points = np.stack(points, axis=1)[keep]
        kept = nms(boxes, self.nms)
        return [np.concatenate([boxes[i], points[i], scores[i:i + 1]]).astype(np.float32) for i in kept]


def nms(boxes, threshold):
    """Greedy NMS over boxes sorted best first, suppressing IoU >= threshold (detect.cpp's nms)."""
    x1, y1 = boxes[:, 0], boxes[:, 1]
    x2, y2 = x1 + boxes[:, 2], y1 + boxes[:, 3]
    area = boxes[:, 2] * boxes[:, 3]
    suppressed = np.zeros(len(boxes), dtype=bool)
    kept = []
    for i in range(len(boxes)):
        if suppressed[i]:
            continue
        kept.append(i)
        w = np.minimum(x2[i], x2[i + 1:]) - np.maximum(x1[i], x1[i + 1:])
        h = np.minimum(y2[i], y2[i + 1:]) - np.maximum(y1[i], y1[i + 1:])
        inter = np.where((w > 0) & (h > 0), w * h, np.float32(0))
        union = area[i] + area[i + 1:] - inter
        iou = np.where(union > 0, inter / np.where(union > 0, union, 1), 0)
        suppressed[i + 1:] |= iou >= threshold
    return kept


# MARK: - Metrics (a port of Sources/FacewireEvaluation)

TP, FP, IGNORED = "tp", "fp", "ignored"


def counted(truth, criteria):
    return not truth.ignore and truth.box[3] >= criteria["min_height"]


def iou_matrix(faces, truths):
    """FaceRect.intersectionOverUnion for every (detection, truth) pair, in 32-bit floats with Swift's order of
    operations, so that IoU ties and the 0.4 boundary fall the same way."""
    d = np.array([f.box for f in faces], dtype=np.float32).reshape(-1, 4)
    g = np.array([t.box for t in truths], dtype=np.float32).reshape(-1, 4)
    w = np.minimum((d[:, 0] + d[:, 2])[:, None], (g[:, 0] + g[:, 2])[None, :]) - np.maximum(d[:, 0][:, None], g[:, 0][None, :])
    h = np.minimum((d[:, 1] + d[:, 3])[:, None], (g[:, 1] + g[:, 3])[None, :]) - np.maximum(d[:, 1][:, None], g[:, 1][None, :])
    zero = np.float32(0)
    area_d = np.maximum(zero, d[:, 2]) * np.maximum(zero, d[:, 3])
    area_g = np.maximum(zero, g[:, 2]) * np.maximum(zero, g[:, 3])
    inter = w * h
    union = (area_d[:, None] + area_g[None, :]) - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = inter / union
    return np.where((w > 0) & (h > 0) & (union > 0), iou, zero).astype(np.float32)


def match(faces, truths, criteria):
    """DetectionMatching.match: greedy by score (ties: given order); counted faces first, then ignored ones."""
    threshold = np.float32(criteria["iou"])
    is_counted = [counted(t, criteria) for t in truths]
    taken = [False] * len(truths)
    order = sorted(range(len(faces)), key=lambda i: (-faces[i].score, i))
    ious = iou_matrix(faces, truths) if faces and truths else None
    verdicts = []
    for index in order:
        best, best_iou, overlaps_ignored = -1, threshold, False
        for t in range(len(truths)):
            value = ious[index, t]
            if not value >= threshold:
                continue
            if not is_counted[t]:
                overlaps_ignored = True
            elif not taken[t] and value >= best_iou:
                best, best_iou = t, value
        if best >= 0:
            taken[best] = True
            verdicts.append((faces[index].score, TP, index, best))
        else:
            verdicts.append((faces[index].score, IGNORED if overlaps_ignored else FP, index, None))
    return verdicts


def ranked(matched):
    entries = [(v[0], i, p, v) for i, verdicts in enumerate(matched) for p, v in enumerate(verdicts) if v[1] != IGNORED]
    entries.sort(key=lambda e: (-e[0], e[1], e[2]))
    return [e[3] for e in entries]


def average_precision(matched, counted_faces):
    tp = fp = 0
    precision, recall = [], []
    for verdict in ranked(matched):
        if verdict[1] == TP:
            tp += 1
        else:
            fp += 1
        precision.append(tp / (tp + fp))
        recall.append(tp / counted_faces if counted_faces > 0 else 0)
    for i in range(len(precision) - 2, -1, -1):
        precision[i] = max(precision[i], precision[i + 1])
    ap, previous = 0.0, 0.0
    for p, r in zip(precision, recall):
        if r > previous:
            ap += (r - previous) * p
            previous = r
    ignored = sum(1 for verdicts in matched for v in verdicts if v[1] == IGNORED)
    return {"value": ap, "tp": tp, "fp": fp, "ignored": ignored, "max_recall": recall[-1] if recall else 0}


def recall_at_fppi(matched, counted_faces, image_count, budget):
    best = {"recall": 0.0, "threshold": None, "tp": 0, "fp": 0}
    if image_count <= 0:
        return best
    entries = ranked(matched)
    tp = fp = 0
    for i, verdict in enumerate(entries):
        if verdict[1] == TP:
            tp += 1
        else:
            fp += 1
        if i + 1 < len(entries) and entries[i + 1][0] == verdict[0]:
            continue
        if not fp / image_count <= budget:
            break
        best = {"recall": tp / counted_faces if counted_faces > 0 else 0.0, "threshold": verdict[0], "tp": tp, "fp": fp}
    return best


def eye_error(face, truth):
    if face.left_eye is None or truth.left_eye is None:
        return None
    interocular = math.hypot(truth.left_eye[0] - truth.right_eye[0], truth.left_eye[1] - truth.right_eye[1])
    if not interocular > 0:
        return None
    left = math.hypot(face.left_eye[0] - truth.left_eye[0], face.left_eye[1] - truth.left_eye[1])
    right = math.hypot(face.right_eye[0] - truth.right_eye[0], face.right_eye[1] - truth.right_eye[1])
    return (left + right) / 2 / interocular


def median(values):
    return statistics.median(values) if values else 0.0


def compute_report(name, annotations, detections, ms, criteria, operating, budget=0.1, edges=(20, 40, 80)):
    """EvaluationReport.compute."""
    matched = [match(faces, entry["faces"], criteria) for entry, faces in zip(annotations, detections)]
    counted_faces = sum(1 for entry in annotations for t in entry["faces"] if counted(t, criteria))
    overall = average_precision(matched, counted_faces)
    by_source = {}
    for source in sorted({entry["source"] for entry in annotations}):
        indices = [i for i, e in enumerate(annotations) if e["source"] == source and e["faces"]]
        if indices:
            n = sum(1 for i in indices for t in annotations[i]["faces"] if counted(t, criteria))
            by_source[source] = average_precision([matched[i] for i in indices], n)["value"]
    fppi = recall_at_fppi(matched, counted_faces, len(annotations), budget)
    operating = f32(operating)
    kept = [[v for v in verdicts if v[0] >= operating] for verdicts in matched]
    tp = fp = fp_positive = fp_negative = negatives_with_fp = 0
    errors = []
    buckets = [{"lower": low, "upper": edges[i + 1] if i + 1 < len(edges) else None, "faces": 0, "found": 0}
               for i, low in enumerate(edges)]
    for entry, faces, verdicts in zip(annotations, detections, kept):
        false = sum(1 for v in verdicts if v[1] == FP)
        tp += sum(1 for v in verdicts if v[1] == TP)
        fp += false
        if not entry["faces"]:
            fp_negative += false
            negatives_with_fp += 1 if false else 0
        else:
            fp_positive += false
        for v in verdicts:
            if v[1] == TP:
                error = eye_error(faces[v[2]], entry["faces"][v[3]])
                if error is not None:
                    errors.append(error)
        found = {v[3] for v in verdicts if v[1] == TP}
        for t, truth in enumerate(entry["faces"]):
            if not counted(truth, criteria):
                continue
            for bucket in buckets:
                if truth.box[3] >= bucket["lower"] and (bucket["upper"] is None or truth.box[3] < bucket["upper"]):
                    bucket["faces"] += 1
                    bucket["found"] += 1 if t in found else 0
                    break
    return {
        "name": name, "images": len(annotations), "negative_images": sum(1 for e in annotations if not e["faces"]),
        "counted_faces": counted_faces, "ap": overall, "ap_by_source": by_source, "fppi": fppi, "budget": budget,
        "operating": operating, "recall": tp / counted_faces if counted_faces else 0.0,
        "precision": tp / (tp + fp_positive) if tp + fp_positive else 0.0, "tp": tp, "fp": fp,
        "fp_negatives": fp_negative, "negatives_with_fp": negatives_with_fp, "buckets": buckets,
        "eye": {"count": len(errors), "mean": sum(errors) / len(errors) if errors else 0.0, "median": median(errors)},
        "ms_mean": sum(ms) / len(ms) if ms else 0.0, "ms_median": median(ms), "criteria": criteria,
    }


def rounded(value, digits=6):
    scale = 10 ** digits
    return math.copysign(math.floor(abs(value) * scale + 0.5), value) / scale


def label(bucket):
    return f"{bucket['lower']}-{bucket['upper']}" if bucket["upper"] is not None else f"{bucket['lower']}+"


def summary(report, run):
    """The JSON summary, with EvaluationSummary's keys."""
    return {
        "implementation": run["implementation"], "annotations": run["annotations"], "backend": run["backend"],
        "model": run["model"], "input_width": run["input_width"],
        "evaluation_threshold": f32_out(run["evaluation_threshold"]) if run["evaluation_threshold"] is not None else None,
        "opencv_threads": run["threads"], "opencv_version": run["opencv_version"], "name": report["name"],
        "iou_threshold": f32_out(report["criteria"]["iou"]), "min_face_height": f32_out(report["criteria"]["min_height"]),
        "images": report["images"], "negative_images": report["negative_images"],
        "counted_faces": report["counted_faces"], "ap": rounded(report["ap"]["value"]),
        "ap_true_positives": report["ap"]["tp"], "ap_false_positives": report["ap"]["fp"],
        "ap_ignored_detections": report["ap"]["ignored"], "max_recall": rounded(report["ap"]["max_recall"]),
        "ap_by_source": {k: rounded(v) for k, v in report["ap_by_source"].items()},
        "recall_at_fppi": {
            "fppi": report["budget"], "recall": rounded(report["fppi"]["recall"]),
            "threshold": f32_out(report["fppi"]["threshold"]) if report["fppi"]["threshold"] is not None else None,
            "true_positives": report["fppi"]["tp"], "false_positives": report["fppi"]["fp"],
        },
        "operating": {
            "threshold": f32_out(report["operating"]), "recall": rounded(report["recall"]),
            "precision": rounded(report["precision"]), "true_positives": report["tp"], "false_positives": report["fp"],
            "false_positives_on_negatives": report["fp_negatives"],
            "negative_images_with_false_positives": report["negatives_with_fp"],
            "recall_by_height": [{
                "bucket": label(b), "min_height": float(b["lower"]),
                "max_height": float(b["upper"]) if b["upper"] is not None else None, "faces": b["faces"],
                "found": b["found"], "recall": rounded(b["found"] / b["faces"] if b["faces"] else 0.0),
            } for b in report["buckets"]],
        },
        "eye_nme": {"count": report["eye"]["count"], "mean": rounded(report["eye"]["mean"]),
                    "median": rounded(report["eye"]["median"])},
        "timing": {"ms_per_image_mean": rounded(report["ms_mean"], 3),
                   "ms_per_image_median": rounded(report["ms_median"], 3), "includes_decode": False,
                   "what": TIMING_WHAT},
    }


def metric_table(s):
    """EvaluationReport.metricTable, from a summary."""
    fppi, op = s["recall_at_fppi"], s["operating"]
    threshold = f"{fppi['threshold']:.3f}" if fppi["threshold"] is not None else "–"
    rows = [
        ("images (negatives)", f"{s['images']} ({s['negative_images']})"),
        (f"counted faces (≥ {s['min_face_height']:g} px tall)", str(s["counted_faces"])),
        (f"AP@{s['iou_threshold']:.1f}", f"{s['ap']:.4f}"),
    ]
    rows += [(f"  AP {k}", f"{v:.4f}") for k, v in sorted(s["ap_by_source"].items())]
    rows += [
        (f"recall at {fppi['fppi']:.2f} FP/image", f"{fppi['recall']:.4f} (score ≥ {threshold}, {fppi['false_positives']} FP)"),
        ("operating threshold", f"{op['threshold']:.2f}"),
        ("  recall", f"{op['recall']:.4f}"),
        ("  precision (positive images)", f"{op['precision']:.4f}"),
        ("  false positives, all images", str(op["false_positives"])),
        ("  false positives on negatives (images)",
         f"{op['false_positives_on_negatives']} ({op['negative_images_with_false_positives']}/{s['negative_images']})"),
    ]
    rows += [(f"  recall, faces {b['bucket']} px", f"{b['recall']:.4f} ({b['found']}/{b['faces']})")
             for b in op["recall_by_height"]]
    e, t = s["eye_nme"], s["timing"]
    rows += [
        ("  eye NME mean / median (pairs)", f"{e['mean']:.4f} / {e['median']:.4f} ({e['count']})"),
        ("ms/image mean / median (decode excluded)", f"{t['ms_per_image_mean']:.2f} / {t['ms_per_image_median']:.2f}"),
    ]
    return "\n".join([f"| {s['name']} | |", "|---|---|"] + [f"| {a} | {b} |" for a, b in rows])


# MARK: - Running


class Baseline:
    """Decoded images and detectors, kept across --compare rounds."""

    def __init__(self, args):
        cv2.setNumThreads(args.threads)
        self.args = args
        self.annotations = load_annotations(args.annotations)
        start = time.perf_counter()
        self.images = decode_images(self.annotations, os.path.dirname(os.path.abspath(args.annotations)))
        log(f"baseline: decoded {len(self.images)} images in {time.perf_counter() - start:.1f} s")

    def run(self, backend, model, width, eval_threshold, operating, dump=None, refine=False):
        defaults = BACKENDS[backend]
        if not os.path.isfile(model):
            sys.exit(f"error: model {model}: no such file")

        def make(threshold):
            if backend == "yunet":
                return YuNet(model, threshold, defaults["nms"], defaults["top_k"], refine)
            return CenterFace(model, threshold, defaults["nms"], refine)

        # As DetectorEvaluator.run: detections at the evaluation threshold; the time is a second, warm call of a
        # detector at the operating threshold.
        detector = make(eval_threshold)
        timed = make(operating) if f32(eval_threshold) < f32(operating) else None
        detections, ms = [], []
        for image in self.images:
            detections.append(detector.detect(image, width))
            if timed is not None:
                timed.detect(image, width)
            start = time.perf_counter()
            (timed or detector).detect(image, width)
            ms.append((time.perf_counter() - start) * 1000)
        if dump:
            write_dump(dump, self.annotations, detections)
        criteria = {"iou": self.args.iou, "min_height": self.args.min_face_height}
        report = compute_report(f"{backend} {width}", self.annotations, detections, ms, criteria, operating, self.args.fppi)
        run = {"implementation": f"opencv-python {cv2.__version__}" + (" + refinement port" if refine else ""),
               "annotations": self.args.annotations, "refine_landmarks": refine,
               "backend": backend, "model": model, "input_width": width, "evaluation_threshold": eval_threshold,
               "threads": self.args.threads, "opencv_version": cv2.__version__}
        return summary(report, run)


def write_dump(path, annotations, detections):
    def point(p):
        return [f32_out(p[0]), f32_out(p[1])]

    with open(path, "w") as handle:
        for entry, faces in zip(annotations, detections):
            out = []
            for f in faces:
                marks = {}
                if f.left_eye is not None:
                    marks["left_eye"], marks["right_eye"] = point(f.left_eye), point(f.right_eye)
                if f.nose is not None:
                    marks["nose"], marks["mouth_center"] = point(f.nose), point(f.mouth)
                out.append({"box": [f32_out(v) for v in f.box], "score": f32_out(f.score), "landmarks": marks})
            handle.write(json.dumps({"image": entry["image"], "faces": out}) + "\n")


def score_dump(args):
    """--score: the metrics of a `facewire eval --dump` file, computed by this port."""
    annotations = load_annotations(args.annotations)
    by_image = {}
    with open(args.score) as handle:
        for line in handle:
            if line.strip():
                record = json.loads(line)
                by_image[record["image"]] = [
                    Face(f["box"], f["score"], (f.get("landmarks") or {}).get("left_eye"),
                         (f.get("landmarks") or {}).get("right_eye"))
                    for f in record["faces"]]
    missing = [e["image"] for e in annotations if e["image"] not in by_image]
    if missing:
        sys.exit(f"error: {args.score} has no line for {len(missing)} images, e.g. {missing[0]}")
    detections = [by_image[e["image"]] for e in annotations]
    backend = args.backend or "yunet"
    operating = args.score_threshold if args.score_threshold is not None else BACKENDS[backend]["operating_threshold"]
    criteria = {"iou": args.iou, "min_height": args.min_face_height}
    report = compute_report(f"rescored {os.path.basename(args.score)}", annotations, detections, [], criteria,
                            operating, args.fppi)
    run = {"implementation": "eval-baseline.py --score", "annotations": args.annotations, "backend": backend,
           "model": None, "input_width": None, "evaluation_threshold": None, "threads": args.threads,
           "opencv_version": None}
    return summary(report, run)


def output(s, json_target):
    text = json.dumps(s, indent=2, sort_keys=True, ensure_ascii=False)
    if json_target == "-":
        print(metric_table(s), file=sys.stderr)
        print(text)
        return
    if json_target:
        with open(json_target, "w") as handle:
            handle.write(text + "\n")
    print(metric_table(s))
    print()
    print(text)


def run_facewire(args, backend, model, width, refine):
    command = [args.facewire, "eval", "--annotations", args.annotations, "--detector", backend, "--model", model,
               "--input-width", str(width), "--threads", str(args.threads), "--json", "-",
               "--refine-landmarks", "on" if refine else "off",
               "--iou", str(args.iou), "--min-face-height", str(args.min_face_height), "--fppi", str(args.fppi)]
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        sys.exit(f"error: {' '.join(command)} exited {result.returncode}:\n{result.stderr}")
    return json.loads(result.stdout)


def compare(args):
    if not os.access(args.facewire, os.X_OK):
        sys.exit(f"error: {args.facewire}: not an executable (build it: swift build -c release)")
    baseline = Baseline(args)
    rows = []
    for backend in args.backends.split(","):
        if backend not in BACKENDS:
            sys.exit(f"error: unknown backend {backend}")
        defaults = BACKENDS[backend]
        model = os.path.join(args.models, defaults["model"])
        width = args.input_width or defaults["width"]
        for variant in args.variants.split(","):
            if variant not in ("refined", "plain"):
                sys.exit(f"error: unknown variant {variant}: use refined, plain")
            refine = variant == "refined"
            name = f"{width} {variant}"
            for round_number in range(1, args.rounds + 1):
                order = ["facewire", "baseline"] if round_number % 2 == 1 else ["baseline", "facewire"]
                results = {}
                for which in order:
                    log(f"{backend} {name}, round {round_number}: {which}")
                    if which == "facewire":
                        results[which] = run_facewire(args, backend, model, width, refine)
                    else:
                        results[which] = baseline.run(backend, model, width, defaults["eval_threshold"],
                                                      defaults["operating_threshold"], refine=refine)
                rows.append((backend, name, round_number, results["facewire"], results["baseline"]))
    print(compare_table(rows))
    print()
    print(compare_summary(rows))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump([{"backend": b, "input_width": w, "round": r, "facewire": f, "baseline": o}
                       for b, w, r, f, o in rows], handle, indent=2, sort_keys=True)


def compare_table(rows):
    header = ("| backend | round | implementation | AP@0.4 | recall@0.1 FPPI | recall@thr | recall 20–40 / 40–80 / 80+ px "
              "| eye NME mean / median | FP on negatives (images) | ms/image median | ms/image mean |")
    lines = [header, "|---|---|---|---|---|---|---|---|---|---|---|"]
    for backend, width, number, facewire, base in rows:
        for s in (facewire, base):
            op = s["operating"]
            buckets = " / ".join(f"{b['recall']:.3f}" for b in op["recall_by_height"])
            lines.append(
                f"| {backend} {width} | {number} | {s['implementation']} | {s['ap']:.3f} | {s['recall_at_fppi']['recall']:.3f} "
                f"| {op['recall']:.3f} | {buckets} | {s['eye_nme']['mean']:.3f} / {s['eye_nme']['median']:.3f} "
                f"| {op['false_positives_on_negatives']} ({op['negative_images_with_false_positives']}/{s['negative_images']}) "
                f"| {s['timing']['ms_per_image_median']:.1f} | {s['timing']['ms_per_image_mean']:.1f} |")
        fm, bm = facewire["timing"], base["timing"]
        lines.append(
            f"| {backend} {width} | {number} | **facewire − / ÷ baseline** | {facewire['ap'] - base['ap']:+.3f} "
            f"| {facewire['recall_at_fppi']['recall'] - base['recall_at_fppi']['recall']:+.3f} "
            f"| {facewire['operating']['recall'] - base['operating']['recall']:+.3f} | "
            + " / ".join(f"{a['recall'] - b['recall']:+.3f}" for a, b in zip(facewire["operating"]["recall_by_height"],
                                                                          base["operating"]["recall_by_height"]))
            + f" | {facewire['eye_nme']['mean'] - base['eye_nme']['mean']:+.3f} | "
            f"{facewire['operating']['false_positives_on_negatives'] - base['operating']['false_positives_on_negatives']:+d} "
            f"| ×{fm['ms_per_image_median'] / bm['ms_per_image_median']:.2f} | ×{fm['ms_per_image_mean'] / bm['ms_per_image_mean']:.2f} |")
    return "\n".join(lines)


def compare_summary(rows):
    """One line per backend: AP of both and their difference, and the median over rounds of ms/image and of the
    per-round ms ratio (each round's two runs are back to back, so its ratio is the least noisy figure)."""
    lines = ["| backend | rounds | AP facewire | AP baseline | AP difference | ms/image median, facewire | "
             "ms/image median, baseline | ms ratio facewire ÷ baseline (median of rounds) |",
             "|---|---|---|---|---|---|---|---|"]
    for backend, width in dict.fromkeys((b, w) for b, w, _, _, _ in rows):
        mine = [(f, o) for b, w, _, f, o in rows if (b, w) == (backend, width)]
        ap_f, ap_b = mine[0][0]["ap"], mine[0][1]["ap"]
        ms_f = statistics.median(f["timing"]["ms_per_image_median"] for f, _ in mine)
        ms_b = statistics.median(o["timing"]["ms_per_image_median"] for _, o in mine)
        ratio = statistics.median(f["timing"]["ms_per_image_median"] / o["timing"]["ms_per_image_median"] for f, o in mine)
        lines.append(f"| {backend} {width} | {len(mine)} | {ap_f:.4f} | {ap_b:.4f} | {ap_f - ap_b:+.4f} | {ms_f:.1f} "
                     f"| {ms_b:.1f} | ×{ratio:.2f} |")
    return "\n".join(lines)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--annotations", default=os.path.join(SHARED, "faces", "dev.jsonl"))
    parser.add_argument("--models", default=os.path.join(SHARED, "models"), help="folder of the model files")
    parser.add_argument("--backend", choices=sorted(BACKENDS), help="default yunet")
    parser.add_argument("--model", help="model file (default: --models/<the backend's file>)")
    parser.add_argument("--input-width", type=int, help="default 320")
    parser.add_argument("--eval-threshold", type=float, help="score threshold the detector runs with (default yunet 0.3, centerface 0.1)")
    parser.add_argument("--score-threshold", type=float, help="operating threshold (default yunet 0.6, centerface 0.5)")
    parser.add_argument("--iou", type=float, default=0.4)
    parser.add_argument("--min-face-height", type=float, default=20)
    parser.add_argument("--fppi", type=float, default=0.1)
    parser.add_argument("--threads", type=int, default=1, help="cv2.setNumThreads")
    parser.add_argument("--json", help="write the JSON summary here; '-' prints only the JSON on stdout")
    parser.add_argument("--dump", help="write the raw detections here (the facewire eval --dump format)")
    parser.add_argument("--score", metavar="DUMP", help="score a facewire eval --dump file instead of detecting")
    parser.add_argument("--compare", action="store_true", help="run facewire eval and the baseline side by side")
    parser.add_argument("--facewire", default=os.path.join(REPO, ".build", "release", "facewire"))
    parser.add_argument("--backends", default="yunet,centerface", help="--compare: comma-separated")
    parser.add_argument("--rounds", type=int, default=2, help="--compare: rounds per backend and variant")
    parser.add_argument("--variants", default="refined,plain",
                        help="--compare: refined (landmark refinement on both sides: facewire's default and this "
                             "script's port of it) and/or plain (refinement off on both sides)")
    parser.add_argument("--refine", action="store_true",
                        help="run this script's port of facewire's landmark refinement of tilted faces")
    parser.add_argument("--no-venv", action="store_true", help="use this interpreter's cv2 (no virtual environment)")
    args = parser.parse_args(argv)
    if not os.path.isfile(args.annotations):
        sys.exit(f"error: --annotations {args.annotations}: no such file")
    if args.score and not os.path.isfile(args.score):
        sys.exit(f"error: --score {args.score}: no such file")
    if not args.no_venv:
        ensure_venv(argv)

    global cv2, np
    import cv2
    import numpy as np

    if args.score:
        output(score_dump(args), args.json)
    elif args.compare:
        compare(args)
    else:
        backend = args.backend or "yunet"
        defaults = BACKENDS[backend]
        model = args.model or os.path.join(args.models, defaults["model"])
        eval_threshold = args.eval_threshold if args.eval_threshold is not None else defaults["eval_threshold"]
        operating = args.score_threshold if args.score_threshold is not None else defaults["operating_threshold"]
        s = Baseline(args).run(backend, model, args.input_width or defaults["width"], eval_threshold, operating, args.dump,
                               refine=args.refine)
        output(s, args.json)


if __name__ == "__main__":
    main(sys.argv[1:])
