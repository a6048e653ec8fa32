"""graphworld from Python: graph rewriting environments over ONNX models.

    import graphworld
    env = graphworld.GraphEnv("squeezenet1.1", rates="configs/gpu_rates.yaml", seed=0)
    obs, info = env.reset()
    obs, reward, terminated, truncated, info = env.step((xfer, location))

    envs = graphworld.VectorEnv(["squeezenet1.1", "resnet18"], num_envs=8, threads=2, seed=0)
    obs, infos = envs.reset()
    obs, rewards, terminated, truncated, infos = envs.step(actions)  # [8, 2] ints

    report = graphworld.optimize("squeezenet1.1", "out.onnx", search="greedy")   # optimize --json's keys
    policy = graphworld.load_policy("default")   # reads location rewards: obs from
    xfer, location = policy.act(obs)              # GraphEnv(..., location_rewards=True)
    graphworld.cost("squeezenet1.1", rates="configs/gpu_rates.yaml")["total_ms"]
    for episode in graphworld.RolloutStore("RUN/rollouts.h5").episodes(): ...  # observations rebuilt

See python/README.md and docs/python.md.
"""

from .commands import cost, optimize
from .env import GraphEnv
from .policy import Policy, load_policy
from .rollout_store import RolloutStore
from .vector_env import VectorEnv
from . import spaces

try:  # pragma: no cover - depends on what is installed
    import gymnasium as _gymnasium
except ImportError:  # pragma: no cover
    _gymnasium = None
if _gymnasium is not None:
    # gymnasium.make("graphworld/GraphEnv-v0", model=..., ...) takes GraphEnv's arguments.
    _gymnasium.register(id="graphworld/GraphEnv-v0", entry_point="graphworld.env:GraphEnv")

__all__ = ["GraphEnv", "VectorEnv", "Policy", "RolloutStore", "cost", "load_policy", "optimize", "spaces"]
