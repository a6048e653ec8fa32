"""graphworld's environments under Gymnasium itself: its spaces, its
make() with the checks it wraps every environment in, its vector API and
a vector wrapper. Debian 12 does not package Gymnasium, so these tests
skip where it is not installed (python/README.md says how to add it)."""

import warnings

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium")

import graphworld  # noqa: E402


def allowed_action(obs, rng):
    """A random allowed (xfer, location), NO-OP where nothing else is allowed."""
    xfers = np.flatnonzero(obs["xfer_mask"][:-1])
    if len(xfers) == 0:
        return (len(obs["xfer_mask"]) - 1, 0)
    xfer = int(rng.choice(xfers))
    return (xfer, int(rng.choice(np.flatnonzero(obs["location_mask"][xfer]))))


def test_the_spaces_are_gymnasiums_and_hold_what_the_env_gives(gpu_rates):
    env = graphworld.GraphEnv("squeezenet1.1", rates=gpu_rates, max_steps=30, seed=0)
    assert isinstance(env, gymnasium.Env)
    assert isinstance(env.action_space, gymnasium.spaces.Tuple)
    assert isinstance(env.observation_space, gymnasium.spaces.Dict)
    assert isinstance(env.observation_space["node_features"], gymnasium.spaces.Sequence)
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=4)
    assert obs in env.observation_space
    for _ in range(30):
        action = allowed_action(obs, rng)
        assert action in env.action_space
        obs, _, terminated, truncated, _ = env.step(action)
        assert obs in env.observation_space
        if terminated or truncated:
            break
    sample = env.observation_space.sample()
    assert sample in env.observation_space


def test_gymnasium_make_builds_it_with_its_checks_and_time_limit(gpu_rates):
    with warnings.catch_warnings():
        # Every complaint of Gymnasium's passive checker fails the test.
        warnings.simplefilter("error")
        env = gymnasium.make("graphworld/GraphEnv-v0", model="squeezenet1.1", rates=str(gpu_rates), max_steps=50,
                             max_episode_steps=5)
        assert isinstance(env.unwrapped, graphworld.GraphEnv)
        rng = np.random.default_rng(1)
        obs, info = env.reset(seed=2)
        assert info["step"] == 0
        steps = 0
        while True:
            obs, reward, terminated, truncated, info = env.step(allowed_action(obs, rng))
            steps += 1
            assert isinstance(reward, float)
            if terminated or truncated:
                break
        # Gymnasium's TimeLimit ends it at 5 unless the graph ran out first.
        assert steps <= 5 and (truncated or terminated)
        # A masked action is still refused through Gymnasium's wrappers.
        obs, _ = env.reset(seed=2)
        masked = int(np.flatnonzero(obs["xfer_mask"][:-1] == 0)[0])
        with pytest.raises(ValueError, match="not allowed"):
            env.step((masked, 0))


def test_the_vector_env_is_a_gymnasium_vector_env_with_next_step_autoreset(gpu_rates):
    envs = graphworld.VectorEnv("squeezenet1.1", 3, rates=gpu_rates, max_steps=4, seed=0)
    assert isinstance(envs, gymnasium.vector.VectorEnv)
    assert envs.metadata["autoreset_mode"] == gymnasium.vector.AutoresetMode.NEXT_STEP
    assert isinstance(envs.action_space, gymnasium.spaces.MultiDiscrete) and envs.action_space.shape == (3, 2)
    assert isinstance(envs.single_action_space, gymnasium.spaces.Tuple)
    # Gymnasium's episode statistics read the autoreset mode and the step's
    # results: each environment's episodes of 4 steps are counted.
    recorded = gymnasium.wrappers.vector.RecordEpisodeStatistics(envs)
    rng = np.random.default_rng(3)
    obs, _ = recorded.reset(seed=0)
    assert obs in envs.observation_space
    lengths = []
    for _ in range(10):
        actions = np.array([allowed_action({"xfer_mask": obs["xfer_mask"][i], "location_mask": obs["location_mask"][i]},
                                           rng) for i in range(3)], dtype=np.int64)
        assert actions in envs.action_space
        obs, _, _, _, infos = recorded.step(actions)
        assert obs in envs.observation_space
        if "episode" in infos:
            lengths.extend(infos["episode"]["l"][infos["_episode"]].tolist())
    assert lengths and all(1 <= n <= 4 for n in lengths)
    recorded.close()
    assert envs.closed
