"""graphworld.VectorEnv: many GraphEnvs stepped together in C++ threads."""

import os

import numpy as np

from . import _core
from . import spaces
from .env import EDGE_FEATURE_DIM, GLOBAL_FEATURE_DIM, NODE_FEATURE_DIM

try:  # pragma: no cover - depends on what is installed
    from gymnasium.vector import VectorEnv as _Base
    try:
        from gymnasium.vector import AutoresetMode as _AutoresetMode
        _NEXT_STEP = _AutoresetMode.NEXT_STEP
    except ImportError:  # Gymnasium 1.0 names the mode by a string
        _NEXT_STEP = "NextStep"
except ImportError:  # pragma: no cover
    _Base = object
    _NEXT_STEP = "NextStep"


class VectorEnv(_Base):
    """``num_envs`` environments over ``models`` (environment i rewrites
    ``models[i % len(models)]``), stepped on ``threads`` C++ threads with
    the GIL released.

    ``step(actions)`` takes one ``(xfer, location)`` per environment (a list
    of pairs or an int array [num_envs, 2]) and returns batched arrays:
    ``(obs, rewards [E], terminated [E], truncated [E], infos)``. Auto-reset
    is Gymnasium 1.x's next-step mode: an environment that ended is reset by
    the following ``step()``, which ignores its action and returns its first
    observation with reward 0, terminated and truncated false.

    Observations (docs/python.md, "VectorEnv"): ``xfer_mask`` [E, N + 1] and
    ``location_mask`` [E, N, L]; the graphs as one batch, graph_nets style:
    ``n_node`` and ``n_edge`` [E], ``node_features`` [sum of nodes, 64],
    ``edge_features`` [sum of edges, 8], ``senders`` and ``receivers``
    (indices into the batch's nodes), ``globals`` [E, 6], ``node_op``; the
    matches: ``location_begin`` [E, N + 1] (per environment),
    ``location_offset`` [E] (where its entries start in ``node_begin``),
    ``node_begin`` and ``match_nodes`` (indices into the batch's nodes).
    Environment i's episodes are seeded seed + i, seed + i + E, ...

    Where Gymnasium is installed this is a ``gymnasium.vector.VectorEnv``
    whose ``metadata["autoreset_mode"]`` is ``AutoresetMode.NEXT_STEP``, so
    Gymnasium's vector wrappers (``RecordEpisodeStatistics`` and others)
    take it as it is. ``action_space`` is the [E, 2] int array of actions,
    ``observation_space`` the batched dict; ``single_action_space`` and
    ``single_observation_space`` are one ``GraphEnv``'s.
    """

    metadata = {"autoreset_mode": _NEXT_STEP}
    render_mode = None

    def __init__(self, models, num_envs, cost="analytic", rates=None, max_steps=100, seed=None, max_locations=200,
                 reward="incremental", gpu="h100-sxm", batch=1, threads=2, location_rewards=False):
        if isinstance(models, (str, os.PathLike)):
            models = [models]
        models = [os.fspath(m) for m in models]
        self._core = _core.VectorEnv(models, int(num_envs), cost, os.fspath(rates) if rates else "", gpu,
                                     int(max_steps), int(max_locations), reward, int(batch), int(threads),
                                     0 if seed is None else int(seed), bool(location_rewards))
        self.num_envs = self._core.num_envs
        self.num_xfers = self._core.num_xfers
        self.noop = self.num_xfers
        self.max_locations = self._core.max_locations
        self.max_steps = self._core.max_steps
        self.threads = self._core.threads
        self.single_action_space = spaces.action_space(self.num_xfers, self.max_locations)
        self.single_observation_space = spaces.observation_space(self.num_xfers, self.max_locations,
                                                                 NODE_FEATURE_DIM, EDGE_FEATURE_DIM,
                                                                 GLOBAL_FEATURE_DIM,
                                                                 location_rewards=bool(location_rewards))
        self.action_space = spaces.vector_action_space(self.num_envs, self.num_xfers, self.max_locations)
        self.observation_space = spaces.vector_observation_space(self.num_envs, self.num_xfers, self.max_locations,
                                                                 NODE_FEATURE_DIM, EDGE_FEATURE_DIM,
                                                                 GLOBAL_FEATURE_DIM,
                                                                 location_rewards=bool(location_rewards))
        self.closed = False

    def reset(self, *, seed=None, options=None):
        """Resets every environment: ``(obs, infos)``; ``seed`` restarts the seeds."""
        del options
        return self._core.reset(None if seed is None else int(seed))

    def step(self, actions):
        """One step of every environment (see the class)."""
        array = np.asarray(actions)
        if array.ndim != 2 or array.shape[1] != 2 or not np.issubdtype(array.dtype, np.integer):
            raise ValueError(f"actions are one (xfer, location) pair of integers per environment: an int array "
                             f"[{self.num_envs}, 2], got shape {array.shape} of {array.dtype}")
        return self._core.step(array)

    def close(self, **kwargs):
        """Nothing to release early: the C++ environments go with the object."""
        del kwargs
        self.closed = True
