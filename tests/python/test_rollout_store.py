"""graphworld.RolloutStore on the store of a real (short) training run: the
columns as stored, and episodes whose rebuilt observations are the ones a
GraphEnv shows when it takes the stored actions from the stored seed."""

import pathlib
import subprocess

import numpy as np
import pytest

import graphworld

from test_commands import BINARY
from conftest import SOURCE_DIR


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    if not BINARY.exists():
        pytest.skip(f"no graphworld binary beside the module ({BINARY})")
    run = tmp_path_factory.mktemp("run") / "run"
    subprocess.run([str(BINARY), "train", str(SOURCE_DIR / "configs" / "single_node.yaml"),
                    "train.total_env_steps=1024", "--run", str(run), "-q"], check=True, capture_output=True)
    return run / "rollouts.h5"


def test_columns_are_the_stored_steps(store):
    s = graphworld.RolloutStore(store)
    assert s.steps >= 1024 and len(s) == s.steps
    assert s.graphs == ["squeezenet1.1", "resnet18", "nasrnn"]
    columns = s.read()
    assert all(len(v) == s.steps for v in columns.values())
    assert columns["episode_step"][0] == 0
    assert set(np.unique(columns["graph_index"])) <= {0, 1, 2}
    part = s.read(10, 5)
    assert np.array_equal(part["xfer"], columns["xfer"][10:15])
    with pytest.raises(ValueError, match="holds steps"):
        s.read(s.steps + 1, 1)


def test_episodes_rebuild_what_a_graph_env_shows(store):
    s = graphworld.RolloutStore(store)
    episodes = list(s.episodes())
    assert sum(len(e["actions"]) for e in episodes) == s.rebuilt_steps == s.steps
    assert s.missed_steps == 0
    columns = s.read()
    slots = set(zip(columns["actor_id"].tolist(), columns["env_slot"].tolist()))
    open_ones = [e for e in episodes if not e["complete"]]
    assert len(open_ones) <= len(slots), "only each actor environment's last episode may be open"
    if open_ones:
        assert [id(e) for e in episodes[-len(open_ones):]] == [id(e) for e in open_ones], "open episodes come last"
    checked = 0
    for episode in episodes:
        if not episode["complete"] or checked >= 6:
            continue
        env = graphworld.GraphEnv(episode["graph"], max_steps=100)
        obs, _ = env.reset(seed=int(episode["episode_seed"][0]))
        for t, (action, rebuilt) in enumerate(zip(episode["actions"], episode["observations"])):
            for key in ("xfer_mask", "location_mask", "node_op", "senders", "receivers", "match_nodes"):
                assert np.array_equal(obs[key], rebuilt[key]), (episode["graph"], t, key)
            obs, reward, terminated, truncated, _ = env.step(tuple(action))
            assert reward == pytest.approx(float(episode["reward"][t]), abs=1e-5)
            assert (terminated or truncated) == bool(episode["done"][t])
        checked += 1
    assert checked == 6
    # Walking again starts over, and walks may interleave.
    assert sum(1 for _ in s.episodes()) == len(episodes)
    for a, b in zip(s.episodes(), s.episodes()):
        assert np.array_equal(a["actions"], b["actions"])


def test_a_file_that_is_not_a_store_is_named(tmp_path):
    with pytest.raises(ValueError, match="no-such.h5"):
        graphworld.RolloutStore(tmp_path / "no-such.h5")
    bogus = tmp_path / "bogus.h5"
    bogus.write_bytes(b"not hdf5 at all" * 100)
    with pytest.raises(ValueError, match="bogus.h5"):
        graphworld.RolloutStore(bogus)
