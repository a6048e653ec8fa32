"""The action and observation spaces of graphworld's environments.

Gymnasium's own spaces when ``gymnasium`` is importable; otherwise small
stand-ins with the same fields (``n``, ``nvec``, ``shape``, ``dtype``,
``low``, ``high``, ``spaces``, ``feature_space``) and the same ``sample()`` and
``contains()``, so code written against Gymnasium runs without it.

Graph-sized arrays (node and edge features, senders, the matches) vary in
length from step to step: they are ``Sequence(..., stack=True)`` spaces,
whose members are NumPy arrays with any number of rows.
"""

import sys

import numpy as np

try:  # pragma: no cover - depends on what is installed
    from gymnasium import spaces as _gymnasium_spaces
except ImportError:  # pragma: no cover
    _gymnasium_spaces = None

HAVE_GYMNASIUM = _gymnasium_spaces is not None


class Discrete:
    """Integers 0 .. n - 1."""

    def __init__(self, n, seed=None):
        self.n = int(n)
        self.shape = ()
        self.dtype = np.int64
        self._rng = np.random.default_rng(seed)

    def sample(self):
        return int(self._rng.integers(self.n))

    def contains(self, x):
        return isinstance(x, (int, np.integer)) and 0 <= int(x) < self.n

    def __repr__(self):
        return f"Discrete({self.n})"


class MultiBinary:
    """Arrays of 0 and 1 of a fixed shape."""

    def __init__(self, n, seed=None):
        self.n = n
        self.shape = (n,) if np.isscalar(n) else tuple(n)
        self.dtype = np.int8
        self._rng = np.random.default_rng(seed)

    def sample(self):
        return self._rng.integers(0, 2, self.shape).astype(self.dtype)

    def contains(self, x):
        x = np.asarray(x)
        return x.shape == self.shape and bool(np.isin(x, (0, 1)).all())

    def __repr__(self):
        return f"MultiBinary({self.n})"


class MultiDiscrete:
    """Integer arrays of ``nvec``'s shape, each entry i in [0, nvec[i])."""

    def __init__(self, nvec, dtype=np.int64, seed=None):
        self.nvec = np.asarray(nvec, dtype=dtype)
        self.shape = self.nvec.shape
        self.dtype = np.dtype(dtype)
        self._rng = np.random.default_rng(seed)

    def sample(self):
        return (self._rng.random(self.shape) * self.nvec).astype(self.dtype)

    def contains(self, x):
        x = np.asarray(x)
        return (x.shape == self.shape and np.issubdtype(x.dtype, np.integer) and bool(np.all(x >= 0))
                and bool(np.all(x < self.nvec)))

    def __repr__(self):
        return f"MultiDiscrete({self.nvec.tolist()})"


class Box:
    """Arrays of a fixed shape with values in [low, high]."""

    def __init__(self, low, high, shape, dtype=np.float32, seed=None):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.low = np.full(self.shape, low, dtype=self.dtype)
        self.high = np.full(self.shape, high, dtype=self.dtype)
        self._rng = np.random.default_rng(seed)

    def sample(self):
        if np.issubdtype(self.dtype, np.integer):
            return self._rng.integers(self.low, self.high, endpoint=True).astype(self.dtype)
        low = np.maximum(self.low, -1e6)
        high = np.minimum(self.high, 1e6)
        return self._rng.uniform(low, high).astype(self.dtype)

    def contains(self, x):
        x = np.asarray(x)
        return x.shape == self.shape and bool(np.all(x >= self.low) and np.all(x <= self.high))

    def __repr__(self):
        return f"Box({self.shape}, {self.dtype})"


class Sequence:
    """Any number of members of ``feature_space``; with ``stack`` an array of them."""

    def __init__(self, feature_space, stack=True, seed=None):
        self.feature_space = feature_space
        self.stack = stack
        self._rng = np.random.default_rng(seed)

    def sample(self):
        count = int(self._rng.integers(0, 5))
        items = [self.feature_space.sample() for _ in range(count)]
        if not self.stack:
            return tuple(items)
        if items:
            return np.stack(items)
        return np.zeros((0,) + self.feature_space.shape, dtype=self.feature_space.dtype)

    def contains(self, x):
        if self.stack:
            x = np.asarray(x)
            return x.ndim >= 1 and all(self.feature_space.contains(row) for row in x)
        return all(self.feature_space.contains(item) for item in x)

    def __repr__(self):
        return f"Sequence({self.feature_space!r}, stack={self.stack})"


class Tuple:
    def __init__(self, spaces):
        self.spaces = tuple(spaces)

    def sample(self):
        return tuple(s.sample() for s in self.spaces)

    def contains(self, x):
        return isinstance(x, tuple) and len(x) == len(self.spaces) and all(
            s.contains(v) for s, v in zip(self.spaces, x))

    def __getitem__(self, index):
        return self.spaces[index]

    def __repr__(self):
        return f"Tuple({', '.join(repr(s) for s in self.spaces)})"


class Dict:
    def __init__(self, spaces):
        self.spaces = dict(spaces)

    def sample(self):
        return {k: s.sample() for k, s in self.spaces.items()}

    def contains(self, x):
        return isinstance(x, dict) and x.keys() == self.spaces.keys() and all(
            s.contains(x[k]) for k, s in self.spaces.items())

    def __getitem__(self, key):
        return self.spaces[key]

    def __repr__(self):
        return "Dict(" + ", ".join(f"{k!r}: {s!r}" for k, s in self.spaces.items()) + ")"


_stand_ins = sys.modules[__name__]


def _module():
    """The spaces to build with: Gymnasium's where it is installed."""
    return _gymnasium_spaces if HAVE_GYMNASIUM else _stand_ins


def action_space(num_xfers, max_locations):
    """(xfer, location): xfer in [0, N] (N is NO-OP), location in [0, L)."""
    s = _module()
    return s.Tuple((s.Discrete(num_xfers + 1), s.Discrete(max_locations)))


def vector_action_space(num_envs, num_xfers, max_locations):
    """VectorEnv's actions: an int array [E, 2], a (xfer, location) per environment."""
    s = _module()
    return s.MultiDiscrete(np.tile(np.array([num_xfers + 1, max_locations], dtype=np.int64), (num_envs, 1)))


def _graph_arrays(s, node_feature_dim, edge_feature_dim, location_rewards):
    """The graph-sized arrays, the same for one environment and for a batch
    (where they hold every environment's graph, one after another)."""
    inf = np.float32(np.inf)
    index = s.Discrete(np.iinfo(np.int32).max)  # a node or match index (Discrete: Gymnasium checks its members as scalars)
    rewards = {"location_reward": s.Sequence(s.Box(-inf, inf, (), dtype=np.float32), stack=True)}
    return {
        **(rewards if location_rewards else {}),
        "node_features": s.Sequence(s.Box(-inf, inf, (node_feature_dim,), dtype=np.float32), stack=True),
        "edge_features": s.Sequence(s.Box(-inf, inf, (edge_feature_dim,), dtype=np.float32), stack=True),
        "senders": s.Sequence(index, stack=True),
        "receivers": s.Sequence(index, stack=True),
        "node_op": s.Sequence(index, stack=True),
        "node_begin": s.Sequence(index, stack=True),
        "match_nodes": s.Sequence(index, stack=True),
    }


def vector_observation_space(num_envs, num_xfers, max_locations, node_feature_dim, edge_feature_dim,
                             global_feature_dim, location_rewards=False):
    """VectorEnv's batched observation dict: the masks per environment, the
    graphs as one batch (python/README.md lists the arrays)."""
    s = _module()
    most = np.iinfo(np.int32).max
    per_env = s.Box(0, most, (num_envs,), dtype=np.int32)
    return s.Dict({
        "xfer_mask": s.MultiBinary([num_envs, num_xfers + 1]),
        "location_mask": s.MultiBinary([num_envs, num_xfers, max_locations]),
        "n_node": per_env,
        "n_edge": per_env,
        **_graph_arrays(s, node_feature_dim, edge_feature_dim, location_rewards),
        "globals": s.Box(-np.float32(np.inf), np.float32(np.inf), (num_envs, global_feature_dim), dtype=np.float32),
        "location_begin": s.Box(0, most, (num_envs, num_xfers + 1), dtype=np.int32),
        "location_offset": per_env,
        **({"xfer_reward": s.Box(-np.float32(np.inf), np.float32(np.inf), (num_envs, num_xfers + 1),
                                 dtype=np.float32)} if location_rewards else {}),
    })


def observation_space(num_xfers, max_locations, node_feature_dim, edge_feature_dim, global_feature_dim,
                      location_rewards=False):
    """The observation dict's arrays (python/README.md lists them)."""
    s = _module()
    return s.Dict({
        "xfer_mask": s.MultiBinary(num_xfers + 1),
        "location_mask": s.MultiBinary([num_xfers, max_locations]),
        **_graph_arrays(s, node_feature_dim, edge_feature_dim, location_rewards),
        "globals": s.Box(-np.float32(np.inf), np.float32(np.inf), (global_feature_dim,), dtype=np.float32),
        "location_begin": s.Box(0, np.iinfo(np.int32).max, (num_xfers + 1,), dtype=np.int32),
        **({"xfer_reward": s.Box(-np.float32(np.inf), np.float32(np.inf), (num_xfers + 1,), dtype=np.float32)}
           if location_rewards else {}),
    })
