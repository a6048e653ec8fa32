#include "learner/policy_benchmark.h"

#include <memory>
#include <random>
#include <thread>

#include "common/error.h"
#include "common/latency.h"
#include "common/stopwatch.h"
#include "learner/compute_threads.h"
#include "learner/flat_adam.h"
#include "learner/flat_parameters.h"
#include "learner/padded_ppo_gradients.h"
#include "learner/policy_module.h"
#include "learner/ppo_epochs.h"
#include "common/worker_threads.h"

namespace graphworld {
namespace {

// Floating-point operations of the matrix products in one PPO step on
// `batch` (the elementwise work and the row gathers are left out: they are
// memory-bound). A product of an [r, i] by an [i, o] matrix is 2 r i o;
// backward forms the gradients of both operands, twice the forward work,
// except for the input layers, whose inputs need none.
double ppo_step_flops(const ObservationBatch& batch, int64_t candidates, const PolicyNetworkConfig& c) {
  const double h = c.hidden, nodes = static_cast<double>(batch.num_nodes), edges = static_cast<double>(batch.num_edges),
               graphs = batch.num_graphs, xfers = c.num_xfers + 1, cand = static_cast<double>(candidates);
  auto product = [](double rows, double in, double out) { return 2 * rows * in * out; };
  const double inputs = product(nodes, kNodeFeatureDim, h) + product(edges, kEdgeFeatureDim, h) +
                        product(graphs, kGlobalFeatureDim, h);
  const double edge_mlp = product(edges, h, h) + 2 * product(nodes, h, h) + product(graphs, h, h) + product(edges, h, h);
  const double node_mlp = 3 * product(nodes, h, h) + product(graphs, h, h) + product(nodes, h, h);
  const double global_mlp = product(graphs, 3 * h, h) + product(graphs, h, h);
  const double heads = product(graphs, 2 * h, h) + product(graphs, h, xfers) +  // xfer
                       product(cand, 4 * h, h) + product(cand, h, 1) +          // location
                       product(graphs, 2 * h, h) + product(graphs, h, 1);       // value
  return 2 * inputs + 3 * (c.message_rounds * (edge_mlp + node_mlp + global_mlp) + heads);
}

// PPO minibatch steps over one batch, one per call: as the learner takes
// them (`workers` copies of the network, flat buffers, learner/ppo_epochs.h)
// or, `previous`, as it took them before (one network, separate parameter
// tensors, LibTorch's Adam and clipping; the caller activates AtenRowOps).
class PpoStepper {
 public:
  PpoStepper(PolicyNetwork& network, const std::vector<const Observation*>& batch, const std::vector<Action>& actions,
             const PpoSamples& samples, int32_t workers, bool previous, bool cuda_graphs = false)
      : batch_(batch), actions_(actions), samples_(samples), threads_(workers) {
    PolicyModule& module = network.impl().module;
    for (int32_t w = 1; w < workers; ++w) {
      copies_.push_back(seeded_module(network.config()));
      copies_.back()->to(network.impl().device);
    }
    replicas_.threads = &threads_;
    parameters_ = module->parameters();
    for (int32_t w = 0; w < workers; ++w) {
      PolicyModule m = w == 0 ? module : copies_[static_cast<size_t>(w - 1)];
      replicas_.parameters.push_back(m->parameters());
      if (!previous) {
        flat_.push_back(std::make_unique<FlatParameters>(m->parameters()));
        replicas_.flat.push_back(flat_.back().get());
      }
      replicas_.evaluate.push_back([&batch, &actions, m](const std::vector<int64_t>& indices) mutable {
        std::vector<const Observation*> observations;
        std::vector<Action> chosen;
        for (int64_t i : indices) {
          observations.push_back(batch[static_cast<size_t>(i)]);
          chosen.push_back(actions[static_cast<size_t>(i)]);
        }
        const ActionEvaluation e = evaluate_actions(m, observations, chosen);
        return SampleEvaluation{e.log_prob, e.value, e.entropy};
      });
    }
    for (size_t k = 0; k < batch.size(); ++k) all_.push_back(static_cast<int64_t>(k));
    adam_ = std::make_unique<torch::optim::Adam>(parameters_, torch::optim::AdamOptions(3e-4));
    if (!flat_.empty()) flat_adam_ = std::make_unique<FlatAdam>(*adam_, *flat_[0]);
    if (cuda_graphs)
      padded_ = std::make_unique<PaddedPpoGradients>(module, *flat_[0], static_cast<int64_t>(batch.size()), true);
  }

  void step() {
    if (flat_.empty()) adam_->zero_grad();
    if (padded_)
      padded_->gradients([this](int64_t i) { return std::make_pair(batch_[static_cast<size_t>(i)], actions_[static_cast<size_t>(i)]); },
                         samples_, all_, 1.0, PpoCoefficients{});
    else
      minibatch_gradients(replicas_, samples_, all_, 1.0, PpoCoefficients{});
    if (flat_.empty()) {
      torch::nn::utils::clip_grad_norm_(parameters_, 0.5);
      adam_->step();
    } else {
      clip_flat_gradients(*flat_[0], 0.5);
      flat_adam_->step();
    }
  }

 private:
  const std::vector<const Observation*>& batch_;
  const std::vector<Action>& actions_;
  const PpoSamples& samples_;
  std::vector<PolicyModule> copies_;
  WorkerThreads threads_;
  PpoReplicas replicas_;
  std::vector<std::unique_ptr<FlatParameters>> flat_;
  std::vector<torch::Tensor> parameters_;
  std::vector<int64_t> all_;
  std::unique_ptr<torch::optim::Adam> adam_;
  std::unique_ptr<FlatAdam> flat_adam_;
  std::unique_ptr<PaddedPpoGradients> padded_;
};

}  // namespace

PolicyBenchmarkResult benchmark_policy(const std::vector<Observation>& observations,
                                       const PolicyBenchmarkOptions& options) {
  if (observations.empty()) throw UsageError("policy benchmark: no observations");
  if (options.minibatch < 1 || options.repeats < 1) throw UsageError("policy benchmark: minibatch and repeats must be >= 1");
  PolicyNetwork net(options.network);
  net.to_device(options.device);
  const bool on_gpu = !torch::Device(options.device).is_cpu();
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
  const int32_t cores = options.train_threads > 0 ? options.train_threads
                                                  : static_cast<int32_t>(std::max(1u, std::thread::hardware_concurrency()));
  {
    ComputeThreads threads(cores);
    const LatencyStats batched = measure_latency([&] { net.act(batch, rng); }, 1, options.repeats);
    r.batched_ms_per_observation = batched.median_ms / options.minibatch;
  }

  // PPO minibatch steps on the actions the policy itself samples, with
  // made-up advantages and returns: the arithmetic of an update, not its
  // outcome.
  std::vector<Action> actions;
  PpoSamples samples;
  std::normal_distribution<float> normal;
  for (const PolicyStep& s : net.act(batch, rng)) {
    actions.push_back(s.action);
    samples.old_log_prob.push_back(s.log_prob);
    samples.advantages.push_back(normal(rng));
    samples.returns.push_back(normal(rng));
  }
  r.workers = options.cuda_graphs ? 1 : options.workers > 0 ? options.workers : on_gpu ? 1 : cores;
  // The two learners take turns in blocks of steps, each on a network of
  // its own from the same initial parameters, so a slower or faster spell
  // of a shared machine falls on both alike. A block's first step is not
  // timed: it wakes that learner's threads after the other's turn.
  const int32_t worker_threads = on_gpu ? cores : std::max(1, cores / r.workers);
  PpoStepper now(net, batch, actions, samples, r.workers, /*previous=*/false, options.cuda_graphs);
  std::unique_ptr<PolicyNetwork> before_net;
  std::unique_ptr<PpoStepper> before;
  if (options.reference) {
    before_net = std::make_unique<PolicyNetwork>(options.network);
    before_net->to_device(options.device);
    before = std::make_unique<PpoStepper>(*before_net, batch, actions, samples, 1, /*previous=*/true);
  }
  constexpr int32_t kBlock = 5;
  std::vector<double> now_ms, before_ms;
  while (static_cast<int32_t>(now_ms.size()) < options.repeats) {
    {
      // Each worker runs LibTorch on one thread, so together they use
      // `workers` cores and no more.
      ComputeThreads threads(worker_threads);
      for (int32_t k = 0; k < kBlock; ++k) {
        Stopwatch clock;
        now.step();
        if (k > 0) now_ms.push_back(clock.elapsed_ms());
      }
    }
    if (before) {
      ComputeThreads threads(cores);
      AtenRowOps previous_kernels;
      for (int32_t k = 0; k < kBlock; ++k) {
        Stopwatch clock;
        before->step();
        if (k > 0) before_ms.push_back(clock.elapsed_ms());
      }
    }
  }
  r.ppo_step_ms = percentile(now_ms, 0.5);
  r.ppo_samples_per_s = 1000.0 * options.minibatch / r.ppo_step_ms;
  if (before) r.reference_ppo_samples_per_s = 1000.0 * options.minibatch / percentile(before_ms, 0.5);
  std::vector<int32_t> xfers;
  for (const Action& a : actions) xfers.push_back(a.xfer);
  const ObservationBatch joined = batch_observations(batch);
  const LocationCandidates candidates = location_candidates(batch, joined, xfers);
  r.ppo_gflop_per_step = ppo_step_flops(joined, candidates.num_candidates, options.network) / 1e9;
  r.ppo_gflops = r.ppo_gflop_per_step / (r.ppo_step_ms / 1000.0);
  return r;
}

}  // namespace graphworld
