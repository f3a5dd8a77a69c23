#!/usr/bin/env python3
"""Renders a short demo clip from one photograph: a slow zoom, pan and tilt, as JPEG frames.

Usage: make-demo-footage.py PHOTO OUT_DIR [FRAMES]

Also writes OUT_DIR.avi: the same frames as a motion-JPEG video (what an IP camera or a recorder stores), the clip the
benchmarks play to compare video sources.

The motion gives the demo what a still cannot: boxes that move, a face angle that changes, and a tracking ID that
stays the same. Needs Debian's python3-opencv.
"""
import math
import os
import sys

import cv2

photo, out_dir = sys.argv[1], sys.argv[2]
frames = int(sys.argv[3]) if len(sys.argv) > 3 else 120
image = cv2.imread(photo)
if image is None:
    sys.exit(f"cannot read {photo}")
os.makedirs(out_dir, exist_ok=True)
height, width = image.shape[:2]
for index in range(frames):
    t = index / max(1, frames - 1)
    angle = 12 * math.sin(2 * math.pi * t)            # tilt: -12..12 degrees
    scale = 1.0 + 0.35 * math.sin(math.pi * t)        # zoom in and out again
    centre = (width * (0.45 + 0.1 * t), height * 0.4)  # drift across the face
    matrix = cv2.getRotationMatrix2D(centre, angle, scale)
    matrix[0, 2] += width / 2 - centre[0]
    matrix[1, 2] += height / 2 - centre[1]
    frame = cv2.warpAffine(image, matrix, (width, height), borderMode=cv2.BORDER_REFLECT)
    frame = cv2.resize(frame, (640, 640))[80:560]      # 640x480, like a webcam
    cv2.imwrite(os.path.join(out_dir, f"frame-{index:04d}.jpg"), frame, [cv2.IMWRITE_JPEG_QUALITY, 85])
names = sorted(n for n in os.listdir(out_dir) if n.endswith(".jpg"))
video = cv2.VideoWriter(out_dir.rstrip("/") + ".avi", cv2.CAP_FFMPEG, cv2.VideoWriter_fourcc(*"MJPG"), 30, (640, 480))
for name in names:
    video.write(cv2.imread(os.path.join(out_dir, name)))
video.release()
print(f"wrote {frames} frames to {out_dir} and {out_dir.rstrip('/')}.avi")
