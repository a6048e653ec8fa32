#!/usr/bin/python3
"""PPO on graph rewriting, in plain PyTorch, through graphworld.VectorEnv.

A short, self-contained agent a researcher can start from: it trains on one
model (by default squeezenet1.1 under configs/gpu_rates.yaml, where TASO's
search finds 19.07% and greedy search 15.43%) and reports what its greedy
policy finds, as `graphworld optimize --policy` judges a policy: the best
graph along one greedy rollout.

The network:
  xfer head      an MLP over the graph's globals, the xfer mask and the
                 step, logits over the rules and NO-OP, masked;
  location head  scores each location of the chosen rule from the mean
                 features of the nodes it matched and the rule's own
                 embedding (what a location is, not its index);
  value head     an MLP over the xfer head's input.

    PYTHONPATH=build/main/python python/examples/ppo.py --updates 60 --seed 0
    PYTHONPATH=build/main/python python/examples/ppo.py --no-learning   # the untrained policy, for comparison

What it learns there, honestly: under these rates every rule SqueezeNet
offers pays in the end, so a policy that never stops early reaches TASO's
19.07% (a uniformly random one that never chooses NO-OP does too); an
untrained policy chooses NO-OP about one step in (allowed rules + 1) and
stops with little. The agent learns to keep rewriting and to stop once
nothing pays: about 10 updates (2,560 steps, a few seconds) take its
sampled rollouts from about 1% to 19.07%.
"""

import argparse
import pathlib
import time

import numpy as np
import torch
from torch import nn

import graphworld

REPO = pathlib.Path(__file__).resolve().parents[2]


def location_features(obs, env_index, xfer):
    """[count, 64]: the mean node features of each location of `xfer` in
    environment `env_index` of a VectorEnv batch."""
    begin = obs["location_offset"][env_index] + obs["location_begin"][env_index, xfer]
    count = obs["location_begin"][env_index, xfer + 1] - obs["location_begin"][env_index, xfer]
    node_begin = obs["node_begin"][begin:begin + count + 1]
    nodes = obs["match_nodes"][node_begin[0]:node_begin[-1]]
    sums = np.add.reduceat(obs["node_features"][nodes], node_begin[:-1] - node_begin[0], axis=0)
    return sums / np.diff(node_begin)[:, None]


class Agent(nn.Module):
    def __init__(self, num_xfers, max_steps, hidden=128):
        super().__init__()
        self.noop, self.max_steps = num_xfers, max_steps
        state = 6 + (num_xfers + 1) + 1
        self.trunk = nn.Sequential(nn.Linear(state, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.xfer_logits = nn.Linear(hidden, num_xfers + 1)
        self.value = nn.Linear(hidden, 1)
        self.xfer_embedding = nn.Embedding(num_xfers, 16)
        self.location_score = nn.Sequential(nn.Linear(64 + 16, 64), nn.Tanh(), nn.Linear(64, 1))

    def state(self, obs, steps):
        return torch.cat([torch.as_tensor(obs["globals"], dtype=torch.float32),
                          torch.as_tensor(obs["xfer_mask"], dtype=torch.float32),
                          torch.as_tensor(steps / self.max_steps, dtype=torch.float32)[:, None]], dim=1)

    def xfer_distribution(self, state, mask):
        hidden = self.trunk(state)
        logits = self.xfer_logits(hidden).masked_fill(mask == 0, -1e9)
        return torch.distributions.Categorical(logits=logits), self.value(hidden).squeeze(1)

    def location_logits(self, features, xfer):
        """features [B, C, 64] padded, xfer [B] -> logits [B, C]."""
        embedded = self.xfer_embedding(xfer)[:, None, :].expand(-1, features.shape[1], -1)
        return self.location_score(torch.cat([features, embedded], dim=2)).squeeze(2)


def padded(rows, width=64):
    """A list of [count_i, width] arrays as [B, max count, width] and its mask."""
    longest = max(1, max(len(r) for r in rows))
    out = torch.zeros(len(rows), longest, width)
    mask = torch.zeros(len(rows), longest, dtype=torch.bool)
    for i, r in enumerate(rows):
        if len(r):
            out[i, :len(r)] = torch.as_tensor(r, dtype=torch.float32)
            mask[i, :len(r)] = True
    return out, mask


def act(agent, obs, steps, greedy, generator=None):
    """Actions for a VectorEnv batch, with what PPO keeps of them."""
    state = agent.state(obs, steps)
    mask = torch.as_tensor(obs["xfer_mask"])
    with torch.no_grad():
        xfers, values = agent.xfer_distribution(state, mask)
        xfer = xfers.probs.argmax(1) if greedy else torch.multinomial(xfers.probs, 1, generator=generator).squeeze(1)
        # An episode's last observation allows nothing; VectorEnv resets it
        # on this step whatever the action.
        xfer = torch.where(mask.sum(1) == 0, torch.full_like(xfer, agent.noop), xfer)
        rows = [location_features(obs, i, int(x)) if int(x) != agent.noop else np.zeros((0, 64))
                for i, x in enumerate(xfer)]
        features, valid = padded(rows)
        logits = agent.location_logits(features, xfer.clamp(max=agent.noop - 1)).masked_fill(~valid, -1e9)
        locations = torch.distributions.Categorical(logits=logits)
        location = logits.argmax(1) if greedy else torch.multinomial(locations.probs, 1, generator=generator).squeeze(1)
        is_noop = xfer == agent.noop
        location = torch.where(is_noop, torch.zeros_like(location), location)
        log_prob = xfers.log_prob(xfer) + torch.where(is_noop, torch.zeros(()), locations.log_prob(location))
    return xfer, location, log_prob, values, state, mask, rows


def evaluate(agent, model, rates, max_steps):
    """The best reduction along one greedy rollout (as optimize --policy judges it)."""
    env = graphworld.VectorEnv(model, 1, rates=rates, max_steps=max_steps, seed=0, threads=1)
    obs, infos = env.reset()
    best, steps = 0.0, np.zeros(1)
    for _ in range(max_steps):
        xfer, location, *_ = act(agent, obs, steps, greedy=True)
        obs, _, terminated, truncated, infos = env.step(np.stack([xfer.numpy(), location.numpy()], axis=1))
        best = max(best, float(infos["reduction_pct"][0]))
        steps += 1
        if terminated[0] or truncated[0]:
            break
    return best


def evaluate_sampled(agent, model, rates, max_steps, rollouts=16, seed=0):
    """The mean over `rollouts` sampled rollouts of each one's best
    reduction: what the stochastic policy has learned, NO-OP included (an
    untrained policy stops early about one step in (allowed rules + 1))."""
    env = graphworld.VectorEnv(model, rollouts, rates=rates, max_steps=max_steps, seed=seed, threads=2)
    generator = torch.Generator().manual_seed(seed)
    obs, infos = env.reset()
    best, steps = np.zeros(rollouts), np.zeros(rollouts)
    running = np.ones(rollouts, dtype=bool)
    for _ in range(max_steps):
        xfer, location, *_ = act(agent, obs, steps, False, generator)
        obs, _, terminated, truncated, infos = env.step(np.stack([xfer.numpy(), location.numpy()], axis=1))
        best = np.where(running, np.maximum(best, infos["reduction_pct"]), best)
        running &= ~(terminated | truncated)
        steps += 1
        if not running.any():
            break
    return float(best.mean())


def train(model="squeezenet1.1", rates=REPO / "configs" / "gpu_rates.yaml", updates=60, envs=8, horizon=32,
          max_steps=40, epochs=4, minibatch=64, lr=1e-3, gamma=0.99, lam=0.95, clip=0.2, entropy=0.01, seed=0,
          learning=True, log=print):
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    vector = graphworld.VectorEnv(model, envs, rates=rates, max_steps=max_steps, seed=seed, threads=2)
    agent = Agent(vector.num_xfers, max_steps)
    optimiser = torch.optim.Adam(agent.parameters(), lr=lr)
    obs, infos = vector.reset()
    steps = infos["step"].astype(np.float64)
    ended = torch.zeros(envs)  # the last step ended its episode: the next one is a reset
    start = time.time()
    for update in range(1, updates + 1):
        batch = {k: [] for k in ("state", "mask", "xfer", "location", "rows", "log_prob", "value", "reward", "done")}
        for _ in range(horizon):
            xfer, location, log_prob, value, state, mask, rows = act(agent, obs, steps, False, generator)
            obs, rewards, terminated, truncated, infos = vector.step(np.stack([xfer.numpy(), location.numpy()], 1))
            done = terminated | truncated
            for key, item in (("state", state), ("mask", mask), ("xfer", xfer), ("location", location),
                              ("log_prob", log_prob), ("value", value)):
                batch[key].append(item)
            batch["rows"].extend(rows)
            batch["reward"].append(torch.as_tensor(rewards / 10.0, dtype=torch.float32))
            batch["done"].append(torch.as_tensor(done, dtype=torch.float32))
            steps = infos["step"].astype(np.float64)
        # The step after an episode's end resets it and teaches nothing:
        # its transition is kept out of the loss (weight 0).
        with torch.no_grad():
            _, last_value = agent.xfer_distribution(agent.state(obs, steps), torch.as_tensor(obs["xfer_mask"]))
        rewards, dones = torch.stack(batch["reward"]), torch.stack(batch["done"])
        values = torch.stack(batch["value"])
        # Next-step auto-reset: the step after an episode's end (in this
        # rollout or at the end of the last one) is the reset.
        resets = torch.cat([ended[None], dones[:-1]])
        ended = dones[-1]
        advantages, running = torch.zeros_like(rewards), torch.zeros(envs)
        for t in reversed(range(horizon)):
            next_value = last_value if t == horizon - 1 else values[t + 1]
            delta = rewards[t] + gamma * next_value * (1 - dones[t]) - values[t]
            running = delta + gamma * lam * (1 - dones[t]) * running
            advantages[t] = running
        returns = advantages + values
        weight = (1 - resets).flatten()
        flat = lambda key: torch.cat(batch[key]) if key != "state" and key != "mask" else torch.cat(batch[key], 0)
        states, masks = torch.cat(batch["state"]), torch.cat(batch["mask"])
        xfers, locations, old_log_probs = flat("xfer"), flat("location"), flat("log_prob")
        advantages, returns = advantages.flatten(), returns.flatten()
        rows = batch["rows"]
        if learning:
            for _ in range(epochs):
                order = torch.randperm(len(xfers), generator=generator)
                for begin in range(0, len(order), minibatch):
                    idx = order[begin:begin + minibatch]
                    w = weight[idx]
                    if w.sum() == 0:
                        continue
                    dist, value = agent.xfer_distribution(states[idx], masks[idx])
                    features, valid = padded([rows[int(i)] for i in idx])
                    x = xfers[idx]
                    logits = agent.location_logits(features, x.clamp(max=agent.noop - 1)).masked_fill(~valid, -1e9)
                    loc_dist = torch.distributions.Categorical(logits=logits)
                    is_noop = x == agent.noop
                    # (Clamped only for the reset steps, weighted 0: a real
                    # location is always below its rule's count.)
                    chosen = locations[idx].clamp(max=logits.shape[1] - 1)
                    log_prob = dist.log_prob(x) + torch.where(is_noop, torch.zeros(()), loc_dist.log_prob(chosen))
                    adv = advantages[idx]
                    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                    ratio = torch.exp(log_prob - old_log_probs[idx])
                    policy_loss = -torch.min(ratio * adv, ratio.clamp(1 - clip, 1 + clip) * adv)
                    value_loss = (value - returns[idx]) ** 2
                    loss = ((policy_loss + 0.5 * value_loss - entropy * dist.entropy()) * w).sum() / w.sum()
                    optimiser.zero_grad()
                    loss.backward()
                    nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
                    optimiser.step()
        if log and (update % 10 == 0 or update == updates):
            log(f"update {update:4d}  env steps {update * horizon * envs:6d}  "
                f"greedy {evaluate(agent, model, rates, max_steps):6.2f}%  "
                f"sampled {evaluate_sampled(agent, model, rates, max_steps):6.2f}%  {time.time() - start:5.1f} s")
    return agent, evaluate(agent, model, rates, max_steps), evaluate_sampled(agent, model, rates, max_steps)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="squeezenet1.1")
    parser.add_argument("--rates", default=str(REPO / "configs" / "gpu_rates.yaml"))
    parser.add_argument("--updates", type=int, default=60)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--lr", type=float, default=1e-3, help="Adam's learning rate (3e-3 learns, then at times "
                        "collapses to stopping at once)")
    parser.add_argument("--no-learning", action="store_true", help="never update: the untrained policy")
    args = parser.parse_args()
    torch.set_num_threads(1)
    _, greedy, sampled = train(args.model, args.rates, updates=args.updates, seed=args.seed, lr=args.lr,
                               learning=not args.no_learning)
    print(f"greedy policy: {greedy:.2f}% cheaper; sampled rollouts: {sampled:.2f}% on average ({args.model})")


if __name__ == "__main__":
    main()
