#!/usr/bin/env python3
"""Heart rates on real face recordings with a contact pulse sensor (../shared/data/pulse-video), through the real
cluster, at every playback pace (issue 32).

Each `sample_video_N.mp4` is played by `facewire --role local --classifiers pulse` in real time and at `--fps max`
(the frames carry their media time, so both paces must give the same rates), and every frame's heart rate is scored
against the recording's PPG (`sample_vitals_N.csv`, one row per video frame):

* the PPG's **mean** rate: its beats (peaks of the detrended waveform, refined between samples), first to last;
* the PPG's rate **over the estimate's own window** (the beats within the `window` seconds that end at the frame):
  the error per frame where the PPG has at least three beats there.

A frame is *after the first window* when its media time is at least the first estimate's window (the estimator's
first window; 10 s by default) after the first frame with a face. Reported: the share of those frames with a
heartRate; right: within --tolerance (3) bpm of the PPG's mean; the largest error; the median error against the
windowed PPG; when the first rate came (s of media time).

    /usr/bin/python3 evaluation/eval-pulse-video.py --facewire .build/release/facewire [--data ../shared/data/pulse-video] \
        [--pace realtime --pace max] [--json FILE] [--work DIR] [-- extra local arguments]

Needs numpy and OpenCV's Python module (Debian: python3-numpy python3-opencv) for the frame times; the JSON Lines
and the PPG are read with the standard library.
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))
import lifeline  # noqa: E402

lifeline.install()  # the processes this script starts end with it

HERE = os.path.dirname(os.path.abspath(__file__))


def frame_times(video):
    """Each frame's presentation time (s) as OpenCV reads it, from 0; the rate where the file gives none."""
    import cv2
    capture = cv2.VideoCapture(video)
    fps = capture.get(cv2.CAP_PROP_FPS) or 30
    times = []
    while True:
        ok = capture.grab()
        if not ok:
            break
        position = capture.get(cv2.CAP_PROP_POS_MSEC) / 1000
        times.append(position if times == [] or position > times[-1] else times[-1] + 1 / fps)
    capture.release()
    return [t - times[0] for t in times] if times else []


def beats(ppg, times):
    """Beat times (s): maxima of the PPG less its 1 s moving mean, at least 0.33 s apart, refined by a parabola."""
    x = np.asarray(ppg, dtype=float)
    t = np.asarray(times[: len(x)], dtype=float)
    x = x[: len(t)]
    rate = (len(t) - 1) / (t[-1] - t[0])
    half = max(1, int(round(rate / 2)))
    trend = np.convolve(x, np.ones(2 * half + 1) / (2 * half + 1), mode="same")
    y = x - trend
    reach = max(1, int(round(rate / 3)))
    found = []
    for k in range(1, len(y) - 1):
        if y[k] <= 0 or y[k] != y[max(0, k - reach): k + reach + 1].max():
            continue
        a, b, c = y[k - 1], y[k], y[k + 1]
        shift = 0.5 * (a - c) / (a - 2 * b + c) if (a - 2 * b + c) != 0 else 0
        shift = max(-0.5, min(0.5, shift))
        found.append(t[k] + shift * (t[k + 1] - t[k - 1]) / 2)
    return found


def rate_between(beat_times, start, end):
    """60 / the mean beat interval of the beats in [start, end]; None with fewer than three."""
    inside = [b for b in beat_times if start <= b <= end]
    if len(inside) < 3:
        return None
    return 60 * (len(inside) - 1) / (inside[-1] - inside[0])


def run_local(facewire, video, pace, output, extra):
    command = [facewire, "--role", "local", "--source", video, "--fps", pace, "--classifiers", "pulse",
               "--workers", "2", "--stream", "pulse-video"] + extra
    print("$ " + " ".join(command), file=sys.stderr, flush=True)
    with open(output, "wb") as out, open(output + ".log", "wb") as log:
        subprocess.run(command, stdout=out, stderr=log, check=True, timeout=600)


def score(output, times, ppg_beats, first_window, tolerance):
    frames = [json.loads(line) for line in open(output) if line.strip()]
    frames = [f for f in frames if "seq" in f and "event" not in f and f.get("epoch") is not None and "faces" in f]
    mean_rate = 60 * (len(ppg_beats) - 1) / (ppg_beats[-1] - ppg_beats[0])
    faced = [f for f in frames if f["status"] == "processed" and f["faces"]]
    if not faced:
        return {"frames": len(frames), "error": "no face found"}

    def media(frame):  # the media time a frame carries, else its place in the file
        return frame["mediaTime"] if "mediaTime" in frame else times[min(frame["seq"], len(times) - 1)]

    start = media(faced[0]) + first_window
    after = [f for f in frames if f.get("seq", 0) < len(times) and times[f["seq"]] >= start]
    rated = []
    for frame in after:
        rate = next((face["heartRate"] for face in frame.get("faces", []) if "heartRate" in face), None)
        if rate is None:
            continue
        t = media(frame)
        windowed = rate_between(ppg_beats, t - rate["window"], t)
        rated.append({"t": round(t, 3), "bpm": rate["bpm"], "window": rate["window"],
                      "ppg_window": None if windowed is None else round(windowed, 2)})
    first = next((media(f) for f in frames for face in f.get("faces", []) if "heartRate" in face), None)
    errors = [abs(r["bpm"] - mean_rate) for r in rated]
    windowed_errors = [abs(r["bpm"] - r["ppg_window"]) for r in rated if r["ppg_window"] is not None]
    return {
        "frames": len(frames),
        "processed": sum(1 for f in frames if f["status"] == "processed"),
        "ppg_mean_bpm": round(mean_rate, 2),
        "after_first_window": len(after),
        "rated": len(rated),
        "rated_share": round(len(rated) / len(after), 3) if after else 0,
        "within_tolerance_share": round(sum(1 for e in errors if e <= tolerance) / len(errors), 3) if errors else 0,
        "max_error": round(max(errors), 2) if errors else None,
        "median_error_windowed": round(statistics.median(windowed_errors), 2) if windowed_errors else None,
        "mean_bpm": round(statistics.mean(r["bpm"] for r in rated), 2) if rated else None,
        "first_rate_at": None if first is None else round(first, 2),
        "rates": rated,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--facewire", default=os.path.join(HERE, "..", ".build", "release", "facewire"))
    parser.add_argument("--data", default=os.path.join(HERE, "..", "..", "shared", "data", "pulse-video"))
    parser.add_argument("--pace", action="append", choices=["realtime", "max"], help="repeatable; default both")
    parser.add_argument("--first-window", type=float, default=10, help="the estimator's first window (s)")
    parser.add_argument("--tolerance", type=float, default=3)
    parser.add_argument("--json", help="write the results here ('-': stdout, and the table goes to stderr)")
    parser.add_argument("--work", help="folder for the JSON Lines (default: a new one under /tmp)")
    parser.add_argument("extra", nargs="*", help="more arguments for facewire --role local (after --)")
    args = parser.parse_args()
    paces = args.pace or ["realtime", "max"]
    work = args.work or tempfile.mkdtemp(prefix="facewire-pulse-video-")
    os.makedirs(work, exist_ok=True)
    recordings = sorted(name[len("sample_video_"):-len(".mp4")] for name in os.listdir(args.data)
                        if name.startswith("sample_video_") and name.endswith(".mp4"))
    results = []
    for recording in recordings:
        video = os.path.join(args.data, f"sample_video_{recording}.mp4")
        with open(os.path.join(args.data, f"sample_vitals_{recording}.csv")) as handle:
            ppg = [float(row["ppg"]) for row in csv.DictReader(handle)]
        times = frame_times(video)
        ppg_beats = beats(ppg, times)
        for pace in paces:
            output = os.path.join(work, f"{recording}-{pace}.jsonl")
            run_local(args.facewire, video, pace, output, args.extra)
            result = score(output, times, ppg_beats, args.first_window, args.tolerance)
            result.update(recording=f"sample_video_{recording}", pace=pace, beats=len(ppg_beats))
            results.append(result)

    table = ["| recording | pace | PPG mean | frames after the first window | rated | within 3 bpm of the PPG mean | "
             "largest error | median error vs the PPG over the window | our mean | first rate at |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        if "error" in r:
            table.append(f"| {r['recording']} | {r['pace']} | {r['error']} |")
            continue
        table.append(
            f"| {r['recording']} | {r['pace']} | {r['ppg_mean_bpm']:.1f} | {r['after_first_window']} | "
            f"{100 * r['rated_share']:.0f} % | {100 * r['within_tolerance_share']:.0f} % | {r['max_error']} | "
            f"{r['median_error_windowed']} | {r['mean_bpm']} | {r['first_rate_at']} s |")
    text = "\n".join(table)
    if args.json == "-":
        print(text, file=sys.stderr)
        json.dump({"results": results, "work": work}, sys.stdout)
        print()
    else:
        print(text)
        if args.json:
            with open(args.json, "w") as handle:
                json.dump({"results": results, "work": work}, handle)
    print(f"(JSON Lines in {work})", file=sys.stderr)


if __name__ == "__main__":
    main()
