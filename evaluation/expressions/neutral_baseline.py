#!/usr/bin/env python3
"""Would a per-track neutral face lift the mesh expressions? (issue 32; BENCHMARKS "Expressions from the mesh").

    /usr/bin/python3 evaluation/expressions/neutral_baseline.py [--video ../shared/data/video] [--cache FILE]

Measures the features of mesh_expressions.py on every second frame (and every labelled frame) of the 19 clips of
Tests/FacewireDetectionTests/Fixtures/action-labels.jsonl (CenterFace at 320 px, the largest face, the mesh and iris
model of meshattr.py), then refits each expression as fit_mesh_expressions.py does (same features, fit on each clip's
even-positioned labelled frames, the rest held back; and leave-one-clip-out), with each labelled frame's features taken
relative to a baseline of its own clip:
  none                       the features as they are (what ships);
  all Q                      the clip's Q-th percentile over all its frames (not causal: an upper bound);
  causal K                   the median of the clip's frames so far, shrunk towards the population's median by K frames;
  causal-both K              both the features and the causal relative ones.
Prints held-back and leave-one-clip-out precision / recall per expression and baseline. The features are cached
(--cache), so a second run only fits.
"""
import argparse
import importlib.util
import json
import os
import sys

import cv2
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fwexpr  # noqa: E402
import meshattr as ma  # noqa: E402
import mesh_expressions as mx  # noqa: E402

_spec = importlib.util.spec_from_file_location("fit", os.path.join(HERE, "fit_mesh_expressions.py"))
fit = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fit)


def clip_features(labels, video, path):
    if os.path.exists(path):
        return json.load(open(path))
    models, detector = ma.Models(), fwexpr.CenterFace()
    out = {}
    for clip in sorted(set(item["clip"] for item in labels)):
        wanted = set(item["frame"] for item in labels if item["clip"] == clip)
        capture, index, rows = cv2.VideoCapture(os.path.join(video, clip)), -1, []
        while True:
            ok, image = capture.read()
            index += 1
            if not ok:
                break
            if index % 2 and index not in wanted:
                continue
            measured = fwexpr.largest_face_mesh(detector, models, image)
            if measured is None:
                continue
            row = mx.features(*measured)
            row["frame"] = index
            rows.append(row)
        out[clip] = rows
        print(clip, len(rows), file=sys.stderr, flush=True)
    json.dump(out, open(path, "w"))
    return out


def evaluate(labels, clips, mode, parameter):
    names = sorted(k for k in next(iter(clips.values()))[0] if k != "frame")
    population = np.median(np.array([[r[n] for n in names] for rows in clips.values() for r in rows]), 0)
    rows = []
    for item in labels:
        frames = clips[item["clip"]]
        found = [i for i, r in enumerate(frames) if r["frame"] == item["frame"]]
        if not found:
            continue
        i = found[0]
        x = np.array([[r[n] for n in names] for r in frames])
        if mode == "none":
            base = np.zeros(len(names))
        elif mode == "all":
            base = np.percentile(x, parameter, 0)
        else:
            n = i + 1
            base = (n * np.median(x[:n], 0) + parameter * population) / (n + parameter)
        rows.append((item, x[i], base))
    clip = np.array([r[0]["clip"] for r in rows])
    held = fit.held_back([r[0] for r in rows])
    result = {}
    for name, features in fit.FEATURES.items():
        if name == "eye_widen_mesh":
            continue
        columns = [names.index(n) for n in features]
        truth = [r[0].get(name) for r in rows]
        labelled = np.array([t is not None for t in truth])
        y = np.array([1.0 if t else 0.0 for t in truth])
        raw = np.array([r[1][columns] for r in rows])
        relative = raw - np.array([r[2][columns] for r in rows])
        x = raw if mode == "none" else np.hstack([raw, relative]) if mode == "causal-both" else relative
        fitted, back = labelled & ~held, labelled & held
        w, b = fit.fit_raw(x[fitted], y[fitted])
        p, r, *_ = fit.precision_recall(x[back] @ w + b >= 0, y[back])
        pooled = np.zeros(len(x), bool)
        for c in sorted(set(clip[labelled])):
            train, test = labelled & (clip != c), labelled & (clip == c)
            w2, b2 = fit.fit_raw(x[train], y[train])
            pooled[test] = x[test] @ w2 + b2 >= 0
        lp, lr, *_ = fit.precision_recall(pooled[labelled], y[labelled])
        result[name] = (p, r, lp, lr)
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--video", default=os.path.join(HERE, "..", "..", "..", "shared", "data", "video"))
    parser.add_argument("--cache", default="/tmp/facewire-expression-clip-features.json")
    args = parser.parse_args()
    labels = [json.loads(line) for line in open(fit.LABELS) if line.strip()]
    clips = clip_features(labels, args.video, args.cache)
    variants = [("none", 0), ("all", 50), ("all", 30), ("causal", 30), ("causal-both", 30)]
    results = {f"{m} {p}" if m != "none" else m: evaluate(labels, clips, m, p) for m, p in variants}
    expressions = list(next(iter(results.values())))
    print("| baseline | " + " | ".join(expressions) + " |")
    print("|---" * (len(expressions) + 1) + "|")
    for variant, result in results.items():
        cells = [f"{p:.2f} / {r:.2f}; {lp:.2f} / {lr:.2f}" for p, r, lp, lr in (result[e] for e in expressions)]
        print(f"| {variant} | " + " | ".join(cells) + " |")
    print("(each cell: held-back P / R; leave-one-clip-out P / R)")


if __name__ == "__main__":
    main()
