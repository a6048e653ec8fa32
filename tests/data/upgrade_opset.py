#!/usr/bin/python3
"""Upgrades an opset-17 ONNX model to opset 18, 19, 20 or 21.

torch 1.13 exports at most opset 17 and onnx 1.12's version converter stops
there too, so the models at newer opsets are made from opset-17 exports by
rewriting the few operators whose signature changed:

    18  ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp, ReduceMax, ReduceMean,
        ReduceMin, ReduceProd, ReduceSumSquare: the `axes` attribute becomes
        the second input, a constant int64 initializer (ReduceSum moved at 13).
        Split: `split` has been an input since 13 and stays; a Split without it
        (equal parts) gets `num_outputs`, since Split-18 wants one or the other.
    19  no changes an opset-17 model needs (new attributes keep old defaults).
    20  DFT: `axis` moves from attribute (default 1) to the third input.
        GridSample: mode 'bilinear' is now 'linear', 'bicubic' is 'cubic'.
    21  no changes an opset-17 model needs (GroupNormalization, whose meaning
        changed at 21, did not exist at 17).

Every other operator is valid unchanged at the new opset. Subgraphs (If, Loop,
Scan bodies) are rewritten too. The IR version is raised to the one released
with the target opset. onnx 1.12 cannot check models above opset 17: check
the result by running it (tests/data/ort_smoke.mjs --compare).

Usage:
    /usr/bin/python3 tests/data/upgrade_opset.py IN.onnx OUT.onnx --to N
"""

import argparse
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

FROM_OPSET = 17
TO_OPSETS = (18, 19, 20, 21)
# IR version released with each opset (onnx 1.13 .. 1.16).
IR_VERSION = {18: 8, 19: 9, 20: 9, 21: 10}

REDUCE_AXES_TO_INPUT = (
    "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax",
    "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSumSquare",
)
GRID_SAMPLE_MODES = {"bilinear": "linear", "bicubic": "cubic", "nearest": "nearest"}


class UpgradeError(Exception):
    pass


def default_opset(model):
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx"):
            return o.version
    return None


def _pop_attribute(node, name):
    for i, attr in enumerate(node.attribute):
        if attr.name == name:
            del node.attribute[i]
            return attr
    return None


class _Namer:
    def __init__(self, model):
        self.used = set()
        self._collect(model.graph)
        self.count = 0

    def _collect(self, graph):
        for t in graph.initializer:
            self.used.add(t.name)
        for v in list(graph.input) + list(graph.output) + list(graph.value_info):
            self.used.add(v.name)
        for node in graph.node:
            self.used.update(node.input)
            self.used.update(node.output)
            self.used.add(node.name)
            for attr in node.attribute:
                for g in ([attr.g] if attr.type == onnx.AttributeProto.GRAPH else list(attr.graphs)):
                    self._collect(g)

    def fresh(self, base):
        while True:
            name = f"{base}_{self.count}"
            self.count += 1
            if name not in self.used:
                self.used.add(name)
                return name


def _rewrite_graph(graph, start, target, namer, counts):
    for node in graph.node:
        if node.domain not in ("", "ai.onnx"):
            continue
        op = node.op_type
        if start < 18 <= target:
            if op in REDUCE_AXES_TO_INPUT:
                attr = _pop_attribute(node, "axes")
                if attr is not None:
                    name = namer.fresh(f"{node.name or op}_axes")
                    graph.initializer.append(
                        numpy_helper.from_array(np.array(list(attr.ints), dtype=np.int64), name))
                    # axes is the second input; the node has exactly one input at opset 17.
                    del node.input[1:]
                    node.input.append(name)
                    counts[op] = counts.get(op, 0) + 1
            elif op == "Split":
                has_split = len(node.input) > 1 and node.input[1] != ""
                has_num = any(a.name == "num_outputs" for a in node.attribute)
                if not has_split and not has_num:
                    node.attribute.append(helper.make_attribute("num_outputs", len(node.output)))
                    counts[op] = counts.get(op, 0) + 1
        if start < 20 <= target:
            if op == "DFT":
                attr = _pop_attribute(node, "axis")
                axis = attr.i if attr is not None else 1  # DFT-17's default
                name = namer.fresh(f"{node.name or op}_axis")
                graph.initializer.append(numpy_helper.from_array(np.array(axis, dtype=np.int64), name))
                while len(node.input) < 2:
                    node.input.append("")  # dft_length, absent
                del node.input[2:]
                node.input.append(name)
                counts[op] = counts.get(op, 0) + 1
            elif op == "GridSample":
                for attr in node.attribute:
                    if attr.name == "mode":
                        old = attr.s.decode()
                        if old not in GRID_SAMPLE_MODES:
                            raise UpgradeError(f"GridSample node '{node.name}' has unknown mode '{old}'")
                        attr.s = GRID_SAMPLE_MODES[old].encode()
                        counts[op] = counts.get(op, 0) + 1
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                _rewrite_graph(attr.g, start, target, namer, counts)
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for g in attr.graphs:
                    _rewrite_graph(g, start, target, namer, counts)


def upgrade(model, target):
    """Returns a copy of `model` (default-domain opset 17) at opset `target`, and
    {op: nodes rewritten}."""
    if target not in TO_OPSETS:
        raise UpgradeError(f"target opset must be one of {', '.join(map(str, TO_OPSETS))}, got {target}")
    start = default_opset(model)
    if start != FROM_OPSET:
        raise UpgradeError(f"the model's default-domain opset is {start}; only {FROM_OPSET} is upgraded")
    if model.functions:
        raise UpgradeError("models with local functions are not handled")
    out = onnx.ModelProto()
    out.CopyFrom(model)
    counts = {}
    _rewrite_graph(out.graph, start, target, _Namer(out), counts)
    for o in out.opset_import:
        if o.domain in ("", "ai.onnx"):
            o.version = target
    out.ir_version = max(out.ir_version, IR_VERSION[target])
    return out, counts


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("input", help="opset-17 model")
    parser.add_argument("output", help="where to write the upgraded model")
    parser.add_argument("--to", type=int, required=True, choices=TO_OPSETS, help="target opset")
    args = parser.parse_args()
    try:
        model = onnx.load(args.input)
    except Exception as exc:  # missing file, not a model
        print(f"upgrade_opset.py: cannot load {args.input}: {exc}", file=sys.stderr)
        return 2
    try:
        out, counts = upgrade(model, args.to)
    except UpgradeError as exc:
        print(f"upgrade_opset.py: {exc}", file=sys.stderr)
        return 1
    onnx.save(out, args.output)
    rewritten = ", ".join(f"{op}x{n}" for op, n in sorted(counts.items())) or "none"
    print(f"{args.output}: opset {FROM_OPSET} -> {args.to}, nodes rewritten: {rewritten}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
