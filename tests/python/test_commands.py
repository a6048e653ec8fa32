"""graphworld.optimize and graphworld.cost: the commands' JSON reports from
Python, checked against the graphworld binary's own."""

import json
import pathlib
import subprocess

import pytest

import graphworld

BINARY = pathlib.Path(graphworld.__file__).resolve().parents[2] / "launch" / "graphworld"


def cli_json(*args):
    if not BINARY.exists():
        pytest.skip(f"no graphworld binary beside the module ({BINARY})")
    out = subprocess.run([str(BINARY), *map(str, args), "--json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_optimize_returns_what_the_command_prints(tmp_path, gpu_rates):
    mine = graphworld.optimize("squeezenet1.1", tmp_path / "py.onnx", search="greedy", budget=100, rates=gpu_rates,
                               verify_runtime="none")
    theirs = cli_json("optimize", "squeezenet1.1", "-o", tmp_path / "cli.onnx", "--search", "greedy", "--budget", 100,
                      "--rates", gpu_rates, "--verify-runtime", "none", "--quiet")
    assert set(mine) == set(theirs)
    for key in ("original_cost", "optimized_cost", "reduction_pct", "applied", "search", "cost_model", "written"):
        assert mine[key] == theirs[key], key
    assert mine["reduction_pct"] > 5
    assert (tmp_path / "py.onnx").read_bytes() == (tmp_path / "cli.onnx").read_bytes()


def test_optimize_refuses_bad_input_as_the_command_does(tmp_path):
    with pytest.raises(ValueError, match="no-such-model.onnx"):
        graphworld.optimize(tmp_path / "no-such-model.onnx", tmp_path / "out.onnx")
    with pytest.raises(ValueError, match="unknown option '--bogus'"):
        graphworld.optimize("squeezenet1.1", tmp_path / "out.onnx", bogus=3)
    with pytest.raises(ValueError, match="--policy and --search"):
        graphworld.optimize("squeezenet1.1", tmp_path / "out.onnx", search="greedy", policy="default")


def test_cost_is_the_commands_and_follows_the_rates(gpu_rates):
    analytic = graphworld.cost("resnet18")
    theirs = cli_json("cost", "resnet18")
    assert set(analytic) == set(theirs)
    assert analytic["total_ms"] == theirs["total_ms"] and analytic["per_op"] == theirs["per_op"]
    assert analytic["total_ms"] == pytest.approx(sum(op["ms"] for op in analytic["per_op"]), rel=1e-9)
    gpu = graphworld.cost("resnet18", rates=gpu_rates)
    assert gpu["total_ms"] != pytest.approx(analytic["total_ms"])
    with pytest.raises(ValueError, match="no-such-cost"):
        graphworld.cost("resnet18", cost="no-such-cost")
