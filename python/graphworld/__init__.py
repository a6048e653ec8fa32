"""graphworld from Python: graph rewriting environments over ONNX models.

    import graphworld
    env = graphworld.GraphEnv("squeezenet1.1", rates="configs/gpu_rates.yaml", seed=0)
    obs, info = env.reset()
    obs, reward, terminated, truncated, info = env.step((xfer, location))

See python/README.md and docs/python.md.
"""

from .env import GraphEnv
from . import spaces

__all__ = ["GraphEnv", "spaces"]
