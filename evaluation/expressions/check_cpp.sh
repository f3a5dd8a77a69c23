#!/usr/bin/env bash
# Checks that the C++ port (Sources/COpenCV/attributes.cpp) makes the same decisions as the Python reference on every
# labelled frame, and times it (one OpenCV thread). Run from the repo root:  evaluation/expressions/check_cpp.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
work=${TMPDIR:-/tmp}/fw-attr-check
mkdir -p "$work"
/usr/bin/python3 evaluation/expressions/measure.py --dump "$work/python.jsonl" > /dev/null
/usr/bin/python3 - "$work" <<'PY'
import json, sys
w = sys.argv[1]
with open(f"{w}/input.txt", "w") as f:
    for line in open(f"{w}/python.jsonl"):
        d = json.loads(line)
        f.write(" ".join([d["clip"], str(d["frame"]), d["detector"]] + [repr(v) for v in d["landmarks"]]) + "\n")
PY
g++ -std=c++17 -O2 -I/usr/include/opencv4 -ISources/COpenCV/include evaluation/expressions/check_cpp.cpp \
    Sources/COpenCV/attributes.cpp -o "$work/check" -lopencv_core -lopencv_imgproc -lopencv_objdetect -lopencv_videoio
"$work/check" "$work/input.txt" /work/shared/data/video > "$work/cpp.txt"
/usr/bin/python3 - "$work" <<'PY'
import json, sys
w = sys.argv[1]
py = {}
for line in open(f"{w}/python.jsonl"):
    d = json.loads(line)
    py[(d["clip"], d["frame"], d["detector"])] = d
n = bad = 0
worst_raw = worst_yaw = 0.0
for line in open(f"{w}/cpp.txt"):
    c, f, det, sv, sh, hs, ev, raw, lh, rh, eyes, yaw, yv, sc = line.split()
    d = py[(c, int(f), det)]
    n += 1
    same = (int(sh) == d.get("smile_hits") and int(hs) == int(d.get("has_smile", 0)) and int(lh) == d.get("left_eye_hits")
            and int(rh) == d.get("right_eye_hits") and int(eyes) == int(d["left_eye_closed"]) * 2 + int(d["right_eye_closed"]))
    bad += not same
    worst_raw = max(worst_raw, abs(float(raw) - d.get("smile_raw", 0)))
    worst_yaw = max(worst_yaw, abs(float(yaw) - d["yaw"]))
print(f"{n} faces compared: {n - bad} identical decisions and cascade counts, {bad} different; "
      f"max |smile raw diff| {worst_raw:.1e}, max |yaw diff| {worst_yaw:.1e} deg")
sys.exit(1 if bad else 0)
PY
