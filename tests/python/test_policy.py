"""graphworld.load_policy: a trained policy acting from Python takes the
actions `graphworld optimize --policy` takes."""

import numpy as np
import pytest

import graphworld


def test_the_shipped_policy_acts_on_graph_env_observations():
    policy = graphworld.load_policy("default")
    assert policy.num_xfers > 1000 and policy.trained_on
    assert policy.location_rewards, "the shipped policy reads each location's reward now"
    env = graphworld.GraphEnv("resnet18", max_steps=policy.max_steps, max_locations=policy.max_locations,
                              location_rewards=policy.location_rewards)
    obs, info = env.reset(seed=0)
    assert isinstance(policy.value(obs), float)
    best = info["reduction_pct"]
    for _ in range(policy.max_steps):
        xfer, location = policy.act(obs)
        assert xfer == env.noop or (obs["xfer_mask"][xfer] and obs["location_mask"][xfer, location])
        assert policy.act(obs) == (xfer, location), "greedy is deterministic"
        obs, _, terminated, truncated, info = env.step((xfer, location))
        best = max(best, info["reduction_pct"])
        if terminated or truncated:
            break
    assert best > 1, "the shipped policy gains on resnet18"
    with pytest.raises(ValueError, match="terminal"):
        policy.act(obs)  # the episode's last observation allows nothing


def test_greedy_rollout_from_python_matches_the_commands(tmp_path):
    policy = graphworld.load_policy("default")
    report = graphworld.optimize("resnet18", tmp_path / "out.onnx", policy="default", rollouts=1,
                                 verify_runtime="none", max_steps=policy.max_steps, finish="none")
    env = graphworld.GraphEnv("resnet18", cost=report["cost_model"], max_steps=policy.max_steps,
                              max_locations=policy.max_locations, location_rewards=policy.location_rewards)
    obs, info = env.reset(seed=0)
    best = info["reduction_pct"]
    while True:
        obs, _, terminated, truncated, info = env.step(policy.act(obs))
        best = max(best, info["reduction_pct"])
        if terminated or truncated:
            break
    assert best == pytest.approx(report["reduction_pct"], abs=1e-6)


def test_sampling_is_seeded_and_bad_observations_are_named():
    env = graphworld.GraphEnv("squeezenet1.1", location_rewards=True)
    obs, _ = env.reset(seed=0)
    a = [graphworld.load_policy("default", seed=4).act(obs, greedy=False) for _ in range(2)]
    assert a[0] == a[1]
    policy = graphworld.load_policy("default")
    # A policy that reads location rewards, given observations without them.
    plain, _ = graphworld.GraphEnv("squeezenet1.1").reset(seed=0)
    with pytest.raises(ValueError, match="location_rewards=True"):
        policy.act(plain)
    broken = dict(obs)
    del broken["match_nodes"]
    with pytest.raises(ValueError, match="match_nodes"):
        policy.act(broken)
    broken = dict(obs, senders=np.append(obs["senders"], 10**6), receivers=np.append(obs["receivers"], 0),
                  edge_features=np.vstack([obs["edge_features"], obs["edge_features"][:1]]))
    with pytest.raises(ValueError, match="edge"):
        policy.act(broken)
    broken = dict(obs, location_begin=np.full_like(obs["location_begin"], -1))
    with pytest.raises(ValueError, match="location_begin"):
        policy.act(broken)
    broken = dict(obs, node_begin=obs["node_begin"][::-1].copy())
    with pytest.raises(ValueError, match="node_begin"):
        policy.act(broken)
    with pytest.raises(ValueError, match="no-such.gwpolicy"):
        graphworld.load_policy("no-such.gwpolicy")
