#!/usr/bin/python3
"""Checks a converted model against its stored pair, under OpenCV's cv::dnn (the runtime the worker uses).

    /usr/bin/python3 scripts/models/check-pair.py MODEL.onnx PAIR.json

PAIR.json (made by scripts/models/make-pairs.py) names the input PNG (beside it), how bytes become net
input values (value = byte * scale + offset, NCHW, channel order), the outputs the original TFLite model
gave for it, and a tolerance. Prints the largest absolute difference per output; exits 1 when one is
over the tolerance, when an output is missing or has the wrong size, or when the model does not load.
Needs the system python (Debian's python3-opencv), not a venv.
"""
import json
import os
import sys
import time

import cv2
import numpy as np


def main():
    if len(sys.argv) not in (3, 4) or (len(sys.argv) == 4 and sys.argv[3] != "--time"):
        sys.exit(f"usage: {sys.argv[0]} MODEL.onnx PAIR.json [--time]")
    model_path, pair_path = sys.argv[1:3]
    with open(pair_path) as f:
        pair = json.load(f)
    if pair["layout"] != "NCHW":
        sys.exit(f"{pair_path}: layout {pair['layout']} is not supported")
    pixels = cv2.imread(os.path.join(os.path.dirname(pair_path), pair["input"]), cv2.IMREAD_UNCHANGED)
    if pixels is None or pixels.dtype != np.uint8:
        sys.exit(f"{pair_path}: cannot read {pair['input']} as 8-bit")
    channels = 1 if pixels.ndim == 2 else pixels.shape[2]
    if channels != pair["channels"]:
        sys.exit(f"{pair_path}: {pair['input']} has {channels} channels, the pair says {pair['channels']}")
    if channels == 3:
        # OpenCV decodes to BGR.
        pixels = pixels if pair["channelOrder"] == "BGR" else cv2.cvtColor(pixels, cv2.COLOR_BGR2RGB)
        chw = pixels.transpose(2, 0, 1)
    else:
        chw = pixels[None]
    blob = np.ascontiguousarray((chw.astype(np.float32) * np.float32(pair["scale"]) + np.float32(pair["offset"]))[None])

    cv2.setNumThreads(1)
    try:
        net = cv2.dnn.readNetFromONNX(model_path)
    except cv2.error as error:
        print(f"{model_path}: OpenCV {cv2.__version__} cannot load it: {error}", file=sys.stderr)
        sys.exit(1)
    names = list(pair["outputs"])
    net.setInput(blob)
    try:
        results = net.forward(names)
    except cv2.error as error:
        print(f"{model_path}: forward to {names} failed: {error}", file=sys.stderr)
        sys.exit(1)

    worst = 0.0
    failed = False
    for name, result in zip(names, results):
        expected = np.asarray(pair["outputs"][name], dtype=np.float64)
        got = result.astype(np.float64).ravel()
        if got.size != expected.size:
            print(f"{model_path}: output {name} has {got.size} values, the pair has {expected.size}", file=sys.stderr)
            failed = True
            continue
        diff = float(np.abs(got - expected).max())
        worst = max(worst, diff)
        print(f"{os.path.basename(model_path)} {name} {list(result.shape)}: max abs diff {diff:.3g}"
              f" (tolerance {pair['tolerance']})", file=sys.stderr)
        failed |= not diff <= pair["tolerance"]

    if len(sys.argv) == 4:
        for _ in range(10):
            net.setInput(blob)
            net.forward(names)
        times = []
        for _ in range(100):
            start = time.perf_counter()
            net.setInput(blob)
            net.forward(names)
            times.append((time.perf_counter() - start) * 1e3)
        print(f"{os.path.basename(model_path)}: input {list(blob.shape)}, cv2.dnn {cv2.__version__} 1 thread,"
              f" median of 100: {np.median(times):.2f} ms (min {min(times):.2f})", file=sys.stderr)
    if failed:
        print(f"{model_path}: FAILS {os.path.basename(pair_path)}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
