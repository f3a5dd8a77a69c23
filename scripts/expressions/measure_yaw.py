"""Measures the 5-landmark yaw (fwexpr.yaw_degrees) against two references.

    /usr/bin/python3 scripts/expressions/measure_yaw.py

1. dlib 68-point landmarks (faces/dev.jsonl, dlib images, 28 faces): solvePnP with the usual generic 6-point head
   model (nose tip 30, chin 8, eye outer corners 36/45, mouth corners 48/54; camera f = image width).
2. MediaPipe FaceMesh + solvePnP on MediaPipe's canonical face (62 points), on every frame of the single-face clips
   and on the dlib faces: run scripts/expressions/yaw_reference_mediapipe.py first (it needs mediapipe==0.10.14);
   frames whose reference fit is poor (reprojection > 5% of the eye distance) are left out.
Our yaw is computed from the dataset's own 5 points (dlib) and from YuNet's / CenterFace's landmarks, each detector
run at 320 px wide like production. Sign: positive when the face turns toward the image's right (for every source).

PnP gives the head's rotation relative to the camera's optical axis; the 2-D landmark formula sees the rotation
relative to the line of sight to the face (the "apparent" yaw: 0 = facing the camera). For a face off the image
centre they differ by atan((x - cx) / f), so the references are also reported converted to apparent yaw with the
same pinhole camera (f = the larger image side, principal point at the centre, x = the nose landmark).
"""
import json
import math
import os
import sys

import cv2
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cache_landmarks  # noqa: E402
import fwexpr  # noqa: E402

CACHE = os.environ.get("FW_EXPR_CACHE", "/tmp/fwexpr-cache")
# Generic 6-point head (nose tip, chin, image-left eye outer corner, image-right eye outer corner, mouth corners),
# y up and z toward the camera in the usual form; flipped to OpenCV's camera frame.
HEAD6 = np.array([(0, 0, 0), (0, -330, -65), (-225, 170, -135), (225, 170, -135), (-150, -150, -125), (150, -150, -125)],
                 np.float64) * np.array([1, -1, -1])


def pnp6_yaw(l68, w, h):
    p = np.array(l68, np.float64)
    pts = np.array([p[30], p[8], p[36], p[45], p[48], p[54]])
    f = float(max(w, h))
    K = np.array([[f, 0, w / 2], [0, f, h / 2], [0, 0, 1]])
    _, rv, _ = cv2.solvePnP(HEAD6, pts, K, None, flags=cv2.SOLVEPNP_ITERATIVE)
    n = cv2.Rodrigues(rv)[0] @ np.array([0, 0, -1.0])
    return math.degrees(math.atan2(n[0], -n[2]))


def apparent(yaw_camera, nose_x, width, height):
    """Camera-axis yaw -> yaw relative to the line of sight through the nose (same camera as the PnP)."""
    return yaw_camera + math.degrees(math.atan((nose_x - width / 2) / float(max(width, height))))


def stats(pairs):
    e = np.array([ours - ref for ours, ref in pairs])
    if len(e) == 0:
        return "N 0"
    a = np.abs(e)
    return f"N {len(e)}, median |err| {np.median(a):.1f}, p90 {np.percentile(a, 90):.1f}, median signed {np.median(e):+.1f}"


def main():
    mp_path = os.path.join(CACHE, "mediapipe-yaw.json")
    mpref = json.load(open(mp_path)) if os.path.exists(mp_path) else None
    flip_path = os.path.join(CACHE, "mediapipe-yaw-flipped.json")
    if mpref and os.path.exists(flip_path):
        # symmetrise: the mirrored image has the opposite yaw, so (yaw - yaw_mirrored) / 2 cancels a left/right bias
        flipped = json.load(open(flip_path))
        print("(MediaPipe reference symmetrised with the mirrored images)")

        def sym(a, b):
            if not a or not b:
                return None
            return {"yaw": (a["yaw"] - b["yaw"]) / 2, "reproj": max(a["reproj"], b["reproj"]), "bias": (a["yaw"] + b["yaw"]) / 2}
        mpref = {"dlib": [sym(a, b) for a, b in zip(mpref["dlib"], flipped["dlib"])],
                 "videos": {c: {i: sym(v, flipped["videos"].get(c, {}).get(i)) for i, v in fr.items()}
                            for c, fr in mpref["videos"].items()}}
        biases = [v["bias"] for fr in mpref["videos"].values() for v in fr.values() if v]
        print(f"(reference's own left/right bias before symmetrising: median {np.median(biases):+.1f} deg)")
    dets = {"yunet": fwexpr.YuNet(), "centerface": fwexpr.CenterFace()}
    rows = []
    k = 0
    for line in open(os.path.join(fwexpr.DATA, "faces/dev.jsonl")):
        d = json.loads(line)
        if not d["source"].startswith("dlib"):
            continue
        img = cv2.imread(os.path.join(fwexpr.DATA, "faces", d["image"]))
        found = {name: fwexpr.detect_scaled(det, img, 320) for name, det in dets.items()}
        for f in d["faces"]:
            L = f["landmarks"]
            gt5 = [*L["left_eye"], *L["right_eye"], *L["nose"], *L["mouth_left"], *L["mouth_right"]]
            row = {"pnp6": pnp6_yaw(f["landmarks68"], d["width"], d["height"]), "gt5": fwexpr.yaw_degrees(gt5)}
            row["pnp6 apparent"] = apparent(row["pnp6"], f["landmarks68"][30][0], d["width"], d["height"])
            if mpref and mpref["dlib"][k] and mpref["dlib"][k]["reproj"] < 0.05:
                row["mediapipe"] = mpref["dlib"][k]["yaw"]  # run on a face-centred crop: already apparent
            k += 1
            for name, faces in found.items():
                best = max(faces, key=lambda g: fwexpr._iou(g["box"], f["box"]), default=None)
                if best and fwexpr._iou(best["box"], f["box"]) > 0.3:
                    row[name] = fwexpr.yaw_degrees(best["landmarks"])
            rows.append(row)
    print("## dlib DEV faces (28 faces, 37-109 px tall)")
    print(f"reference range (dlib 6-point PnP): {min(r['pnp6'] for r in rows):.0f} to {max(r['pnp6'] for r in rows):.0f} deg")
    for ref in ("pnp6", "pnp6 apparent", "mediapipe"):
        for src in ("gt5", "yunet", "centerface"):
            print(f"- ours from {src:10s} vs {ref:9s}: {stats([(r[src], r[ref]) for r in rows if src in r and ref in r])}")
    print(f"- the two references against each other (mediapipe - pnp6): "
          f"{stats([(r['mediapipe'], r['pnp6']) for r in rows if 'mediapipe' in r])}")

    if not mpref:
        print("\n(no MediaPipe reference: run yaw_reference_mediapipe.py for the video measurement)")
        return
    print("\n## Video frames vs MediaPipe FaceMesh PnP, as apparent yaw (every frame of the single-face clips)")
    allpairs = {"yunet": [], "centerface": []}
    for clip, frames in sorted(mpref["videos"].items()):
        cache_landmarks.run(clip)
        _, first = next(fwexpr.read_frames(clip))
        height, width = first.shape[:2]
        for det in allpairs:
            lms = json.load(open(cache_landmarks.cache_path(clip, det)))
            for i, ref in frames.items():
                face = lms.get(str(i))
                if ref and face and ref["reproj"] < 0.05:
                    ref_apparent = apparent(ref["yaw"], face["landmarks"][4], width, height)
                    allpairs[det].append((fwexpr.yaw_degrees(face["landmarks"]), ref_apparent, clip))
    refs = [r for _, r, _ in allpairs["centerface"]]
    print(f"reference range: {np.percentile(refs, 1):.0f} to {np.percentile(refs, 99):.0f} deg (1st-99th percentile)")
    for det, pairs in allpairs.items():
        print(f"- {det:10s} all frames: {stats([(a, b) for a, b, _ in pairs])}")
        print(f"- {det:10s} |ref| >= 15 deg: {stats([(a, b) for a, b, _ in pairs if abs(b) >= 15])}")
        # the k that would fit best (for information only; the shipped k is the generic 0.92)
        x = np.array([math.tan(math.radians(a)) / fwexpr.YAW_K for a, _, _ in pairs])
        y = np.tan(np.radians([b for _, b, _ in pairs]))
        print(f"  (least-squares k on these frames would be {float(x @ y / (x @ x)):.2f})")


if __name__ == "__main__":
    main()
