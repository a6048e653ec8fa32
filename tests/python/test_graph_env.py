"""graphworld.GraphEnv from Python: Gymnasium semantics over the C++ env."""

import numpy as np
import pytest

import graphworld

KEYS = {"xfer_mask", "location_mask", "node_features", "edge_features", "senders", "receivers", "globals",
        "node_op", "location_begin", "node_begin", "match_nodes"}


@pytest.fixture(scope="module")
def env(gpu_rates):
    return graphworld.GraphEnv("squeezenet1.1", rates=gpu_rates, max_steps=40, seed=3)


def allowed_actions(obs):
    """Every (xfer, location) the masks allow, NO-OP excluded."""
    xfers = np.flatnonzero(obs["xfer_mask"][:-1])
    return [(int(x), int(l)) for x in xfers for l in np.flatnonzero(obs["location_mask"][x])]


def test_reset_gives_the_observation_as_named_arrays(env):
    obs, info = env.reset(seed=0)
    assert set(obs) == KEYS
    n, L = env.num_xfers, env.max_locations
    assert obs["xfer_mask"].shape == (n + 1,) and obs["xfer_mask"].dtype == np.uint8
    assert obs["location_mask"].shape == (n, L)
    nodes, edges = obs["node_features"].shape[0], obs["senders"].shape[0]
    assert obs["node_features"].shape == (nodes, 64) and obs["node_features"].dtype == np.float32
    assert obs["edge_features"].shape == (edges, 8)
    assert obs["receivers"].shape == (edges,) and obs["node_op"].shape == (nodes,)
    assert obs["globals"].shape == (6,)
    assert nodes > 50 and edges > 50
    assert obs["senders"].max() < nodes and obs["receivers"].max() < nodes
    # The matches agree with the masks: as many locations per rule as allowed.
    counts = np.diff(obs["location_begin"])
    assert np.array_equal(counts, obs["location_mask"].sum(axis=1))
    assert obs["node_begin"].shape == (obs["location_begin"][-1] + 1,)
    assert obs["match_nodes"].shape == (obs["node_begin"][-1],)
    assert obs["xfer_mask"][-1] == 1  # NO-OP is always allowed
    assert info["cost_ms"] == info["initial_cost_ms"] > 0 and info["reduction_pct"] == 0 and info["step"] == 0
    assert env.observation_space.contains(obs)


def test_rewards_sum_to_the_reduction_and_observations_stay_as_they_were(env):
    obs, info = env.reset(seed=1)
    first = {k: v.copy() for k, v in obs.items()}
    first_obs = obs
    rng = np.random.default_rng(0)
    total, steps = 0.0, 0
    while True:
        actions = allowed_actions(obs)
        assert actions, "squeezenet under GPU rates has rules to apply"
        action = actions[rng.integers(len(actions))]
        assert env.action_space.contains(action)
        obs, reward, terminated, truncated, info = env.step(action)
        total += reward
        steps += 1
        assert info["step"] == steps and info["rule"] == env.rule_name(action[0])
        if terminated or truncated:
            break
    assert info["reduction_pct"] == pytest.approx(total, abs=1e-6)
    assert info["cost_ms"] == pytest.approx(info["initial_cost_ms"] * (1 - total / 100), rel=1e-9)
    # The first observation's arrays were not changed by the steps after it.
    for key, value in first.items():
        assert np.array_equal(first_obs[key], value), key


def test_no_op_terminates_and_the_horizon_truncates(gpu_rates):
    env = graphworld.GraphEnv("squeezenet1.1", rates=gpu_rates, max_steps=2, seed=0)
    obs, _ = env.reset()
    obs, reward, terminated, truncated, info = env.step((env.noop, 0))
    assert terminated and not truncated and reward == 0 and info["end_reason"] == "no-op"
    obs, _ = env.reset()
    for k in range(2):
        obs, reward, terminated, truncated, info = env.step(allowed_actions(obs)[0])
    assert truncated and not terminated and info["end_reason"] == "max-steps"
    with pytest.raises(ValueError, match="reset"):
        env.step((env.noop, 0))


def test_a_masked_or_malformed_action_is_a_value_error_naming_it(env):
    obs, _ = env.reset(seed=2)
    masked = int(np.flatnonzero(obs["xfer_mask"][:-1] == 0)[0])
    with pytest.raises(ValueError, match=rf"action \({masked}, 0\) is not allowed.*xfer_mask"):
        env.step((masked, 0))
    with pytest.raises(ValueError, match=r"action \(99999, 0\)"):
        env.step((99999, 0))
    with pytest.raises(ValueError, match="pair"):
        env.step(5)
    # Nothing changed: the episode goes on.
    obs2, _, _, _, info = env.step(allowed_actions(obs)[0])
    assert info["step"] == 1


def test_the_same_seed_gives_the_same_episode(gpu_rates):
    def episode(seed):
        env = graphworld.GraphEnv("squeezenet1.1", rates=gpu_rates, max_steps=10)
        obs, _ = env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        rewards = []
        done = False
        while not done:
            actions = allowed_actions(obs)
            obs, reward, terminated, truncated, _ = env.step(actions[rng.integers(len(actions))])
            rewards.append(reward)
            done = terminated or truncated
        return rewards, obs["node_features"]

    a, b = episode(7), episode(7)
    assert a[0] == b[0] and np.array_equal(a[1], b[1])


def test_bad_models_and_options_are_value_errors_naming_them(tmp_path, gpu_rates):
    with pytest.raises(ValueError, match="no-such-model.onnx"):
        graphworld.GraphEnv(tmp_path / "no-such-model.onnx")
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"not a model")
    with pytest.raises(ValueError, match="broken.onnx"):
        graphworld.GraphEnv(broken)
    with pytest.raises(ValueError, match="reward"):
        graphworld.GraphEnv("squeezenet1.1", rates=gpu_rates, reward="sometimes")
    with pytest.raises(ValueError, match="no-such-cost"):
        graphworld.GraphEnv("squeezenet1.1", cost="no-such-cost")


def test_spaces_sample_members_of_themselves(env):
    action = env.action_space.sample()
    assert env.action_space.contains(action)
    assert 0 <= action[0] <= env.noop and 0 <= action[1] < env.max_locations
    sample = env.observation_space.sample()
    assert env.observation_space.contains(sample)


def test_location_rewards_are_the_rewards_each_location_earns(gpu_rates):
    """With location_rewards on, entry k of location_reward is the reward the
    k-th allowed (xfer, location) earns when it is taken: checked by taking
    each of the first step's locations in a fresh episode."""
    env = graphworld.GraphEnv("squeezenet1.1", rates=gpu_rates, max_steps=40, seed=3, location_rewards=True)
    obs, _ = env.reset(seed=0)
    assert set(obs) == KEYS | {"location_reward", "xfer_reward"}
    assert obs["location_reward"].dtype == np.float32 and obs["xfer_reward"].shape == (env.num_xfers + 1,)
    assert obs["location_reward"].shape == (obs["node_begin"].shape[0] - 1,)
    assert env.observation_space.contains(obs)
    actions = allowed_actions(obs)  # xfer-major, location order: node_begin's order
    assert len(actions) == obs["location_reward"].shape[0] >= 5
    rewards = obs["location_reward"].copy()
    assert rewards.max() > 0 > rewards.min()  # some locations pay at once, some cost more
    # xfer_reward: each rule's best location (0 for NO-OP and rules with none).
    begin = obs["location_begin"]
    for x in range(env.num_xfers):
        best = rewards[begin[x]:begin[x + 1]].max() if begin[x + 1] > begin[x] else 0.0
        assert obs["xfer_reward"][x] == best
    assert obs["xfer_reward"][-1] == 0
    for k, action in enumerate(actions):
        env.reset(seed=0)
        _, reward, _, _, _ = env.step(action)
        assert rewards[k] == np.float32(reward), f"location {k} {action}"
    # Off by default.
    plain, _ = graphworld.GraphEnv("squeezenet1.1", rates=gpu_rates, seed=3).reset(seed=0)
    assert "location_reward" not in plain and "xfer_reward" not in plain
