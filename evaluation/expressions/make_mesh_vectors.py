"""Writes Tests/FacewireDetectionTests/Fixtures/mesh-attribute-vectors.json: inputs and meshattr.py outputs for the
Swift port, from the public-domain astronaut photograph (scikit-image's skimage/data/astronaut.png, cached at
~/.cache/facewire/demo/astronaut.png) and rotated / mirrored / scaled copies of it, plus one rendered demo frame.

    /usr/bin/python3 evaluation/expressions/make_mesh_vectors.py
"""
import json
import math
import os
import sys

import cv2
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fwexpr  # noqa: E402
import meshattr as ma  # noqa: E402

REPO = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(REPO, "Tests/FacewireDetectionTests/Fixtures/mesh-attribute-vectors.json")
DEMO = os.path.expanduser("~/.cache/facewire/demo")


def variants():
    a = cv2.imread(os.path.join(DEMO, "astronaut.png"))
    h, w = a.shape[:2]
    yield "astronaut", a
    yield "astronaut mirrored", cv2.flip(a, 1)
    for ang in (25, -15):
        M = cv2.getRotationMatrix2D((w / 2, h / 2), ang, 1.0)
        yield f"astronaut rotated {ang} deg (cv2.getRotationMatrix2D, counter-clockwise positive)", cv2.warpAffine(a, M, (w, h))
    yield "astronaut scaled 0.3 (INTER_AREA)", cv2.resize(a, (round(w * 0.3), round(h * 0.3)), interpolation=cv2.INTER_AREA)
    f = os.path.join(DEMO, "astronaut", "frame-0060.jpg")
    if os.path.exists(f):
        yield "demo frame astronaut/frame-0060.jpg", cv2.imread(f)


def r(v):
    return [round(float(x), 6) for x in np.asarray(v).reshape(-1)]


def main():
    models = ma.Models()
    det = fwexpr.CenterFace()
    cases = []
    for name, img in variants():
        faces = fwexpr.detect_scaled(det, img, 320)
        fc = max(faces, key=lambda g: g["box"][2] * g["box"][3])
        box, lm5 = fc["box"], fc["landmarks"]
        roi = ma.mesh_roi(box, lm5)
        mesh, pres, sharp = models.run_mesh(img, roi)
        mesh = np.asarray(np.float32(mesh), np.float64)  # what a float C API returns
        eyes = ma.eye_rois(mesh)
        contours, irises = [], []
        for eroi, mirror in eyes:
            c, i = models.run_iris(img, eroi, mirror)
            contours.append(np.asarray(np.float32(c), np.float64))
            irises.append(np.asarray(np.float32(i), np.float64))
        yaw, pitch, roll = ma.head_pose(mesh)
        face_h = box[3]
        cases.append({
            "name": name,
            "inputs": {"box": r(box), "landmarks5": r(lm5), "mesh": r(mesh), "presence": round(float(pres), 6),
                       "sharpness": round(float(sharp), 6), "face_height": round(float(face_h), 6),
                       "eye_contours": [r(c) for c in contours], "irises": [r(i) for i in irises]},
            "outputs": {
                "mesh_roi": r(roi), "mesh_roi_from_mesh": r(ma.mesh_roi_from_mesh(mesh)),
                "eye_rois": [{"roi": r(e[0]), "mirror": e[1]} for e in eyes],
                "eye_opening": [round(ma.eye_opening(c, mirrored, yaw), 6) for c, mirrored in zip(contours, (False, True))],
                "eye_openness": [round(ma.eye_openness_lids(c, mirrored, yaw), 6) for c, mirrored in zip(contours, (False, True))],
                "eye_closed": [bool(ma.eye_opening(c, mirrored, yaw) < ma.EYE_CLOSED_OPENING)
                               for c, mirrored in zip(contours, (False, True))],
                "eye_openness_mesh": r(ma.eye_openness_mesh(mesh)),
                "smile_features": r(ma.smile_features(mesh)), "smile_raw": round(ma.smile_raw(mesh), 6),
                "smile_score": round(ma.smile_score(mesh), 6),
                "yaw": round(yaw, 4), "pitch": round(pitch, 4), "roll": round(roll, 4),
                "quality": round(ma.quality(face_h, sharp, yaw, pitch, pres), 6)}})
        o = cases[-1]["outputs"]
        print(f"{name}: roi {np.round(roi, 1)} open {o['eye_openness']} smile {o['smile_score']:.3f} "
              f"ypr {o['yaw']:.1f} {o['pitch']:.1f} {o['roll']:.1f} q {o['quality']:.2f}")
    doc = {"about": "meshattr.py reference vectors (evaluation/expressions/make_mesh_vectors.py). Inputs are the primitives' "
                    "outputs in image px (mesh: 468 x (x, y, z) flattened; eye_contours: 71 x 3 per eye; irises: 5 x 3 "
                    "per eye; image-left eye first). Outputs: ROIs are (center_x, center_y, size, angle_degrees). "
                    "Tolerances: 1e-4 relative on ROIs, apertures and scores; 0.01 deg on angles.",
           "source": "astronaut.png: NASA photograph of Eileen Collins, public domain (scikit-image 0.26.0 skimage/data)",
           "cases": cases}
    with open(OUT, "w") as f:
        json.dump(doc, f, indent=1)
    print("wrote", OUT)


if __name__ == "__main__":
    main()
