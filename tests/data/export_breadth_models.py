#!/usr/bin/python3
"""Writes the ONNX models for the importer's breadth tests: opsets 7 to 21,
symbolic input dimensions, and the operators graphworld imports beyond the
classic CNN set (HardSigmoid, HardSwish, LeakyRelu, PRelu, Resize, Upsample,
ConvTranspose, Mish, Softplus, ReduceMax/Min, Mean/Max/Min, Gather, Tile,
Einsum...).

Three sources:
  - torch.onnx.export (the real exporter) of small randomly initialised
    networks with fixed seeds, at opsets 9, 11 and 17, and at 11 with dynamic
    axes;
  - the opset-17 exports upgraded to 18 and 21 by upgrade_opset.py (torch 1.13
    exports at most opset 17);
  - single-node (or few-node) models built with onnx.helper, for semantics
    torch 1.13 never emits (Upsample, Resize modes, attribute forms of old
    opsets, opset-18 forms...).

Every file is run in onnxruntime-node (ort_smoke.mjs) on random inputs before
it is moved into place; upgraded models must match their opset-17 source to
1e-5, and helper-made models are compared with a NumPy reference of the ONNX
specification (a difference is reported, not fatal: it is onnxruntime's
behaviour, recorded in the manifest). OUTDIR/breadth_manifest.json describes
every file.

Usage:
    /usr/bin/python3 tests/data/export_breadth_models.py OUTDIR [--only NAME[,NAME...]] [--list]

NAME is a file stem (breadth_detector_op9, breadth_node_tile_op13), a family
(detector, attention, mobilenet_v3_small, node_resize, node_einsum...) or a kind
(torch, node); --list prints the stems with their families. A file that
already exists and is newer than this script (and upgrade_opset.py,
export_models.py) is not rebuilt, but it is still run in onnxruntime.
"""

import argparse
import io
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
import zlib

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import export_models  # noqa: E402  (randomise_batchnorm, op_histogram)
import upgrade_opset  # noqa: E402

SCRIPT_MTIME = max(os.path.getmtime(os.path.join(HERE, f))
                   for f in ("export_breadth_models.py", "upgrade_opset.py", "export_models.py"))
ORT_SMOKE = os.path.join(HERE, "ort_smoke.mjs")
MANIFEST = "breadth_manifest.json"
UMASK = os.umask(0)
os.umask(UMASK)

TORCH_EXPORTER = f"pytorch {'.'.join(torch.__version__.split('.')[:2])}"
HELPER_EXPORTER = "onnx.helper"
# Largest opset onnx 1.12 can check; newer files are checked by running them.
CHECKER_MAX_OPSET = onnx.defs.onnx_opset_version()
# IR version released with each opset, at least 4 (from IR 4 on, initializers
# need not be graph inputs).
IR_FOR_OPSET = {7: 4, 9: 4, 10: 5, 11: 6, 12: 7, 13: 7, 14: 7, 15: 8, 16: 8, 17: 8,
                18: 8, 19: 9, 20: 9, 21: 10}
UPGRADE_TOLERANCE = 1e-5
REFERENCE_TOLERANCE = 1e-4  # relative to max(1, max |reference|)

warnings.filterwarnings("ignore", category=UserWarning)
warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)


# ---------------------------------------------------------------------------
# Torch models. Each builder seeds torch itself, so a model's weights do not
# depend on which models were built before it.
# ---------------------------------------------------------------------------

class Detector(nn.Module):
    """A small detection/segmentation-style network for [1,3,64,64] (any H, W
    divisible by 4)."""

    def __init__(self, align_corners_branch=True):
        super().__init__()
        self.align_corners_branch = align_corners_branch
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16),
                                  nn.LeakyReLU(0.1))
        self.prelu = nn.PReLU(16)
        self.down1 = nn.Sequential(nn.Conv2d(16, 32, 3, 2, 1, bias=False), nn.BatchNorm2d(32),
                                   nn.LeakyReLU(0.1))
        self.down2 = nn.Sequential(nn.Conv2d(32, 32, 3, 2, 1), nn.Softplus())
        self.mish = nn.Mish()
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.lateral = nn.Conv2d(32, 32, 1)
        self.deconv_grouped = nn.ConvTranspose2d(32, 16, 3, stride=2, padding=1, output_padding=1,
                                                 groups=2)
        self.deconv_k4 = nn.ConvTranspose2d(32, 16, 4, stride=2, padding=1)
        self.seg_head = nn.Conv2d(16, 4, 1)
        self.box_head = nn.Conv2d(16, 3, 1)
        self.cls_head = nn.Conv2d(32, 3, 1)
        with torch.no_grad():  # a PReLU slope per channel, not all 0.25
            self.prelu.weight.uniform_(0.05, 0.5)

    def forward(self, x):
        x = self.prelu(self.stem(x))                            # 16 x H x W
        c1 = self.down1(x)                                      # 32 x H/2
        c2 = self.mish(self.down2(c1))                          # 32 x H/4
        p1 = self.lateral(c1) + self.up(c2)                     # 32 x H/2
        smooth = F.interpolate(p1, scale_factor=2, mode="bilinear", align_corners=False)  # H
        if self.align_corners_branch:
            coarse = F.interpolate(c2, scale_factor=2, mode="bilinear", align_corners=True)
        else:
            coarse = F.interpolate(c2, scale_factor=2, mode="nearest")               # H/2
        d1 = self.deconv_grouped(p1)                            # 16 x H
        d2 = self.deconv_k4(c2)                                 # 16 x H/2
        top = torch.amax(smooth, dim=1, keepdim=True)
        bottom = torch.amin(smooth, dim=1, keepdim=True)
        m = torch.maximum(d1, top) + torch.minimum(d1, bottom)  # broadcast over channels
        n = torch.minimum(d2, coarse[:, :16])
        seg = self.seg_head(m)[:, [0, 2, 3]]                    # Gather, constant index list
        box = self.box_head(n).repeat(1, 1, 2, 1)               # Tile
        cls = self.cls_head(c2)
        return torch.cat([seg.flatten(2), box.flatten(2), cls.flatten(2)], dim=2)


class Attention(nn.Module):
    """A tiny transformer block for [1,16,32] features plus [1,16] token ids."""

    VOCAB = 50

    def __init__(self, use_einsum=True, d=32, heads=4):
        super().__init__()
        self.use_einsum = use_einsum
        self.heads = heads
        self.embedding = nn.Embedding(self.VOCAB, d)
        scale = 1.0 / math.sqrt(d)
        self.wq = nn.Parameter(torch.randn(d, d) * scale)
        self.wk = nn.Parameter(torch.randn(d, d) * scale)
        self.wv = nn.Parameter(torch.randn(d, d) * scale)
        self.wo = nn.Parameter(torch.randn(d, d) * scale)
        self.norm = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 64), nn.GELU(), nn.Linear(64, d))

    def project(self, x, w):
        return torch.einsum("bld,dk->blk", x, w) if self.use_einsum else torch.matmul(x, w)

    def forward(self, x, ids):
        b, length, d = x.shape
        dh = d // self.heads
        x = x + self.embedding(ids)              # Gather of a constant table by computed ids

        def heads(t):
            return t.reshape(b, length, self.heads, dh).transpose(1, 2)

        q = heads(self.project(x, self.wq))
        k = heads(self.project(x, self.wk))
        v = heads(self.project(x, self.wv))
        if self.use_einsum:
            scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(dh)
        else:
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(dh)
        weights = scores.softmax(-1)
        if self.use_einsum:
            o = torch.einsum("bhqk,bhkd->bhqd", weights, v)
        else:
            o = torch.matmul(weights, v)
        o = o.transpose(1, 2).reshape(b, length, d)
        x = self.norm(x + self.project(o, self.wo))
        return x + self.ff(x)


def build_mobilenet(opset):
    torch.manual_seed(0)
    model = torchvision.models.mobilenet_v3_small(weights=None)
    export_models.randomise_batchnorm(model)
    return model.eval()


def build_detector(opset):
    torch.manual_seed(0)
    # torch 1.13 cannot export bilinear align_corners=True at opset 9 (its
    # Upsample has no coordinate modes); that branch is nearest there.
    model = Detector(align_corners_branch=opset >= 11)
    export_models.randomise_batchnorm(model)
    return model.eval()


def build_attention(opset):
    torch.manual_seed(0)
    # Einsum needs opset 12; below that the same weights run through MatMul.
    return Attention(use_einsum=opset >= 12).eval()


# ---------------------------------------------------------------------------
# Model table
# ---------------------------------------------------------------------------

class Spec:
    """One output file. kind: 'torch' (torch export or its upgrade) or 'node'."""

    def __init__(self, name, family, kind, opset, exporter, build, expect="ok", require=(),
                 flags=None, ranges=None, base=None, reference=False, unsupported=(), note=""):
        self.name = name
        self.family = family
        self.kind = kind
        self.opset = opset
        self.exporter = exporter
        self.build = build          # build(ctx) -> ModelProto
        self.expect = expect
        self.require = tuple(require)
        self.flags = flags or {}    # input name -> concrete shape for symbolic dims
        self.ranges = ranges or {}  # int64 input name -> [low, high)
        self.base = base            # the opset-17 spec an upgrade is made from
        self.reference = reference  # compare onnxruntime with the NumPy reference
        self.unsupported = tuple(unsupported)
        self.note = note


TORCH_MODELS = [
    # name, builder, inputs [(name, shape, dtype)], opsets, dynamic shape flags (opset 11)
    ("mobilenet_v3_small", build_mobilenet, [("input", (1, 3, 224, 224), torch.float32)],
     {9: ("HardSigmoid", "Mul"), 11: ("HardSigmoid", "Mul"), 17: ("HardSwish", "HardSigmoid")},
     {"input": (1, 3, 192, 256)}),
    ("detector", build_detector, [("input", (1, 3, 64, 64), torch.float32)],
     {9: ("LeakyRelu", "PRelu", "Upsample", "ConvTranspose", "Softplus", "Tanh", "ReduceMax",
          "ReduceMin", "Max", "Min", "Tile", "Gather", "Concat"),
      11: ("LeakyRelu", "PRelu", "Resize", "ConvTranspose", "Softplus", "Tanh", "ReduceMax",
           "ReduceMin", "Max", "Min", "Tile", "Gather", "Concat"),
      17: ("LeakyRelu", "PRelu", "Resize", "ConvTranspose", "Softplus", "Tanh", "ReduceMax",
           "ReduceMin", "Max", "Min", "Tile", "Gather", "Concat")},
     {"input": (1, 3, 96, 128)}),
    ("attention", build_attention, [("input", (1, 16, 32), torch.float32),
                                    ("ids", (1, 16), torch.int64)],
     {9: ("Gather", "MatMul", "Softmax"), 11: ("Gather", "MatMul", "Softmax"),
      17: ("Gather", "Einsum", "Softmax", "LayerNormalization")},
     None),
]
UPGRADE_OPSETS = (18, 21)


def torch_export(model, inputs, opset, dynamic):
    example = []
    gen = torch.Generator().manual_seed(1)
    for name, shape, dtype in inputs:
        if dtype == torch.int64:
            example.append(torch.randint(0, Attention.VOCAB, shape, generator=gen))
        else:
            example.append(torch.rand(*shape, generator=gen) * 2.0 - 1.0)
    dynamic_axes = None
    if dynamic:
        dynamic_axes = {"input": {0: "batch", 2: "height", 3: "width"}, "output": {0: "batch"}}
    buf = io.BytesIO()
    with torch.no_grad():
        torch.onnx.export(model, tuple(example), buf, export_params=True, opset_version=opset,
                          training=torch.onnx.TrainingMode.EVAL,
                          input_names=[n for n, _, _ in inputs], output_names=["output"],
                          dynamic_axes=dynamic_axes)
    return onnx.load_from_string(buf.getvalue())


def torch_specs():
    specs = []
    for model_name, builder, inputs, opsets, dyn_flags in TORCH_MODELS:
        ranges = {n: [0, Attention.VOCAB] for n, _, dt in inputs if dt == torch.int64}
        for opset, require in opsets.items():
            name = f"breadth_{model_name}_op{opset}"
            build = (lambda ctx, b=builder, i=inputs, o=opset: torch_export(b(o), i, o, False))
            specs.append(Spec(name, model_name, "torch", opset, TORCH_EXPORTER, build,
                              require=require, ranges=ranges))
            if opset == 17:
                base = specs[-1]
                for target in UPGRADE_OPSETS:
                    build_up = (lambda ctx, b=base, t=target: upgrade_opset.upgrade(
                        onnx.load(ctx.path(b.name)), t)[0])
                    specs.append(Spec(f"breadth_{model_name}_op{target}", model_name, "torch",
                                      target, TORCH_EXPORTER, build_up, require=require,
                                      ranges=ranges, base=base))
        if dyn_flags:
            name = f"breadth_{model_name}_dynamic_op11"
            build = (lambda ctx, b=builder, i=inputs: torch_export(b(11), i, 11, True))
            specs.append(Spec(name, model_name, "torch", 11, TORCH_EXPORTER, build,
                              require=opsets[11], flags=dyn_flags, ranges=ranges))
    return specs


# ---------------------------------------------------------------------------
# Helper-made node models
# ---------------------------------------------------------------------------

def seeded_rng(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def const(values, dtype=np.int64):
    return np.array(values, dtype=dtype)


class NodeModel:
    """What a helper-made model holds: nodes, float32 graph inputs
    [(name, shape)], outputs [name] or [(name, elem_type, shape)], initializers
    {name: array or callable(rng) -> array}."""

    def __init__(self, nodes, inputs, outputs, inits=None):
        self.nodes = nodes
        self.inputs = inputs
        self.outputs = outputs
        self.inits = inits or {}


def build_node_model(name, opset, content, symbolic):
    rng = seeded_rng(name)
    inits = []
    for iname, value in content.inits.items():
        arr = value(rng) if callable(value) else value
        if arr.dtype == np.float64:
            arr = arr.astype(np.float32)
        inits.append(numpy_helper.from_array(arr, iname))
    graph_inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(s))
                    for n, s in content.inputs]
    explicit = [o for o in content.outputs if isinstance(o, tuple)]
    out_names = [o[0] if isinstance(o, tuple) else o for o in content.outputs]
    model = helper.make_model(
        helper.make_graph(content.nodes, name, graph_inputs,
                          [helper.make_tensor_value_info(n, TensorProto.FLOAT, None)
                           for n in out_names], initializer=inits),
        opset_imports=[helper.make_opsetid("", opset)],
        producer_name="graphworld tests/data/export_breadth_models.py")
    model.ir_version = IR_FOR_OPSET[opset]
    # Output types: given, or the reference's result shapes on static inputs.
    if explicit:
        del model.graph.output[:]
        for oname, elem, shape in content.outputs:
            model.graph.output.append(helper.make_tensor_value_info(oname, elem, shape))
    elif not symbolic:
        feeds = {n: np.zeros(s, dtype=np.float32) for n, s in content.inputs}
        shapes = [list(r.shape) for r in reference_outputs(model, feeds)]
        del model.graph.output[:]
        for oname, shape in zip(out_names, shapes):
            model.graph.output.append(helper.make_tensor_value_info(oname, TensorProto.FLOAT, shape))
    return model


X4 = ("x", (1, 4, 5, 6))  # the default input


def randn(*shape, scale=1.0):
    return lambda rng: rng.standard_normal(shape) * scale


def unary(op, **attrs):
    return NodeModel([helper.make_node(op, ["x"], ["y"], **attrs)], [X4], ["y"])


CTM_ABBREV = {"half_pixel": "hp", "pytorch_half_pixel": "php", "asymmetric": "asym",
              "align_corners": "ac", "tf_half_pixel_for_nn": "tfhp"}
NEAREST_ABBREV = {"round_prefer_floor": "rpf", "round_prefer_ceil": "rpc", "floor": "floor",
                  "ceil": "ceil"}
EMPTY_F32 = np.zeros([0], dtype=np.float32)


def resize(opset, x_shape, mode=None, ctm=None, nearest_mode=None, scales=None, sizes=None):
    """Resize at opset 10 (X, scales), 11 (X, roi, scales[, sizes]; roi and scales
    are tensors, empty when unused) or 13+ (absent inputs named '')."""
    attrs = {}
    if mode is not None:
        attrs["mode"] = mode
    if ctm is not None:
        attrs["coordinate_transformation_mode"] = ctm
    if nearest_mode is not None:
        attrs["nearest_mode"] = nearest_mode
    inits = {}
    if opset == 10:
        inputs = ["x", "scales"]
        inits["scales"] = const(scales, np.float32)
    elif opset == 11:
        inits["roi"] = EMPTY_F32
        inits["scales"] = const(scales, np.float32) if scales is not None else EMPTY_F32
        inputs = ["x", "roi", "scales"]
        if sizes is not None:
            inits["sizes"] = const(sizes)
            inputs.append("sizes")
    else:
        if scales is not None:
            inits["scales"] = const(scales, np.float32)
            inputs = ["x", "", "scales"]
        else:
            inits["sizes"] = const(sizes)
            inputs = ["x", "", "", "sizes"]
    return NodeModel([helper.make_node("Resize", inputs, ["y"], **attrs)],
                     [("x", x_shape)], ["y"], inits)


def node_specs():
    out = []

    def add(name, family, opset, content, expect="ok", flags=None, unsupported=(), note=""):
        full = f"breadth_node_{name}_op{opset}"
        symbolic = bool(flags)
        out.append(Spec(full, family, "node", opset, HELPER_EXPORTER,
                        lambda ctx, n=full, o=opset, c=content, s=symbolic: build_node_model(n, o, c, s),
                        expect=expect, flags=flags, reference=expect == "ok",
                        unsupported=unsupported, note=note))

    # Upsample: opset 7 (scales attribute), 9 (scales input).
    up_scales = [1.0, 1.0, 2.0, 1.5]
    for mode in ("nearest", "linear"):
        add(f"upsample_{mode}", "node_upsample", 7, NodeModel(
            [helper.make_node("Upsample", ["x"], ["y"], mode=mode, scales=up_scales)], [X4], ["y"]))
        add(f"upsample_{mode}", "node_upsample", 9, NodeModel(
            [helper.make_node("Upsample", ["x", "scales"], ["y"], mode=mode)], [X4], ["y"],
            {"scales": const(up_scales, np.float32)}))

    # Resize at opset 10: scales only, no coordinate modes.
    for mode in ("nearest", "linear"):
        add(f"resize_{mode}", "node_resize", 10,
            resize(10, (1, 2, 5, 6), mode=mode, scales=[1, 1, 2, 1.5]))
        add(f"resize_{mode}_down", "node_resize", 10,
            resize(10, (1, 2, 6, 10), mode=mode, scales=[1, 1, 0.5, 0.6]))
    # One axis enlarged, one shrunk: is the nearest rounding chosen per axis?
    add("resize_nearest_mixed", "node_resize", 10,
        resize(10, (1, 2, 6, 10), mode="nearest", scales=[1, 1, 1.5, 0.6]))

    # Resize at 11 (scales, upsampling: 5x6 -> 10x9) and 13 (sizes, downsampling
    # with even sizes: 8x12 -> 4x8), every coordinate mode and nearest mode.
    # tf_half_pixel_for_nn (the spec's spelling) exists at opset 11 only and
    # is meant for nearest: its sizes case is at 11 too.
    for ctm, c in CTM_ABBREV.items():
        for nm, n in NEAREST_ABBREV.items():
            add(f"resize_nearest_{c}_{n}_scales", "node_resize", 11,
                resize(11, (1, 2, 5, 6), "nearest", ctm, nm, scales=[1, 1, 2, 1.5]))
            sizes_opset = 11 if ctm == "tf_half_pixel_for_nn" else 13
            add(f"resize_nearest_{c}_{n}_sizes", "node_resize", sizes_opset,
                resize(sizes_opset, (1, 2, 8, 12), "nearest", ctm, nm, sizes=[1, 2, 4, 8]))
        if ctm != "tf_half_pixel_for_nn":
            add(f"resize_linear_{c}_scales", "node_resize", 11,
                resize(11, (1, 2, 5, 6), "linear", ctm, scales=[1, 1, 2, 1.5]))
            add(f"resize_linear_{c}_sizes", "node_resize", 13,
                resize(13, (1, 2, 8, 12), "linear", ctm, sizes=[1, 2, 4, 8]))
    # The other way round: sizes at 11 (upsampling 5x6 -> 7x10), scales at 13
    # (default attributes: nearest, half_pixel, round_prefer_floor), downsampling scales.
    add("resize_nearest_sizes", "node_resize", 11,
        resize(11, (1, 2, 5, 6), "nearest", "half_pixel", sizes=[1, 2, 7, 10]))
    add("resize_linear_sizes", "node_resize", 11,
        resize(11, (1, 2, 5, 6), "linear", "half_pixel", sizes=[1, 2, 7, 10]))
    add("resize_default_scales", "node_resize", 13, resize(13, (1, 2, 5, 6), scales=[1, 1, 2, 2]))
    add("resize_linear_scales", "node_resize", 13,
        resize(13, (1, 2, 5, 6), "linear", scales=[1, 1, 2, 1.5]))
    add("resize_linear_down_scales", "node_resize", 13,
        resize(13, (1, 2, 8, 12), "linear", scales=[1, 1, 0.5, 0.5]))
    # half_pixel_symmetric (opset 19) differs from half_pixel only where
    # in * scale is fractional. graphworld resizes to whole sizes only
    # (6 * 1.5 = 9, 8 * 0.75 = 6 here) and refuses the fractional case
    # (5 * 1.5 = 7.5 -> 7, 6 * 1.7 = 10.2 -> 10), naming the reason.
    for mode in ("nearest", "linear"):
        add(f"resize_{mode}_hps_scales", "node_resize", 19,
            resize(19, (1, 2, 6, 8), mode, "half_pixel_symmetric", scales=[1, 1, 1.5, 0.75]))
        add(f"resize_{mode}_hps_fractional_scales", "node_resize", 19,
            resize(19, (1, 2, 5, 6), mode, "half_pixel_symmetric", scales=[1, 1, 1.5, 1.7]),
            expect="refused", note="in * scale is not whole: graphworld refuses it and says why")

    # Opset-9 attribute forms.
    add("slice", "node_slice", 9, NodeModel(
        [helper.make_node("Slice", ["x"], ["y"], axes=[1, 3], starts=[1, -4], ends=[1000, -1])],
        [X4], ["y"]))
    add("pad", "node_pad", 9, NodeModel(
        [helper.make_node("Pad", ["x"], ["y"], mode="constant", pads=[0, 0, 1, 2, 0, 0, 2, 1],
                          value=0.5)], [X4], ["y"]))
    add("clip", "node_clip", 9, NodeModel(
        [helper.make_node("Clip", ["x"], ["y"], min=-0.5, max=0.25)], [X4], ["y"]))

    # Split-18 with num_outputs, 10 into 3 (4, 4, 2).
    add("split_num_outputs", "node_split", 18, NodeModel(
        [helper.make_node("Split", ["x"], ["y0", "y1", "y2"], axis=1, num_outputs=3)],
        [("x", (1, 10, 3, 4))], ["y0", "y1", "y2"]))

    # Reductions: axes attribute (13) and input (18), keepdims 1 and 0.
    for op in ("ReduceMean", "ReduceMax", "ReduceMin"):
        for keepdims, axes in ((1, [1]), (0, [2, -1])):
            short = op[len("Reduce"):].lower()
            add(f"reduce{short}_keepdims{keepdims}", "node_reduce", 13, NodeModel(
                [helper.make_node(op, ["x"], ["y"], axes=axes, keepdims=keepdims)], [X4], ["y"]))
            add(f"reduce{short}_keepdims{keepdims}", "node_reduce", 18, NodeModel(
                [helper.make_node(op, ["x", "axes"], ["y"], keepdims=keepdims)], [X4], ["y"],
                {"axes": const(axes)}))

    # Variadic Mean/Max/Min, three inputs that broadcast.
    for op in ("Mean", "Max", "Min"):
        add(f"{op.lower()}3", "node_variadic", 13, NodeModel(
            [helper.make_node(op, ["a", "b", "c"], ["y"])],
            [("a", (1, 4, 5, 6)), ("b", (4, 1, 1)), ("c", (1, 1, 6))], ["y"]))

    # Activations.
    add("mish", "node_activation", 18, unary("Mish"))
    add("hardswish", "node_activation", 14, unary("HardSwish"))
    add("hardsigmoid_a0167", "node_activation", 13, unary("HardSigmoid", alpha=0.1666667, beta=0.5))
    add("hardsigmoid_a02", "node_activation", 13, unary("HardSigmoid", alpha=0.2, beta=0.5))
    add("leakyrelu", "node_activation", 13, unary("LeakyRelu", alpha=0.01))
    add("prelu_channel", "node_activation", 13, NodeModel(
        [helper.make_node("PRelu", ["x", "slope"], ["y"])], [X4], ["y"],
        {"slope": lambda rng: rng.uniform(0.05, 0.5, (4, 1, 1))}))
    add("prelu_scalar", "node_activation", 13, NodeModel(
        [helper.make_node("PRelu", ["x", "slope"], ["y"])], [X4], ["y"],
        {"slope": const([0.2], np.float32)}))
    add("softplus", "node_activation", 13, unary("Softplus"))
    add("gelu", "node_activation", 20, unary("Gelu", approximate="none"))

    # ConvTranspose on [1,4,5,6].
    w433 = randn(4, 3, 3, 3, scale=0.3)
    add("convtranspose_same_upper", "node_convtranspose", 13, NodeModel(
        [helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2], auto_pad="SAME_UPPER")],
        [X4], ["y"], {"w": w433}))
    add("convtranspose_output_shape", "node_convtranspose", 13, NodeModel(
        [helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2], output_shape=[10, 11])],
        [X4], ["y"], {"w": w433}))
    add("convtranspose_dilations", "node_convtranspose", 13, NodeModel(
        [helper.make_node("ConvTranspose", ["x", "w"], ["y"], dilations=[2, 2], pads=[1, 1, 1, 1])],
        [X4], ["y"], {"w": w433}))
    add("convtranspose_group_bias", "node_convtranspose", 13, NodeModel(
        [helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], group=4, strides=[2, 2],
                          pads=[1, 1, 1, 1], output_padding=[1, 1])],
        [X4], ["y"], {"w": randn(4, 2, 3, 3, scale=0.3), "b": randn(8, scale=0.1)}))

    # Gather on a computed tensor, 2-D constant indices (one negative), axis 1.
    add("gather_2d_axis1", "node_gather", 13, NodeModel(
        [helper.make_node("Relu", ["x"], ["r"]),
         helper.make_node("Gather", ["r", "indices"], ["y"], axis=1)],
        [X4], ["y"], {"indices": const([[0, -2], [3, 1]])}))
    add("tile", "node_tile", 13, NodeModel(
        [helper.make_node("Tile", ["x", "repeats"], ["y"])], [X4], ["y"],
        {"repeats": const([1, 2, 3, 1])}))

    # Einsum in the forms transformer exporters emit.
    einsums = [
        ("bid_jd", "bid,jd->bij", [("x", (2, 5, 8))], {"w": randn(6, 8)}),
        ("qk", "bhqd,bhkd->bhqk", [("q", (1, 2, 5, 8)), ("k", (1, 2, 7, 8))], {}),
        ("av", "bhqk,bhkd->bhqd", [("a", (1, 2, 5, 7)), ("v", (1, 2, 7, 8))], {}),
        ("ij_jk", "ij,jk->ik", [("x", (5, 8))], {"w": randn(8, 6)}),
        ("transpose", "bij->bji", [("x", (2, 5, 8))], {}),
        ("bmm", "bij,bjk->bik", [("a", (2, 5, 8)), ("b", (2, 8, 6))], {}),
    ]
    for short, equation, inputs, inits in einsums:
        operands = [n for n, _ in inputs] + list(inits)
        add(f"einsum_{short}", "node_einsum", 13, NodeModel(
            [helper.make_node("Einsum", operands, ["y"], equation=equation)], inputs, ["y"], inits))

    # Symbolic input dimensions, fixed by --input-shape.
    add("dynamic_conv_resize", "node_dynamic", 13, NodeModel(
        [helper.make_node("Conv", ["input", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c"], ["r"]),
         helper.make_node("Resize", ["r", "", "scales"], ["output"], mode="nearest")],
        [("input", ("batch", 3, "height", "width"))], [("output", TensorProto.FLOAT, ["batch", 8, None, None])],
        {"w": randn(8, 3, 3, 3, scale=0.3), "b": randn(8, scale=0.1),
         "scales": const([1, 1, 2, 2], np.float32)}),
        flags={"input": (2, 3, 24, 32)})
    add("dynamic_two_inputs", "node_dynamic", 13, NodeModel(
        [helper.make_node("Add", ["x", "y"], ["s"]),
         helper.make_node("Relu", ["s"], ["r"]),
         helper.make_node("ReduceMean", ["r"], ["output"], axes=[2, 3], keepdims=1)],
        [("x", ("batch", 4, "height", "width")), ("y", (1, 4, "height", "width"))],
        [("output", TensorProto.FLOAT, ["batch", 4, 1, 1])]),
        flags={"x": (2, 4, 8, 12), "y": (1, 4, 8, 12)})

    # Three operators graphworld does not import, on three nodes.
    add("unsupported_ops", "node_unsupported", 13, NodeModel(
        [helper.make_node("TopK", ["x", "k"], ["values", "indices"], axis=-1),
         helper.make_node("ScatterND", ["x", "scatter_indices", "updates"], ["scattered"]),
         helper.make_node("Reshape", ["x", "box_shape"], ["boxes"]),
         helper.make_node("Reshape", ["x", "score_shape"], ["scores"]),
         helper.make_node("NonMaxSuppression", ["boxes", "scores", "max_boxes"], ["selected"])],
        [X4],
        [("values", TensorProto.FLOAT, [1, 4, 5, 2]), ("indices", TensorProto.INT64, [1, 4, 5, 2]),
         ("scattered", TensorProto.FLOAT, [1, 4, 5, 6]), ("selected", TensorProto.INT64, [None, 3])],
        {"k": const([2]), "scatter_indices": const([[0, 1, 2, 3], [0, 3, 4, 5]]),
         "updates": const([10.0, -10.0], np.float32), "box_shape": const([1, 30, 4]),
         "score_shape": const([1, 4, 30]), "max_boxes": const([3])}),
        expect="unsupported", unsupported=("NonMaxSuppression", "ScatterND", "TopK"))
    return out


def model_table():
    return torch_specs() + node_specs()


# ---------------------------------------------------------------------------
# NumPy reference of the ONNX specification, for the helper-made models.
# float64 throughout, except the coordinate arithmetic of Resize, which is
# float32 as the specification's formulas are evaluated by runtimes.
# ---------------------------------------------------------------------------

def _attrs(node):
    out = {}
    for a in node.attribute:
        v = helper.get_attribute_value(a)
        out[a.name] = v.decode() if isinstance(v, bytes) else v
    return out


def _resize_axis(data, axis, out_len, scale, mode, ctm, nearest_mode):
    in_len = data.shape[axis]
    f32 = np.float32
    x = np.arange(out_len, dtype=f32)
    scale = f32(scale)
    if ctm == "half_pixel":
        xo = (x + f32(0.5)) / scale - f32(0.5)
    elif ctm == "pytorch_half_pixel":
        xo = (x + f32(0.5)) / scale - f32(0.5) if out_len > 1 else np.zeros(1, f32)
    elif ctm == "align_corners":
        xo = x * f32(in_len - 1) / f32(out_len - 1) if out_len > 1 else np.zeros(1, f32)
    elif ctm == "asymmetric":
        xo = x / scale
    elif ctm == "tf_half_pixel_for_nn":
        xo = (x + f32(0.5)) / scale
    elif ctm == "half_pixel_symmetric":
        # Opset 19: centres the output when in * scale is not a whole number.
        adjustment = f32(out_len) / (f32(in_len) * scale)
        offset = f32(in_len) / f32(2) * (f32(1) - adjustment)
        xo = offset + (x + f32(0.5)) / scale - f32(0.5)
    else:
        raise ValueError(f"coordinate_transformation_mode {ctm}")
    xo = xo.astype(np.float64)
    if mode == "nearest":
        if nearest_mode == "round_prefer_floor":
            idx = np.ceil(xo - 0.5)
        elif nearest_mode == "round_prefer_ceil":
            idx = np.floor(xo + 0.5)
        elif nearest_mode == "floor":
            idx = np.floor(xo)
        elif nearest_mode == "ceil":
            idx = np.ceil(xo)
        else:
            raise ValueError(f"nearest_mode {nearest_mode}")
        idx = np.clip(idx, 0, in_len - 1).astype(np.int64)
        return np.take(data, idx, axis=axis)
    if mode == "linear":
        xo = np.clip(xo, 0, in_len - 1)
        i0 = np.floor(xo).astype(np.int64)
        i1 = np.minimum(i0 + 1, in_len - 1)
        w = (xo - i0).reshape([-1 if d == axis else 1 for d in range(data.ndim)])
        return np.take(data, i0, axis=axis) * (1 - w) + np.take(data, i1, axis=axis) * w
    raise ValueError(f"mode {mode}")


def _resize(x, scales, sizes, mode, ctm, nearest_mode):
    if sizes is not None and len(sizes):
        sizes = [int(s) for s in sizes]
        scales = [np.float32(o) / np.float32(i) for o, i in zip(sizes, x.shape)]
    else:
        scales = [np.float32(s) for s in scales]
        sizes = [int(math.floor(np.float32(i) * s)) for i, s in zip(x.shape, scales)]
    y = x
    for axis in range(x.ndim):
        if sizes[axis] != x.shape[axis] or scales[axis] != 1:
            y = _resize_axis(y, axis, sizes[axis], scales[axis], mode, ctm, nearest_mode)
    return y


def _conv_transpose(x, w, b, a, opset):
    ndim = x.ndim - 2
    strides = a.get("strides", [1] * ndim)
    dil = a.get("dilations", [1] * ndim)
    group = a.get("group", 1)
    out_pad = a.get("output_padding", [0] * ndim)
    k = w.shape[2:]
    full = F.conv_transpose2d(torch.from_numpy(x), torch.from_numpy(w), None, stride=strides,
                              dilation=dil, groups=group).numpy()
    # output_padding adds rows at the end that only the bias reaches.
    full = np.pad(full, [(0, 0), (0, 0)] + [(0, p) for p in out_pad])
    auto_pad = a.get("auto_pad", "NOTSET")
    if "output_shape" in a or auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        shape = a.get("output_shape") or [x.shape[2 + i] * strides[i] for i in range(ndim)]
        begin, end = [], []
        for i in range(ndim):
            total = (strides[i] * (x.shape[2 + i] - 1) + out_pad[i] + (k[i] - 1) * dil[i] + 1
                     - shape[i])
            if auto_pad == "SAME_UPPER":
                begin.append(total // 2)
                end.append(total - total // 2)
            else:
                begin.append(total - total // 2)
                end.append(total // 2)
    else:
        pads = a.get("pads", [0] * 2 * ndim)
        begin, end = pads[:ndim], pads[ndim:]
    index = [slice(None), slice(None)] + [slice(begin[i], full.shape[2 + i] - end[i])
                                          for i in range(ndim)]
    y = full[tuple(index)]
    if b is not None:
        y = y + b.reshape([1, -1] + [1] * ndim)
    return y


def _eval_node(node, args, opset):
    op = node.op_type
    a = _attrs(node)
    x = args[0] if args else None
    if op == "Relu":
        return [np.maximum(x, 0)]
    if op == "Add":
        return [args[0] + args[1]]
    if op in ("Mean", "Max", "Min"):
        stacked = np.broadcast_arrays(*args)
        return [{"Mean": np.mean, "Max": np.max, "Min": np.min}[op](np.stack(stacked), axis=0)]
    if op == "Conv":
        pads = a.get("pads", [0, 0, 0, 0])
        assert pads[:2] == pads[2:], "reference Conv takes symmetric pads"
        y = F.conv2d(torch.from_numpy(x), torch.from_numpy(args[1]),
                     torch.from_numpy(args[2]) if len(args) > 2 else None,
                     stride=a.get("strides", 1), padding=pads[:2]).numpy()
        return [y]
    if op == "ConvTranspose":
        return [_conv_transpose(x, args[1], args[2] if len(args) > 2 else None, a, opset)]
    if op == "Upsample":
        scales = a["scales"] if opset < 9 else args[1]
        return [_resize(x, scales, None, a.get("mode", "nearest"), "asymmetric", "floor")]
    if op == "Resize":
        mode = a.get("mode", "nearest")
        if opset < 11:
            return [_resize(x, args[1], None, mode, "asymmetric", "floor")]
        scales = args[2] if len(args) > 2 and args[2] is not None else None
        sizes = args[3] if len(args) > 3 and args[3] is not None else None
        return [_resize(x, scales, sizes, mode, a.get("coordinate_transformation_mode", "half_pixel"),
                        a.get("nearest_mode", "round_prefer_floor"))]
    if op == "Slice":  # opset < 10: attributes
        index = [slice(None)] * x.ndim
        axes = a.get("axes", list(range(len(a["starts"]))))
        for ax, s, e in zip(axes, a["starts"], a["ends"]):
            index[ax] = slice(s, e)
        return [x[tuple(index)]]
    if op == "Pad":  # opset < 11: attributes
        pads = a["pads"]
        n = x.ndim
        assert a.get("mode", "constant") == "constant"
        return [np.pad(x, [(pads[i], pads[n + i]) for i in range(n)], constant_values=a.get("value", 0.0))]
    if op == "Clip":  # opset < 11: attributes
        return [np.clip(x, a.get("min", -np.inf), a.get("max", np.inf))]
    if op == "Split":
        axis = a.get("axis", 0)
        length = x.shape[axis]
        if "num_outputs" in a:
            chunk = -(-length // a["num_outputs"])
            sizes = [min(chunk, length - i * chunk) for i in range(a["num_outputs"])]
        else:
            sizes = list(args[1])
        cuts = np.cumsum(sizes)[:-1]
        return np.split(x, cuts, axis=axis)
    if op in ("ReduceMean", "ReduceMax", "ReduceMin"):
        axes = a.get("axes") if "axes" in a else (args[1] if len(args) > 1 else None)
        axes = None if axes is None else tuple(int(v) for v in axes)
        fn = {"ReduceMean": np.mean, "ReduceMax": np.max, "ReduceMin": np.min}[op]
        return [fn(x, axis=axes, keepdims=bool(a.get("keepdims", 1)))]
    if op == "Softplus":
        return [np.logaddexp(0, x)]
    if op == "Mish":
        return [x * np.tanh(np.logaddexp(0, x))]
    if op == "HardSigmoid":
        return [np.clip(a.get("alpha", 0.2) * x + a.get("beta", 0.5), 0, 1)]
    if op == "HardSwish":
        return [x * np.clip(x / 6 + 0.5, 0, 1)]
    if op == "LeakyRelu":
        return [np.where(x < 0, a.get("alpha", 0.01) * x, x)]
    if op == "PRelu":
        return [np.where(x < 0, args[1] * x, x)]
    if op == "Gelu":
        assert a.get("approximate", "none") == "none"
        return [0.5 * x * (1 + torch.erf(torch.from_numpy(x) / math.sqrt(2)).numpy())]
    if op == "Gather":
        return [np.take(x, args[1], axis=a.get("axis", 0))]
    if op == "Tile":
        return [np.tile(x, args[1])]
    if op == "Einsum":
        return [np.einsum(a["equation"], *args)]
    raise NotImplementedError(f"no reference for {op}")


def reference_outputs(model, feeds):
    """Evaluates a helper-made model on float64 copies of `feeds`."""
    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    values = {"": None}
    for t in model.graph.initializer:
        arr = numpy_helper.to_array(t)
        values[t.name] = arr.astype(np.float64) if arr.dtype == np.float32 else arr
    for name, arr in feeds.items():
        values[name] = arr.astype(np.float64)
    for node in model.graph.node:
        results = _eval_node(node, [values[i] for i in node.input], opset)
        for name, r in zip(node.output, results):
            values[name] = np.asarray(r)
    return [values[o.name] for o in model.graph.output]


# ---------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------

DTYPE_NAMES = {TensorProto.FLOAT: "float32", TensorProto.INT64: "int64"}


def default_opset(model):
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)


def graph_inputs(model):
    """[{name, dtype, shape}] of the inputs that are not initializers; a
    symbolic dimension is its dim_param, an unknown one None."""
    inits = {t.name for t in model.graph.initializer}
    out = []
    for v in model.graph.input:
        if v.name in inits:
            continue
        t = v.type.tensor_type
        shape = []
        for d in t.shape.dim:
            if d.HasField("dim_value"):
                shape.append(d.dim_value)
            else:
                shape.append(d.dim_param or None)
        out.append({"name": v.name, "dtype": DTYPE_NAMES.get(t.elem_type, str(t.elem_type)),
                    "shape": shape})
    return out


def concrete_inputs(spec, model):
    """Inputs with concrete shapes for onnxruntime: the static shape, or the
    spec's --input-shape value."""
    out = []
    for inp in graph_inputs(model):
        shape = inp["shape"]
        if any(not isinstance(d, int) for d in shape):
            if inp["name"] not in spec.flags:
                raise RuntimeError(f"input '{inp['name']}' has symbolic dims {shape} but no shape flag")
            fixed = list(spec.flags[inp["name"]])
            if len(fixed) != len(shape) or any(isinstance(d, int) and d != f for d, f in zip(shape, fixed)):
                raise RuntimeError(f"shape flag {fixed} does not fit input '{inp['name']}' {shape}")
            shape = fixed
        entry = {"name": inp["name"], "dtype": inp["dtype"], "shape": shape}
        if inp["dtype"] == "int64":
            if inp["name"] not in spec.ranges:
                raise RuntimeError(f"int64 input '{inp['name']}' has no value range")
            entry["range"] = list(spec.ranges[inp["name"]])
        out.append(entry)
    return out


def shape_flags(spec, model):
    flags = []
    for inp in graph_inputs(model):
        if inp["name"] in spec.flags and any(not isinstance(d, int) for d in inp["shape"]):
            flags.append(f"{inp['name']}=" + "x".join(str(d) for d in spec.flags[inp["name"]]))
    return flags


def check_model(spec, model):
    """Static checks of a freshly built model; returns its op histogram."""
    opset = default_opset(model)
    problems = []
    if opset != spec.opset:
        problems.append(f"default-domain opset is {opset}, expected {spec.opset}")
    if spec.opset <= CHECKER_MAX_OPSET:
        onnx.checker.check_model(model, full_check=spec.kind == "node")
    ops = export_models.op_histogram(model)
    for op in ops:
        if "::" in op:
            problems.append(f"op {op} is outside the default ONNX domain")
    for op in spec.require:
        if ops.get(op, 0) == 0:
            problems.append(f"expected op {op}, found none")
    for op in spec.unsupported:
        if ops.get(op, 0) == 0:
            problems.append(f"expected unsupported op {op}, found none")
    if spec.kind == "torch" and [o.name for o in model.graph.output] != ["output"]:
        problems.append(f"graph outputs are {[o.name for o in model.graph.output]}, expected ['output']")
    for inp in graph_inputs(model):
        if inp["dtype"] not in ("float32", "int64"):
            problems.append(f"input '{inp['name']}' has dtype {inp['dtype']}")
        symbolic = any(not isinstance(d, int) for d in inp["shape"])
        if symbolic != (inp["name"] in spec.flags):
            problems.append(f"input '{inp['name']}' shape {inp['shape']} and the shape flags disagree")
    if problems:
        raise RuntimeError("; ".join(problems))
    return ops


def declared_output_shapes(model):
    shapes = []
    for o in model.graph.output:
        t = o.type.tensor_type
        if not t.HasField("shape"):
            shapes.append(None)
            continue
        shapes.append([d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim])
    return shapes


def read_tensor_dir(path):
    with open(os.path.join(path, "manifest.json")) as f:
        manifest = json.load(f)
    out = []
    for t in manifest["tensors"]:
        dtype = {"float32": np.float32, "int64": np.int64}[t["dtype"]]
        arr = np.fromfile(os.path.join(path, t["file"]), dtype=dtype).reshape(t["shape"])
        out.append((t["name"], arr))
    return out


def run_onnxruntime(jobs):
    """Runs ort_smoke.mjs on all jobs in one process; returns one result per job."""
    node = shutil.which("node")
    if node is None:
        raise RuntimeError("node is not on PATH; it runs onnxruntime-node (tests/tools/README.md)")
    fd, jobs_path = tempfile.mkstemp(prefix="breadth_jobs.", suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump(jobs, f)
    try:
        proc = subprocess.run([node, ORT_SMOKE, "--jobs", jobs_path], capture_output=True,
                              text=True, check=False)
    finally:
        os.unlink(jobs_path)
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode not in (0, 1) or len(lines) != len(jobs):
        raise RuntimeError(f"ort_smoke.mjs failed (exit {proc.returncode}): {proc.stderr.strip()}")
    return lines


# ---------------------------------------------------------------------------
# Build, check, move into place; the manifest.
# ---------------------------------------------------------------------------

class Context:
    """Where each model of this run lies: its temporary file while it is being
    checked, else its final path."""

    def __init__(self, outdir):
        self.outdir = outdir
        self.pending = {}

    def final(self, name):
        return os.path.join(self.outdir, name + ".onnx")

    def path(self, name):
        return self.pending.get(name, self.final(name))


def up_to_date(spec, ctx):
    path = ctx.final(spec.name)
    if not os.path.exists(path) or os.path.getmtime(path) <= SCRIPT_MTIME:
        return False
    if spec.base is not None:
        base = ctx.final(spec.base.name)
        return os.path.exists(base) and os.path.getmtime(path) >= os.path.getmtime(base)
    return True


def select(specs, only):
    if not only:
        return list(specs)
    wanted = [n.strip() for n in only.split(",") if n.strip()]
    known = {s.name for s in specs} | {s.family for s in specs} | {s.kind for s in specs}
    unknown = [n for n in wanted if n not in known]
    if unknown:
        print(f"export_breadth_models.py: unknown model name(s): {', '.join(unknown)}\n"
              f"see --list for the names, families and kinds", file=sys.stderr)
        sys.exit(2)
    chosen = [s for s in specs if s.name in wanted or s.family in wanted or s.kind in wanted]
    # An upgraded model needs its opset-17 source.
    needed = {s.base.name for s in chosen if s.base is not None}
    return [s for s in specs if s in chosen or s.name in needed]


def manifest_entry(spec, model, ops, runtime):
    entry = {
        "file": spec.name + ".onnx",
        "exporter": spec.exporter,
        "opset": spec.opset,
        "inputs": graph_inputs(model),
        "input_shape_flags": shape_flags(spec, model),
        "ops": dict(sorted(ops.items())),
        "expect": spec.expect,
    }
    for inp in entry["inputs"]:
        if inp["name"] in spec.ranges:
            inp["range"] = list(spec.ranges[inp["name"]])
    if spec.base is not None:
        entry["upgraded_from"] = spec.base.name + ".onnx"
    if spec.unsupported:
        entry["unsupported_ops"] = sorted(spec.unsupported)
    if spec.reference:
        # Whether onnxruntime agrees with the NumPy reference of the ONNX spec.
        entry["ort_matches_spec"] = runtime.get("matches_spec")
        entry["ort_vs_spec_max_abs_err"] = runtime.get("spec_err")
    return entry


def write_manifest(outdir, specs, runtime_by_name):
    """Lists every file of the table present in OUTDIR. Runtime facts of files
    not run this time are kept from the previous manifest."""
    path = os.path.join(outdir, MANIFEST)
    previous = {}
    if os.path.exists(path):
        try:
            with open(path) as f:
                previous = {e["file"]: e for e in json.load(f)["models"]}
        except (OSError, ValueError, KeyError, TypeError):
            previous = {}
    entries = []
    for spec in specs:
        file = os.path.join(outdir, spec.name + ".onnx")
        if not os.path.exists(file):
            continue
        model = onnx.load(file)
        runtime = runtime_by_name.get(spec.name)
        if runtime is None:
            old = previous.get(spec.name + ".onnx", {})
            runtime = {"matches_spec": old.get("ort_matches_spec"),
                       "spec_err": old.get("ort_vs_spec_max_abs_err")}
        entries.append(manifest_entry(spec, model, export_models.op_histogram(model), runtime))
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write('{"models": [\n')
        f.write(",\n".join("  " + json.dumps(e) for e in entries))
        f.write("\n]}\n")
    os.replace(tmp, path)
    return len(entries)


def judge(spec, model, result, save_dir):
    """Checks one onnxruntime result; returns (problems, runtime facts, notes)."""
    problems, notes, runtime = [], [], {}
    if not result.get("ok"):
        return [f"onnxruntime: {result.get('error')}"], runtime, notes
    outs = result["outputs"]
    for o, declared in zip(outs, declared_output_shapes(model)):
        if o["nonfinite"]:
            problems.append(f"output '{o['name']}' has {o['nonfinite']} non-finite values")
        if declared is not None and not spec.flags and spec.base is None:
            if len(declared) != len(o["shape"]) or any(
                    d is not None and d != s for d, s in zip(declared, o["shape"])):
                problems.append(f"output '{o['name']}' is {o['shape']} in onnxruntime, "
                                f"declared {declared}")
    if spec.base is not None:
        err = result["compare"]["max_abs_err"]
        if not err <= UPGRADE_TOLERANCE:
            problems.append(f"differs from {spec.base.name} by {err:.3g} (> {UPGRADE_TOLERANCE})")
    if spec.reference and save_dir:
        feeds = dict(read_tensor_dir(os.path.join(save_dir, "inputs")))
        got = read_tensor_dir(os.path.join(save_dir, "outputs"))
        want = reference_outputs(model, feeds)
        worst = 0.0
        for (name, g), w in zip(got, want):
            if list(g.shape) != list(w.shape):
                problems.append(f"output '{name}' is {list(g.shape)} in onnxruntime, "
                                f"{list(w.shape)} in the reference")
                worst = float("inf")
                continue
            err = float(np.max(np.abs(g.astype(np.float64) - w))) if w.size else 0.0
            scale = max(1.0, float(np.max(np.abs(w))) if w.size else 0.0)
            worst = max(worst, err / scale)
        runtime["spec_err"] = None if math.isinf(worst) else round(worst, 7)
        runtime["matches_spec"] = worst <= REFERENCE_TOLERANCE
        if not runtime["matches_spec"]:
            notes.append(f"onnxruntime differs from the spec reference by {worst:.3g}")
    return problems, runtime, notes


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("outdir", nargs="?", help="directory to write the .onnx files into")
    parser.add_argument("--only", help="comma-separated model names, families or kinds")
    parser.add_argument("--list", action="store_true", help="print the model names and exit")
    parser.add_argument("--quiet-ops", action="store_true", help="do not print op types")
    args = parser.parse_args()

    specs = model_table()
    if args.list:
        for s in specs:
            print(f"{s.name:56s} {s.family:20s} {s.kind}")
        return 0
    if not args.outdir:
        parser.error("OUTDIR is required")

    chosen = select(specs, args.only)
    os.makedirs(args.outdir, exist_ok=True)
    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    ctx = Context(args.outdir)
    failures = 0
    total_start = time.time()
    scratch = tempfile.mkdtemp(prefix="breadth_ort.")

    # 1. Build the stale files into temporary files; check them statically.
    built = {}    # name -> (model, ops, seconds, rebuilt)
    for spec in chosen:
        start = time.time()
        if up_to_date(spec, ctx):
            model = onnx.load(ctx.final(spec.name))
            built[spec.name] = (model, export_models.op_histogram(model), 0.0, False)
            continue
        if spec.base is not None and spec.base.name not in built:
            failures += 1
            print(f"{spec.name:56s} FAILED: its source {spec.base.name} failed", file=sys.stderr)
            continue
        fd, tmp = tempfile.mkstemp(prefix=f".{spec.name}.", suffix=".onnx", dir=args.outdir)
        os.close(fd)
        try:
            model = spec.build(ctx)
            ops = check_model(spec, model)
            onnx.save(model, tmp)
        except Exception as exc:  # report, go on with the others, fail at the end
            os.unlink(tmp)
            failures += 1
            print(f"{spec.name:56s} FAILED: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
            continue
        ctx.pending[spec.name] = tmp
        built[spec.name] = (model, ops, time.time() - start, True)

    # 2. Run every model in onnxruntime, in one process.
    jobs, job_specs = [], []
    for spec in chosen:
        if spec.name not in built:
            continue
        model = built[spec.name][0]
        try:
            job = {"model": ctx.path(spec.name), "inputs": concrete_inputs(spec, model)}
        except RuntimeError as exc:
            failures += 1
            print(f"{spec.name:56s} FAILED: {exc}", file=sys.stderr)
            built.pop(spec.name)
            continue
        if spec.base is not None:
            job["compare"] = ctx.path(spec.base.name)
        if spec.reference:
            job["save"] = os.path.join(scratch, spec.name)
        jobs.append(job)
        job_specs.append(spec)
    try:
        results = run_onnxruntime(jobs) if jobs else []
    except RuntimeError as exc:
        print(f"export_breadth_models.py: {exc}", file=sys.stderr)
        for tmp in ctx.pending.values():
            os.unlink(tmp)
        shutil.rmtree(scratch, ignore_errors=True)
        return 1

    # 3. Judge, move into place, report.
    runtime_by_name = {}
    for spec, result in zip(job_specs, results):
        model, ops, seconds, rebuilt = built[spec.name]
        save_dir = os.path.join(scratch, spec.name) if spec.reference else None
        try:
            problems, runtime, notes = judge(spec, model, result, save_dir)
        except Exception as exc:
            problems, runtime, notes = [f"{type(exc).__name__}: {exc}"], {}, []
        if problems:
            failures += 1
            print(f"{spec.name:56s} FAILED: " + "; ".join(problems), file=sys.stderr, flush=True)
            if rebuilt:
                os.unlink(ctx.pending.pop(spec.name))
            continue
        runtime_by_name[spec.name] = runtime
        if rebuilt:
            tmp = ctx.pending.pop(spec.name)
            os.chmod(tmp, 0o666 & ~UMASK)  # mkstemp makes the file 0600
            os.replace(tmp, ctx.final(spec.name))
        size = os.path.getsize(ctx.final(spec.name)) / 1e6
        when = f"{seconds:6.1f} s" if rebuilt else "up to date"
        print(f"{spec.name:56s} opset {spec.opset:2d} {size:7.3f} MB  {when}", flush=True)
        if not args.quiet_ops:
            listing = ", ".join(f"{op}x{n}" for op, n in sorted(ops.items()))
            print(f"    ops: {listing}", flush=True)
        for note in notes:
            print(f"    note: {note}", flush=True)
    for tmp in ctx.pending.values():  # sources of failed upgrades, say
        if os.path.exists(tmp):
            os.unlink(tmp)
    shutil.rmtree(scratch, ignore_errors=True)

    count = write_manifest(args.outdir, specs, runtime_by_name)
    print(f"manifest: {os.path.join(args.outdir, MANIFEST)} ({count} files)")
    print(f"total {time.time() - total_start:.1f} s", flush=True)
    if failures:
        print(f"export_breadth_models.py: {failures} model(s) failed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
