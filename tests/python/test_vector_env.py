"""graphworld.VectorEnv: batched stepping in C++ threads, checked against
single GraphEnvs taking the same actions."""

import numpy as np
import pytest

import graphworld

MODELS = ["squeezenet1.1", "resnet18"]


def random_actions(obs, rng, noop):
    """A random allowed (xfer, location) per environment, NO-OP where nothing applies."""
    actions = []
    for mask, locations in zip(obs["xfer_mask"], obs["location_mask"]):
        xfers = np.flatnonzero(mask[:-1])
        if len(xfers) == 0:
            actions.append((noop, 0))
            continue
        xfer = int(rng.choice(xfers))
        actions.append((xfer, int(rng.choice(np.flatnonzero(locations[xfer])))))
    return np.array(actions, dtype=np.int64)


def env_slice(obs, i):
    """Environment i's graph out of the batch, with its own node indices."""
    nodes = np.concatenate([[0], np.cumsum(obs["n_node"])])
    edges = np.concatenate([[0], np.cumsum(obs["n_edge"])])
    n0, n1, e0, e1 = nodes[i], nodes[i + 1], edges[i], edges[i + 1]
    return {
        "node_features": obs["node_features"][n0:n1],
        "edge_features": obs["edge_features"][e0:e1],
        "senders": obs["senders"][e0:e1] - n0,
        "receivers": obs["receivers"][e0:e1] - n0,
        "node_op": obs["node_op"][n0:n1],
        "globals": obs["globals"][i],
        "xfer_mask": obs["xfer_mask"][i],
        "location_mask": obs["location_mask"][i],
        "location_begin": obs["location_begin"][i],
    }


def test_each_environment_is_the_graph_env_its_seed_makes(gpu_rates):
    n = 4
    envs = graphworld.VectorEnv(MODELS, num_envs=n, rates=gpu_rates, max_steps=6, seed=10, threads=2)
    singles = [graphworld.GraphEnv(MODELS[i % 2], rates=gpu_rates, max_steps=6) for i in range(n)]
    obs, infos = envs.reset()
    single_obs = [env.reset(seed=10 + i)[0] for i, env in enumerate(singles)]
    assert obs["xfer_mask"].shape == (n, envs.num_xfers + 1)
    assert obs["location_mask"].shape == (n, envs.num_xfers, envs.max_locations)
    assert obs["node_features"].shape == (obs["n_node"].sum(), 64)
    rng = np.random.default_rng(0)
    for step in range(5):
        for i in range(n):
            mine = env_slice(obs, i)
            for key, value in mine.items():
                assert np.array_equal(value, single_obs[i][key]), (step, i, key)
        actions = random_actions(obs, rng, envs.noop)
        obs, rewards, terminated, truncated, infos = envs.step(actions)
        for i, env in enumerate(singles):
            single_obs[i], reward, term, trunc, info = env.step(tuple(actions[i]))
            assert rewards[i] == pytest.approx(reward) and terminated[i] == term and truncated[i] == trunc
            assert infos["reduction_pct"][i] == pytest.approx(info["reduction_pct"])
            assert infos["rule"][i] == info["rule"]
        if terminated.any() or truncated.any():
            break
    # The matches index the batch: every matched node lies in its own graph.
    nodes = np.concatenate([[0], np.cumsum(obs["n_node"])])
    for i in range(n):
        begin = obs["location_offset"][i]
        end = begin + obs["location_begin"][i][-1]
        matched = obs["match_nodes"][obs["node_begin"][begin]:obs["node_begin"][end]]
        assert ((matched >= nodes[i]) & (matched < nodes[i + 1])).all()


def test_an_ended_environment_resets_on_the_next_step_ignoring_its_action(gpu_rates):
    envs = graphworld.VectorEnv("squeezenet1.1", num_envs=2, rates=gpu_rates, max_steps=2, seed=0, threads=2)
    obs, _ = envs.reset()
    rng = np.random.default_rng(1)
    actions = random_actions(obs, rng, envs.noop)
    actions[0] = (envs.noop, 0)  # environment 0 ends now
    obs, rewards, terminated, truncated, infos = envs.step(actions)
    assert terminated[0] and not truncated[0] and infos["end_reason"][0] == "no-op"
    assert infos["step"][1] == 1
    # Its next action is ignored, even a masked one: it is reset instead.
    masked = int(np.flatnonzero(obs["xfer_mask"][0][:-1] == 0)[0])
    actions = random_actions(obs, rng, envs.noop)
    actions[0] = (masked, 0)
    obs, rewards, terminated, truncated, infos = envs.step(actions)
    assert rewards[0] == 0 and not terminated[0] and not truncated[0] and infos["step"][0] == 0
    assert truncated[1] and infos["end_reason"][1] == "max-steps"


def test_bad_actions_are_value_errors_and_move_nothing(gpu_rates):
    envs = graphworld.VectorEnv("squeezenet1.1", num_envs=3, rates=gpu_rates, seed=0, threads=2)
    obs, _ = envs.reset()
    actions = random_actions(obs, np.random.default_rng(2), envs.noop)
    bad = actions.copy()
    bad[2] = (int(np.flatnonzero(obs["xfer_mask"][2][:-1] == 0)[0]), 0)
    with pytest.raises(ValueError, match=r"environment 2: action \(\d+, 0\) is not allowed"):
        envs.step(bad)
    with pytest.raises(ValueError, match="one"):
        envs.step(actions[:2])
    with pytest.raises(ValueError, match="pair"):
        envs.step([1, 2, 3])
    _, _, _, _, infos = envs.step(actions)
    assert list(infos["step"]) == [1, 1, 1]
    with pytest.raises(ValueError, match="num_envs"):
        graphworld.VectorEnv("squeezenet1.1", num_envs=0)


def test_observations_kept_across_steps_never_change(gpu_rates):
    # location_mask buffers are reused once NumPy frees them; an array (or a
    # view of it) still held must keep what it had, and each new one must
    # hold its own step's rows only: checked against single GraphEnvs.
    n = 3
    envs = graphworld.VectorEnv("squeezenet1.1", num_envs=n, rates=gpu_rates, max_steps=4, seed=5, threads=2)
    singles = [graphworld.GraphEnv("squeezenet1.1", rates=gpu_rates, max_steps=4) for _ in range(n)]
    obs, _ = envs.reset()
    single_obs = [env.reset(seed=5 + i)[0] for i, env in enumerate(singles)]
    episodes, ended = [1] * n, [False] * n
    kept, views = [], []
    rng = np.random.default_rng(3)
    for step in range(14):
        for i in range(n):
            assert np.array_equal(obs["location_mask"][i], single_obs[i]["location_mask"]), (step, i)
            assert np.array_equal(obs["xfer_mask"][i], single_obs[i]["xfer_mask"]), (step, i)
        kept.append((obs, {key: np.copy(obs[key]) for key in ("location_mask", "xfer_mask", "node_features")}))
        if step == 1:
            views.append((obs["location_mask"][1], np.copy(obs["location_mask"][1])))  # a view alone keeps its buffer
        if step % 3 == 2:
            kept = kept[-1:]  # the others are freed: their buffers go back to be reused
        actions = random_actions(obs, rng, envs.noop)
        obs, _, terminated, truncated, _ = envs.step(actions)
        for i, env in enumerate(singles):
            if ended[i]:  # VectorEnv reset it on this step (next-step auto-reset)
                single_obs[i] = env.reset(seed=5 + i + n * episodes[i])[0]
                episodes[i] += 1
                ended[i] = False
            else:
                single_obs[i], _, term, trunc, _ = env.step(tuple(actions[i]))
                ended[i] = term or trunc
                assert (terminated[i], truncated[i]) == (term, trunc)
    assert sum(episodes) > n, "some environment must have reset"
    for old, copy in kept:
        for key, value in copy.items():
            assert np.array_equal(old[key], value), key
    for view, copy in views:
        assert np.array_equal(view, copy)


def test_location_masks_are_read_only(gpu_rates):
    # Their buffers are reused with only the written rows cleared: a write
    # by the caller would show in a later step.
    envs = graphworld.VectorEnv("squeezenet1.1", num_envs=2, rates=gpu_rates, seed=0)
    obs, _ = envs.reset()
    with pytest.raises(ValueError, match="read-only"):
        obs["location_mask"][0, 0, 0] = 1
    mine = np.copy(obs["location_mask"])
    mine[0, 0, 0] = 1  # a copy is the caller's own


def test_a_graph_no_rule_matches_ends_at_once_and_keeps_stepping(tmp_path):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper
    graph = helper.make_graph([helper.make_node("Sigmoid", ["x"], ["y"])], "sigmoid",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
    path = tmp_path / "sigmoid.onnx"  # no rule rewrites a lone Sigmoid
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    envs = graphworld.VectorEnv([str(path), "squeezenet1.1"], num_envs=2, seed=0)
    obs, infos = envs.reset()
    assert infos["end_reason"][0] == "no-match"
    actions = random_actions(obs, np.random.default_rng(0), envs.noop)
    for _ in range(3):
        obs, rewards, terminated, truncated, infos = envs.step(actions)
        assert terminated[0] and infos["end_reason"][0] == "no-match"
        actions = random_actions(obs, np.random.default_rng(1), envs.noop)


def test_location_rewards_are_each_environments_own(gpu_rates):
    """location_reward in the batch: environment i's entries start at
    location_offset[i] and are what its own GraphEnv shows."""
    n = 3
    envs = graphworld.VectorEnv(MODELS, num_envs=n, rates=gpu_rates, max_steps=6, seed=10, threads=2,
                                location_rewards=True)
    singles = [graphworld.GraphEnv(MODELS[i % 2], rates=gpu_rates, max_steps=6, location_rewards=True)
               for i in range(n)]
    obs, _ = envs.reset()
    assert envs.observation_space.contains(obs)
    single_obs = [env.reset(seed=10 + i)[0] for i, env in enumerate(singles)]
    rng = np.random.default_rng(1)
    for step in range(3):
        assert obs["location_reward"].shape == (obs["node_begin"].shape[0] - 1,)
        for i in range(n):
            begin = obs["location_offset"][i]
            mine = obs["location_reward"][begin:begin + obs["location_begin"][i][-1]]
            assert np.array_equal(mine, single_obs[i]["location_reward"]), (step, i)
            assert np.array_equal(obs["xfer_reward"][i], single_obs[i]["xfer_reward"]), (step, i)
        actions = random_actions(obs, rng, envs.noop)
        obs, _, terminated, truncated, _ = envs.step(actions)
        single_obs = [env.step(tuple(actions[i]))[0] for i, env in enumerate(singles)]
        if terminated.any() or truncated.any():
            break
    plain = graphworld.VectorEnv(MODELS, num_envs=1, rates=gpu_rates, seed=10, threads=1)
    assert "location_reward" not in plain.reset()[0]
