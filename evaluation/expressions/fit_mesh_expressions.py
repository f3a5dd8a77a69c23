#!/usr/bin/env python3
"""Fits and scores the six mesh expressions (issue 32) on our own labelled frames, and prints their constants.

    /usr/bin/python3 evaluation/expressions/fit_mesh_expressions.py [--video ../shared/data/video] [--cache FILE]

For every frame of Tests/FacewireDetectionTests/Fixtures/action-labels.jsonl: CenterFace at 320 px, the largest
face, MediaPipe's mesh and iris model (meshattr.py, the product's Python reference), then mesh_expressions.features.
Each expression: L2-regularised logistic regression (lambda 1 on standardised features, intercept unpenalised,
classes weighted equally, Newton's method) on the FIT split (even positions of each clip's sorted labelled frames),
the operating point at the best F1 on the fit split, folded into b. Printed per expression: counts, precision and
recall on the held-back odd positions, leave-one-clip-out (refitted without the clip, threshold included, pooled)
and the fitted w and b in raw-feature units (what mesh_expressions.MODELS holds).
Needs numpy and OpenCV's Python module (Debian python3-numpy python3-opencv) and the models scripts/setup.sh
installs. The meshes are cached (--cache) so a second run only fits.
"""
import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fwexpr  # noqa: E402
import meshattr as ma  # noqa: E402
import mesh_expressions as mx  # noqa: E402

LABELS = os.path.join(HERE, "..", "..", "Tests", "FacewireDetectionTests", "Fixtures", "action-labels.jsonl")
FEATURES = {
    "mouth_open": ["lip_gap"],
    "brow_raise": ["brow_height", "brow_inner_z"],
    "brow_furrow": ["brow_low_to_eye", "brow_top_to_eye", "brow_inner_gap"],
    "eye_widen": ["lid_gap"],
    "eye_widen_mesh": ["mesh_lid_gap"],
    "lip_pucker": ["mouth_width_ratio", "lip_protrusion"],
    "lip_corner_depressor": ["corner_lift", "lip_gap"],
}


def cache_meshes(labels, video, path):
    if os.path.exists(path):
        data = np.load(path, allow_pickle=True)
        return list(data["mesh"]), list(data["contours"])
    models, detector = ma.Models(), fwexpr.CenterFace()
    found = {}
    for clip, index, image in fwexpr.labelled_frames(labels, video):
        found[(clip, index)] = fwexpr.largest_face_mesh(detector, models, image) or (None, None)
    meshes = [found.get((item["clip"], item["frame"]), (None, None))[0] for item in labels]
    contours = [found.get((item["clip"], item["frame"]), (None, None))[1] for item in labels]
    np.savez(path, mesh=np.array(meshes, dtype=object), contours=np.array(contours, dtype=object))
    return meshes, contours


def fit_lr(x, y, lam=1.0, iterations=50):
    n, d = x.shape
    p = y.mean()
    weights = np.where(y == 1, 0.5 / p, 0.5 / (1 - p))
    a = np.hstack([x, np.ones((n, 1))])
    theta = np.zeros(d + 1)
    penalty = np.eye(d + 1) * lam
    penalty[-1, -1] = 0
    for _ in range(iterations):
        q = 1 / (1 + np.exp(-np.clip(a @ theta, -50, 50)))
        gradient = a.T @ (weights * (q - y)) + penalty @ theta
        hessian = (a * (weights * q * (1 - q))[:, None]).T @ a + penalty
        step = np.linalg.solve(hessian, gradient)
        theta -= step
        if np.abs(step).max() < 1e-10:
            break
    return theta[:-1], theta[-1]


def precision_recall(predicted, y):
    tp = int(np.sum(predicted & (y == 1)))
    fp = int(np.sum(predicted & (y == 0)))
    fn = int(np.sum(~predicted & (y == 1)))
    return (tp / (tp + fp) if tp + fp else float("nan")), (tp / (tp + fn) if tp + fn else float("nan")), tp, fp, fn


def fit_raw(x, y):
    """(w, b) in raw-feature units, the best-F1 threshold of the fit split folded into b."""
    mu, sd = x.mean(0), x.std(0) + 1e-12
    w, b = fit_lr((x - mu) / sd, y)
    s = ((x - mu) / sd) @ w + b
    levels = np.unique(s)
    best = (-1.0, levels[0])
    for i, t in enumerate(levels):
        p, r, *_ = precision_recall(s >= t, y)
        f1 = 0 if np.isnan(p) else 2 * p * r / (p + r + 1e-12)
        if f1 > best[0]:
            best = (f1, (t + levels[i - 1]) / 2 if i > 0 else t - 1e-6)
    return w / sd, b - np.sum(w * mu / sd) - best[1]


def held_back(items):
    """The split every expression script uses: for the labelled frames `items` (dicts with "clip" and "frame", the
    frames measured), True for those held back — the odd positions of each clip's frames sorted — and False for the
    even ones, which are fitted on."""
    position = {}
    for clip in set(item["clip"] for item in items):
        frames = sorted(item["frame"] for item in items if item["clip"] == clip)
        position.update({(clip, f): k for k, f in enumerate(frames)})
    return np.array([position[(item["clip"], item["frame"])] % 2 == 1 for item in items])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--video", default=os.path.join(HERE, "..", "..", "..", "shared", "data", "video"))
    parser.add_argument("--cache", default="/tmp/facewire-action-meshes.npz")
    args = parser.parse_args()
    labels = [json.loads(line) for line in open(LABELS) if line.strip()]
    meshes, contours = cache_meshes(labels, args.video, args.cache)
    keep = [i for i, m in enumerate(meshes) if m is not None]
    features = [mx.features(meshes[i], contours[i]) for i in keep]
    clip = np.array([labels[i]["clip"] for i in keep])
    held = held_back([labels[i] for i in keep])
    constants = {}
    print("| expression | fit +/− | held-back +/− | held-back P / R | leave-one-clip-out P / R |")
    print("|---|---|---|---|---|")
    for name, names in FEATURES.items():
        key = name.replace("_mesh", "")
        truth = np.array([labels[i].get(key) for i in keep], dtype=object)
        labelled = np.array([t is not None for t in truth])
        y = np.array([1.0 if t else 0.0 for t in truth])
        x = np.array([[f[n] for n in names] for f in features])
        fit, back = labelled & ~held, labelled & held
        w, b = fit_raw(x[fit], y[fit])
        p, r, *_ = precision_recall(x[back] @ w + b >= 0, y[back])
        pooled = np.zeros(len(x), bool)
        for c in sorted(set(clip[labelled])):
            train, test = labelled & (clip != c), labelled & (clip == c)
            if y[train].sum() == 0:
                continue
            w2, b2 = fit_raw(x[train], y[train])
            pooled[test] = x[test] @ w2 + b2 >= 0
        lp, lr, *_ = precision_recall(pooled[labelled], y[labelled])
        print(f"| {name} | {int(y[fit].sum())}/{int((fit & (y == 0)).sum())} | {int(y[back].sum())}/{int((back & (y == 0)).sum())} "
              f"| {p:.2f} / {r:.2f} | {lp:.2f} / {lr:.2f} |")
        constants[name] = {"features": names, "w": [round(float(v), 6) for v in w], "b": round(float(b), 6)}
    print(json.dumps(constants, indent=1))


if __name__ == "__main__":
    main()
