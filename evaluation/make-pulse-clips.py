#!/usr/bin/env python3
"""Makes synthetic pulse clips from real face clips: a known heart rate injected into the skin (issue 16).

Each output is a folder of JPEG frames (frame-00000.jpg, ...) that a capture node plays with --fps, and truth.json
with the injected heart rate of every frame. The clip plays forward then backward (ping-pong) until --seconds, so
its own motion, expressions and lighting stay in. Skin pixels (YCrCb range) are scaled along the blood-volume
direction of normalised RGB (de Haan & van Leest 2014: 0.33, 0.77, 0.53) by a pulse a fraction of a percent deep,
whose rate wanders slowly around the target; a breathing-band intensity drift is added to the whole frame.
--no-pulse writes the same frames without the pulse (the control: an estimator must not invent one).

    /usr/bin/python3 evaluation/make-pulse-clips.py --clip ../shared/data/video/liveportrait_d9.mp4 --bpm 72 \
        --seconds 40 --out /tmp/pulse-d9-72 [--amplitude 0.003] [--seed 1] [--no-pulse]
"""
import argparse
import json
import math
import os
import random
import sys

import cv2
import numpy as np

PBV_BGR = np.array([0.53, 0.77, 0.33], dtype=np.float32)  # blue, green, red


def frames_of(path):
    capture = cv2.VideoCapture(path)
    frames = []
    while True:
        ok, frame = capture.read()
        if not ok:
            break
        frames.append(frame)
    fps = capture.get(cv2.CAP_PROP_FPS) or 25.0
    capture.release()
    return frames, fps


def skin_mask(frame):
    ycrcb = cv2.cvtColor(frame, cv2.COLOR_BGR2YCrCb)
    mask = cv2.inRange(ycrcb, (40, 135, 85), (240, 180, 135))
    return cv2.medianBlur(mask, 5) > 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--clip", required=True)
    parser.add_argument("--bpm", type=float, required=True, help="the rate the pulse wanders around")
    parser.add_argument("--seconds", type=float, default=40)
    parser.add_argument("--out", required=True)
    parser.add_argument("--amplitude", type=float, default=0.003, help="pulse depth, a fraction of the skin colour")
    parser.add_argument("--wander", type=float, default=0.04, help="slow change of the rate, a fraction of it")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quality", type=int, default=90)
    parser.add_argument("--max-side", type=int, default=960, help="frames larger than this are scaled down")
    parser.add_argument("--no-pulse", action="store_true")
    args = parser.parse_args()
    if not 30 <= args.bpm <= 240:
        parser.error("--bpm must be 30..240")
    frames, fps = frames_of(args.clip)
    if len(frames) < 2:
        print(f"cannot read frames from {args.clip}", file=sys.stderr)
        return 1
    scale = min(1.0, args.max_side / max(frames[0].shape[:2]))
    if scale < 1:
        frames = [cv2.resize(f, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA) for f in frames]
    rng = random.Random(args.seed)
    wander_period = rng.uniform(15, 25)
    breathing = rng.uniform(0.2, 0.3)
    os.makedirs(args.out, exist_ok=True)
    total = int(args.seconds * fps)
    cycle = 2 * len(frames) - 2
    phase = rng.uniform(0, 2 * math.pi)
    truth = []
    for i in range(total):
        t = i / fps
        k = i % cycle
        source = frames[k if k < len(frames) else cycle - k]
        rate = args.bpm * (1 + args.wander * math.sin(2 * math.pi * t / wander_period))
        phase += 2 * math.pi * rate / 60 / fps
        frame = source.astype(np.float32)
        frame *= 1 + 0.002 * math.sin(2 * math.pi * breathing * t)
        if not args.no_pulse:
            mask = skin_mask(source)
            gain = 1 + args.amplitude * math.sin(phase) * PBV_BGR
            frame[mask] *= gain
        out = np.clip(frame + np.random.default_rng(args.seed * 100003 + i).uniform(-0.5, 0.5, frame.shape), 0, 255)
        cv2.imwrite(os.path.join(args.out, f"frame-{i:05d}.jpg"), out.astype(np.uint8),
                    [cv2.IMWRITE_JPEG_QUALITY, args.quality])
        truth.append({"frame": i, "t": round(t, 4), "bpm": None if args.no_pulse else round(rate, 2)})
    with open(os.path.join(args.out, "truth.json"), "w") as handle:
        json.dump({"clip": os.path.basename(args.clip), "fps": fps, "bpm": args.bpm, "pulse": not args.no_pulse,
                   "amplitude": args.amplitude, "frames": truth}, handle)
    print(f"wrote {total} frames ({args.seconds:.0f} s at {fps:.2f} fps) to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
