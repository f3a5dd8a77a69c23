#!/usr/bin/python3
"""Benchmark: what each of Facewire's networks costs on its own, in OpenVINO from Python (the same runtime and
settings Facewire uses: one inference thread, one stream, f32, no pinning), at the shapes a frame gives them. The
floor under every stage's figure: a per-frame or per-face target below the sum of these cannot be met by the
runtime, only by other networks (or quantised ones).

Usage: benchmarks/network-floor.py [--runs N] [--models DIR] [--yunet PATH] [--int8]

Each network is compiled for its static shape and, where Facewire leaves a dimension free, for the free shape too;
timed over --runs inferences after 20 warm ones, CPU time of this process (time.process_time), median of 3 blocks.
Runs in the bench venv of benchmarks/bench-python.py (made on first use).

--int8: also each network quantised to int8 at its static shape (NNCF's post-training quantisation, its defaults)
and timed the same way, beside the f32 figure in the same run. Speed only: it is calibrated on random inputs, so its
outputs are not meant to be used and its accuracy is not measured. Runs in its own venv (no system site packages),
made once from benchmarks/int8-requirements.txt (NNCF 3.4.0 and what it imports, pinned by hash).
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

import pinned_venv  # benchmarks/pinned_venv.py (the script's folder is on sys.path)

HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
VENV_PYTHON = os.path.join(CACHE, "facewire", "bench-venv", "bin", "python")
INT8_VENV = os.path.join(CACHE, "facewire", "int8-venv")
INT8_REQUIREMENTS = os.path.join(HERE, "int8-requirements.txt")
REPO = os.path.dirname(HERE)

parser = argparse.ArgumentParser()
parser.add_argument("--runs", type=int, default=200)
parser.add_argument("--models", default=os.path.join(CACHE, "facewire", "models"))
parser.add_argument("--yunet", default=os.path.join(os.path.dirname(REPO), "shared", "data", "models",
                                                     "face_detection_yunet_2022mar.onnx"))
parser.add_argument("--int8", action="store_true", help="also time each network quantised to int8 (NNCF)")
args = parser.parse_args()


if args.int8 and not pinned_venv.inside(INT8_VENV):
    python = pinned_venv.make(INT8_VENV, INT8_REQUIREMENTS)
    os.execv(python, [python] + sys.argv)

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


def request(path, compiled_shape, int8_shape=None):
    """An inference request for the network at `path` compiled for `compiled_shape`; quantised to int8 first when
    `int8_shape` is given (calibrated on 16 random inputs of that shape)."""
    model = core.read_model(path)
    model.reshape({model.inputs[0].any_name: openvino.PartialShape(list(compiled_shape))})
    if int8_shape is not None:
        import contextlib
        import nncf
        rng = np.random.default_rng(2)
        calibration = nncf.Dataset([rng.random(int8_shape, dtype=np.float32) for _ in range(16)])
        with contextlib.redirect_stdout(sys.stderr):  # NNCF's progress bar, off the table
            model = nncf.quantize(model, calibration, subset_size=16)
    return core.compile_model(model, "CPU", PROPERTIES).create_infer_request()


def costs(requests, input_shape):
    """CPU ms per inference of each request: 20 warm inferences each, then 3 blocks of --runs each, the requests'
    blocks interleaved so that a drift in the machine's speed falls on all of them alike; the median block."""
    data = np.random.default_rng(1).random(input_shape, dtype=np.float32)
    for each in requests:
        for _ in range(20):
            each.infer({0: data})
    blocks = [[] for _ in requests]
    for _ in range(3):
        for each, times in zip(requests, blocks):
            start = time.process_time()
            for _ in range(args.runs):
                each.infer({0: data})
            times.append((time.process_time() - start) * 1000 / args.runs)
    return [statistics.median(times) for times in blocks]


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
int8_columns = " int8, static shape | int8 / f32 |" if args.int8 else ""
print(f"OpenVINO {openvino.__version__}, one thread, f32; CPU ms per inference (median of 3 blocks of {args.runs})")
print()
print("| network and input | static shape | free shape | per |" + int8_columns)
print("|---|---|---|---|" + ("---|---|" if args.int8 else ""))
for name, path, shape, free, per in cases:
    if not os.path.isfile(path):
        print(f"| {name} | (no {path}) | | |" + (" | |" if args.int8 else ""))
        continue
    requests = [request(path, shape), request(path, free)] + ([request(path, shape, int8_shape=shape)] if args.int8 else [])
    static, free_cost, *quantised = costs(requests, shape)
    row = f"| {name} | {static:.2f} | {free_cost:.2f} | {per} |"
    if quantised:
        row += f" {quantised[0]:.2f} | {quantised[0] / static:.2f} |"
    print(row, flush=True)
