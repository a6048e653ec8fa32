#include "worldmodel/dream_trainer.h"

#include <chrono>
#include <algorithm>
#include <numeric>

#include "common/error.h"
#include "learner/gae.h"
#include "learner/ppo_epochs.h"
#include "worldmodel/device_random.h"

namespace graphworld {

namespace {

// Log-probabilities and entropies of `actions` under masked logits; masked
// entries are -inf and contribute 0 to the entropy.
std::pair<torch::Tensor, torch::Tensor> log_prob_and_entropy(const torch::Tensor& logits, const torch::Tensor& actions) {
  const torch::Tensor log_p = torch::log_softmax(logits, -1);
  const torch::Tensor p = log_p.exp();
  const torch::Tensor entropy = -(p * log_p.masked_fill(p == 0, 0.0)).sum(-1);
  return {log_p.gather(-1, actions.unsqueeze(-1)).squeeze(-1), entropy};
}

}  // namespace

DreamTrainer::DreamTrainer(const WorldModel& model, DreamController controller, const torch::Tensor& starts,
                           DreamTrainingOptions options)
    : options_(options), controller_(std::move(controller)), env_(model, starts, options.dream),
      rng_(options.ppo.seed), generator_(seeded_generator(env_.device(), options.ppo.seed + 1)) {
  if (options.horizon < 1) throw UsageError("dream training needs horizon >= 1");
  optimizer_ = std::make_unique<torch::optim::Adam>(controller_->parameters(),
                                                    torch::optim::AdamOptions(options.ppo.learning_rate));
}

DreamBatch collect_dream_batch(DreamEnv& env, DreamController& controller, int32_t horizon, torch::Generator& generator,
                               RewardKind paid) {
  if (paid != RewardKind::Incremental && paid != RewardKind::Final)
    throw UsageError("a dream pays its controller incremental or final rewards, not " + reward_kind_name(paid));
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> zs, hs, masks, actions, log_probs, values, rewards, dones;
  DreamBatch batch;
  batch.rows = env.batch();
  batch.steps = horizon;
  // Counted on the device and read once, with the batch: the steps never
  // wait for the host.
  torch::Tensor episodes = torch::zeros({}, torch::TensorOptions(env.device()).dtype(torch::kInt64));
  torch::Tensor return_sum = torch::zeros({}, torch::TensorOptions(env.device()).dtype(torch::kDouble));
  for (int32_t t = 0; t < horizon; ++t) {
    const ControllerOutput out = controller->forward(env.z(), env.hidden(), env.mask());
    const torch::Tensor action = sample_actions(out, generator);
    zs.push_back(env.z());
    hs.push_back(env.hidden());
    masks.push_back(env.mask());
    actions.push_back(action);
    log_probs.push_back(torch::log_softmax(out.logits, -1).gather(1, action.unsqueeze(1)).squeeze(1));
    values.push_back(out.value);
    const DreamStepResult r = env.step(action);
    // episode_return is 0 on rows that did not end: Final pays only at the end.
    rewards.push_back(paid == RewardKind::Final ? r.episode_return.to(r.reward.scalar_type()) : r.reward);
    dones.push_back(r.done);
    episodes += r.done.sum();
    return_sum += r.episode_return.sum().to(torch::kDouble);
  }
  env.check_actions();
  batch.episodes = episodes.item<int64_t>();
  batch.return_sum = return_sum.item<double>();
  // A batch is host memory: it is sent, and learned from, on the CPU.
  auto host = [](const torch::Tensor& t) { return t.to(torch::kCPU).contiguous(); };
  batch.bootstrap = host(controller->forward(env.z(), env.hidden(), env.mask()).value);
  batch.z = host(torch::cat(zs));
  batch.h = host(torch::cat(hs));
  batch.mask = host(torch::cat(masks));
  batch.action = host(torch::cat(actions));
  batch.log_prob = host(torch::cat(log_probs));
  batch.value = host(torch::cat(values));
  batch.reward = host(torch::cat(rewards));
  batch.done = host(torch::cat(dones));
  return batch;
}

torch::Tensor controller_rewards(const torch::Tensor& predicted, const torch::Tensor& action, int64_t noop,
                                 double step_cost) {
  const torch::Tensor reward = predicted.to(torch::kFloat);
  const torch::Tensor charge = (step_cost - reward).clamp(0.0, step_cost) * (action != noop).to(torch::kFloat);
  return reward - charge;
}

DreamUpdateReport learn_from_dream_batch(DreamController& controller, torch::optim::Optimizer& optimizer,
                                         const DreamBatch& batch, const PpoOptions& ppo, double step_cost,
                                         std::mt19937_64& rng) {
  const auto start = std::chrono::steady_clock::now();
  const int64_t t_len = batch.steps, b = batch.rows, n = t_len * b;
  DreamUpdateReport report;
  report.dream_steps = n;
  report.episodes = batch.episodes;
  report.mean_return = batch.episodes > 0 ? batch.return_sum / static_cast<double>(batch.episodes) : 0.0;

  // GAE per row, with the learner's estimator; samples stay step-major.
  const int64_t noop = batch.mask.size(1) - 1;
  const torch::Tensor reward = controller_rewards(batch.reward, batch.action, noop, step_cost).contiguous();
  const torch::Tensor value = batch.value.to(torch::kFloat).contiguous();
  const torch::Tensor done = batch.done.to(torch::kUInt8).contiguous(), boot = batch.bootstrap.to(torch::kFloat).contiguous();
  const torch::Tensor old_log_prob = batch.log_prob.to(torch::kFloat).contiguous();
  PpoSamples samples;
  samples.advantages.resize(static_cast<size_t>(n));
  samples.returns.resize(static_cast<size_t>(n));
  samples.old_log_prob.assign(old_log_prob.data_ptr<float>(), old_log_prob.data_ptr<float>() + n);
  samples.values.assign(value.data_ptr<float>(), value.data_ptr<float>() + n);
  const float* rp = reward.data_ptr<float>();
  const uint8_t* dp = done.data_ptr<uint8_t>();
  const float* bp = boot.data_ptr<float>();
  std::vector<float> r(static_cast<size_t>(t_len)), v(static_cast<size_t>(t_len));
  std::vector<uint8_t> d(static_cast<size_t>(t_len));
  for (int64_t j = 0; j < b; ++j) {
    for (int64_t t = 0; t < t_len; ++t) {
      r[static_cast<size_t>(t)] = rp[t * b + j];
      v[static_cast<size_t>(t)] = samples.values[static_cast<size_t>(t * b + j)];
      d[static_cast<size_t>(t)] = dp[t * b + j];
    }
    const GaeResult g = compute_gae(r, v, d, bp[j], static_cast<float>(ppo.gamma), static_cast<float>(ppo.gae_lambda));
    for (int64_t t = 0; t < t_len; ++t) {
      samples.advantages[static_cast<size_t>(t * b + j)] = g.advantages[static_cast<size_t>(t)];
      samples.returns[static_cast<size_t>(t * b + j)] = g.returns[static_cast<size_t>(t)];
    }
  }
  auto evaluate = [&](const std::vector<int64_t>& indices) {
    const torch::Tensor index = torch::tensor(indices);
    const ControllerOutput out = controller->forward(batch.z.index_select(0, index), batch.h.index_select(0, index),
                                                     batch.mask.index_select(0, index));
    auto [log_prob, entropy] = log_prob_and_entropy(out.logits, batch.action.index_select(0, index));
    return SampleEvaluation{log_prob, out.value, entropy};
  };
  report.ppo = run_ppo_epochs(ppo, std::move(samples), evaluate, optimizer, controller->parameters(), rng);
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

DreamUpdateReport DreamTrainer::update() {
  const auto start = std::chrono::steady_clock::now();
  const DreamBatch batch = collect_dream_batch(env_, controller_, options_.horizon, generator_, options_.dream_reward);
  DreamUpdateReport report = learn_from_dream_batch(controller_, *optimizer_, batch, options_.ppo, options_.step_cost, rng_);
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

std::vector<DreamEpisode> dream_greedy_episodes(const WorldModel& model, DreamController& controller,
                                                const torch::Tensor& starts_input, double tau, uint64_t seed) {
  torch::NoGradGuard no_grad;
  const int32_t max_steps = std::max(1, model.info().max_steps);
  const size_t count = static_cast<size_t>(starts_input.size(0));
  DreamOptions options;
  options.batch = starts_input.size(0);
  options.tau = tau;
  options.max_steps = max_steps;
  options.seed = seed;
  DreamEnv env(model, starts_input, options);
  std::vector<DreamEpisode> episodes(count);
  std::vector<bool> finished(count, false);
  size_t left = count;
  for (int32_t t = 0; t < max_steps && left > 0; ++t) {
    const torch::Tensor action = controller->forward(env.z(), env.hidden(), env.mask()).logits.argmax(1);
    const DreamStepResult r = env.step(action);
    for (size_t i = 0; i < count; ++i) {
      if (finished[i]) continue;
      episodes[i].xfers.push_back(model.vocabulary().xfer(static_cast<int32_t>(action[static_cast<int64_t>(i)].item<int64_t>())));
      if (!r.done[static_cast<int64_t>(i)].item<bool>()) continue;
      episodes[i].predicted_reduction = r.episode_return[static_cast<int64_t>(i)].item<double>();
      finished[i] = true;
      --left;
    }
  }
  return episodes;
}

}  // namespace graphworld
