"""The PPO example (python/examples/ppo.py) learns on squeezenet1.1 under
configs/gpu_rates.yaml: its greedy policy reaches at least 90% of TASO's
19.07% there, and its sampled rollouts go from stopping early to TASO's
figure; with learning switched off they do not."""

import pathlib
import sys

import pytest
import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python" / "examples"))
import ppo  # noqa: E402

TASO = 19.07  # TASO's search at budget 1000 (docs/benchmarks/learning.md)


@pytest.fixture(autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_ppo_learns_to_reach_taso_on_squeezenet(gpu_rates):
    _, greedy, sampled = ppo.train("squeezenet1.1", gpu_rates, updates=20, seed=3, log=None)
    assert greedy >= 0.9 * TASO, f"greedy policy {greedy:.2f}%"
    assert sampled >= 0.9 * TASO, f"sampled rollouts {sampled:.2f}% on average"


def test_without_learning_the_same_run_stops_early(gpu_rates):
    _, greedy, sampled = ppo.train("squeezenet1.1", gpu_rates, updates=20, seed=3, learning=False, log=None)
    assert sampled < 0.5 * TASO, f"untrained sampled rollouts {sampled:.2f}% on average"
