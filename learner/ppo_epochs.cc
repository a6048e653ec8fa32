#include "learner/ppo_epochs.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "common/error.h"
#include "learner/data_parallel_ops.h"
#include "learner/gae.h"
#include "learner/ppo_loss.h"

namespace graphworld {
namespace {

double variance(const std::vector<float>& v) {
  if (v.empty()) return 0;
  const double mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  double sum = 0;
  for (float x : v) sum += (x - mean) * (x - mean);
  return sum / static_cast<double>(v.size());
}

double explained_variance(const std::vector<float>& returns, const std::vector<float>& values) {
  if (values.size() != returns.size()) return 0;
  std::vector<float> residual(returns.size());
  for (size_t k = 0; k < returns.size(); ++k) residual[k] = returns[k] - values[k];
  const double var_returns = variance(returns);
  return var_returns > 0 ? 1.0 - variance(residual) / var_returns : 0.0;
}

torch::Tensor picked(const std::vector<float>& all, const std::vector<int64_t>& indices, const torch::Device& device) {
  std::vector<float> out(indices.size());
  for (size_t k = 0; k < indices.size(); ++k) out[k] = all[static_cast<size_t>(indices[k])];
  return torch::from_blob(out.data(), {static_cast<int64_t>(out.size())}).clone().to(device);
}

}  // namespace

UpdateStats run_ppo_epochs(const PpoOptions& options, PpoSamples samples, const EvaluateSamples& evaluate,
                           torch::optim::Optimizer& optimizer, const std::vector<torch::Tensor>& parameters,
                           std::mt19937_64& shuffle_rng, DataParallelGroup* group) {
  const auto n = static_cast<int64_t>(samples.advantages.size());
  if (n == 0) throw UsageError("PPO update: the batch holds no samples");
  if (samples.returns.size() != samples.advantages.size() || samples.old_log_prob.size() != samples.advantages.size())
    throw UsageError("PPO update: advantages, returns and log-probabilities differ in length");
  UpdateStats stats;
  stats.samples = n;
  stats.explained_variance = explained_variance(samples.returns, samples.values);
  if (options.normalize_advantages) normalize_advantages(samples.advantages);

  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  const int64_t minibatch_size = std::max<int64_t>(1, options.minibatch_size);
  const int64_t ranks = group ? group->size() : 1, rank = group ? group->rank() : 0;
  const PpoCoefficients coefficients{options.clip, options.value_coef, options.entropy_coef};
  int64_t steps_taken = 0;
  for (int32_t epoch = 0; epoch < options.epochs; ++epoch) {
    std::shuffle(order.begin(), order.end(), shuffle_rng);
    for (int64_t begin = 0; begin < n; begin += minibatch_size) {
      const int64_t end = std::min(n, begin + minibatch_size);
      // Data-parallel: this rank's contiguous share [lo, hi) of the minibatch.
      const int64_t size = end - begin;
      const int64_t lo = begin + size * rank / ranks, hi = begin + size * (rank + 1) / ranks;
      const std::vector<int64_t> share(order.begin() + lo, order.begin() + hi);
      optimizer.zero_grad();
      PpoLoss loss;
      if (!share.empty()) {
        const SampleEvaluation e = evaluate(share);
        const torch::Device device = e.value.device();
        loss = ppo_loss(e.log_prob, picked(samples.old_log_prob, share, device),
                        picked(samples.advantages, share, device), e.value, picked(samples.returns, share, device),
                        e.entropy, coefficients);
        if (ranks == 1) {
          loss.total.backward();
        } else {
          // Each rank's mean weighted by its share: the ranks' sum is the
          // whole minibatch's mean, as one learner computes it.
          (loss.total * (static_cast<double>(share.size()) / static_cast<double>(size))).backward();
        }
      }
      if (ranks > 1) {
        all_reduce_gradients(*group, parameters);
        const double weight = static_cast<double>(share.size()) / static_cast<double>(size);
        double sums[5] = {loss.policy * weight, loss.value * weight, loss.entropy * weight, loss.approx_kl * weight,
                          loss.clip_fraction * weight};
        group->all_reduce_sum(sums, 5);
        loss.policy = sums[0];
        loss.value = sums[1];
        loss.entropy = sums[2];
        loss.approx_kl = sums[3];
        loss.clip_fraction = sums[4];
      }
      const double grad_norm = torch::nn::utils::clip_grad_norm_(parameters, options.max_grad_norm);
      // A non-finite loss or gradient would poison every parameter (and,
      // through them, every later rollout): the step is skipped and counted.
      if (!std::isfinite(grad_norm) || !std::isfinite(loss.policy) || !std::isfinite(loss.value)) {
        ++stats.skipped_minibatches;
        continue;
      }
      optimizer.step();
      stats.grad_norm += grad_norm;
      stats.policy_loss += loss.policy;
      stats.value_loss += loss.value;
      stats.entropy += loss.entropy;
      stats.approx_kl += loss.approx_kl;
      stats.clip_fraction += loss.clip_fraction;
      ++steps_taken;
    }
  }
  const auto count = static_cast<double>(std::max<int64_t>(1, steps_taken));
  stats.policy_loss /= count;
  stats.value_loss /= count;
  stats.entropy /= count;
  stats.approx_kl /= count;
  stats.clip_fraction /= count;
  stats.grad_norm /= count;
  return stats;
}

}  // namespace graphworld
