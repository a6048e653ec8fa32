// The learner's fast path computes what the previous one computed: its row
// kernels (learner/segment_ops.h) equal ATen's index_select and index_add,
// values and gradients, and a PPO minibatch shared by several worker
// threads, each with its own copy of the network (learner/ppo_epochs.h),
// leaves the gradients one network with ATen's kernels leaves, to a relative
// 1e-4, for hidden widths with and without a specialised kernel; and a
// learner restored from its checkpoint goes on exactly as it would have.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <random>
#include <stdexcept>

#include "env/cost/analytic_cost_model.h"
#include "env/gym/graph_env.h"
#include "env/zoo/zoo.h"
#include "learner/policy_module.h"
#include "learner/ppo_epochs.h"
#include "learner/ppo_learner.h"
#include "learner/residual_norm.h"
#include "learner/segment_ops.h"
#include "common/worker_threads.h"
#include "tests/learner/ppo_minibatch.h"
#include "tests/learner/training_fixture.h"

namespace graphworld {
namespace {

using testing::expect_same_gradient;
using testing::Minibatch;

// max |a - b| over max |b|, the tensors' relative difference.
double relative_difference(const torch::Tensor& a, const torch::Tensor& b) {
  const double scale = b.abs().max().item<double>();
  const double diff = (a - b).abs().max().item<double>();
  return scale > 0 ? diff / scale : diff;
}

TEST(SegmentOps, RowKernelsEqualAtenWithGradients) {
  torch::manual_seed(5);
  const torch::Tensor index = torch::randint(0, 7, {40}, torch::kInt64);
  const torch::Tensor order = torch::randint(0, 40, {25}, torch::kInt64);
  for (int64_t width : {5, 32}) {
    const torch::Tensor rows = torch::randn({40, width});
    const torch::Tensor small = torch::randn({7, width});
    const torch::Tensor bias = torch::randn({width});
    const torch::Tensor up = torch::randn({40, width});
    for (bool relu : {false, true}) {
      torch::Tensor outs[2];
      std::vector<torch::Tensor> grads[2];
      for (int aten = 0; aten < 2; ++aten) {
        std::unique_ptr<AtenRowOps> reference;
        if (aten) reference = std::make_unique<AtenRowOps>();
        torch::Tensor r = rows.clone().requires_grad_(true), s = small.clone().requires_grad_(true),
                      b = bias.clone().requires_grad_(true);
        const torch::Tensor summed = segment_sum(r, index, 7);                       // [7, w]
        const torch::Tensor gathered = gather_rows(r, order);                        // [25, w]
        const torch::Tensor layer = gathered_sum({s, r}, {index, torch::Tensor()}, b, 40, relu);  // [40, w]
        outs[aten] = torch::cat({summed.flatten(), gathered.flatten(), layer.flatten()});
        (summed.pow(2).sum() + gathered.sin().sum() + (layer * up).sum()).backward();
        grads[aten] = {r.grad(), s.grad(), b.grad()};
      }
      EXPECT_LT(relative_difference(outs[0], outs[1]), 1e-6) << "width " << width << " relu " << relu;
      for (size_t k = 0; k < grads[0].size(); ++k)
        EXPECT_LT(relative_difference(grads[0][k], grads[1][k]), 1e-6) << "width " << width << " gradient " << k;
    }
  }
}

TEST(SegmentOps, AnIndexOutsideTheRowsIsAnErrorNamingIt) {
  const torch::Tensor rows = torch::randn({4, 8});
  const torch::Tensor bad = torch::tensor({0, 2, 9}, torch::kInt64);
  try {
    gather_rows(rows, bad);
    FAIL() << "no error";
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what()).find("index 9 at position 2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(segment_sum(torch::randn({3, 8}), bad, 4), c10::Error);
  EXPECT_THROW(gathered_sum({rows}, {bad}, torch::zeros({8}), 3), c10::Error);
}

TEST(ResidualLayerNorm, EqualsAtenLayerNormOfTheSumWithGradients) {
  torch::manual_seed(6);
  const torch::Tensor x = torch::randn({50, 32}), update = torch::randn({50, 32}), up = torch::randn({50, 32});
  const torch::Tensor weight = torch::randn({32}), bias = torch::randn({32});
  torch::Tensor outs[2];
  std::vector<torch::Tensor> grads[2];
  for (int aten = 0; aten < 2; ++aten) {
    std::unique_ptr<AtenRowOps> reference;
    if (aten) reference = std::make_unique<AtenRowOps>();
    torch::Tensor a = x.clone().requires_grad_(true), b = update.clone().requires_grad_(true),
                  w = weight.clone().requires_grad_(true), c = bias.clone().requires_grad_(true);
    outs[aten] = residual_layer_norm(a, b, w, c, 1e-5);
    (outs[aten] * up).sum().backward();
    grads[aten] = {a.grad(), b.grad(), w.grad(), c.grad()};
  }
  EXPECT_LT(relative_difference(outs[0], outs[1]), 1e-5);
  for (size_t k = 0; k < grads[0].size(); ++k) EXPECT_LT(relative_difference(grads[0][k], grads[1][k]), 1e-4) << k;
}

TEST(WorkerThreads, RunsEveryWorkerOnceAndRethrowsTheFirstError) {
  WorkerThreads threads(4);
  for (int round = 0; round < 50; ++round) {
    std::atomic<int> mask{0};
    threads.run([&](int32_t k) { mask |= 1 << k; });
    ASSERT_EQ(mask.load(), 0b1111) << "round " << round;
  }
  try {
    threads.run([](int32_t k) {
      if (k >= 2) throw std::runtime_error("worker " + std::to_string(k));
    });
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "worker 2");
  }
  std::atomic<int> after{0};
  threads.run([&](int32_t) { ++after; });
  EXPECT_EQ(after.load(), 4) << "the threads serve on after an error";
  EXPECT_THROW(WorkerThreads(0), UsageError);
}

// The minibatch's gradients with `workers` copies of `net`.
std::vector<torch::Tensor> gradients(PolicyNetwork& net, const Minibatch& batch, int32_t workers,
                                     bool balanced = false) {
  std::vector<PolicyModule> copies;
  for (int32_t w = 1; w < workers; ++w) copies.push_back(seeded_module(net.config()));
  WorkerThreads threads(workers);
  PpoReplicas replicas;
  replicas.threads = &threads;
  for (int32_t w = 0; w < workers; ++w) {
    PolicyModule module = w == 0 ? net.impl().module : copies[static_cast<size_t>(w - 1)];
    replicas.parameters.push_back(module->parameters());
    replicas.evaluate.push_back([&batch, module](const std::vector<int64_t>& indices) mutable {
      std::vector<const Observation*> observations;
      std::vector<Action> actions;
      for (int64_t i : indices) {
        observations.push_back(&batch.observations[static_cast<size_t>(i)]);
        actions.push_back(batch.actions[static_cast<size_t>(i)]);
      }
      const ActionEvaluation e = evaluate_actions(module, observations, actions);
      return SampleEvaluation{e.log_prob, e.value, e.entropy};
    });
  }
  // Parts of about equal graph size: the two models' graphs differ in
  // size, so the parts differ in sample count.
  if (balanced)
    replicas.sample_cost = [&batch](int64_t i) {
      return static_cast<double>(batch.observations[static_cast<size_t>(i)].graph.num_nodes);
    };
  std::vector<int64_t> indices(batch.observations.size());
  for (size_t k = 0; k < indices.size(); ++k) indices[k] = static_cast<int64_t>(indices.size() - 1 - k);
  minibatch_gradients(replicas, batch.samples, indices, 1.0, PpoCoefficients{});
  std::vector<torch::Tensor> out;
  for (const torch::Tensor& p : net.impl().module->parameters())
    out.push_back(p.grad().defined() ? p.grad().clone() : torch::zeros_like(p));
  return out;
}

TEST(PpoMinibatch, SharedByWorkersItsGradientsEqualOneNetworkWithAtenKernels) {
  for (int32_t hidden : {16, 32}) {
    PolicyNetworkConfig config;
    config.num_xfers = static_cast<int32_t>(testing::default_matcher().num_rules());
    config.hidden = hidden;
    config.message_rounds = 2;
    config.seed = 9;
    PolicyNetwork net(config);
    const Minibatch batch(net, 22);
    std::vector<torch::Tensor> before;
    {
      AtenRowOps reference;
      before = gradients(net, batch, 1);
    }
    std::vector<std::string> names;
    for (const auto& item : net.impl().module->named_parameters()) names.push_back(item.key());
    const std::string label = "hidden " + std::to_string(hidden);
    expect_same_gradient(before, gradients(net, batch, 3), names, label + ", parts of equal counts");
    expect_same_gradient(before, gradients(net, batch, 3, /*balanced=*/true), names, label + ", parts of equal size");
  }
}

}  // namespace
}  // namespace graphworld

namespace graphworld {
namespace {

std::vector<float> parameter_values(PolicyNetwork& net) {
  std::vector<float> out;
  for (const torch::Tensor& p : net.impl().module->parameters()) {
    const torch::Tensor c = p.detach().contiguous();
    out.insert(out.end(), c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
  }
  return out;
}

// A learner restored from a checkpoint takes up its Adam moments (which the
// flat step keeps in its own buffers) exactly: its next update is the one
// the learner that wrote the checkpoint makes.
TEST(PpoLearnerWorkers, ARestoredLearnerUpdatesAsTheOneThatWroteTheCheckpoint) {
  PolicyNetworkConfig network = testing::small_network(4).config();
  const std::vector<Rollout> rollouts = testing::squeezenet_rollouts(network, 3, 16, 12, 2, 2);
  std::vector<const Rollout*> first{&rollouts[0]}, second{&rollouts[1]};
  PpoOptions options;
  options.minibatch_size = 20;
  options.workers = 2;
  PpoLearner writer(network, options);
  writer.update(first);
  PpoLearner restored(network, options);
  restored.restore_state(writer.save_state(), "the checkpoint");
  EXPECT_EQ(parameter_values(restored.policy()), parameter_values(writer.policy()));
  writer.update(second);
  restored.update(second);
  EXPECT_EQ(parameter_values(restored.policy()), parameter_values(writer.policy()));
  EXPECT_NE(parameter_values(restored.policy()), parameter_values(PpoLearner(network, options).policy()));
}

}  // namespace
}  // namespace graphworld
