#include "learner/ppo_epochs.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "common/error.h"
#include "learner/data_parallel_ops.h"
#include "learner/flat_adam.h"
#include "learner/flat_parameters.h"
#include "learner/gae.h"
#include "learner/ppo_loss.h"
#include "common/worker_threads.h"

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

void add_weighted(PpoLoss& sum, const PpoLoss& part, double weight) {
  sum.policy += part.policy * weight;
  sum.value += part.value * weight;
  sum.entropy += part.entropy * weight;
  sum.approx_kl += part.approx_kl * weight;
  sum.clip_fraction += part.clip_fraction * weight;
}

void zero_gradients(const std::vector<torch::Tensor>& parameters) {
  for (const torch::Tensor& p : parameters)
    if (p.grad().defined()) {
      p.grad().detach_();
      p.grad().zero_();
    }
}

// Whether every replica's parameters are one intact flat buffer.
bool all_flat(const PpoReplicas& replicas) {
  if (replicas.flat.size() != replicas.parameters.size()) return false;
  for (const FlatParameters* f : replicas.flat)
    if (!f || !f->intact()) return false;
  return true;
}

// Where replica r's contiguous part of `indices` begins (bounds[r]) and
// ends (bounds[r + 1]): equal counts, or with `cost`, parts of about equal
// total cost (a sample's graph size), so no worker waits long for another.
std::vector<int64_t> part_bounds(const std::vector<int64_t>& indices, int64_t parts,
                                 const std::function<double(int64_t)>& cost) {
  const auto size = static_cast<int64_t>(indices.size());
  std::vector<int64_t> bounds(static_cast<size_t>(parts + 1), size);
  bounds[0] = 0;
  if (!cost) {
    for (int64_t r = 1; r < parts; ++r) bounds[static_cast<size_t>(r)] = size * r / parts;
    return bounds;
  }
  std::vector<double> before(static_cast<size_t>(size + 1), 0.0);  // cost of indices[0, k)
  for (int64_t k = 0; k < size; ++k)
    before[static_cast<size_t>(k + 1)] = before[static_cast<size_t>(k)] + std::max(0.0, cost(indices[static_cast<size_t>(k)]));
  int64_t k = 0;
  for (int64_t r = 1; r < parts; ++r) {
    const double target = before.back() * static_cast<double>(r) / static_cast<double>(parts);
    while (k < size && before[static_cast<size_t>(k + 1)] <= target) ++k;
    // The cut nearer the target, never before the previous one.
    if (k < size && target - before[static_cast<size_t>(k)] > before[static_cast<size_t>(k + 1)] - target) ++k;
    bounds[static_cast<size_t>(r)] = std::max(k, bounds[static_cast<size_t>(r - 1)]);
  }
  return bounds;
}

}  // namespace

EvaluateSamples evaluate_rollout_steps(PolicyModule module, const std::vector<const RolloutStep*>& steps) {
  return [module, &steps](const std::vector<int64_t>& indices) mutable {
    std::vector<const Observation*> observations;
    std::vector<Action> actions;
    for (int64_t i : indices) {
      observations.push_back(&steps[static_cast<size_t>(i)]->observation);
      actions.push_back(steps[static_cast<size_t>(i)]->action);
    }
    const ActionEvaluation e = evaluate_actions(module, observations, actions);
    return SampleEvaluation{e.log_prob, e.value, e.entropy};
  };
}

PpoLoss minibatch_gradients(const PpoReplicas& replicas, const PpoSamples& samples,
                            const std::vector<int64_t>& indices, double weight,
                            const PpoCoefficients& coefficients) {
  const auto count = static_cast<int64_t>(replicas.evaluate.size());
  if (count < 1 || replicas.parameters.size() != replicas.evaluate.size())
    throw UsageError("PPO update: every replica needs an evaluation and its parameters");
  if (count > 1 && (!replicas.threads || replicas.threads->count() != count))
    throw UsageError("PPO update: " + std::to_string(count) + " replicas need as many worker threads");
  const std::vector<torch::Tensor>& main = replicas.parameters[0];
  const bool flat = all_flat(replicas);
  {
    torch::NoGradGuard no_grad;
    for (int64_t r = 1; r < count; ++r) {
      if (flat) {
        replicas.flat[static_cast<size_t>(r)]->values().copy_(replicas.flat[0]->values());
        continue;
      }
      const std::vector<torch::Tensor>& copy = replicas.parameters[static_cast<size_t>(r)];
      for (size_t k = 0; k < main.size(); ++k) copy[k].copy_(main[k]);
    }
  }
  const auto size = static_cast<int64_t>(indices.size());
  const std::vector<int64_t> bounds = part_bounds(indices, count, replicas.sample_cost);
  std::vector<PpoLoss> parts(static_cast<size_t>(count));
  auto work = [&](int32_t r) {
    if (flat) replicas.flat[static_cast<size_t>(r)]->gradients().zero_();
    else zero_gradients(replicas.parameters[static_cast<size_t>(r)]);
    const int64_t lo = bounds[static_cast<size_t>(r)], hi = bounds[static_cast<size_t>(r) + 1];
    if (lo == hi) return;
    const std::vector<int64_t> part(indices.begin() + lo, indices.begin() + hi);
    const SampleEvaluation e = replicas.evaluate[static_cast<size_t>(r)](part);
    const torch::Device device = e.value.device();
    PpoLoss loss = ppo_loss(e.log_prob, picked(samples.old_log_prob, part, device),
                            picked(samples.advantages, part, device), e.value, picked(samples.returns, part, device),
                            e.entropy, coefficients);
    // Each part's mean weighted by its share: the parts' sum is the mean
    // over `indices`, as one network computes it.
    const double share = weight * static_cast<double>(hi - lo) / static_cast<double>(size);
    if (share == 1.0) loss.total.backward();
    else (loss.total * share).backward();
    loss.total = torch::Tensor();
    parts[static_cast<size_t>(r)] = loss;
  };
  if (count == 1) work(0);
  else replicas.threads->run(work);
  PpoLoss sum;
  for (int64_t r = 0; r < count; ++r) {
    const int64_t lo = bounds[static_cast<size_t>(r)], hi = bounds[static_cast<size_t>(r) + 1];
    if (size > 0) add_weighted(sum, parts[static_cast<size_t>(r)], weight * static_cast<double>(hi - lo) / static_cast<double>(size));
  }
  torch::NoGradGuard no_grad;
  for (int64_t r = 1; r < count; ++r) {
    if (flat) {
      replicas.flat[0]->gradients().add_(replicas.flat[static_cast<size_t>(r)]->gradients());
      continue;
    }
    const std::vector<torch::Tensor>& copy = replicas.parameters[static_cast<size_t>(r)];
    for (size_t k = 0; k < main.size(); ++k) {
      const torch::Tensor& g = copy[k].grad();
      if (!g.defined()) continue;
      if (main[k].grad().defined()) main[k].mutable_grad().add_(g);
      else main[k].mutable_grad() = g.clone();
    }
  }
  return sum;
}

UpdateStats run_ppo_epochs(const PpoOptions& options, PpoSamples samples, const EvaluateSamples& evaluate,
                           torch::optim::Optimizer& optimizer, const std::vector<torch::Tensor>& parameters,
                           std::mt19937_64& shuffle_rng, DataParallelGroup* group) {
  PpoReplicas one;
  one.evaluate.push_back(evaluate);
  one.parameters.push_back(parameters);
  return run_ppo_epochs(options, std::move(samples), one, optimizer, shuffle_rng, group);
}

UpdateStats run_ppo_epochs(const PpoOptions& options, PpoSamples samples, const PpoReplicas& replicas,
                           torch::optim::Optimizer& optimizer, std::mt19937_64& shuffle_rng,
                           DataParallelGroup* group) {
  const auto n = static_cast<int64_t>(samples.advantages.size());
  if (n == 0) throw UsageError("PPO update: the batch holds no samples");
  if (samples.returns.size() != samples.advantages.size() || samples.old_log_prob.size() != samples.advantages.size())
    throw UsageError("PPO update: advantages, returns and log-probabilities differ in length");
  UpdateStats stats;
  stats.samples = n;
  stats.explained_variance = explained_variance(samples.returns, samples.values);
  if (options.normalize_advantages) normalize_advantages(samples.advantages);

  const std::vector<torch::Tensor>& parameters = replicas.parameters.at(0);
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
      const bool flat = all_flat(replicas);
      if (flat) replicas.flat[0]->gradients().zero_();
      else optimizer.zero_grad();
      PpoLoss loss;
      if (!share.empty()) {
        const double weight = static_cast<double>(share.size()) / static_cast<double>(size);
        loss = replicas.padded ? replicas.padded(samples, share, weight, coefficients)
                               : minibatch_gradients(replicas, samples, share, weight, coefficients);
      }
      if (ranks > 1) {
        all_reduce_gradients(*group, parameters);
        double sums[5] = {loss.policy, loss.value, loss.entropy, loss.approx_kl, loss.clip_fraction};
        group->all_reduce_sum(sums, 5);
        loss.policy = sums[0];
        loss.value = sums[1];
        loss.entropy = sums[2];
        loss.approx_kl = sums[3];
        loss.clip_fraction = sums[4];
      }
      const double grad_norm = flat ? clip_flat_gradients(*replicas.flat[0], options.max_grad_norm)
                                    : clip_gradients(parameters, options.max_grad_norm);
      // A non-finite loss or gradient would poison every parameter (and,
      // through them, every later rollout): the step is skipped and counted.
      if (!std::isfinite(grad_norm) || !std::isfinite(loss.policy) || !std::isfinite(loss.value)) {
        ++stats.skipped_minibatches;
        continue;
      }
      if (flat && replicas.flat_adam) replicas.flat_adam->step();
      else optimizer.step();
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
