#!/usr/bin/env python3
"""ONNX models whose ops sweep the shapes a GPU cost model must price beyond
what the searches reach on the zoo: MatMuls of 8 token counts by 11 widths
(transformer and RNN layers, one model per token count), four elementwise
ops over sizes from 2^10 to 2^24 floats, and convs where a tile model is
least sure of itself: 3x3 convs from shallow to deep reductions on maps
from 7x7 to 56x56, 1x1 convs up to 2048 channels, grouped 3x3 convs from 2
to 64 groups, and 1x7, 5x5 and 7x7 windows (one model per map size). `tests/bench/gpu_cost_table list`
adds their configurations to configs/gpu/configs.list, so that a measured
table and the fit see how GEMMs and bandwidth scale.

Usage: sweep_models.py OUTDIR   (writes OUTDIR/sweep_matmul_M.onnx, OUTDIR/sweep_elementwise.onnx,
                                 OUTDIR/sweep_conv_HW.onnx)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

TOKENS = [1, 8, 32, 64, 128, 197, 384, 512]
WIDTHS = [(64, 64), (256, 256), (512, 512), (768, 768), (768, 2304), (768, 3072), (3072, 768), (1024, 1024),
          (1024, 4096), (2048, 2048), (512, 1536)]
ELEMENTWISE_SIZES = [1 << 10, 1 << 13, 1 << 16, 1 << 18, 1 << 20, 1 << 22, 1 << 24]
MAP_SIZES = [7, 14, 28, 56]
# (in channels, out channels, kernel, groups, with bias) per map size; the
# same list on every map, so each shape is seen at four tile counts.
CONVS = ([(c, c, 3, 1, True) for c in (64, 128, 256, 512, 1024)] +
         [(c, 2 * c, 3, 1, False) for c in (96, 192, 384)] +
         [(ci, co, 1, 1, True) for ci, co in ((64, 256), (256, 64), (512, 512), (1024, 256), (256, 1024),
                                              (2048, 512), (512, 2048))] +
         [(c, c, 3, g, True) for c, g in ((128, 2), (256, 4), (256, 16), (512, 8), (512, 64), (1024, 32))] +
         [(128, 128, (1, 7), 1, True), (192, 192, 5, 1, False), (64, 64, 7, 1, True)])


def save(path, nodes, inputs, outputs, initializers=()):
    graph = helper.make_graph(nodes, os.path.basename(path)[:-5], inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, path)


def matmul_model(path, tokens):
    # Independent MatMuls, one per width, each on its own input (nothing to merge).
    nodes, inputs, outputs, weights = [], [], [], []
    for i, (k, n) in enumerate(WIDTHS):
        inputs.append(helper.make_tensor_value_info(f"x{i}", TensorProto.FLOAT, [1, tokens, k]))
        weights.append(numpy_helper.from_array(np.full((k, n), 0.01, np.float32), f"w{i}"))
        nodes.append(helper.make_node("MatMul", [f"x{i}", f"w{i}"], [f"y{i}"]))
        outputs.append(helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, [1, tokens, n]))
    save(path, nodes, inputs, outputs, weights)


def elementwise_model(path):
    nodes, inputs, outputs = [], [], []
    for i, size in enumerate(ELEMENTWISE_SIZES):
        for op in ("Relu", "Sigmoid", "Tanh", "Add"):
            name = f"{op.lower()}{i}"
            operands = [f"{name}_a"] + ([f"{name}_b"] if op == "Add" else [])
            for operand in operands:
                inputs.append(helper.make_tensor_value_info(operand, TensorProto.FLOAT, [1, size]))
            nodes.append(helper.make_node(op, operands, [f"{name}_y"]))
            outputs.append(helper.make_tensor_value_info(f"{name}_y", TensorProto.FLOAT, [1, size]))
    save(path, nodes, inputs, outputs)


def conv_model(path, size):
    # Independent convs (stride 1, "same" padding), each on its own input.
    nodes, inputs, outputs, weights = [], [], [], []
    for i, (cin, cout, kernel, groups, bias) in enumerate(CONVS):
        kh, kw = kernel if isinstance(kernel, tuple) else (kernel, kernel)
        inputs.append(helper.make_tensor_value_info(f"x{i}", TensorProto.FLOAT, [1, cin, size, size]))
        weights.append(numpy_helper.from_array(np.full((cout, cin // groups, kh, kw), 0.01, np.float32), f"w{i}"))
        operands = [f"x{i}", f"w{i}"]
        if bias:
            weights.append(numpy_helper.from_array(np.full((cout,), 0.1, np.float32), f"b{i}"))
            operands.append(f"b{i}")
        nodes.append(helper.make_node("Conv", operands, [f"y{i}"], kernel_shape=[kh, kw], group=groups,
                                      pads=[kh // 2, kw // 2, kh // 2, kw // 2]))
        outputs.append(helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, [1, cout, size, size]))
    save(path, nodes, inputs, outputs, weights)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for tokens in TOKENS:
        matmul_model(os.path.join(out, f"sweep_matmul_{tokens}.onnx"), tokens)
    elementwise_model(os.path.join(out, "sweep_elementwise.onnx"))
    for size in MAP_SIZES:
        conv_model(os.path.join(out, f"sweep_conv_{size}.onnx"), size)
    print(f"sweep_models: {len(TOKENS) + 1 + len(MAP_SIZES)} models in {out}")


if __name__ == "__main__":
    main()
