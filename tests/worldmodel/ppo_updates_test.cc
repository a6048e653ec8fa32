// Both trainers' PPO updates, the real one (PpoLearner::update on rollouts)
// and the dream's (learn_from_dream_batch on a dream batch), against one
// reference written here from PPO's definition: GAE per trajectory,
// advantages normalised over the whole batch, then per epoch a shuffled
// order cut into minibatches, each one clipped-objective Adam step with the
// gradient norm clipped. Same seeds, so the parameters after an update must
// agree bit for bit.
#include <gtest/gtest.h>

#include <numeric>
#include <random>

#include "learner/gae.h"
#include "learner/policy_module.h"
#include "learner/ppo_learner.h"
#include "learner/ppo_loss.h"
#include "tests/learner/training_fixture.h"
#include "worldmodel/dream_trainer.h"

namespace graphworld::testing {
namespace {

struct Evaluated {
  torch::Tensor log_prob, value, entropy;
};

// The reference: PPO's epochs over flat samples. `evaluate` gives the
// network's outputs for the samples at the given indices.
template <class Evaluate>
void reference_epochs(const PpoOptions& ppo, std::vector<float> advantages, const std::vector<float>& returns,
                      const std::vector<float>& old_log_prob, torch::optim::Optimizer& optimizer,
                      const std::vector<torch::Tensor>& parameters, std::mt19937_64& rng, Evaluate evaluate) {
  if (ppo.normalize_advantages) normalize_advantages(advantages);
  const size_t n = advantages.size();
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  auto pick = [](const std::vector<float>& all, const std::vector<int64_t>& at) {
    std::vector<float> out;
    for (int64_t i : at) out.push_back(all[static_cast<size_t>(i)]);
    return torch::tensor(out);
  };
  for (int32_t epoch = 0; epoch < ppo.epochs; ++epoch) {
    std::shuffle(order.begin(), order.end(), rng);
    for (size_t begin = 0; begin < n; begin += static_cast<size_t>(ppo.minibatch_size)) {
      const std::vector<int64_t> at(order.begin() + static_cast<std::ptrdiff_t>(begin),
                                    order.begin() + static_cast<std::ptrdiff_t>(
                                                        std::min(n, begin + static_cast<size_t>(ppo.minibatch_size))));
      const Evaluated e = evaluate(at);
      const PpoLoss loss = ppo_loss(e.log_prob, pick(old_log_prob, at), pick(advantages, at), e.value,
                                    pick(returns, at), e.entropy,
                                    PpoCoefficients{ppo.clip, ppo.value_coef, ppo.entropy_coef});
      optimizer.zero_grad();
      loss.total.backward();
      // The gradient norm over all the gradients as one vector; scaled
      // down to max_grad_norm when above it.
      std::vector<torch::Tensor> gradients;
      for (const torch::Tensor& p : parameters)
        if (p.grad().defined()) gradients.push_back(p.grad().flatten());
      const double norm = torch::cat(gradients).norm().item<double>();
      const double scale = ppo.max_grad_norm / (norm + 1e-6);
      if (scale < 1.0)
        for (const torch::Tensor& p : parameters)
          if (p.grad().defined()) p.grad().mul_(scale);
      optimizer.step();
    }
  }
}

std::vector<float> flat(const std::vector<torch::Tensor>& parameters) {
  std::vector<float> out;
  for (const torch::Tensor& p : parameters) {
    const torch::Tensor c = p.detach().contiguous();
    out.insert(out.end(), c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
  }
  return out;
}

PpoOptions options() {
  PpoOptions o;
  o.epochs = 3;
  o.minibatch_size = 29;  // the last minibatch of each epoch is short
  o.seed = 5;
  return o;
}

TEST(PpoUpdates, TheRealTrainersUpdateIsTheReferenceBitForBit) {
  torch::set_num_threads(1);
  PolicyNetworkConfig network;
  network.num_xfers = static_cast<int32_t>(default_matcher().num_rules());
  network.hidden = 16;
  network.message_rounds = 2;
  network.seed = 7;
  const std::vector<Rollout> rollouts = squeezenet_rollouts(network, 3, 20, 12, 4, 2);
  std::vector<const Rollout*> batch;
  for (const Rollout& r : rollouts) batch.push_back(&r);

  const PpoOptions ppo = options();
  PpoLearner learner(network, ppo);
  learner.update(batch);
  learner.update(batch);  // Adam's moments and the shuffling stream carry over

  PolicyNetwork reference(network);
  PolicyModule& module = reference.impl().module;
  torch::optim::Adam adam(module->parameters(), torch::optim::AdamOptions(ppo.learning_rate));
  std::mt19937_64 rng(ppo.seed);
  std::vector<const Observation*> observations;
  std::vector<Action> actions;
  std::vector<float> advantages, returns, old_log_prob;
  for (const Rollout& rollout : rollouts)
    for (const RolloutSegment& segment : rollout.segments) {
      std::vector<float> rewards, values;
      std::vector<uint8_t> dones;
      for (const RolloutStep& s : segment.steps) {
        observations.push_back(&s.observation);
        actions.push_back(s.action);
        old_log_prob.push_back(s.log_prob);
        rewards.push_back(s.reward);
        values.push_back(s.value);
        dones.push_back(s.done);
      }
      const GaeResult g = compute_gae(rewards, values, dones, segment.bootstrap_value,
                                      static_cast<float>(ppo.gamma), static_cast<float>(ppo.gae_lambda));
      advantages.insert(advantages.end(), g.advantages.begin(), g.advantages.end());
      returns.insert(returns.end(), g.returns.begin(), g.returns.end());
    }
  ASSERT_GT(advantages.size(), 60u);
  auto evaluate = [&](const std::vector<int64_t>& at) {
    std::vector<const Observation*> o;
    std::vector<Action> a;
    for (int64_t i : at) {
      o.push_back(observations[static_cast<size_t>(i)]);
      a.push_back(actions[static_cast<size_t>(i)]);
    }
    const ActionEvaluation e = evaluate_actions(module, o, a);
    return Evaluated{e.log_prob, e.value, e.entropy};
  };
  for (int update = 0; update < 2; ++update)
    reference_epochs(ppo, advantages, returns, old_log_prob, adam, module->parameters(), rng, evaluate);

  const std::vector<float> got = flat(learner.policy().impl().module->parameters()), want = flat(module->parameters());
  ASSERT_EQ(got.size(), want.size());
  EXPECT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float)));
  EXPECT_NE(want, flat(PolicyNetwork(network).impl().module->parameters()));  // the updates moved them
}

TEST(PpoUpdates, TheDreamTrainersUpdateIsTheReferenceBitForBit) {
  torch::set_num_threads(1);
  const int64_t latent = 6, hidden = 10, vocabulary = 5, rows = 7, steps = 9, n = rows * steps;
  torch::manual_seed(3);
  DreamBatch batch;
  batch.rows = rows;
  batch.steps = steps;
  batch.z = torch::randn({n, latent});
  batch.h = torch::randn({n, hidden});
  batch.mask = torch::rand({n, vocabulary + 1}) < 0.6;
  batch.mask.select(1, vocabulary).fill_(true);  // NO-OP is always allowed
  batch.action = torch::multinomial(batch.mask.to(torch::kFloat), 1).squeeze(1);
  batch.log_prob = -torch::rand({n}) * 2;
  batch.value = torch::randn({n});
  batch.reward = torch::randn({n}) * 0.3;
  batch.done = torch::rand({n}) < 0.15;
  batch.bootstrap = torch::randn({rows});
  const double step_cost = 0.05;

  auto controller = [&] {
    torch::manual_seed(11);
    return DreamController(latent, hidden, vocabulary, 32);
  };
  const PpoOptions ppo = options();
  DreamController trained = controller();
  torch::optim::Adam trained_adam(trained->parameters(), torch::optim::AdamOptions(ppo.learning_rate));
  std::mt19937_64 trained_rng(ppo.seed);
  for (int update = 0; update < 2; ++update)
    learn_from_dream_batch(trained, trained_adam, batch, ppo, step_cost, trained_rng);

  DreamController reference = controller();
  torch::optim::Adam adam(reference->parameters(), torch::optim::AdamOptions(ppo.learning_rate));
  std::mt19937_64 rng(ppo.seed);
  // GAE per dream row over the rewards the controller learns from; samples
  // stay step-major (row j's step t is sample t * rows + j).
  const torch::Tensor reward = controller_rewards(batch.reward, batch.action, vocabulary, step_cost);
  std::vector<float> advantages(static_cast<size_t>(n)), returns(static_cast<size_t>(n)), old_log_prob(static_cast<size_t>(n));
  for (int64_t j = 0; j < rows; ++j) {
    std::vector<float> r, v;
    std::vector<uint8_t> d;
    for (int64_t t = 0; t < steps; ++t) {
      r.push_back(reward[t * rows + j].item<float>());
      v.push_back(batch.value[t * rows + j].item<float>());
      d.push_back(batch.done[t * rows + j].item<bool>() ? 1 : 0);
    }
    const GaeResult g = compute_gae(r, v, d, batch.bootstrap[j].item<float>(), static_cast<float>(ppo.gamma),
                                    static_cast<float>(ppo.gae_lambda));
    for (int64_t t = 0; t < steps; ++t) {
      advantages[static_cast<size_t>(t * rows + j)] = g.advantages[static_cast<size_t>(t)];
      returns[static_cast<size_t>(t * rows + j)] = g.returns[static_cast<size_t>(t)];
    }
  }
  for (int64_t i = 0; i < n; ++i) old_log_prob[static_cast<size_t>(i)] = batch.log_prob[i].item<float>();
  auto evaluate = [&](const std::vector<int64_t>& at) {
    const torch::Tensor index = torch::tensor(at);
    const ControllerOutput out = reference->forward(batch.z.index_select(0, index), batch.h.index_select(0, index),
                                                    batch.mask.index_select(0, index));
    const torch::Tensor log_p = torch::log_softmax(out.logits, -1), p = log_p.exp();
    return Evaluated{log_p.gather(-1, batch.action.index_select(0, index).unsqueeze(-1)).squeeze(-1), out.value,
                     -(p * log_p.masked_fill(p == 0, 0.0)).sum(-1)};
  };
  for (int update = 0; update < 2; ++update)
    reference_epochs(ppo, advantages, returns, old_log_prob, adam, reference->parameters(), rng, evaluate);

  const std::vector<float> got = flat(trained->parameters()), want = flat(reference->parameters());
  ASSERT_EQ(got.size(), want.size());
  EXPECT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float)));
  EXPECT_NE(want, flat(controller()->parameters()));
}

}  // namespace
}  // namespace graphworld::testing
