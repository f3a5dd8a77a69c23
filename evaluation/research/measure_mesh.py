# Backs BENCHMARKS.md, "Face attributes on public sets": "the Python reference's runs" (RESULTS-mesh.md, "Measured").
"""Side-by-side evaluation of the attribute candidates (RESULTS-mesh.md).

    /usr/bin/python3 evaluation/research/cache_mesh.py all      # detector + mesh + iris per face, once
    /tmp/fervenv/bin/python evaluation/research/fer_scores.py emotion_model_quantized.tflite genki eyes frames  # opt-in
    /usr/bin/python3 evaluation/research/measure_mesh.py

Sets: GENKI-4K (2,000, smile + pose labels), CEW closed (596) vs UTKFace open (600) padded 30% with a black border,
our 469 labelled frames (tune = even positions, test = odd). One face per image: the largest CenterFace face
(320 px wide). Faces the detector misses count as errors where stated (misses: "not closed", "no smile").
"""
import json
import math
import os
import sys
import time

import cv2
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "expressions"))  # fwexpr, meshattr
import cache_mesh as cm  # noqa: E402
import fwexpr  # noqa: E402
import meshattr as ma  # noqa: E402

CACHE = cm.CACHE
EXPR = cm.EXPR


def load(name):
    z = np.load(os.path.join(CACHE, name + ".npz"), allow_pickle=True)
    d = {k: z[k] for k in z.files}
    fer = os.path.join(CACHE, name + ".fer.npz")
    if os.path.exists(fer):
        f = np.load(fer)
        d["happy_box"], d["happy_roi"], d["fer_ms"] = f["happy_box"], f["happy_roi"], float(f["ms"][0])
    return d


def prf(pred, y):
    pred, y = np.asarray(pred, bool), np.asarray(y, bool)
    tp = int((pred & y).sum())
    fp = int((pred & ~y).sum())
    fn = int((~pred & y).sum())
    P = tp / (tp + fp) if tp + fp else float("nan")
    R = tp / (tp + fn) if tp + fn else float("nan")
    return float(np.mean(pred == y)), P, R


def row(cells):
    print("| " + " | ".join(cells) + " |")


def fwexpr_results(name, d, images):
    """Current method (Haar + geometry on the 5-landmark aligned crop) with the cached CenterFace landmarks."""
    path = os.path.join(CACHE, name + ".fwexpr.json")
    if os.path.exists(path):
        return json.load(open(path))
    clf = fwexpr.Classifiers()
    out = {}
    for key, img in images:
        j = d["index"].get(key)
        if j is None:
            continue
        grey = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
        t0 = time.perf_counter()
        r = clf.classify(grey, d["lm5"][j], enforce_minimum=False)
        r["ms"] = 1000 * (time.perf_counter() - t0)
        out[key] = {k: (bool(v) if isinstance(v, (bool, np.bool_)) else v) for k, v in r.items()}
    json.dump(out, open(path, "w"))
    return out


def main():
    cv2.setNumThreads(1)
    sets = {n: load(n) for n in ("genki", "eyes", "frames")}
    for n, d in sets.items():
        d["index"] = {k: j for j, k in enumerate(d["key"])}
    g, e, f = sets["genki"], sets["eyes"], sets["frames"]
    fw = {"genki": fwexpr_results("genki", g, cm.genki_items()),
          "eyes": fwexpr_results("eyes", e, cm.eyes_items()),
          "frames": fwexpr_results("frames", f, cm.frames_items())}

    # --- arithmetic per face (timed) ---
    def arith(d):
        t_sm, t_eye, t_pose = [], [], []
        sm, ap_i, ap_m, pose = [], [], [], []
        for j in range(len(d["key"])):
            m = d["mesh1"][j]
            t0 = time.perf_counter()
            sm.append(ma.smile_raw(m))
            t1 = time.perf_counter()
            ap_i.append([ma.eye_aperture_iris(c) for c in d["contour"][j]])
            ap_m.append(ma.eye_apertures_mesh(m))
            t2 = time.perf_counter()
            pose.append(ma.head_pose(m))
            t3 = time.perf_counter()
            t_sm.append(t1 - t0)
            t_eye.append(t2 - t1)
            t_pose.append(t3 - t2)
        d.update(smile_raw=np.array(sm), ap_iris=np.array(ap_i), ap_mesh=np.array(ap_m), pose=np.array(pose),
                 t_smile=1000 * np.median(t_sm), t_eye=1000 * np.median(t_eye), t_pose=1000 * np.median(t_pose))
    for d in sets.values():
        arith(d)
    t_mesh = 1000 * np.median(np.concatenate([d["timing"][:, 0] for d in sets.values()]))
    t_iris = 1000 * np.median(np.concatenate([d["timing"][:, 1] for d in sets.values()]))
    t_fw = np.median([r["ms"] for r in fw["genki"].values()])
    print(f"Timing (median per face, one OpenCV thread, shared 2-core VM under load): mesh {t_mesh:.1f} ms, "
          f"iris x2 {t_iris:.1f} ms, FER {g.get('fer_ms', float('nan')):.2f} ms (LiteRT), current Haar method "
          f"{t_fw:.1f} ms; Python arithmetic: smile {g['t_smile']:.2f} ms, eyes {g['t_eye']:.2f} ms, pose "
          f"{g['t_pose']:.1f} ms (pure-Python loops; trivial in Swift)")

    # --- GENKI smile ---
    lab = {l.split("\t")[0]: l.rstrip("\n").split("\t")[1:] for l in open(os.path.join(EXPR, "genki/labels.tsv")).readlines()[1:]}
    gkeys = list(lab)
    yg = np.array([lab[k][0] == "1" for k in gkeys])
    gj = [g["index"].get(k) for k in gkeys]

    def on_genki(values, thr):
        return np.array([j is not None and values[j] >= thr for j in gj])
    print(f"\n## GENKI-4K smiles (N {len(yg)}, {yg.sum()} smiles; detector found {sum(j is not None for j in gj)})")
    row(["candidate", "operating point", "accuracy", "precision", "recall", "ms/face"])
    row(["---"] * 6)
    fwg = fw["genki"]
    acc, P, R = prf([fwg.get(k, {}).get("has_smile", False) for k in gkeys], yg)
    row(["current (fwexpr: Haar + folds + curve)", "raw >= 0.956", f"{acc:.3f}", f"{P:.3f}", f"{R:.3f}", f"{t_fw:.1f}"])
    acc, P, R = prf(on_genki(g["smile_raw"], ma.SMILE_THRESHOLD), yg)
    row(["mesh geometry smile", f"raw >= {ma.SMILE_THRESHOLD}", f"{acc:.3f}", f"{P:.3f}", f"{R:.3f}",
         f"{t_mesh:.1f} (mesh)"])
    if "happy_box" in g:
        for k, desc in (("happy_box", "detector box square"), ("happy_roi", "rotated mesh ROI / 1.5")):
            for thr in (0.5,):
                acc, P, R = prf(on_genki(g[k], thr), yg)
                row([f"FER P(happy), crop: {desc} (opt-in)", f">= {thr}", f"{acc:.3f}", f"{P:.3f}", f"{R:.3f}",
                     f"{g['fer_ms']:.2f}"])
            v = g[k]
            best = max((prf(on_genki(v, t), yg)[0], t) for t in np.unique(v))
            acc, P, R = prf(on_genki(v, best[1]), yg)
            row([f"FER P(happy), crop: {desc} (opt-in)", f">= {best[1]:.3f} (best on GENKI)", f"{acc:.3f}", f"{P:.3f}",
                 f"{R:.3f}", f"{g['fer_ms']:.2f}"])

    # --- eyes: CEW vs UTK ---
    files = [f"{s}/{x}" for s in ("closed", "open") for x in sorted(os.listdir(os.path.join(EXPR, "eyes", s)))]
    yc = np.array([k.startswith("closed") for k in files])
    ej = [e["index"].get(k) for k in files]
    print(f"\n## Eyes: CEW closed ({yc.sum()}) vs UTKFace open ({(~yc).sum()}), padded 30% black; face closed = both "
          f"eyes closed; detector missed {sum(j is None for j in ej)} (counted as not closed)")
    row(["candidate", "operating point", "closed recall", "open read closed", "precision", "ms/face"])
    row(["---"] * 6)

    def eyes_row(name, op, pred, ms):
        pred = np.array(pred, bool)
        _, P, R = prf(pred, yc)
        row([name, op, f"{R:.3f}", f"{pred[~yc].mean():.3f}", f"{P:.3f}", ms])
    fwe = fw["eyes"]
    eyes_row("current (fwexpr: Haar eye windows)", "windows <= 7",
             [bool(fwe.get(k, {}).get("left_eye_closed")) and bool(fwe.get(k, {}).get("right_eye_closed")) for k in files],
             f"{t_fw:.1f}")
    eyes_row("mesh + iris eyelid aperture", f"aperture < {ma.EYE_CLOSED_APERTURE}",
             [j is not None and bool((e["ap_iris"][j] < ma.EYE_CLOSED_APERTURE).all()) for j in ej],
             f"{t_mesh + t_iris:.1f}")
    for t in (0.20, 0.22, 0.24):
        eyes_row("mesh lids alone (no iris)", f"aperture < {t}",
                 [j is not None and bool((e["ap_mesh"][j] < t).all()) for j in ej], f"{t_mesh:.1f}")
    print("(sweep of the iris aperture threshold, CEW/UTK: t, closed recall, open read closed)")
    for t in (0.15, 0.16, 0.17, 0.18, 0.19):
        pred = np.array([j is not None and bool((e["ap_iris"][j] < t).all()) for j in ej])
        print(f"  {t:.2f}: {pred[yc].mean():.3f} {pred[~yc].mean():.3f}")

    # --- our frames ---
    recs = cm.load_labels()
    print(f"\n## Our 469 labelled frames (CenterFace landmarks; tune = even positions, test = odd)")
    row(["candidate", "task", "split", "N", "precision", "recall"])
    row(["---"] * 6)
    fwf = fw["frames"]

    def frame_decisions(task):
        out = []
        for r in recs:
            key = f"{r['clip']}|{r['frame']}"
            j = f["index"].get(key)
            if task == "smile":
                if r.get("smile") is None:
                    continue
                preds = {"current (fwexpr)": bool(fwf[key]["has_smile"]),
                         "mesh geometry smile": bool(f["smile_raw"][j] >= ma.SMILE_THRESHOLD)}
                if "happy_box" in f:
                    preds["FER P(happy) >= 0.5, box crop (opt-in)"] = bool(f["happy_box"][j] >= 0.5)
                    preds["FER P(happy) >= 0.5, mesh-ROI crop (opt-in)"] = bool(f["happy_roi"][j] >= 0.5)
                out.append((r["split"], r["smile"], preds))
            else:
                for side, e_ in (("left", 0), ("right", 1)):
                    if r.get(side + "_eye_closed") is None:
                        continue
                    preds = {"current (fwexpr)": bool(fwf[key][side + "_eye_closed"]),
                             "mesh + iris aperture": bool(f["ap_iris"][j][e_] < ma.EYE_CLOSED_APERTURE),
                             "mesh lids alone (< 0.20)": bool(f["ap_mesh"][j][e_] < 0.20)}
                    out.append((r["split"], r[side + "_eye_closed"], preds))
        return out
    for task in ("smile", "eyes closed"):
        dec = frame_decisions("smile" if task == "smile" else "eyes")
        for cand in dec[0][2]:
            for split in ("tune", "test", "all"):
                sel = [(p[cand], y) for s, y, p in dec if split == "all" or s == split]
                _, P, R = prf([a for a, _ in sel], [b for _, b in sel])
                row([cand, task, split, str(len(sel)), f"{P:.3f}", f"{R:.3f}"])
    winks = [r for r in recs if r.get("left_eye_closed") is not None and r.get("right_eye_closed") is not None
             and r["left_eye_closed"] != r["right_eye_closed"]]
    ok_iris = sum(1 for r in winks if list(f["ap_iris"][f["index"][f"{r['clip']}|{r['frame']}"]] < ma.EYE_CLOSED_APERTURE)
                  == [r["left_eye_closed"], r["right_eye_closed"]])
    ok_fw = sum(1 for r in winks if [fwf[f"{r['clip']}|{r['frame']}"]["left_eye_closed"],
                                     fwf[f"{r['clip']}|{r['frame']}"]["right_eye_closed"]]
                == [r["left_eye_closed"], r["right_eye_closed"]])
    print(f"\nWinks (labelled one eye closed, the other open): mesh + iris {ok_iris}/{len(winks)}, current {ok_fw}/{len(winks)}")

    # --- head pose on GENKI ---
    L = np.degrees(np.array([[float(v) for v in lab[k][1:4]] for k in gkeys]))
    have = np.array([j is not None for j in gj])
    Pm = np.array([g["pose"][j] for j in gj if j is not None])
    Lh = L[have]
    y5, r5 = [], []
    for j in gj:
        if j is None:
            continue
        lm = g["lm5"][j]
        y5.append(fwexpr.yaw_degrees(lm))
        le, re_, _, _, _ = ma.ordered5(lm)
        r5.append(math.degrees(math.atan2(re_[1] - le[1], re_[0] - le[0])))
    print(f"\n## Head pose vs GENKI labels (N {have.sum()}; degrees; GENKI's yaw and roll signs equal ours, its pitch "
          f"is positive looking up)")
    row(["method", "yaw median abs err", "roll median abs err", "pitch median abs err", "pitch median signed err"])
    row(["---"] * 5)
    med = lambda a: float(np.median(np.abs(a)))  # noqa: E731
    row(["before: 5 landmarks (atan(0.92 o), eye-line angle)", f"{med(np.array(y5) - Lh[:, 0]):.2f}",
         f"{med(np.array(r5) - Lh[:, 2]):.2f}", "n/a", "n/a"])
    row(["constant 0", f"{med(Lh[:, 0]):.2f}", f"{med(Lh[:, 2]):.2f}", f"{med(Lh[:, 1]):.2f}", ""])
    row(["constant = GENKI's median", "", "", f"{med(Lh[:, 1] - np.median(Lh[:, 1])):.2f}", ""])
    row(["after: mesh, orthographic fit to the canonical rigid points", f"{med(Pm[:, 0] - Lh[:, 0]):.2f}",
         f"{med(Pm[:, 2] - Lh[:, 2]):.2f}", f"{med(Pm[:, 1] - Lh[:, 1]):.2f}", f"{np.median(Pm[:, 1] - Lh[:, 1]):+.2f}"])
    for j, n in enumerate(("yaw", "pitch", "roll")):
        print(f"- {n}: correlation with GENKI {np.corrcoef(Pm[:, j], Lh[:, j])[0, 1]:+.3f}, least-squares slope of "
              f"GENKI on ours {np.polyfit(Pm[:, j], Lh[:, j], 1)[0]:.2f}, median signed error "
              f"{np.median(Pm[:, j] - Lh[:, j]):+.2f}")

    # --- quality distribution ---
    print("\n## Quality (median, 10th percentile) per set")
    for n, d in sets.items():
        q = [ma.quality(d["box"][j][3], d["sh1"][j], d["pose"][j][0], d["pose"][j][1], d["pres1"][j])
             for j in range(len(d["key"]))]
        print(f"- {n}: median {np.median(q):.2f}, p10 {np.percentile(q, 10):.2f}")


if __name__ == "__main__":
    main()
