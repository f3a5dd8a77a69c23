#!/usr/bin/python3
"""Benchmark: what each of Facewire's networks costs on its own, in OpenVINO from Python (the same runtime and
settings Facewire uses: one inference thread, one stream, f32, no pinning), at the shapes a frame gives them. The
floor under every stage's figure: a per-frame or per-face target below the sum of these cannot be met by the
runtime, only by other networks (or quantised ones).

Usage: benchmarks/network-floor.py [--runs N] [--models DIR] [--yunet PATH]

Each network is compiled for its static shape and, where Facewire leaves a dimension free, for the free shape too;
timed over --runs inferences after 20 warm ones, CPU time of this process (time.process_time), median of 3 blocks.
Runs in the bench venv of benchmarks/bench-python.py (made on first use).
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
VENV_PYTHON = os.path.join(CACHE, "facewire", "bench-venv", "bin", "python")
REPO = os.path.dirname(HERE)

parser = argparse.ArgumentParser()
parser.add_argument("--runs", type=int, default=200)
parser.add_argument("--models", default=os.path.join(CACHE, "facewire", "models"))
parser.add_argument("--yunet", default=os.path.join(os.path.dirname(REPO), "shared", "data", "models",
                                                     "face_detection_yunet_2022mar.onnx"))
args = parser.parse_args()

try:
    import numpy as np
    import openvino
except ImportError:
    if sys.executable != VENV_PYTHON:
        if not os.path.exists(VENV_PYTHON):
            subprocess.run([sys.executable, os.path.join(HERE, "bench-python.py"), "--venv-only"], check=True)
        os.execv(VENV_PYTHON, [VENV_PYTHON] + sys.argv)
    raise

PROPERTIES = {"INFERENCE_NUM_THREADS": "1", "NUM_STREAMS": "1", "PERFORMANCE_HINT": "LATENCY",
              "INFERENCE_PRECISION_HINT": "f32", "ENABLE_CPU_PINNING": "NO"}
core = openvino.Core()


def cost(path, compiled_shape, input_shape):
    model = core.read_model(path)
    model.reshape({model.inputs[0].any_name: openvino.PartialShape(list(compiled_shape))})
    request = core.compile_model(model, "CPU", PROPERTIES).create_infer_request()
    data = np.random.default_rng(1).random(input_shape, dtype=np.float32)
    for _ in range(20):
        request.infer({0: data})
    blocks = []
    for _ in range(3):
        start = time.process_time()
        for _ in range(args.runs):
            request.infer({0: data})
        blocks.append((time.process_time() - start) * 1000 / args.runs)
    return statistics.median(blocks)


rows = []
centerface = os.path.join(args.models, "centerface.onnx")
mesh = os.path.join(args.models, "face_landmark.onnx")
iris = os.path.join(args.models, "iris_landmark.onnx")
cases = [
    ("YuNet 2022mar, a 640x480 frame at 320 px", args.yunet, (1, 3, 240, 320), (1, 3, -1, -1), "frame"),
    ("CenterFace, a 640x480 frame at 320 px (padded to 320x256)", centerface, (1, 3, 256, 320), (1, 3, -1, -1), "frame"),
    ("CenterFace, a tilted face's 128 px crop (refinement, per pass)", centerface, (1, 3, 128, 128), (1, 3, -1, -1), "face"),
    ("face mesh, one face (192x192)", mesh, (1, 3, 192, 192), (-1, 3, 192, 192), "face"),
    ("iris, both eyes of one face (2 x 64x64)", iris, (2, 3, 64, 64), (-1, 3, 64, 64), "face"),
]
print(f"OpenVINO {openvino.__version__}, one thread, f32; CPU ms per inference (median of 3 blocks of {args.runs})")
print()
print("| network and input | static shape | free shape | per |")
print("|---|---|---|---|")
for name, path, shape, free, per in cases:
    if not os.path.isfile(path):
        print(f"| {name} | (no {path}) | | |")
        continue
    print(f"| {name} | {cost(path, shape, shape):.2f} | {cost(path, free, shape):.2f} | {per} |")
