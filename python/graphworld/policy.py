"""graphworld.load_policy: a trained policy acting on observations."""

import os

from . import _core


class Policy:
    """A policy file (``.gwpolicy``) trained by ``graphworld train``, or
    ``"default"`` / ``"default-gpu"`` for the shipped ones.

    ``act(obs)`` takes one observation dict as ``GraphEnv`` returns it and
    gives ``(xfer, location)``: the most likely action when ``greedy``
    (the default), else one sampled with the policy's own generator,
    seeded by ``seed``. ``value(obs)`` is the value head's estimate. The
    observation's rules must be the policy's (``num_xfers``). A policy with
    ``location_rewards`` reads the observation's ``location_reward`` and
    ``xfer_reward``: make its environment with ``location_rewards=True``.
    """

    def __init__(self, path, seed=0):
        self._core = _core.Policy(os.fspath(path), int(seed))
        self.path = self._core.path
        self.num_xfers = self._core.num_xfers
        self.max_steps = self._core.max_steps
        self.max_locations = self._core.max_locations
        self.cost_model = self._core.cost_model
        self.trained_on = list(self._core.trained_on)
        self.location_rewards = self._core.location_rewards

    def act(self, observation, greedy=True):
        return self._core.act(observation, bool(greedy))

    def value(self, observation):
        return self._core.value(observation)

    def __repr__(self):
        return f"Policy({self.path!r}, {self.num_xfers} rules, trained on {', '.join(self.trained_on) or '?'})"


def load_policy(path, seed=0):
    """Loads a policy file (see Policy); ValueError naming the file when it
    is missing, damaged or not a policy."""
    return Policy(path, seed)
