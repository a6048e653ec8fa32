"""graphworld.optimize and graphworld.cost: the `optimize` and `cost`
commands run in this process, their JSON reports returned as dicts."""

import json
import os

from . import _core


def _flags(options):
    """Keyword options as command-line flags: budget=10 -> --budget 10,
    verify_runtime="none" -> --verify-runtime none, quiet=True -> --quiet;
    None and False leave a flag out."""
    args = []
    for key, value in options.items():
        if value is None or value is False:
            continue
        flag = "--" + key.replace("_", "-")
        if value is True:
            args.append(flag)
        else:
            args += [flag, os.fspath(value) if isinstance(value, os.PathLike) else str(value)]
    return args


def optimize(model, output, search=None, policy=None, cost=None, rates=None, gpu=None, budget=None, alpha=None,
             seed=None, quiet=True, **options):
    """Optimises ``model`` (an .onnx path or a zoo name) and writes the
    result to ``output``, as ``graphworld optimize MODEL -o OUTPUT --json``
    does: the same search or policy (``search="taso"|"greedy"|"random"`` or
    ``policy="FILE.gwpolicy"|"default"|"default-gpu"``), the same
    equivalence check and end-to-end check before writing, the same
    defaults. Returns the command's JSON object as a dict (its keys are
    listed by ``graphworld optimize --help``). Any other option of the
    command is a keyword with dashes as underscores (``verify_runtime=
    "none"``, ``rollouts=4``, ``spelling="as-searched"``). Raises
    ValueError for bad input, naming it, as the command does."""
    args = [os.fspath(model), "-o", os.fspath(output)]
    args += _flags(dict(search=search, policy=policy, cost=cost, rates=rates, gpu=gpu, budget=budget, alpha=alpha,
                        seed=seed, quiet=quiet, **options))
    return json.loads(_core.optimize_json(args))


def cost(model, cost=None, rates=None, gpu=None, batch=None, quiet=True, **options):
    """The cost of ``model`` under a cost model, as ``graphworld cost MODEL
    --json`` reports it: ``total_ms``, ``per_op`` (name, type, ms), the
    cost model's name and source, and its cache or table counts.
    ``cost="analytic"|"measured"|"gpu"|...``, ``rates="configs/gpu_rates.yaml"``,
    ``gpu="h100-sxm"``; other options of the command as keywords."""
    args = [os.fspath(model)] + _flags(dict(cost=cost, rates=rates, gpu=gpu, batch=batch, **options))
    del quiet  # the cost command prints progress only while measuring
    return json.loads(_core.cost_json(args))
