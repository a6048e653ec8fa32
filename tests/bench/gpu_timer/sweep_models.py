#!/usr/bin/env python3
"""ONNX models whose ops sweep the shapes a GPU cost model must price beyond
what the searches reach on the zoo: MatMuls of 8 token counts by 11 widths
(transformer and RNN layers, one model per token count) and four elementwise
ops over sizes from 2^10 to 2^24 floats. `tests/bench/gpu_cost_table list`
adds their configurations to configs/gpu/configs.list, so that a measured
table and the fit see how GEMMs and bandwidth scale.

Usage: sweep_models.py OUTDIR   (writes OUTDIR/sweep_matmul_M.onnx, OUTDIR/sweep_elementwise.onnx)
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


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for tokens in TOKENS:
        matmul_model(os.path.join(out, f"sweep_matmul_{tokens}.onnx"), tokens)
    elementwise_model(os.path.join(out, "sweep_elementwise.onnx"))
    print(f"sweep_models: {len(TOKENS) + 1} models in {out}")


if __name__ == "__main__":
    main()
