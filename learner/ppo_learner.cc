#include "learner/ppo_learner.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

#include "common/error.h"
#include "common/stopwatch.h"
#include "learner/gae.h"
#include "learner/policy_module.h"
#include "learner/data_parallel_ops.h"
#include "learner/ppo_loss.h"
#include "learner/torch_bytes.h"

namespace graphworld {

struct PpoLearner::Optimizer {
  torch::optim::Adam adam;
};

namespace {

void check_options(const PpoOptions& o) {
  auto bad = [](const std::string& what) { throw UsageError("PPO option " + what); };
  if (!(o.learning_rate > 0)) bad("learning_rate must be positive");
  if (o.epochs < 1) bad("epochs must be at least 1");
  if (o.minibatch_size < 1) bad("minibatch_size must be at least 1");
  if (!(o.gamma >= 0 && o.gamma <= 1)) bad("gamma must be in [0, 1]");
  if (!(o.gae_lambda >= 0 && o.gae_lambda <= 1)) bad("gae_lambda must be in [0, 1]");
  if (!(o.clip > 0 && o.clip < 1)) bad("clip must be in (0, 1)");
  if (!(o.max_grad_norm > 0)) bad("max_grad_norm must be positive");
}

double variance(const std::vector<float>& v) {
  if (v.empty()) return 0;
  const double mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  double sum = 0;
  for (float x : v) sum += (x - mean) * (x - mean);
  return sum / static_cast<double>(v.size());
}

// Archives load onto the CPU (learner/torch_bytes.h): Adam's moments go
// back beside the parameters they belong to.
void move_adam_state(torch::optim::Adam& adam, const torch::Device& device) {
  for (auto& entry : adam.state()) {
    auto& state = static_cast<torch::optim::AdamParamState&>(*entry.second);
    state.exp_avg(state.exp_avg().to(device));
    state.exp_avg_sq(state.exp_avg_sq().to(device));
    if (state.max_exp_avg_sq().defined()) state.max_exp_avg_sq(state.max_exp_avg_sq().to(device));
  }
}

}  // namespace

PpoLearner::PpoLearner(const PolicyNetworkConfig& network, const PpoOptions& options, const std::string& device)
    : options_(options), policy_(network), shuffle_rng_(options.seed) {
  check_options(options_);
  // Before Adam takes the parameters: its moments are made beside them.
  policy_.to_device(device);
  optimizer_ = std::make_unique<Optimizer>(Optimizer{torch::optim::Adam(
      policy_.impl().module->parameters(), torch::optim::AdamOptions(options_.learning_rate))});
}

PpoLearner::~PpoLearner() = default;

void PpoLearner::set_data_parallel(DataParallelGroup* group) {
  group_ = group;
  if (!group_) return;
  const torch::Device device(policy_.device());
  group_->use_nccl_for_gradients(device.is_cuda() ? std::max<int>(device.index(), 0) : -1);
}

UpdateStats PpoLearner::update(const std::vector<const Rollout*>& rollouts) {
  Stopwatch clock;
  // Flatten the steps, with GAE computed per segment (its own time order).
  std::vector<const RolloutStep*> steps;
  std::vector<float> advantages, returns, acting_values;
  for (const Rollout* rollout : rollouts)
    for (const RolloutSegment& segment : rollout->segments) {
      std::vector<float> rewards, values;
      std::vector<uint8_t> dones;
      for (const RolloutStep& s : segment.steps) {
        steps.push_back(&s);
        rewards.push_back(s.reward);
        values.push_back(s.value);
        dones.push_back(s.done ? 1 : 0);
      }
      const GaeResult gae = compute_gae(rewards, values, dones, segment.bootstrap_value,
                                        static_cast<float>(options_.gamma), static_cast<float>(options_.gae_lambda));
      advantages.insert(advantages.end(), gae.advantages.begin(), gae.advantages.end());
      returns.insert(returns.end(), gae.returns.begin(), gae.returns.end());
      acting_values.insert(acting_values.end(), values.begin(), values.end());
    }
  if (steps.empty()) throw UsageError("PPO update: the rollouts hold no steps");
  UpdateStats stats;
  stats.samples = static_cast<int64_t>(steps.size());
  {
    std::vector<float> residual(returns.size());
    for (size_t k = 0; k < returns.size(); ++k) residual[k] = returns[k] - acting_values[k];
    const double var_returns = variance(returns);
    stats.explained_variance = var_returns > 0 ? 1.0 - variance(residual) / var_returns : 0.0;
  }
  if (options_.normalize_advantages) normalize_advantages(advantages);

  PolicyModule& module = policy_.impl().module;
  torch::optim::Adam& adam = optimizer_->adam;
  const auto n = static_cast<int64_t>(steps.size());
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  int64_t minibatches = 0;
  const int64_t ranks = group_ ? group_->size() : 1, rank = group_ ? group_->rank() : 0;
  for (int32_t epoch = 0; epoch < options_.epochs; ++epoch) {
    std::shuffle(order.begin(), order.end(), shuffle_rng_);
    for (int64_t begin = 0; begin < n; begin += options_.minibatch_size) {
      const int64_t end = std::min(n, begin + options_.minibatch_size);
      // Data-parallel: this rank's contiguous share [lo, hi) of the minibatch.
      const int64_t size = end - begin;
      const int64_t lo = begin + size * rank / ranks, hi = begin + size * (rank + 1) / ranks;
      const int64_t m = hi - lo;
      std::vector<const Observation*> observations;
      std::vector<Action> actions;
      std::vector<float> old_lp(static_cast<size_t>(m)), adv(static_cast<size_t>(m)), ret(static_cast<size_t>(m));
      for (int64_t k = 0; k < m; ++k) {
        const auto i = static_cast<size_t>(order[static_cast<size_t>(lo + k)]);
        observations.push_back(&steps[i]->observation);
        actions.push_back(steps[i]->action);
        old_lp[static_cast<size_t>(k)] = steps[i]->log_prob;
        adv[static_cast<size_t>(k)] = advantages[i];
        ret[static_cast<size_t>(k)] = returns[i];
      }
      adam.zero_grad();
      PpoLoss loss;
      if (m > 0) {
        const ActionEvaluation e = evaluate_actions(module, observations, actions);
        const torch::Device device = e.value.device();
        loss = ppo_loss(e.log_prob, torch::from_blob(old_lp.data(), {m}).clone().to(device),
                        torch::from_blob(adv.data(), {m}).clone().to(device), e.value,
                        torch::from_blob(ret.data(), {m}).clone().to(device), e.entropy,
                        PpoCoefficients{options_.clip, options_.value_coef, options_.entropy_coef});
        if (ranks == 1) {
          loss.total.backward();
        } else {
          // Each rank's mean weighted by its share: the ranks' sum is the
          // whole minibatch's mean, as one learner computes it.
          (loss.total * (static_cast<double>(m) / static_cast<double>(size))).backward();
        }
      }
      if (ranks > 1) {
        all_reduce_gradients(*group_, module->parameters());
        const double share = static_cast<double>(m) / static_cast<double>(size);
        double sums[5] = {loss.policy * share, loss.value * share, loss.entropy * share, loss.approx_kl * share,
                          loss.clip_fraction * share};
        group_->all_reduce_sum(sums, 5);
        loss.policy = sums[0];
        loss.value = sums[1];
        loss.entropy = sums[2];
        loss.approx_kl = sums[3];
        loss.clip_fraction = sums[4];
      }
      const double grad_norm = torch::nn::utils::clip_grad_norm_(module->parameters(), options_.max_grad_norm);
      // A non-finite loss or gradient would poison every parameter (and,
      // through them, every later rollout): the step is skipped and counted.
      if (!std::isfinite(grad_norm) || !std::isfinite(loss.policy) || !std::isfinite(loss.value)) {
        ++stats.skipped_minibatches;
        continue;
      }
      stats.grad_norm += grad_norm;
      adam.step();
      stats.policy_loss += loss.policy;
      stats.value_loss += loss.value;
      stats.entropy += loss.entropy;
      stats.approx_kl += loss.approx_kl;
      stats.clip_fraction += loss.clip_fraction;
      ++minibatches;
    }
  }
  const auto count = static_cast<double>(std::max<int64_t>(1, minibatches));
  stats.policy_loss /= count;
  stats.value_loss /= count;
  stats.entropy /= count;
  stats.approx_kl /= count;
  stats.clip_fraction /= count;
  stats.grad_norm /= count;
  ++version_;
  stats.update_s = clock.elapsed_s();
  return stats;
}

std::string PpoLearner::save_state() const {
  torch::serialize::OutputArchive archive, policy, adam;
  // Host tensors, so a GPU learner's checkpoint loads anywhere.
  const torch::Device device = policy_.impl().device;
  if (device.is_cpu()) {
    policy_.impl().module->save(policy);
    optimizer_->adam.save(adam);
  } else {
    host_copy(policy_.impl())->save(policy);
    move_adam_state(optimizer_->adam, torch::kCPU);
    optimizer_->adam.save(adam);
    move_adam_state(optimizer_->adam, device);
  }
  archive.write("policy", policy);
  archive.write("adam", adam);
  std::ostringstream rng;
  rng << shuffle_rng_;
  archive.write("shuffle_rng", bytes_to_tensor(rng.str()));
  archive.write("version", torch::tensor({version_}, torch::kInt64));
  return archive_to_bytes(archive);
}

void PpoLearner::restore_state(const std::string& bytes, const std::string& what) {
  torch::serialize::InputArchive archive, policy, adam;
  archive_from_bytes(archive, bytes, what);
  if (!archive.try_read("policy", policy) || !archive.try_read("adam", adam))
    throw FormatError(what + ": no policy or optimiser state in it");
  std::istringstream rng_text(read_bytes(archive, "shuffle_rng", what));
  std::mt19937_64 rng;
  if (!(rng_text >> rng)) throw FormatError(what + ": the minibatch random stream is unreadable");
  const int64_t version = read_tensor(archive, "version", what).item<int64_t>();
  // Parameters go through PolicyNetwork::load_parameters' checks (shapes).
  PolicyModule loaded(policy_.config());
  try {
    loaded->load(policy);
    optimizer_->adam.load(adam);
    move_adam_state(optimizer_->adam, policy_.impl().device);
  } catch (const c10::Error& e) {
    throw FormatError(what + ": the saved network or optimiser does not fit this configuration (" +
                      std::string(e.what_without_backtrace()) + ")");
  }
  torch::NoGradGuard no_grad;
  auto to = policy_.impl().module->named_parameters();
  for (const auto& item : loaded->named_parameters()) to[item.key()].copy_(item.value());
  shuffle_rng_ = rng;
  version_ = version;
}

}  // namespace graphworld
