#include "learner/policy_benchmark.h"

#include <random>
#include <thread>

#include "common/error.h"
#include "common/latency.h"
#include "common/stopwatch.h"
#include "learner/compute_threads.h"
#include "learner/policy_module.h"
#include "learner/ppo_loss.h"

namespace graphworld {

PolicyBenchmarkResult benchmark_policy(const std::vector<Observation>& observations,
                                       const PolicyBenchmarkOptions& options) {
  if (observations.empty()) throw UsageError("policy benchmark: no observations");
  if (options.minibatch < 1 || options.repeats < 1) throw UsageError("policy benchmark: minibatch and repeats must be >= 1");
  PolicyNetwork net(options.network);
  PolicyBenchmarkResult r;
  r.parameters = net.num_parameters();
  std::mt19937_64 rng(options.seed);
  std::vector<const Observation*> batch;
  for (int32_t k = 0; k < options.minibatch; ++k) batch.push_back(&observations[k % observations.size()]);

  // As training runs it (learner/compute_threads.h); thread counts are set
  // for the measurements and restored after.
  keep_freed_tensor_memory();
  {
    ComputeThreads threads(options.inference_threads);
    const LatencyStats single = measure_latency([&] { net.act({batch[0]}, rng); }, 3, options.repeats);
    r.inference_median_ms = single.median_ms;
    r.inference_p90_ms = single.p90_ms;
  }
  ComputeThreads threads(options.train_threads > 0 ? options.train_threads
                                                   : static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  const LatencyStats batched = measure_latency([&] { net.act(batch, rng); }, 1, options.repeats);
  r.batched_ms_per_observation = batched.median_ms / options.minibatch;

  // PPO minibatch steps on the actions the policy itself samples, with
  // made-up advantages and returns: the arithmetic of an update, not its
  // outcome.
  std::vector<Action> actions;
  std::vector<float> old_log_probs;
  for (const PolicyStep& s : net.act(batch, rng)) {
    actions.push_back(s.action);
    old_log_probs.push_back(s.log_prob);
  }
  const torch::Tensor old_lp = torch::from_blob(old_log_probs.data(), {options.minibatch}).clone();
  const torch::Tensor advantages = torch::randn({options.minibatch});
  const torch::Tensor returns = torch::randn({options.minibatch});
  PolicyModule& module = net.impl().module;
  torch::optim::Adam adam(module->parameters(), torch::optim::AdamOptions(3e-4));
  const LatencyStats train = measure_latency(
      [&] {
        adam.zero_grad();
        const ActionEvaluation e = evaluate_actions(module, batch, actions);
        const PpoLoss loss = ppo_loss(e.log_prob, old_lp, advantages, e.value, returns, e.entropy, PpoCoefficients{});
        loss.total.backward();
        torch::nn::utils::clip_grad_norm_(module->parameters(), 0.5);
        adam.step();
      },
      1, options.repeats);
  r.train_step_ms = train.median_ms;
  r.train_samples_per_s = 1000.0 * options.minibatch / train.median_ms;
  return r;
}

}  // namespace graphworld
