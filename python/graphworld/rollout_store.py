"""graphworld.RolloutStore: a run's rollouts.h5 for offline RL."""

import os

from . import _core


class RolloutStore:
    """The real steps a training run stored (``RUN/rollouts.h5``).

    ``read(begin=0, count=None)`` gives the stored columns as NumPy arrays
    [count]: ``actor_id``, ``env_slot``, ``policy_version``, ``graph_index``,
    ``episode_seed``, ``episode_step``, ``xfer``, ``location``, ``reward``,
    ``done``, ``cost_ms`` (after the step), ``log_prob``, ``value``.

    ``episodes()`` walks the store's episodes, each a dict of the same
    columns over its T steps plus ``actions`` [T, 2], ``graph`` (its name),
    ``complete`` (its last step ended it) and ``observations``: the T
    observations the actions were taken on, rebuilt by replaying the
    episode with the run's own rules, graphs and cost model (the store
    keeps about 60 bytes a step, not the observations), as GraphEnv's
    dicts. Episodes come in the order they end in the store, as world-model
    training reads them; the store is read in slices, so only the episodes
    still open are held. Steps whose episode began before the store did
    are skipped (``missed_steps``).
    """

    def __init__(self, path):
        self.path = os.fspath(path)
        self._core = _core.RolloutStore(self.path)
        self.graphs = list(self._core.graphs)
        self.num_xfers = self._core.num_xfers
        self.run_id = self._core.run_id
        self.config = self._core.config_text
        self._last_walk = None

    @property
    def steps(self):
        """Steps in the store now."""
        return self._core.steps

    def __len__(self):
        return self.steps

    def read(self, begin=0, count=None):
        return self._core.read(int(begin), self.steps - int(begin) if count is None else int(count))

    def episodes(self, batch=64):
        """Yields every episode (see the class), from the store's start.
        Each walk reads with its own replay, so walks may interleave."""
        walk = _core.RolloutStore(self.path)
        self._last_walk = walk
        while True:
            episodes = walk.next_episodes(int(batch))
            if not episodes:
                return
            yield from episodes

    @property
    def rebuilt_steps(self):
        """Steps the latest walk of episodes() has rebuilt so far."""
        return self._last_walk.rebuilt_steps if self._last_walk else 0

    @property
    def missed_steps(self):
        """Steps the latest walk skipped: their episode began before the store did."""
        return self._last_walk.missed_steps if self._last_walk else 0

    def __repr__(self):
        return f"RolloutStore({self.path!r}, {self.steps} steps, graphs {', '.join(self.graphs)})"
