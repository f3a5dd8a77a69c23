#!/usr/bin/env python3
"""Prints a fixed `facewire --role local` run's JSON Lines with the fields that differ from run to run anyway masked
(epoch, captureTime, worker, timings), so that two builds can be compared with cmp: a refactoring that changes no
behaviour gives the same bytes.

One worker with one detection thread, `--fps max`, events on. Frame lines come in frame order; an event's place
among them depends on the collector's clock (a face is "left" after a time without it), so events are printed as a
sorted list after the frames.

    evaluation/masked-output.py --facewire OLD/facewire --source clip.mp4 -- --classifiers all --landmarks mesh > a
    evaluation/masked-output.py --facewire NEW/facewire --source clip.mp4 -- --classifiers all --landmarks mesh > b
    cmp a b
"""
import argparse
import json
import subprocess

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--facewire", required=True, help="the facewire binary")
parser.add_argument("--source", required=True, help="a video file, a folder of images or a camera")
parser.add_argument("--frames", default="60", help="frames to play (default 60)")
parser.add_argument("extra", nargs="*", help="more options for `facewire --role local` (after --)")
args = parser.parse_args()
command = [
    args.facewire, "--role", "local", "--source", args.source, "--workers", "1", "--threads", "1", "--fps", "max",
    "--frames", args.frames, "--events", "--log-level", "error", *args.extra,
]
output = subprocess.run(command, stdout=subprocess.PIPE, check=True, timeout=600).stdout.decode()
frames, others = [], []
for line in output.splitlines():
    message = json.loads(line)
    for key in ("epoch", "captureTime", "worker", "timings"):
        if key in message:
            message[key] = "*"
    (frames if "status" in message else others).append(json.dumps(message, sort_keys=True))
print("\n".join(frames + sorted(others)))
