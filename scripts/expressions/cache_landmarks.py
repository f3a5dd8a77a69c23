"""Runs YuNet and CenterFace on every frame of the single-face clips and caches the best face's landmarks.

/usr/bin/python3 scripts/expressions/cache_landmarks.py [clip ...]
Writes $FW_EXPR_CACHE (default /tmp/fwexpr-cache)/<clip>.<detector>.json: {frame: face or null}, with frames
read at <= 640 px wide (landmarks are in those coordinates), detectors run at 320 px wide like production.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fwexpr  # noqa: E402

CACHE = os.environ.get("FW_EXPR_CACHE", "/tmp/fwexpr-cache")
# Production runs both detectors at 320 px wide on a frame decoded at >= 640 px (FrameAnalyzer.swift).
INPUT_WIDTH = 320


def cache_path(clip, detector):
    return os.path.join(CACHE, f"{clip}.{detector}.json")


def run(clip):
    os.makedirs(CACHE, exist_ok=True)
    dets = {"yunet": fwexpr.YuNet(), "centerface": fwexpr.CenterFace()}
    todo = {k: d for k, d in dets.items() if not os.path.exists(cache_path(clip, k))}
    if not todo:
        return
    results = {k: {} for k in todo}
    for i, frame in fwexpr.read_frames(clip):
        for k, d in todo.items():
            faces = fwexpr.detect_scaled(d, frame, INPUT_WIDTH)
            # the largest face (single-face clips)
            faces.sort(key=lambda f: -f["box"][2] * f["box"][3])
            results[k][i] = faces[0] if faces else None
    for k in todo:
        with open(cache_path(clip, k), "w") as f:
            json.dump(results[k], f)
    print(clip, "done", flush=True)


if __name__ == "__main__":
    clips = sys.argv[1:] or sorted(c for c in os.listdir(fwexpr.VIDEO_DIR)
                                   if c.startswith(("liveportrait_", "sadtalker_")))
    for c in clips:
        run(c)
