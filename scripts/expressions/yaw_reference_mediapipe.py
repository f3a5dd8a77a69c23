"""Reference head yaw from MediaPipe FaceMesh (468 points) + solvePnP on MediaPipe's canonical face model.

Not run with Debian's python: it needs MediaPipe's legacy FaceMesh (bundled model), e.g.
    python3 -m venv /tmp/mpvenv && /tmp/mpvenv/bin/pip install mediapipe==0.10.14
    /tmp/mpvenv/bin/python scripts/expressions/yaw_reference_mediapipe.py
    /tmp/mpvenv/bin/python scripts/expressions/yaw_reference_mediapipe.py --flip
Writes $FW_EXPR_CACHE/mediapipe-yaw.json (mediapipe-yaw-flipped.json with --flip: every image mirrored left-right,
so that measure_yaw.py can cancel any left/right bias of the reference: the 62 model points are one half of the face): {"videos": {clip: {frame: {yaw, pitch, reproj}}}, "dlib": [...]}
(frames read like fwexpr.read_frames: <= 640 px wide; dlib faces: a 2.2x box crop scaled to 320 px).
Yaw > 0: the face turns toward the image's right. reproj: mean reprojection error / eye distance.
"""
import json
import os
import sys

import cv2
import mediapipe as mp
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = "/work/shared/data"
CACHE = os.environ.get("FW_EXPR_CACHE", "/tmp/fwexpr-cache")
V = np.array([[float(t) for t in line.split()[1:]] for line in open(os.path.join(HERE, "canonical_face_model_62.obj.txt"))
              if line.startswith("v ")])
MODEL = V * np.array([1, -1, -1])  # y down, z away from the camera (OpenCV camera frame)


def yaw_of(mesh, img):
    h, w = img.shape[:2]
    r = mesh.process(cv2.cvtColor(img, cv2.COLOR_BGR2RGB))
    if not r.multi_face_landmarks:
        return None
    lm = r.multi_face_landmarks[0].landmark
    pts = np.array([[lm[i].x * w, lm[i].y * h] for i in range(len(MODEL))])
    f = float(max(w, h))
    K = np.array([[f, 0, w / 2], [0, f, h / 2], [0, 0, 1]])
    ok, rv, tv = cv2.solvePnP(MODEL, pts, K, None, flags=cv2.SOLVEPNP_ITERATIVE)
    R, _ = cv2.Rodrigues(rv)
    n = R @ np.array([0, 0, -1.0])  # the face's forward direction in camera coordinates
    proj, _ = cv2.projectPoints(MODEL, rv, tv, K, None)
    iod = np.hypot(lm[33].x * w - lm[263].x * w, lm[33].y * h - lm[263].y * h)
    return {"yaw": float(np.degrees(np.arctan2(n[0], -n[2]))), "pitch": float(np.degrees(np.arctan2(-n[1], -n[2]))),
            "reproj": float(np.sqrt(((proj.reshape(-1, 2) - pts) ** 2).sum(1)).mean() / max(iod, 1))}


def main():
    flip = "--flip" in sys.argv
    args = [a for a in sys.argv[1:] if a != "--flip"]
    clips = args or sorted(c for c in os.listdir(os.path.join(DATA, "video"))
                                   if c.startswith(("liveportrait_", "sadtalker_")))
    out = {"videos": {}, "dlib": []}
    for clip in clips:
        mesh = mp.solutions.face_mesh.FaceMesh(static_image_mode=False, max_num_faces=1)
        cap = cv2.VideoCapture(os.path.join(DATA, "video", clip))
        res, i = {}, 0
        while True:
            ok, frame = cap.read()
            if not ok:
                break
            if frame.shape[1] > 640:
                s = 640 / frame.shape[1]
                frame = cv2.resize(frame, (640, round(frame.shape[0] * s)), interpolation=cv2.INTER_AREA)
            res[i] = yaw_of(mesh, cv2.flip(frame, 1) if flip else frame)
            i += 1
        out["videos"][clip] = res
        print(clip, flush=True)
    mesh = mp.solutions.face_mesh.FaceMesh(static_image_mode=True, max_num_faces=1, min_detection_confidence=0.3)
    for line in open(os.path.join(DATA, "faces/dev.jsonl")):
        d = json.loads(line)
        if not d["source"].startswith("dlib"):
            continue
        img = cv2.imread(os.path.join(DATA, "faces", d["image"]))
        pad = cv2.copyMakeBorder(img, 400, 400, 400, 400, cv2.BORDER_CONSTANT, 0)
        for f in d["faces"]:
            x, y, w, h = f["box"]
            s = max(w, h) * 2.2
            x0, y0 = int(x + w / 2 - s / 2) + 400, int(y + h / 2 - s / 2) + 400
            crop = cv2.resize(pad[y0:y0 + int(s), x0:x0 + int(s)], (320, 320), interpolation=cv2.INTER_CUBIC)
            out["dlib"].append(yaw_of(mesh, cv2.flip(crop, 1) if flip else crop))
    os.makedirs(CACHE, exist_ok=True)
    json.dump(out, open(os.path.join(CACHE, "mediapipe-yaw-flipped.json" if flip else "mediapipe-yaw.json"), "w"))


if __name__ == "__main__":
    main()
