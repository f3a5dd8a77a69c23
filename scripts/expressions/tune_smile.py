"""How the smile operating point was chosen: grid over the two feature weights and the threshold, on the tune
split only, pooling both detectors' landmarks (the C API does not know which detector found the face).

    /usr/bin/python3 scripts/expressions/measure.py --dump /tmp/fw-scores.jsonl
    /usr/bin/python3 scripts/expressions/tune_smile.py /tmp/fw-scores.jsonl
"""
import json
import sys

import numpy as np

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import measure  # noqa: E402


def main(path):
    recs = {(r["clip"], r["frame"]): r for r in measure.load_labels()}
    rows = []
    for line in open(path):
        d = json.loads(line)
        r = recs.get((d["clip"], d["frame"]))
        if r is None or r.get("smile") is None:
            continue
        rows.append((d["smile_hits"] / 100.0, d["smile_fold"], d["smile_curve"], r["smile"], r["split"], d["detector"]))
    X = np.array([r[:3] for r in rows])
    y = np.array([r[3] for r in rows])
    tune = np.array([r[4] == "tune" for r in rows])
    best = None
    for wf in (0, 0.5, 1, 1.5, 2, 3, 4):
        for wc in (0, 1, 2, 3, 4, 5):
            s = X[:, 0] + wf * X[:, 1] + wc * X[:, 2]
            pairs = list(zip(s[tune], y[tune]))
            t = measure.best_threshold(pairs)
            P, R, F, _, _ = measure.prf([(a >= t, b) for a, b in pairs])
            key = (round(min(P, R), 3), F)
            if best is None or key > best[0]:
                best = (key, wf, wc, t)
    (mpr, F), wf, wc, t = best
    print(f"best on tune: fold weight {wf}, curve weight {wc}, threshold {t:.3f} (tune min(P,R) {mpr:.3f}, F1 {F:.3f})")


if __name__ == "__main__":
    main(sys.argv[1])
