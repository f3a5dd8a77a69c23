# Backs BENCHMARKS.md, "Face attributes on public sets": the mesh cache measure_mesh.py and measure_pitch.py read.
"""Caches detector, mesh and iris outputs for measure_mesh.py (so the arithmetic can be iterated fast).

    /usr/bin/python3 evaluation/research/cache_mesh.py genki|eyes|frames|all

Per face (the largest CenterFace face, detector at 320 px wide like production):
  box, lm5                  detector output (image px)
  roi1, mesh1, pres1, sh1   mesh on meshattr.mesh_roi(box, lm5)              (one mesh pass: what the product runs)
  roi2, mesh2, pres2, sh2   mesh again on meshattr.mesh_roi_from_mesh(mesh1) (MediaPipe's tracking ROI, for reference)
  eroi, contour, iris       iris on meshattr.eye_rois(mesh1), image-left eye first
  fer_box, fer_roi          64x64 grey crops for the FER CNN (axis-aligned detector-box square; rotated mesh ROI / 1.5)
Writes $FW_MESH_CACHE (default /tmp/fwmesh-cache)/<set>.npz. Eyes: the tight crops are padded 30% per side with a
black (constant 0) border before detection. Images: /work/shared/data/expressions (research data: measured, never fitted).
"""
import json
import os
import sys
import time

import cv2
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "expressions"))  # fwexpr, meshattr
import fwexpr  # noqa: E402
import meshattr as ma  # noqa: E402

CACHE = os.environ.get("FW_MESH_CACHE", "/tmp/fwmesh-cache")
EXPR = "/work/shared/data/expressions"
REPO = os.path.dirname(os.path.dirname(HERE))
LABELS = os.path.join(REPO, "Tests/FacewireDetectionTests/Fixtures/expression-labels.jsonl")
PAD = 0.3


def genki_items():
    rows = [l.rstrip("\n").split("\t") for l in open(os.path.join(EXPR, "genki/labels.tsv"))][1:]
    for r in rows:
        yield r[0], cv2.imread(os.path.join(EXPR, "genki", r[0]))


def pad(img):
    h, w = img.shape[:2]
    py, px = int(round(PAD * h)), int(round(PAD * w))
    return cv2.copyMakeBorder(img, py, py, px, px, cv2.BORDER_CONSTANT, value=0)


def eyes_items():
    for sub in ("closed", "open"):
        for f in sorted(os.listdir(os.path.join(EXPR, "eyes", sub))):
            yield f"{sub}/{f}", pad(cv2.imread(os.path.join(EXPR, "eyes", sub, f)))


def load_labels():
    recs = [json.loads(line) for line in open(LABELS) if line.strip()]
    recs.sort(key=lambda r: (r["clip"], r["frame"]))
    for j, r in enumerate(recs):
        r["split"] = "tune" if j % 2 == 0 else "test"
    return recs


def frames_items():
    want = {}
    for r in load_labels():
        want.setdefault(r["clip"], set()).add(r["frame"])
    for clip in sorted(want):
        for i, frame in fwexpr.read_frames(clip):
            if i in want[clip]:
                yield f"{clip}|{i}", frame
            if i >= max(want[clip]):
                break


def fer_box_crop(grey, box):
    x, y, w, h = box
    s = max(w, h)
    return ma.warp(grey, (x + w / 2, y + h / 2, s, 0.0), ma.EMO_N)


def process(models, det, key, img, timing):
    faces = fwexpr.detect_scaled(det, img, 320)
    if not faces:
        return None
    f = max(faces, key=lambda g: g["box"][2] * g["box"][3])
    out = {"key": key, "box": f["box"], "lm5": f["landmarks"], "shape": img.shape[:2]}
    roi1 = ma.mesh_roi(f["box"], f["landmarks"])
    t0 = time.perf_counter()
    m1, p1, s1 = models.run_mesh(img, roi1)
    t1 = time.perf_counter()
    eyes = ma.eye_rois(m1)
    cs, irs = [], []
    for roi, mirror in eyes:
        c, i = models.run_iris(img, roi, mirror)
        cs.append(c)
        irs.append(i)
    t2 = time.perf_counter()
    roi2 = ma.mesh_roi_from_mesh(m1)
    m2, p2, s2 = models.run_mesh(img, roi2)
    timing.append((t1 - t0, t2 - t1))
    grey = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
    r = roi1
    out.update(roi1=roi1, mesh1=m1, pres1=p1, sh1=s1, roi2=roi2, mesh2=m2, pres2=p2, sh2=s2,
               eroi=[e[0] for e in eyes], contour=np.array(cs), iris=np.array(irs),
               fer_box=fer_box_crop(grey, f["box"]),
               fer_roi=ma.warp(grey, (r[0], r[1], r[2] / ma.MESH_ROI_SCALE, r[3]), ma.EMO_N))
    return out


def run(name):
    cv2.setNumThreads(1)
    items = {"genki": genki_items, "eyes": eyes_items, "frames": frames_items}[name]()
    models = ma.Models()
    det = fwexpr.CenterFace()
    res, timing, missed = [], [], []
    for key, img in items:
        o = process(models, det, key, img, timing)
        if o is None:
            missed.append(key)
        else:
            res.append(o)
    os.makedirs(CACHE, exist_ok=True)
    keys = list(res[0].keys())
    arrs = {}
    for k in keys:
        vals = [r[k] for r in res]
        arrs[k] = np.array(vals, dtype=object if k == "key" else None)
    arrs["missed"] = np.array(missed, dtype=object)
    arrs["timing"] = np.array(timing)
    np.savez(os.path.join(CACHE, name + ".npz"), **arrs)
    t = np.array(timing)
    print(f"{name}: {len(res)} faces, {len(missed)} without a face; mesh {1000 * np.median(t[:, 0]):.1f} ms, "
          f"iris x2 {1000 * np.median(t[:, 1]):.1f} ms (median, one thread)", flush=True)


if __name__ == "__main__":
    for n in (["genki", "eyes", "frames"] if sys.argv[1] == "all" else sys.argv[1:]):
        run(n)
