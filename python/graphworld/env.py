"""graphworld.GraphEnv: graph rewriting as a Gymnasium 1.x environment."""

import os

from . import _core
from . import spaces

try:  # pragma: no cover - depends on what is installed
    import gymnasium as _gymnasium
    _Base = _gymnasium.Env
except ImportError:  # pragma: no cover
    _Base = object

NODE_FEATURE_DIM = 64
EDGE_FEATURE_DIM = 8
GLOBAL_FEATURE_DIM = 6


class GraphEnv(_Base):
    """One ONNX model (or zoo name) to rewrite, one verified substitution a step.

    An action is ``(xfer, location)``: ``xfer`` in ``[0, N]`` names a rule
    (``N`` is NO-OP, ``env.noop``) and ``location`` in ``[0, L)`` one of the
    places it matches, as ``observation["location_mask"][xfer]`` allows. The
    reward is the cost the step saved, in percent of the model's initial
    cost. ``terminated`` is true when the agent chose NO-OP or no rule
    applies any more, ``truncated`` when ``max_steps`` steps were taken.

    ``cost`` is a cost model as the command line names it (``analytic``,
    ``gpu``, ``measured``, ``cuda``); ``rates`` an analytic rates file
    (``configs/gpu_rates.yaml``); ``gpu`` the GPU profile of ``cost="gpu"``.
    ``seed`` seeds the first ``reset()`` (``reset(seed=...)`` reseeds).
    ``location_rewards=True`` adds ``observation["location_reward"]``: for
    each allowed (xfer, location), in ``node_begin``'s order, the reward
    taking it now would earn (the cost it saves at once, in percent of the
    initial cost; greedy search takes the largest). Every allowed location is
    priced at every step, which costs time on graphs with many matches.
    """

    metadata = {"render_modes": []}

    def __init__(self, model, cost="analytic", rates=None, max_steps=100, seed=None, max_locations=200,
                 reward="incremental", gpu="h100-sxm", batch=1, location_rewards=False):
        model = os.fspath(model)
        self._core = _core.GraphEnv(model, cost, os.fspath(rates) if rates else "", gpu, int(max_steps),
                                    int(max_locations), reward, int(batch), bool(location_rewards))
        self._next_seed = 0 if seed is None else int(seed)
        self.num_xfers = self._core.num_xfers
        self.noop = self.num_xfers
        self.max_locations = self._core.max_locations
        self.max_steps = self._core.max_steps
        self.action_space = spaces.action_space(self.num_xfers, self.max_locations)
        self.observation_space = spaces.observation_space(self.num_xfers, self.max_locations, NODE_FEATURE_DIM,
                                                          EDGE_FEATURE_DIM, GLOBAL_FEATURE_DIM,
                                                          location_rewards=bool(location_rewards))

    def reset(self, *, seed=None, options=None):
        """Starts an episode: ``(observation, info)``.

        Episodes are seeded in turn from the constructor's seed; ``seed``
        restarts that sequence. ``options`` is accepted and unused.
        """
        del options
        if seed is not None:
            self._next_seed = int(seed)
        episode_seed = self._next_seed
        self._next_seed += 1
        return self._core.reset(episode_seed)

    def step(self, action):
        """Applies ``(xfer, location)``: ``(observation, reward, terminated, truncated, info)``.

        A masked or out-of-range action raises ValueError naming it.
        """
        try:
            xfer, location = action
            xfer, location = int(xfer), int(location)
        except (TypeError, ValueError):
            raise ValueError(f"an action is a pair (xfer, location) of integers, got {action!r}") from None
        return self._core.step(xfer, location)

    def rule_name(self, xfer):
        """The name of rule ``xfer`` ("no-op" for ``env.noop``)."""
        return self._core.rule_name(int(xfer))

    @property
    def source(self):
        """The model as loaded: its path, or ``zoo:NAME``."""
        return self._core.source

    def close(self):
        pass
