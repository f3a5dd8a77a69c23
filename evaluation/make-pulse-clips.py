#!/usr/bin/env python3
"""Makes synthetic pulse clips from real face clips: a known heart rate injected into the skin (issue 16).

Each output is a folder of JPEG frames (frame-00000.jpg, ...) that a capture node plays with --fps, and truth.json
with the injected heart rate of every frame. The clip plays forward then backward (ping-pong) until --seconds, so
its own motion, expressions and lighting stay in. Skin pixels (YCrCb range) are scaled along the blood-volume
direction of normalised RGB (de Haan & van Leest 2014: 0.33, 0.77, 0.53) by a pulse a fraction of a percent deep,
whose rate wanders slowly around the target; a breathing-band intensity drift is added to the whole frame.
--no-pulse writes the same frames without the pulse (the control: an estimator must not invent one).

--motion adds rhythmic head motion at --motion-bpm (which wanders by 5 %), one or more of (issue 32):
- talk: the clip's own motion made rhythmic. Instead of playing on, the clip is scrubbed back and forth over a quarter
  of a second either side of a point that drifts slowly (a quarter of real speed, ping-pong): the face's real talking,
  grimaces and head turns, with their real shading and expressions, repeat at the motion rate (and its harmonics).
- nod: the frame moves up and down by 3 % of its height, squashed by up to 4 % (the face's foreshortening), while a
  top light's shading follows: brightness tilted by up to 3 % from top to bottom, and a specular highlight of up to
  4 grey levels (additive white light, which changes the skin's normalised colour) near the face's centre.
- shake: the frame moves sideways by 4 % of its width and rolls by up to 4 degrees, its shading tilted left to right.
The pulse is injected into the source frame's skin before the frame moves, so it moves with the skin. With --motion
the output plays at --fps (default 30), whatever the clip's rate, so a folder played at any pace has the right media
time.

    /usr/bin/python3 evaluation/make-pulse-clips.py --clip ../shared/data/video/liveportrait_d9.mp4 --bpm 72 \
        --seconds 40 --out /tmp/pulse-d9-72 [--amplitude 0.003] [--seed 1] [--no-pulse] \
        [--motion talk,nod --motion-bpm 95]
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


MOTIONS = ("talk", "nod", "shake")


def ping_pong(position, length):
    """The frame index at `position` (frames, any real) of a clip of `length` frames played forward then backward."""
    cycle = 2 * length - 2
    k = int(round(position)) % cycle
    return k if k < length else cycle - k


def moved(frame, kinds, s, c):
    """`frame` (float32) moved and shaded by the rhythmic motions `kinds` at phase sine `s` (cosine `c`)."""
    h, w = frame.shape[:2]
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    if "nod" in kinds:
        squash = 1 - 0.04 * max(0.0, s)
        matrix = np.float32([[1, 0, 0], [0, squash, (1 - squash) * h / 2 + 0.03 * h * s]])
        frame = cv2.warpAffine(frame, matrix, (w, h), borderMode=cv2.BORDER_REFLECT)
        frame *= (1 + 0.03 * s * (h / 2 - ys) / (h / 2))[..., None]
        spot = np.exp(-(((xs - w / 2) / (0.12 * w)) ** 2 + ((ys - 0.45 * h) / (0.12 * h)) ** 2))
        frame += (4 * max(0.0, c) * spot)[..., None]
    if "shake" in kinds:
        matrix = cv2.getRotationMatrix2D((w / 2, h / 2), 4 * s, 1.0)
        matrix[0, 2] += 0.04 * w * c
        frame = cv2.warpAffine(frame, matrix.astype(np.float32), (w, h), borderMode=cv2.BORDER_REFLECT)
        frame *= (1 + 0.03 * c * (xs - w / 2) / (w / 2))[..., None]
    return frame


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
    parser.add_argument("--motion", default="", help="rhythmic motion: talk, nod, shake, or several (talk,nod)")
    parser.add_argument("--motion-bpm", type=float, default=90, help="the rate the motion repeats at (per minute)")
    parser.add_argument("--fps", type=float, help="output frame rate (default: the clip's; 30 with --motion)")
    args = parser.parse_args()
    if not 30 <= args.bpm <= 240:
        parser.error("--bpm must be 30..240")
    kinds = [k for k in args.motion.split(",") if k]
    if any(k not in MOTIONS for k in kinds):
        parser.error(f"--motion takes {', '.join(MOTIONS)}")
    if not 10 <= args.motion_bpm <= 240:
        parser.error("--motion-bpm must be 10..240")
    frames, clip_fps = frames_of(args.clip)
    fps = args.fps or (30.0 if kinds else clip_fps)
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
    phase = rng.uniform(0, 2 * math.pi)
    motion_phase = rng.uniform(0, 2 * math.pi)
    motion_wander = rng.uniform(8, 14)
    truth = []
    for i in range(total):
        t = i / fps
        rate = args.bpm * (1 + args.wander * math.sin(2 * math.pi * t / wander_period))
        phase += 2 * math.pi * rate / 60 / fps
        motion_rate = args.motion_bpm * (1 + 0.05 * math.sin(2 * math.pi * t / motion_wander))
        motion_phase += 2 * math.pi * motion_rate / 60 / fps
        if "talk" in kinds:
            position = 0.25 * t * clip_fps + 0.25 * clip_fps * math.sin(motion_phase)
        else:
            position = t * clip_fps if args.fps or kinds else i
        source = frames[ping_pong(position, len(frames))]
        frame = source.astype(np.float32)
        frame *= 1 + 0.002 * math.sin(2 * math.pi * breathing * t)
        if not args.no_pulse:
            mask = skin_mask(source)
            gain = 1 + args.amplitude * math.sin(phase) * PBV_BGR
            frame[mask] *= gain
        if kinds:
            frame = moved(frame, kinds, math.sin(motion_phase), math.cos(motion_phase))
        out = np.clip(frame + np.random.default_rng(args.seed * 100003 + i).uniform(-0.5, 0.5, frame.shape), 0, 255)
        cv2.imwrite(os.path.join(args.out, f"frame-{i:05d}.jpg"), out.astype(np.uint8),
                    [cv2.IMWRITE_JPEG_QUALITY, args.quality])
        truth.append({"frame": i, "t": round(t, 4), "bpm": None if args.no_pulse else round(rate, 2)})
    with open(os.path.join(args.out, "truth.json"), "w") as handle:
        json.dump({"clip": os.path.basename(args.clip), "fps": fps, "bpm": args.bpm, "pulse": not args.no_pulse,
                   "amplitude": args.amplitude,
                   "motion": kinds, "motion_bpm": args.motion_bpm if kinds else None, "frames": truth}, handle)
    print(f"wrote {total} frames ({args.seconds:.0f} s at {fps:.2f} fps) to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
