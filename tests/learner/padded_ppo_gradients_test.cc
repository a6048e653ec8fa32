// The padded minibatch path of the PPO learner (learner/padded_minibatch.h,
// learner/padded_ppo_gradients.h), which a GPU replays from a CUDA graph:
// its layout puts every padded row where it changes nothing, and its
// gradients and loss figures equal minibatch_gradients' on the same samples,
// whatever the padding, the weight or the minibatch's order. Run eagerly on
// the CPU here; on a GPU the same work replayed from a CUDA graph is
// compared with the eager one (skipped where there is no GPU).
#include <gtest/gtest.h>

#include <torch/cuda.h>

#include <numeric>
#include <string>

#include "common/error.h"
#include "learner/cuda_graph_work.h"
#include "learner/flat_parameters.h"
#include "learner/padded_minibatch.h"
#include "learner/padded_ppo_gradients.h"
#include "learner/ppo_learner.h"
#include "tests/learner/ppo_minibatch.h"
#include "tests/learner/training_fixture.h"

namespace graphworld {
namespace {

using testing::expect_same_gradient;
using testing::Minibatch;

TEST(PaddedMinibatch, CapacitiesClimbALadderOfQuarterSteps) {
  EXPECT_EQ(capacity_step(1), 1);
  EXPECT_EQ(capacity_step(3), 3);
  EXPECT_EQ(capacity_step(4), 4);
  EXPECT_EQ(capacity_step(9), 10);
  EXPECT_EQ(capacity_step(17), 20);
  EXPECT_EQ(capacity_step(1000), 1024);
  EXPECT_EQ(capacity_step(1025), 1280);
  EXPECT_EQ(capacity_step(1537), 1792);
  for (int64_t n = 1; n < 20000; ++n) {
    const int64_t c = capacity_step(n);
    ASSERT_GE(c, n);
    ASSERT_LE(static_cast<double>(c), 1.25 * static_cast<double>(n) + 1) << n;
    ASSERT_EQ(capacity_step(c), c) << "a step is its own capacity";
  }
}

// The samples of `batch` at `indices`, with their candidates.
struct Union {
  std::vector<const Observation*> observations;
  std::vector<Action> actions;
  ObservationBatch batch;
  LocationCandidates candidates;
  Union(const Minibatch& m, const std::vector<int64_t>& indices) {
    std::vector<int32_t> xfers;
    for (int64_t i : indices) {
      observations.push_back(&m.observations[static_cast<size_t>(i)]);
      actions.push_back(m.actions[static_cast<size_t>(i)]);
      xfers.push_back(actions.back().xfer);
    }
    batch = batch_observations(observations);
    candidates = location_candidates(observations, batch, xfers);
  }
};

TEST(PaddedMinibatch, PaddingBelongsToItsOwnGraphAndWeighsNothing) {
  PolicyNetwork net = testing::small_network(2);
  const Minibatch m(net, 6);
  const Union u(m, {0, 1, 2, 3, 4, 5});
  ASSERT_GT(u.candidates.num_candidates, 0);
  const MinibatchCapacity capacity = capacity_for(8, u.batch, u.candidates);
  EXPECT_GT(capacity.nodes, u.batch.num_nodes);
  EXPECT_GT(capacity.candidates, u.candidates.num_candidates);
  const PaddedLayout l = padded_layout(capacity, u.batch.num_xfers);
  EXPECT_EQ(l.slots, 9);
  PaddedTargets t;
  for (size_t k = 0; k < 6; ++k) {
    t.weight.push_back(1.0f / 6);
    t.old_log_prob.push_back(-1.0f - static_cast<float>(k));
    t.advantage.push_back(0.5f);
    t.value_target.push_back(2.0f);
  }
  std::vector<float> floats(static_cast<size_t>(l.floats), -7.0f);
  std::vector<int64_t> ints(static_cast<size_t>(l.ints), -7);
  std::vector<uint8_t> mask(static_cast<size_t>(l.mask_bytes), 9);
  write_padded_minibatch(u.batch, u.candidates, u.actions, t, l, floats.data(), ints.data(), mask.data());
  const int64_t pad_graph = 8, pad_node = u.batch.num_nodes;
  for (int64_t v = pad_node; v < capacity.nodes; ++v) ASSERT_EQ(ints[l.node_graph + v], pad_graph);
  for (int64_t e = u.batch.num_edges; e < capacity.edges; ++e) {
    ASSERT_EQ(ints[l.senders + e], pad_node);
    ASSERT_EQ(ints[l.receivers + e], pad_node);
    ASSERT_EQ(ints[l.edge_graph + e], pad_graph);
  }
  for (int64_t c = u.candidates.num_candidates; c < capacity.candidates; ++c) {
    ASSERT_EQ(ints[l.candidate_graph + c], pad_graph);
    ASSERT_EQ(floats[l.taken + c], 0.0f);
  }
  const auto members = static_cast<int64_t>(u.candidates.member_node.size());
  for (int64_t k = members; k < capacity.members; ++k) {
    ASSERT_EQ(ints[l.member_node + k], pad_node);
    ASSERT_EQ(ints[l.member_candidate + k], u.candidates.num_candidates);
  }
  const int64_t width = u.batch.num_xfers + 1;
  for (int64_t slot = 6; slot < l.slots; ++slot) {
    EXPECT_EQ(floats[l.weight + slot], 0.0f) << "slot " << slot;
    EXPECT_EQ(ints[l.xfer + slot], u.batch.num_xfers) << "slot " << slot << " takes NO-OP";
    for (int64_t x = 0; x < width; ++x) ASSERT_EQ(mask[slot * width + x], x == width - 1 ? 1 : 0) << slot;
  }
  float taken = 0;
  for (int64_t c = 0; c < u.candidates.num_candidates; ++c) taken += floats[l.taken + c];
  int32_t chose_location = 0;
  for (const Action& a : u.actions) chose_location += a.xfer != u.batch.num_xfers;
  EXPECT_EQ(taken, static_cast<float>(chose_location)) << "one taken candidate per sample that chose a location";
  EXPECT_EQ(floats[l.old_log_prob + 5], -6.0f);
  // A minibatch that does not fit is refused, not cut.
  const PaddedLayout small = padded_layout({8, u.batch.num_nodes, capacity.edges, capacity.candidates, capacity.members},
                                           u.batch.num_xfers);
  EXPECT_THROW(write_padded_minibatch(u.batch, u.candidates, u.actions, t, small, floats.data(), ints.data(),
                                      mask.data()),
               UsageError);
}

// A network whose parameters live in one flat buffer, and its gradients.
PolicyNetwork on_device(PolicyNetwork net, const std::string& device) {
  net.to_device(device);
  return net;
}

struct FlatNetwork {
  PolicyNetwork net;
  FlatParameters flat;
  explicit FlatNetwork(PolicyNetwork n, const std::string& device = "cpu")
      : net(on_device(std::move(n), device)), flat(net.impl().module->parameters()) {}
  std::vector<torch::Tensor> gradients() const {
    std::vector<torch::Tensor> out;
    for (const torch::Tensor& p : net.impl().module->parameters()) out.push_back(p.grad().clone());
    return out;
  }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& item : net.impl().module->named_parameters()) out.push_back(item.key());
    return out;
  }
};

PaddedPpoGradients::SampleAt samples_of(const Minibatch& m) {
  return [&m](int64_t i) { return std::make_pair(&m.observations[static_cast<size_t>(i)], m.actions[static_cast<size_t>(i)]); };
}

void expect_same_figures(const PpoLoss& before, const PpoLoss& now, const std::string& label) {
  for (auto [a, b, what] : {std::make_tuple(before.policy, now.policy, "policy"),
                            std::make_tuple(before.value, now.value, "value"),
                            std::make_tuple(before.entropy, now.entropy, "entropy"),
                            std::make_tuple(before.approx_kl, now.approx_kl, "approx_kl"),
                            std::make_tuple(before.clip_fraction, now.clip_fraction, "clip_fraction")})
    EXPECT_NEAR(b, a, 1e-5 * std::max(1.0, std::abs(a))) << label << ": " << what;
}

TEST(PaddedPpoGradients, EqualMinibatchGradientsWhateverThePaddingAndWeight) {
  FlatNetwork f(testing::small_network(9));
  Minibatch m(f.net, 22);
  // Two samples that chose NO-OP (no location term), beside the policy's own choices.
  for (size_t k : {3u, 14u}) m.actions[k] = Action{m.observations[k].num_xfers, 0};
  PpoReplicas one;
  one.parameters.push_back(f.net.impl().module->parameters());
  one.flat.push_back(&f.flat);
  PolicyModule module = f.net.impl().module;
  one.evaluate.push_back([&m, module](const std::vector<int64_t>& indices) mutable {
    std::vector<const Observation*> observations;
    std::vector<Action> actions;
    for (int64_t i : indices) {
      observations.push_back(&m.observations[static_cast<size_t>(i)]);
      actions.push_back(m.actions[static_cast<size_t>(i)]);
    }
    const ActionEvaluation e = evaluate_actions(module, observations, actions);
    return SampleEvaluation{e.log_prob, e.value, e.entropy};
  });
  PaddedPpoGradients padded(f.net.impl().module, f.flat, /*minibatch_size=*/32, /*cuda_graphs=*/false);
  std::vector<int64_t> all(22);
  std::iota(all.rbegin(), all.rend(), 0);  // reversed: the order is the caller's
  const std::vector<int64_t> part{20, 3, 7, 14, 1};
  const PpoCoefficients coefficients{0.2, 0.5, 0.01};
  for (const auto& [indices, weight] : {std::make_pair(all, 1.0), std::make_pair(part, 0.25)}) {
    const std::string label = std::to_string(indices.size()) + " samples, weight " + std::to_string(weight);
    const PpoLoss before = minibatch_gradients(one, m.samples, indices, weight, coefficients);
    const std::vector<torch::Tensor> expected = f.gradients();
    f.flat.gradients().fill_(3.0f);  // stale gradients must not survive
    const PpoLoss now = padded.gradients(samples_of(m), m.samples, indices, weight, coefficients);
    expect_same_gradient(expected, f.gradients(), f.names(), label);
    expect_same_figures(before, now, label);
  }
  EXPECT_EQ(padded.capacity().samples, 32) << "the usual minibatch's slots, the last one padded up to them";
  EXPECT_EQ(padded.captures(), 0) << "nothing is captured on a CPU";
}

TEST(PaddedPpoGradients, ACapacityIsKeptUntilAMinibatchOutgrowsIt) {
  FlatNetwork f(testing::small_network(4));
  const Minibatch m(f.net, 20);
  PaddedPpoGradients padded(f.net.impl().module, f.flat, 8, false);
  padded.gradients(samples_of(m), m.samples, {0, 1, 2, 3}, 1.0, PpoCoefficients{});
  const MinibatchCapacity first = padded.capacity();
  padded.gradients(samples_of(m), m.samples, {2, 1}, 1.0, PpoCoefficients{});
  EXPECT_EQ(padded.capacity(), first) << "a smaller minibatch fits the capacity held";
  std::vector<int64_t> many(20);
  std::iota(many.begin(), many.end(), 0);
  padded.gradients(samples_of(m), m.samples, many, 1.0, PpoCoefficients{});
  const MinibatchCapacity grown = padded.capacity();
  EXPECT_EQ(grown.samples, 20);
  EXPECT_GT(grown.nodes, first.nodes);
  EXPECT_GE(grown.candidates, first.candidates);
  padded.gradients(samples_of(m), m.samples, {0, 1, 2, 3}, 1.0, PpoCoefficients{});
  EXPECT_EQ(padded.capacity(), grown) << "capacities only grow";
}

TEST(PaddedPpoGradients, ALocationOutsideItsXfersCandidatesIsAnError) {
  FlatNetwork f(testing::small_network(4));
  Minibatch m(f.net, 4);
  size_t k = 0;
  while (k < m.actions.size() && m.actions[k].xfer == m.observations[k].num_xfers) ++k;
  ASSERT_LT(k, m.actions.size());
  m.actions[k].location = m.observations[k].location_count(m.actions[k].xfer);
  PaddedPpoGradients padded(f.net.impl().module, f.flat, 4, false);
  try {
    padded.gradients(samples_of(m), m.samples, {0, 1, 2, 3}, 1.0, PpoCoefficients{});
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("sample " + std::to_string(k) + ": location"), std::string::npos) << e.what();
  }
}

// Two updates from the same start on the same rollouts, one with the padded
// path in run_ppo_epochs and one without, end with the same parameters.
TEST(PaddedPpoGradients, AnUpdateThroughThePaddedPathEqualsTheUsualOne) {
  const PolicyNetworkConfig network = testing::small_network(4).config();
  const std::vector<Rollout> rollouts = testing::squeezenet_rollouts(network, 3, 16, 12, 2, 2);
  std::vector<const Rollout*> batch{&rollouts[0]};
  PpoOptions options;
  options.minibatch_size = 12;
  options.epochs = 2;
  std::vector<torch::Tensor> finals[2];
  for (int padded_path = 0; padded_path < 2; ++padded_path) {
    PolicyNetwork net(network);
    FlatParameters flat(net.impl().module->parameters());
    // Plain gradient steps: Adam divides each gradient by its own scale,
    // which turns gradients that are zero but for rounding (the location
    // head's weights on what all of a graph's candidates share) into whole
    // steps of either sign.
    torch::optim::SGD sgd(net.impl().module->parameters(), torch::optim::SGDOptions(0.05));
    PaddedPpoGradients padded(net.impl().module, flat, options.minibatch_size, false);
    std::vector<const RolloutStep*> steps;
    PpoSamples samples;
    for (const RolloutSegment& s : rollouts[0].segments)
      for (const RolloutStep& step : s.steps) {
        steps.push_back(&step);
        samples.old_log_prob.push_back(step.log_prob);
        samples.advantages.push_back(step.reward - step.value);
        samples.returns.push_back(step.reward);
        samples.values.push_back(step.value);
      }
    PpoReplicas replicas;
    PolicyModule module = net.impl().module;
    replicas.parameters.push_back(module->parameters());
    replicas.flat.push_back(&flat);
    replicas.evaluate.push_back(evaluate_rollout_steps(module, steps));
    if (padded_path)
      replicas.padded = [&](const PpoSamples& s, const std::vector<int64_t>& indices, double weight,
                            const PpoCoefficients& c) {
        return padded.gradients(PaddedPpoGradients::of_steps(steps), s, indices, weight, c);
      };
    std::mt19937_64 shuffle(5);
    const UpdateStats stats = run_ppo_epochs(options, samples, replicas, sgd, shuffle);
    EXPECT_EQ(stats.skipped_minibatches, 0);
    for (const torch::Tensor& p : module->parameters()) finals[padded_path].push_back(p.detach().clone());
  }
  ASSERT_EQ(finals[0].size(), finals[1].size());
  for (size_t k = 0; k < finals[0].size(); ++k) {
    const double scale = std::max(finals[0][k].abs().max().item<double>(), 1e-3);
    EXPECT_LT((finals[1][k] - finals[0][k]).abs().max().item<double>() / scale, 1e-4) << "parameter " << k;
  }
}

TEST(PaddedPpoGradients, CudaGraphsAreRefusedWithoutAGpu) {
  const PolicyNetworkConfig network = testing::small_network(4).config();
  PpoOptions options;
  options.cuda_graphs = true;
  try {
    PpoLearner learner(network, options, "cpu");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    const std::string what = e.what();
    EXPECT_TRUE(what.find("CUDA") != std::string::npos) << what;
  }
  options.workers = 2;
  EXPECT_THROW(PpoLearner(network, options, "cpu"), UsageError);
}

// On a GPU: the minibatch replayed from a CUDA graph leaves the gradients
// the same padded work leaves when run eagerly, for minibatches in turn
// (replays of one graph on new inputs) and after one that outgrows the
// capacity (captured again).
TEST(PaddedPpoGradients, OnAGpuReplaysEqualTheEagerWork) {
  if (!CudaGraphWork::available() || !torch::cuda::is_available()) GTEST_SKIP() << "no CUDA GPU in this build or machine";
  FlatNetwork eager_net(testing::small_network(9), "cuda");
  FlatNetwork graph_net(testing::small_network(9), "cuda");
  const Minibatch m(eager_net.net, 24);
  PaddedPpoGradients eager(eager_net.net.impl().module, eager_net.flat, 8, false);
  PaddedPpoGradients graphed(graph_net.net.impl().module, graph_net.flat, 8, true);
  const std::vector<std::vector<int64_t>> minibatches{{0, 1, 2, 3, 4, 5, 6, 7}, {23, 9, 12, 4, 18, 2, 11},
                                                      {0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 1}};
  for (const std::vector<int64_t>& indices : minibatches) {
    const std::string label = std::to_string(indices.size()) + " samples";
    const PpoLoss a = eager.gradients(samples_of(m), m.samples, indices, 1.0, PpoCoefficients{});
    const PpoLoss b = graphed.gradients(samples_of(m), m.samples, indices, 1.0, PpoCoefficients{});
    std::vector<torch::Tensor> ga, gb;
    for (const torch::Tensor& p : eager_net.net.impl().module->parameters()) ga.push_back(p.grad().cpu());
    for (const torch::Tensor& p : graph_net.net.impl().module->parameters()) gb.push_back(p.grad().cpu());
    expect_same_gradient(ga, gb, eager_net.names(), label);
    expect_same_figures(a, b, label);
  }
  EXPECT_GE(graphed.captures(), 2) << "captured again when the third minibatch outgrew the first capacity";
  EXPECT_LE(graphed.captures(), 3);
}

}  // namespace
}  // namespace graphworld
