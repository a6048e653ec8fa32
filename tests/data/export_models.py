#!/usr/bin/python3
"""Writes the ONNX models graphworld's tests and benchmarks load.

Every model is made by the real exporter, torch.onnx.export, from a randomly
initialised network with a fixed seed, so the files are reproducible and need
no downloaded weights.

Usage:
    /usr/bin/python3 tests/data/export_models.py OUTDIR [--only NAME[,NAME...]]

NAME is a file stem (resnet18_bn, mlp, ...) or a family (resnet18,
transformer_encoder) standing for all of its files; --list prints the stems.
A file that already exists and is newer than this script is skipped.
"""

import argparse
import collections
import os
import sys
import tempfile
import time
import warnings

import onnx
import torch
import torchvision

SCRIPT_MTIME = os.path.getmtime(os.path.abspath(__file__))
UMASK = os.umask(0)
os.umask(UMASK)

# The exporter warns about constant folding under TrainingMode.PRESERVE; the
# warning concerns models in training mode, and every model here is in eval mode.
warnings.filterwarnings("ignore", message="It is recommended that constant folding be turned off")


# ---------------------------------------------------------------------------
# Model builders. Each one seeds torch itself so that a model's weights do not
# depend on which other models were exported before it in the same run.
# ---------------------------------------------------------------------------

def randomise_batchnorm(model):
    """Gives every BatchNorm non-trivial statistics so that it is not an identity."""
    count = 0
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
                if m.affine:
                    m.weight.uniform_(0.5, 1.5)
                    m.bias.uniform_(-0.1, 0.1)
                count += 1
    return count


def build_vision(arch):
    torch.manual_seed(0)
    if arch == "inception_v3":
        model = torchvision.models.inception_v3(
            weights=None, init_weights=True, aux_logits=False, transform_input=False)
    elif arch == "googlenet":
        model = torchvision.models.googlenet(
            weights=None, init_weights=True, aux_logits=False, transform_input=False)
    else:
        model = getattr(torchvision.models, arch)(weights=None)
    randomise_batchnorm(model)
    model.eval()
    return model


def build_transformer_encoder():
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(
        d_model=256, nhead=4, dim_feedforward=1024, dropout=0.1,
        activation="gelu", batch_first=True)
    # enable_nested_tensor=False switches off the encoder-level sparsity fast
    # path; the per-layer fast path (torch._transformer_encoder_layer_fwd) is
    # skipped because export runs with grad enabled and the parameters require
    # grad (see TransformerEncoderLayer.forward in torch 1.13).
    model = torch.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
    model.eval()
    for p in model.parameters():
        p.requires_grad_(True)
    return model


def build_mlp():
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(16, 32),
        torch.nn.ReLU(),
        torch.nn.Linear(32, 4),
    )
    model.eval()
    return model


# ---------------------------------------------------------------------------
# Model table. bn: None (no check), True (must contain BatchNormalization),
# False (must not).
# ---------------------------------------------------------------------------

Spec = collections.namedtuple(
    "Spec", "name family builder shape opset training bn require forbid")

TRAIN_PRESERVE = torch.onnx.TrainingMode.PRESERVE
TRAIN_EVAL = torch.onnx.TrainingMode.EVAL

VISION = [
    # arch, opset, input shape, has BN
    ("resnet18", 11, (1, 3, 224, 224), True),
    ("squeezenet1_1", 13, (1, 3, 224, 224), False),
    ("resnet50", 17, (1, 3, 224, 224), True),
    ("inception_v3", 17, (1, 3, 299, 299), True),
    ("googlenet", 17, (1, 3, 224, 224), True),
    ("resnext50_32x4d", 17, (1, 3, 224, 224), True),
]

# Exported only when asked for by name (--only): benchmark models that no test
# loads, kept out of the suite's fixture run to save its time.
BENCH_ONLY = {"googlenet_bn", "googlenet_folded", "resnext50_32x4d_bn", "resnext50_32x4d_folded"}


def model_table():
    specs = []
    for arch, opset, shape, has_bn in VISION:
        builder = (lambda a=arch: build_vision(a))
        if has_bn:
            specs.append(Spec(f"{arch}_bn", arch, builder, shape, opset,
                              TRAIN_PRESERVE, True, (), ()))
            specs.append(Spec(f"{arch}_folded", arch, builder, shape, opset,
                              TRAIN_EVAL, False, (), ()))
        else:
            specs.append(Spec(arch, arch, builder, shape, opset,
                              TRAIN_EVAL, False, (), ()))
    specs.append(Spec("transformer_encoder_op17", "transformer_encoder",
                      build_transformer_encoder, (1, 32, 256), 17, TRAIN_EVAL, None,
                      ("LayerNormalization", "Softmax", "MatMul"), ()))
    specs.append(Spec("transformer_encoder_op13", "transformer_encoder",
                      build_transformer_encoder, (1, 32, 256), 13, TRAIN_EVAL, None,
                      ("Softmax", "MatMul", "ReduceMean"), ("LayerNormalization",)))
    specs.append(Spec("mlp", "mlp", build_mlp, (2, 16), 13, TRAIN_EVAL, None,
                      ("Gemm", "Relu"), ()))
    return specs


# ---------------------------------------------------------------------------
# Export and checks.
# ---------------------------------------------------------------------------

def op_histogram(model_proto):
    counts = collections.Counter()

    def walk(graph):
        for node in graph.node:
            key = node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}::{node.op_type}"
            counts[key] += 1
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.GRAPH:
                    walk(attr.g)
                elif attr.type == onnx.AttributeProto.GRAPHS:
                    for g in attr.graphs:
                        walk(g)

    walk(model_proto.graph)
    return counts


def check_model(spec, path):
    model_proto = onnx.load(path)
    onnx.checker.check_model(model_proto)
    ops = op_histogram(model_proto)
    problems = []

    opset = next((o.version for o in model_proto.opset_import if o.domain in ("", "ai.onnx")), None)
    if opset != spec.opset:
        problems.append(f"default-domain opset is {opset}, expected {spec.opset}")
    for op in ops:
        if "::" in op:
            problems.append(f"op {op} is outside the default ONNX domain")
        elif not onnx.defs.has(op):
            problems.append(f"op {op} is not a known ONNX operator")
    if spec.bn is True and ops.get("BatchNormalization", 0) == 0:
        problems.append("expected BatchNormalization nodes, found none")
    if spec.bn is False and ops.get("BatchNormalization", 0) > 0:
        problems.append(f"expected no BatchNormalization, found {ops['BatchNormalization']}")
    for op in spec.require:
        if ops.get(op, 0) == 0:
            problems.append(f"expected op {op}, found none")
    for op in spec.forbid:
        if ops.get(op, 0) > 0:
            problems.append(f"op {op} must not appear, found {ops[op]}")
    ins = [i.name for i in model_proto.graph.input]
    outs = [o.name for o in model_proto.graph.output]
    if "input" not in ins:
        problems.append(f"graph inputs are {ins}, expected 'input'")
    if outs != ["output"]:
        problems.append(f"graph outputs are {outs}, expected ['output']")
    if problems:
        raise RuntimeError(f"{spec.name}: " + "; ".join(problems))
    return ops


def export(spec, model, outdir):
    path = os.path.join(outdir, spec.name + ".onnx")
    example = torch.rand(*spec.shape) * 2.0 - 1.0
    fd, tmp = tempfile.mkstemp(prefix=f".{spec.name}.", suffix=".onnx", dir=outdir)
    os.close(fd)
    try:
        torch.onnx.export(
            model, (example,), tmp,
            export_params=True,
            opset_version=spec.opset,
            training=spec.training,
            input_names=["input"],
            output_names=["output"],
        )
        ops = check_model(spec, tmp)
        os.chmod(tmp, 0o666 & ~UMASK)  # mkstemp makes the file 0600
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path, ops


def up_to_date(path):
    return os.path.exists(path) and os.path.getmtime(path) > SCRIPT_MTIME


def select(specs, only):
    if not only:
        return [s for s in specs if s.name not in BENCH_ONLY]
    wanted = [n.strip() for n in only.split(",") if n.strip()]
    known = {s.name for s in specs} | {s.family for s in specs}
    unknown = [n for n in wanted if n not in known]
    if unknown:
        print(f"export_models.py: unknown model name(s): {', '.join(unknown)}\n"
              f"known: {', '.join(s.name for s in specs)}", file=sys.stderr)
        sys.exit(2)
    return [s for s in specs if s.name in wanted or s.family in wanted]


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("outdir", nargs="?", help="directory to write the .onnx files into")
    parser.add_argument("--only", help="comma-separated model names or families")
    parser.add_argument("--list", action="store_true", help="print the model names and exit")
    parser.add_argument("--quiet-ops", action="store_true", help="do not print op types")
    args = parser.parse_args()

    specs = model_table()
    if args.list:
        for s in specs:
            print(s.name)
        return 0
    if not args.outdir:
        parser.error("OUTDIR is required")

    chosen = select(specs, args.only)
    os.makedirs(args.outdir, exist_ok=True)
    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))

    models = {}  # the current family's model, shared by its _bn and _folded files
    failures = 0
    total_start = time.time()
    for spec in chosen:
        path = os.path.join(args.outdir, spec.name + ".onnx")
        if up_to_date(path):
            size = os.path.getsize(path) / 1e6
            print(f"{spec.name:28s} opset {spec.opset:2d} {size:8.2f} MB  up to date, skipped",
                  flush=True)
            continue
        start = time.time()
        try:
            if spec.family not in models:
                models = {spec.family: spec.builder()}
            model = models[spec.family]
            path, ops = export(spec, model, args.outdir)
        except Exception as exc:  # report, go on with the others, fail at the end
            failures += 1
            print(f"{spec.name:28s} FAILED: {exc}", file=sys.stderr, flush=True)
            continue
        size = os.path.getsize(path) / 1e6
        print(f"{spec.name:28s} opset {spec.opset:2d} {size:8.2f} MB {time.time() - start:7.1f} s",
              flush=True)
        if not args.quiet_ops:
            listing = ", ".join(f"{op}x{n}" for op, n in sorted(ops.items()))
            print(f"    ops: {listing}", flush=True)
    print(f"total {time.time() - total_start:.1f} s", flush=True)
    if failures:
        print(f"export_models.py: {failures} model(s) failed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
