#include "learner/ppo_learner.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

#include "common/error.h"
#include "common/stopwatch.h"
#include "learner/data_parallel.h"
#include "learner/flat_adam.h"
#include "learner/flat_parameters.h"
#include "learner/gae.h"
#include "learner/padded_ppo_gradients.h"
#include "learner/policy_module.h"
#include "learner/ppo_epochs.h"
#include "learner/torch_bytes.h"
#include "common/worker_threads.h"

namespace graphworld {

struct PpoLearner::Optimizer {
  torch::optim::Adam adam;
};

struct PpoLearner::Replicas {
  std::vector<PolicyModule> modules;  // workers 1 ..; worker 0 is the policy itself
  WorkerThreads threads;
  std::vector<std::unique_ptr<FlatParameters>> flat;  // per worker, 0 the policy's
  std::unique_ptr<FlatAdam> adam;                     // on flat[0]
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
  if (o.workers < 1 || o.workers > 256) bad("workers must be in [1, 256]");
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
  replicas_.reset(new Replicas{{}, WorkerThreads(options_.workers), {}, nullptr});
  replicas_->flat.push_back(std::make_unique<FlatParameters>(policy_.impl().module->parameters()));
  replicas_->adam = std::make_unique<FlatAdam>(optimizer_->adam, *replicas_->flat[0]);
  for (int32_t w = 1; w < options_.workers; ++w) {
    replicas_->modules.push_back(seeded_module(network));
    replicas_->modules.back()->to(policy_.impl().device);
    replicas_->flat.push_back(std::make_unique<FlatParameters>(replicas_->modules.back()->parameters()));
  }
  if (options_.cuda_graphs) {
    if (network.location_rewards)
      throw UsageError("ppo.cuda_graphs does not take network.location_rewards: the padded minibatch has no place "
                       "for location rewards; switch one of them off");
    if (options_.workers != 1)
      throw UsageError("PPO option cuda_graphs takes one worker (ppo.workers 1): a GPU shares no minibatch");
    padded_ = std::make_unique<PaddedPpoGradients>(policy_.impl().module, *replicas_->flat[0],
                                                   options_.minibatch_size, /*cuda_graphs=*/true);
  }
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
  PpoSamples samples;
  for (const Rollout* rollout : rollouts)
    for (const RolloutSegment& segment : rollout->segments) {
      std::vector<float> rewards, values;
      std::vector<uint8_t> dones;
      for (const RolloutStep& s : segment.steps) {
        steps.push_back(&s);
        rewards.push_back(s.reward);
        values.push_back(s.value);
        dones.push_back(s.done ? 1 : 0);
        samples.old_log_prob.push_back(s.log_prob);
      }
      const GaeResult gae = compute_gae(rewards, values, dones, segment.bootstrap_value,
                                        static_cast<float>(options_.gamma), static_cast<float>(options_.gae_lambda));
      samples.advantages.insert(samples.advantages.end(), gae.advantages.begin(), gae.advantages.end());
      samples.returns.insert(samples.returns.end(), gae.returns.begin(), gae.returns.end());
      samples.values.insert(samples.values.end(), values.begin(), values.end());
    }
  if (steps.empty()) throw UsageError("PPO update: the rollouts hold no steps");

  PpoReplicas replicas;
  replicas.threads = &replicas_->threads;
  replicas.flat_adam = replicas_->adam.get();
  // A sample's work grows with its graph: nodes and edges.
  replicas.sample_cost = [&steps](int64_t i) {
    const GraphTuple& g = steps[static_cast<size_t>(i)]->observation.graph;
    return static_cast<double>(g.num_nodes) + static_cast<double>(g.num_edges);
  };
  for (int32_t w = 0; w < options_.workers; ++w) {
    PolicyModule& module = w == 0 ? policy_.impl().module : replicas_->modules[static_cast<size_t>(w - 1)];
    replicas.parameters.push_back(module->parameters());
    replicas.flat.push_back(replicas_->flat[static_cast<size_t>(w)].get());
    replicas.evaluate.push_back(evaluate_rollout_steps(module, steps));
  }
  if (padded_)
    replicas.padded = [this, &steps](const PpoSamples& s, const std::vector<int64_t>& indices, double weight,
                                     const PpoCoefficients& coefficients) {
      return padded_->gradients(PaddedPpoGradients::of_steps(steps), s, indices, weight, coefficients);
    };
  UpdateStats stats = run_ppo_epochs(options_, std::move(samples), replicas, optimizer_->adam, shuffle_rng_, group_);
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
