#!/usr/bin/env python3
"""Converts a TFLite model to ONNX (opset 11, NCHW) that OpenCV 4.6's cv::dnn reads.

    tflite-to-onnx.py MODEL.tflite OUT.onnx [--doc TEXT]

Runs in the throwaway venv that scripts/setup.sh makes from scripts/models/requirements-convert.txt
(tflite2onnx 0.4.1, tflite, onnx, numpy): not under the system python.

1. tflite2onnx converts the graph (NHWC -> NCHW; an input [1,H,W,C] becomes [1,C,H,W]).
2. Weights that TFLite keeps as int8 with per-channel scales (the "dynamic range" quantisation of
   fer's emotion_model_quantized.tflite: int8 convolution weights, float activations) are copied by
   tflite2onnx as raw int8, which no ONNX Conv accepts. They are dequantised here to float32,
   w = (q - zero_point) * scale[channel], in TFLite's layout, and then moved by the same transpose
   that tflite2onnx applied to the int8 array (found by matching the arrays, so no guess about its
   layout rules). TFLite's hybrid kernels also quantise the activations on the fly, so the float graph
   differs slightly from the TFLite reference; the stored pairs measure by how much.
   Models without int8 weights (the MediaPipe face mesh and iris) pass through unchanged.
3. Initializers and value_info are sorted by name: tflite2onnx emits them in an order that changes
   from run to run, and sorting makes the output bytes the same on every run.
"""
import argparse
import itertools
import logging
import os
import sys
import tempfile

import numpy as np
import onnx
import tflite
import tflite2onnx
from onnx import TensorProto, numpy_helper


def tflite_int8_weights(path):
    """name -> (int8 array in TFLite layout, scales, zero points, quantized dimension)."""
    buf = open(path, "rb").read()
    model = tflite.Model.GetRootAsModel(buf, 0)
    if model.SubgraphsLength() != 1:
        sys.exit(f"{path}: expected one subgraph, found {model.SubgraphsLength()}")
    graph = model.Subgraphs(0)
    weights = {}
    for i in range(graph.TensorsLength()):
        t = graph.Tensors(i)
        if t.Type() != tflite.TensorType.INT8:
            continue
        data = model.Buffers(t.Buffer()).DataAsNumpy()
        if isinstance(data, int) or data is None or len(data) == 0:
            sys.exit(f"{path}: int8 tensor {t.Name().decode()} is an activation (a fully quantised model): not supported")
        q = t.Quantization()
        if q is None or q.ScaleLength() == 0:
            sys.exit(f"{path}: int8 tensor {t.Name().decode()} has no quantisation parameters")
        shape = [int(d) for d in t.ShapeAsNumpy()]
        array = np.frombuffer(data.tobytes(), dtype=np.int8).reshape(shape)
        weights[t.Name().decode()] = (array, q.ScaleAsNumpy().astype(np.float64),
                                      q.ZeroPointAsNumpy().astype(np.int64), q.QuantizedDimension())
    return weights


def dequantise(model, weights):
    consumers = {}
    for node in model.graph.node:
        for index, name in enumerate(node.input):
            consumers.setdefault(name, []).append((node.op_type, index))
    replaced = []
    for k, init in enumerate(model.graph.initializer):
        if init.data_type != TensorProto.INT8:
            continue
        if init.name not in weights:
            sys.exit(f"int8 initializer {init.name} has no int8 tensor of that name in the TFLite model")
        uses = consumers.get(init.name, [])
        if not uses or any(use != ("Conv", 1) for use in uses):
            sys.exit(f"int8 initializer {init.name} is used as {uses}, not only as a Conv weight")
        q8, scales, zero_points, qdim = weights[init.name]
        onnx_q8 = numpy_helper.to_array(init)
        # The transpose tflite2onnx applied: the one that turns the TFLite array into the ONNX one.
        perms = [p for p in itertools.permutations(range(q8.ndim))
                 if q8.transpose(p).shape == onnx_q8.shape and np.array_equal(q8.transpose(p), onnx_q8)]
        reshaped = q8.size == onnx_q8.size and np.array_equal(q8.reshape(onnx_q8.shape), onnx_q8)
        if not perms and not reshaped:
            sys.exit(f"int8 initializer {init.name} is no transpose of the TFLite tensor")
        shape = [1] * q8.ndim
        if scales.size > 1:
            shape[qdim] = scales.size
        real = ((q8.astype(np.float64) - zero_points.reshape(shape)) * scales.reshape(shape)).astype(np.float32)
        real = real.transpose(perms[0]) if perms else real.reshape(onnx_q8.shape)
        model.graph.initializer[k].CopyFrom(numpy_helper.from_array(np.ascontiguousarray(real), init.name))
        replaced.append(init.name)
    left = [i.name for i in model.graph.initializer if i.data_type in (TensorProto.INT8, TensorProto.UINT8)]
    if left:
        sys.exit(f"int8/uint8 initializers left: {left}")
    return replaced


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tflite_path")
    parser.add_argument("onnx_path")
    parser.add_argument("--doc", default="", help="provenance text to store as the model's doc_string")
    args = parser.parse_args()
    # tflite2onnx warns once per int8 tensor ("not supported/tested yet"): that is what step 2 handles.
    logging.getLogger("tflite2onnx").setLevel(logging.ERROR)

    with tempfile.TemporaryDirectory() as tmp:
        raw = os.path.join(tmp, "raw.onnx")
        tflite2onnx.convert(args.tflite_path, raw)
        model = onnx.load(raw)

    replaced = dequantise(model, tflite_int8_weights(args.tflite_path))
    for field in (model.graph.initializer, model.graph.value_info):
        ordered = sorted(field, key=lambda t: t.name)
        del field[:]
        field.extend(ordered)
    model.producer_name = "tflite2onnx " + tflite2onnx.__version__ + " + facewire scripts/models/tflite-to-onnx.py"
    if args.doc:
        model.doc_string = args.doc
    onnx.checker.check_model(model)
    onnx.save(model, args.onnx_path)
    inputs = [(i.name, [d.dim_value for d in i.type.tensor_type.shape.dim]) for i in model.graph.input]
    outputs = [(o.name, [d.dim_value for d in o.type.tensor_type.shape.dim]) for o in model.graph.output]
    note = f", dequantised {len(replaced)} int8 weight tensors" if replaced else ""
    print(f"{args.onnx_path}: opset {model.opset_import[0].version}, inputs {inputs}, outputs {outputs}{note}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
