"""YuNet at Facewire's reference operating point (protocol/REFERENCE-NODES.md §3.5), in OpenCV-Python, for the pipelines of
benchmarks/bench-python.py. One detector per process, OpenCV on one thread.

Per frame: cv2.imdecode of the JPEG bytes (colour, full size; with reduced=True, IMREAD_REDUCED_COLOR_2, libjpeg's
DCT-domain half scale, which is what Facewire's decoder does for a 640-wide frame); resize to 320 px wide
(INTER_AREA when shrinking, INTER_LINEAR when enlarging, none when already 320; height rounded); no face when no
channel's standard deviation reaches 4; pad to at least 64 x 64; FaceDetectorYN (score 0.6, NMS 0.3, top-k 5000) at
the image's size; faces sorted by score (ties: smaller y, then x), scaled back to the full frame, clipped, at most 256.

With runtime="openvino" the same network runs in OpenVINO (PyPI openvino, Apache-2.0; one inference thread, f32,
compiled for the stream's input shape, as a practitioner would), and FaceDetectorYN 4.6's post-processing is done in
numpy: priors at strides 8-64, boxes and landmarks decoded with variances 0.1 / 0.2, score sqrt(class x clamped IoU),
cv2.dnn.NMSBoxes on the integer boxes. The faces are FaceDetectorYN's (the bench's agreement column checks it).
"""
import json

import cv2
import numpy as np

WIDTH, SCORE, NMS, TOP_K, MAX_FACES = 320, 0.6, 0.3, 5000, 256


class OpenVINOYuNet:
    """FaceDetectorYN's detect() with the network in OpenVINO: (None, rows of 15) like cv2's."""
    MIN_SIZES = [[10, 16, 24], [32, 48], [64, 96], [128, 192, 256]]
    STEPS = [8, 16, 32, 64]

    def __init__(self, model):
        import openvino
        self.core = openvino.Core()
        self.model = model
        self.size = None

    def setInputSize(self, size):
        import openvino
        if size == self.size:
            return
        self.size = size
        width, height = size
        network = self.core.read_model(self.model)
        network.reshape({network.inputs[0].any_name: openvino.PartialShape([1, 3, height, width])})
        compiled = self.core.compile_model(network, "CPU", {
            "INFERENCE_NUM_THREADS": "1", "NUM_STREAMS": "1", "PERFORMANCE_HINT": "LATENCY",
            "INFERENCE_PRECISION_HINT": "f32", "ENABLE_CPU_PINNING": "NO"})
        self.request = compiled.create_infer_request()
        self.outputs = [compiled.outputs[i] for i in range(3)]  # loc, conf, iou
        priors = []
        fw, fh = ((width + 1) // 2) // 2, ((height + 1) // 2) // 2
        for level in range(4):
            fw, fh = fw // 2, fh // 2
            for y in range(fh):
                for x in range(fw):
                    for size_ in self.MIN_SIZES[level]:
                        priors.append(((x + 0.5) * self.STEPS[level] / width, (y + 0.5) * self.STEPS[level] / height,
                                       size_ / width, size_ / height))
        self.priors = np.array(priors, np.float32)

    def detect(self, image):
        height, width = image.shape[:2]
        self.setInputSize((width, height))
        blob = cv2.dnn.blobFromImage(image)
        result = self.request.infer({0: blob})
        loc = result[self.outputs[0]].reshape(-1, 14)
        conf = result[self.outputs[1]].reshape(-1, 2)
        iou = result[self.outputs[2]].reshape(-1)
        scores = np.sqrt(conf[:, 1] * np.clip(iou, 0, 1))
        keep = scores >= SCORE
        if not keep.any():
            return None, None
        p, loc, scores = self.priors[keep], loc[keep], scores[keep]
        cx = (p[:, 0] + loc[:, 0] * 0.1 * p[:, 2]) * width
        cy = (p[:, 1] + loc[:, 1] * 0.1 * p[:, 3]) * height
        w = p[:, 2] * np.exp(loc[:, 2] * 0.1) * width
        h = p[:, 3] * np.exp(loc[:, 3] * 0.2) * height
        rows = np.zeros((len(scores), 15), np.float32)
        rows[:, 0], rows[:, 1], rows[:, 2], rows[:, 3] = cx - w / 2, cy - h / 2, w, h
        for k in range(5):
            rows[:, 4 + 2 * k] = (p[:, 0] + loc[:, 4 + 2 * k] * 0.1 * p[:, 2]) * width
            rows[:, 5 + 2 * k] = (p[:, 1] + loc[:, 5 + 2 * k] * 0.1 * p[:, 3]) * height
        rows[:, 14] = scores
        boxes = [[int(r[0]), int(r[1]), int(r[2]), int(r[3])] for r in rows]
        kept = cv2.dnn.NMSBoxes(boxes, scores.tolist(), SCORE, NMS, top_k=TOP_K)
        return None, rows[np.array(kept, int).reshape(-1)]


class YuNet:
    def __init__(self, model, reduced=False, runtime="opencv"):
        cv2.setNumThreads(1)
        self.size = (WIDTH, 240)
        if runtime == "openvino":
            self.detector = OpenVINOYuNet(model)
            self.detector.setInputSize(self.size)
        else:
            self.detector = cv2.FaceDetectorYN.create(model, "", self.size, SCORE, NMS, TOP_K)
        self.flags, self.factor = (cv2.IMREAD_REDUCED_COLOR_2, 2) if reduced else (cv2.IMREAD_COLOR, 1)

    def faces(self, jpeg):
        """(full width, full height, [(x, y, w, h, score, [(x, y)] * 5)]) of one JPEG."""
        image = cv2.imdecode(np.frombuffer(jpeg, np.uint8), self.flags)
        height, width = image.shape[:2]
        full_width, full_height = width * self.factor, height * self.factor
        if width != WIDTH:
            small_height = max(1, int(round(height * WIDTH / width)))
            image = cv2.resize(image, (WIDTH, small_height),
                               interpolation=cv2.INTER_AREA if width > WIDTH else cv2.INTER_LINEAR)
        if max(cv2.meanStdDev(image)[1].ravel()) < 4:
            return full_width, full_height, []
        h, w = image.shape[:2]
        if w < 64 or h < 64:
            image = cv2.copyMakeBorder(image, 0, max(0, 64 - h), 0, max(0, 64 - w), cv2.BORDER_CONSTANT, value=0)
        if image.shape[1::-1] != self.size:
            self.size = image.shape[1::-1]
            self.detector.setInputSize(self.size)
        _, rows = self.detector.detect(image)
        scale = full_width / w
        faces = []
        for row in [] if rows is None else rows:
            score = float(row[14])
            if score < SCORE:
                continue
            x0, y0 = max(0.0, row[0] * scale), max(0.0, row[1] * scale)
            x1, y1 = min(full_width, (row[0] + row[2]) * scale), min(full_height, (row[1] + row[3]) * scale)
            if x1 <= x0 or y1 <= y0:
                continue
            points = [(float(row[4 + 2 * i] * scale), float(row[5 + 2 * i] * scale)) for i in range(5)]
            faces.append((float(x0), float(y0), float(x1 - x0), float(y1 - y0), score, points))
        faces.sort(key=lambda f: (-f[4], f[1], f[0]))
        return full_width, full_height, faces[:MAX_FACES]

    def line(self, seq, jpeg):
        """The frame's result as one JSON line (CIFaceFeature-like names, as Facewire's stream), without newline."""
        width, height, faces = self.faces(jpeg)
        return json.dumps({"seq": seq, "status": "processed", "width": width, "height": height, "faces": [
            {"bounds": {"x": round(x, 1), "y": round(y, 1), "width": round(w, 1), "height": round(h, 1)},
             "confidence": round(score, 3), "landmarks": [[round(px, 1), round(py, 1)] for px, py in points]}
            for x, y, w, h, score, points in faces]}, separators=(",", ":"))
