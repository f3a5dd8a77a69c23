"""Measures the smile and eyes-closed classifiers on the hand-labelled frames.

    /usr/bin/python3 evaluation/expressions/measure.py           # P/R/F1 on tune/test/all, both detectors, wink check
    /usr/bin/python3 evaluation/expressions/measure.py --tune    # also re-derive the thresholds on the tune split
    /usr/bin/python3 evaluation/expressions/measure.py --sizes   # P/R when faces are scaled down to a given eye distance
    /usr/bin/python3 evaluation/expressions/measure.py --dump F  # write per-frame scores as JSON lines (C++ comparison)

Labels: Tests/FacewireDetectionTests/Fixtures/expression-labels.jsonl (a missing key = unsure, not counted).
Split: records sorted by (clip, frame); even positions = tune, odd = test. The operating points in fwexpr.py were
chosen on tune only. Frames are read sequentially with cv2.VideoCapture, scaled to <= 640 px wide; both detectors
run at 320 px wide like production, and the classifiers run on the <= 640 px frame with the detector's landmarks.
Landmarks are cached in $FW_EXPR_CACHE (default /tmp/fwexpr-cache).
"""
import argparse
import collections
import json
import math
import os
import sys
import time

import cv2
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fwexpr  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LABELS = os.path.join(REPO, "Tests/FacewireDetectionTests/Fixtures/expression-labels.jsonl")
CACHE = os.environ.get("FW_EXPR_CACHE", "/tmp/fwexpr-cache")
DETECTORS = ("centerface", "yunet")
DETECTOR_WIDTH = 320


def load_labels():
    recs = [json.loads(line) for line in open(LABELS) if line.strip()]
    recs.sort(key=lambda r: (r["clip"], r["frame"]))
    for j, r in enumerate(recs):
        r["split"] = "tune" if j % 2 == 0 else "test"
    return recs


def landmarks_for(recs):
    """{(clip, frame, detector): landmarks or None}, detecting only labelled frames; cached."""
    path = os.path.join(CACHE, "labelled-landmarks.json")
    cache = json.load(open(path)) if os.path.exists(path) else {}
    by_clip = collections.defaultdict(set)
    for r in recs:
        for d in DETECTORS:
            if f"{r['clip']}|{r['frame']}|{d}" not in cache:
                by_clip[r["clip"]].add(r["frame"])
    if by_clip:
        dets = {"centerface": fwexpr.CenterFace(), "yunet": fwexpr.YuNet()}
        for clip, frames in sorted(by_clip.items()):
            for i, frame in fwexpr.read_frames(clip):
                if i in frames:
                    for d, det in dets.items():
                        faces = fwexpr.detect_scaled(det, frame, DETECTOR_WIDTH)
                        faces.sort(key=lambda f: -f["box"][2] * f["box"][3])  # single-face clips: the largest
                        cache[f"{clip}|{i}|{d}"] = faces[0]["landmarks"] if faces else None
                if i >= max(frames):
                    break
        os.makedirs(CACHE, exist_ok=True)
        json.dump(cache, open(path, "w"))
    return {tuple(k.rsplit("|", 2)[:1] + [int(k.rsplit("|", 2)[1]), k.rsplit("|", 2)[2]]): v
            for k, v in cache.items()}


def classify_all(recs, lms, scale_to_iod=None):
    """Runs the classifiers on every labelled frame; returns {(clip, frame, detector): result}."""
    clf = fwexpr.Classifiers()
    frames = collections.defaultdict(set)
    for r in recs:
        frames[r["clip"]].add(r["frame"])
    results = {}
    timing = []
    for clip, want in sorted(frames.items()):
        for i, frame in fwexpr.read_frames(clip):
            if i in want:
                grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
                for d in DETECTORS:
                    lm = lms.get((clip, i, d))
                    if lm is None:
                        continue
                    img, lm2 = grey, np.asarray(lm, np.float64)
                    if scale_to_iod:
                        le, re_, _, _, _ = fwexpr.ordered_points(lm2)
                        s = scale_to_iod / math.hypot(*(re_ - le))
                        if s < 1:
                            img = cv2.resize(grey, (max(1, round(grey.shape[1] * s)), max(1, round(grey.shape[0] * s))),
                                             interpolation=cv2.INTER_AREA)
                            lm2 = lm2 * np.array([img.shape[1] / grey.shape[1], img.shape[0] / grey.shape[0]] * 5)
                    t0 = time.perf_counter()
                    results[(clip, i, d)] = fwexpr_result = clf.classify(img, lm2, enforce_minimum=not scale_to_iod)
                    timing.append(time.perf_counter() - t0)
                    fwexpr_result["landmarks"] = [float(v) for v in np.asarray(lm2, np.float32)]
            if i >= max(want):
                break
    return results, timing


def prf(pairs):
    tp = sum(1 for p, y in pairs if p and y)
    fp = sum(1 for p, y in pairs if p and not y)
    fn = sum(1 for p, y in pairs if not p and y)
    P = tp / (tp + fp) if tp + fp else float("nan")
    R = tp / (tp + fn) if tp + fn else float("nan")
    F = 2 * P * R / (P + R) if P + R > 0 else float("nan")
    return P, R, F, len(pairs), tp + fn


def tasks(recs, results, det):
    """Yields (task, split, predicted, label, score) for every labelled decision."""
    for r in recs:
        res = results.get((r["clip"], r["frame"], det))
        if res is None:
            continue
        if r.get("smile") is not None and "has_smile" in res:
            yield "smile", r["split"], res["has_smile"], r["smile"], res["smile_raw"]
        for side in ("left", "right"):
            if r.get(side + "_eye_closed") is not None and side + "_eye_hits" in res:
                yield "eye_closed", r["split"], res[side + "_eye_closed"], r[side + "_eye_closed"], -res[side + "_eye_hits"]


def table(recs, results, title):
    print(f"\n## {title}")
    print("| detector | classifier | split | N | positives | precision | recall | F1 |")
    print("|---|---|---|---|---|---|---|---|")
    for det in DETECTORS:
        rows = list(tasks(recs, results, det))
        for task in ("smile", "eye_closed"):
            for split in ("tune", "test", "all"):
                pairs = [(p, y) for t, s, p, y, _ in rows if t == task and (split == "all" or s == split)]
                P, R, F, n, pos = prf(pairs)
                print(f"| {det} | {task} | {split} | {n} | {pos} | {P:.3f} | {R:.3f} | {F:.3f} |")
        missing = sum(1 for r in recs if (r["clip"], r["frame"], det) not in results)
        if missing:
            print(f"| {det} | (no face found on {missing} labelled frames: not counted) | | | | | | |")


def best_threshold(scores_labels):
    """Threshold on the score maximising min(P, R) then F1 (score >= t means positive)."""
    best = None
    for t in sorted(set(s for s, _ in scores_labels)):
        P, R, F, _, _ = prf([(s >= t, y) for s, y in scores_labels])
        key = (min(P, R), F)
        if best is None or key > best[0]:
            best = (key, t)
    return best[1]


def wink_check(recs, results):
    print("\n## Wink check")
    for det in DETECTORS:
        d14 = [r for r in recs if r["clip"] == "liveportrait_d14.mp4"
               and r.get("left_eye_closed") is not None and r.get("right_eye_closed") is not None
               and r["left_eye_closed"] != r["right_eye_closed"]]
        anywhere = [r for r in recs if r.get("left_eye_closed") is not None and r.get("right_eye_closed") is not None
                    and r["left_eye_closed"] != r["right_eye_closed"]]
        for name, group in (("liveportrait_d14 wink frames", d14), ("all labelled wink frames", anywhere)):
            ok = 0
            bad = []
            for r in group:
                res = results.get((r["clip"], r["frame"], det))
                if res and res["left_eye_closed"] == r["left_eye_closed"] and res["right_eye_closed"] == r["right_eye_closed"]:
                    ok += 1
                else:
                    bad.append((r["clip"], r["frame"]))
            print(f"- {det}: {name}: {ok}/{len(group)} show the labelled eye closed and the other open"
                  + (f"; misses {bad[:8]}" if bad else ""))
        # also: labelled both-open or both-closed frames the classifier calls a wink
        d14_all = [r for r in recs if r["clip"] == "liveportrait_d14.mp4" and r.get("left_eye_closed") is not None
                   and r.get("right_eye_closed") is not None]
        false_winks = sum(1 for r in d14_all if r["left_eye_closed"] == r["right_eye_closed"]
                          and (res := results.get((r["clip"], r["frame"], det)))
                          and res["left_eye_closed"] != res["right_eye_closed"])
        print(f"- {det}: liveportrait_d14 frames labelled symmetric (both open or both closed) that the classifier "
              f"calls a wink: {false_winks}/{len(d14_all)}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tune", action="store_true")
    ap.add_argument("--sizes", action="store_true")
    ap.add_argument("--dump")
    args = ap.parse_args()
    recs = load_labels()
    print(f"{len(recs)} labelled frames from {len(set(r['clip'] for r in recs))} clips; "
          f"tune {sum(r['split'] == 'tune' for r in recs)}, test {sum(r['split'] == 'test' for r in recs)}")
    print(f"operating points: eye closed when haarcascade_eye windows <= {fwexpr.EYE_CLOSED_MAX_HITS}; "
          f"smile when cascade/100 + {fwexpr.FOLD_WEIGHT}*fold + {fwexpr.CURVE_WEIGHT}*curve >= {fwexpr.SMILE_THRESHOLD}")
    lms = landmarks_for(recs)
    results, timing = classify_all(recs, lms)
    print(f"Python classify time per face (both classifiers): median {1000 * np.median(timing):.2f} ms")
    table(recs, results, "Labelled frames, production landmarks (detector at 320 px, frame <= 640 px)")
    wink_check(recs, results)
    if args.tune:
        print("\n## Thresholds re-derived on the tune split (maximise min(P, R), then F1)")
        for det in DETECTORS:
            rows = list(tasks(recs, results, det))
            for task in ("smile", "eye_closed"):
                t = best_threshold([(sc, y) for tk, s, _, y, sc in rows if tk == task and s == "tune"])
                print(f"- {det} {task}: score >= {t:.3f}" + (f" (eye windows <= {-t:.0f})" if task == "eye_closed" else ""))
    if args.dump:
        with open(args.dump, "w") as f:
            for (clip, i, d), res in sorted(results.items()):
                f.write(json.dumps(dict(clip=clip, frame=i, detector=d, **{k: (bool(v) if isinstance(v, (bool, np.bool_)) else v)
                                                                            for k, v in res.items()})) + "\n")
    if args.sizes:
        print("\n## Smaller faces: frames scaled down so the eye distance is N px (landmarks scaled alike)")
        print("| eye distance px | detector | smile P | smile R | eyes P | eyes R |")
        print("|---|---|---|---|---|---|")
        for iod in (48, 36, 28, 24, 20, 16, 12):
            res2, _ = classify_all(recs, lms, scale_to_iod=iod)
            for det in DETECTORS:
                rows = list(tasks(recs, res2, det))
                sm = prf([(p, y) for t, s, p, y, _ in rows if t == "smile"])
                ey = prf([(p, y) for t, s, p, y, _ in rows if t == "eye_closed"])
                print(f"| {iod} | {det} | {sm[0]:.2f} | {sm[1]:.2f} | {ey[0]:.2f} | {ey[1]:.2f} |")


if __name__ == "__main__":
    main()
