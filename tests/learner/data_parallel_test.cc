// Two gloo learner ranks (two threads, each its own c10d process group over
// real TCP on loopback) against one learner with the same total batch.
#include <gtest/gtest.h>

#include <thread>

#include "learner/data_parallel.h"
#include "learner/nccl_all_reduce.h"
#include "learner/policy_module.h"
#include "learner/ppo_learner.h"
#include "tests/learner/training_fixture.h"

namespace graphworld::testing {
namespace {

PolicyNetworkConfig network_config() {
  PolicyNetworkConfig config;
  config.num_xfers = static_cast<int32_t>(default_matcher().num_rules());
  config.hidden = 16;
  config.message_rounds = 2;
  config.seed = 7;
  return config;
}

PpoOptions ppo_options() {
  PpoOptions o;
  o.epochs = 2;
  o.minibatch_size = 37;  // odd: the ranks' shares differ (18 and 19), and the last minibatch is short
  o.seed = 3;
  return o;
}

std::vector<Rollout> some_rollouts() { return squeezenet_rollouts(network_config(), 4, 24, 20, 11, 2); }

std::vector<float> flat_parameters(PpoLearner& learner) {
  std::vector<float> out;
  for (const torch::Tensor& p : learner.policy().impl().module->parameters()) {
    const torch::Tensor c = p.detach().contiguous().to(torch::kFloat32);
    out.insert(out.end(), c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
  }
  return out;
}

uint16_t free_port() {
  // Distinct per test process: ctest runs suites side by side.
  return static_cast<uint16_t>(20000 + (getpid() % 20000));
}

// Two ranks on `devices` against one learner on devices[0] with the same
// batch; `expect_nccl`: whether the gradients must go by NCCL.
void expect_two_ranks_match_one_learner(const std::vector<std::string>& devices, bool expect_nccl, uint16_t port) {
  const std::vector<Rollout> rollouts = some_rollouts();
  std::vector<const Rollout*> batch;
  for (const Rollout& r : rollouts) batch.push_back(&r);

  std::vector<const Observation*> observations;
  std::vector<Action> actions;
  for (const Rollout& r : rollouts)
    for (const RolloutSegment& segment : r.segments)
      for (const RolloutStep& step : segment.steps) {
        observations.push_back(&step.observation);
        actions.push_back(step.action);
      }

  PpoLearner single(network_config(), ppo_options(), devices[0]);
  UpdateStats single_stats;
  single_stats = single.update(batch);
  const std::vector<float> expected = flat_parameters(single);
  const std::vector<float> expected_log_probs = single.policy().log_probs(observations, actions);
  const std::vector<float> expected_values = single.policy().values(observations);
  std::vector<float> log_probs, values;

  std::vector<std::vector<float>> got(2);
  std::vector<UpdateStats> stats(2);
  std::vector<std::string> errors(2);
  std::vector<int> by_nccl(2, -1);
  auto rank_main = [&](int32_t rank) {
    try {
      DataParallelOptions o;
      o.host = "127.0.0.1";
      o.port = port;
      o.rank = rank;
      o.size = 2;
      o.connect_timeout_s = 60;
      o.collective_timeout_s = 120;
      DataParallelGroup group(o);
      PpoLearner learner(network_config(), ppo_options(), devices[static_cast<size_t>(rank)]);
      learner.set_data_parallel(&group);
      by_nccl[static_cast<size_t>(rank)] = group.gradients_by_nccl() ? 1 : 0;
      stats[static_cast<size_t>(rank)] = learner.update(batch);
      got[static_cast<size_t>(rank)] = flat_parameters(learner);
      if (rank == 0) {
        log_probs = learner.policy().log_probs(observations, actions);
        values = learner.policy().values(observations);
      }
    } catch (const std::exception& e) {
      errors[static_cast<size_t>(rank)] = e.what();
    }
  };
  std::thread r0(rank_main, 0), r1(rank_main, 1);
  r0.join();
  r1.join();
  ASSERT_EQ(errors[0], "");
  ASSERT_EQ(errors[1], "");
  EXPECT_EQ(by_nccl[0], expect_nccl ? 1 : 0);
  EXPECT_EQ(by_nccl[1], expect_nccl ? 1 : 0);
  ASSERT_EQ(got[0].size(), expected.size());
  // The ranks agree exactly (the same summed gradient, the same Adam step).
  EXPECT_EQ(got[0], got[1]);
  // And match one learner, up to float rounding: the ranks sum in another
  // order. Adam divides each gradient by its running RMS, so a parameter
  // whose gradient is itself rounding noise (around 1e-9) moves up to one
  // learning rate in a direction the summation order decides; the few
  // such parameters are allowed, the rest must agree to 1e-6 + 1e-5
  // relative. One update here is 2 epochs of 6 minibatches; without the
  // gradient sum 15% of the parameters differ (and the ranks disagree).
  int differing = 0;
  double worst = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    const double diff = std::abs(static_cast<double>(got[0][i]) - expected[i]);
    worst = std::max(worst, diff);
    if (diff > 1e-6 + 1e-5 * std::abs(expected[i])) ++differing;
  }
  double worst_log_prob = 0, worst_value = 0;
  for (size_t i = 0; i < observations.size(); ++i) {
    worst_log_prob = std::max(worst_log_prob, static_cast<double>(std::abs(log_probs[i] - expected_log_probs[i])));
    worst_value = std::max(worst_value, static_cast<double>(std::abs(values[i] - expected_values[i])) /
                                            std::max(1.0, static_cast<double>(std::abs(expected_values[i]))));
  }
  std::printf("parameters beyond 1e-6 + 1e-5 relative: %d of %zu; largest difference %.3g; "
              "largest log-prob difference %.3g, value %.3g\n",
              differing, expected.size(), worst, worst_log_prob, worst_value);
  // How many of those noise-steered parameters there are depends on the
  // initial weights (0.5% to 7% across network seeds), so the bound is loose;
  // what the policy computes is held to a tight one.
  EXPECT_LT(differing, static_cast<int>(expected.size() / 10));
  EXPECT_LT(worst_log_prob, 2e-3);
  EXPECT_LT(worst_value, 1e-3);
  EXPECT_NEAR(stats[0].policy_loss, single_stats.policy_loss, 1e-4);
  EXPECT_NEAR(stats[0].value_loss, single_stats.value_loss, 1e-4 * std::max(1.0, std::abs(single_stats.value_loss)));
  EXPECT_NEAR(stats[0].entropy, single_stats.entropy, 1e-4);
  EXPECT_NEAR(stats[0].approx_kl, single_stats.approx_kl, 1e-5);
  EXPECT_NEAR(stats[0].clip_fraction, single_stats.clip_fraction, 1e-6);
}

TEST(DataParallel, TwoGlooRanksMatchOneLearnerWithTheSameBatch) {
  expect_two_ranks_match_one_learner({"cpu", "cpu"}, /*expect_nccl=*/false, free_port());
}

// Runs only with a CUDA LibTorch, a build with NCCL and two GPUs (NCCL
// gives each rank its own device).
TEST(DataParallel, TwoNcclRanksOnGpusMatchOneLearner) {
  if (!torch::cuda::is_available() || torch::cuda::device_count() < 2)
    GTEST_SKIP() << "needs two GPUs visible to a CUDA LibTorch";
  if (!nccl_compiled()) GTEST_SKIP() << "this build has no NCCL";
  expect_two_ranks_match_one_learner({"cuda:0", "cuda:1"}, /*expect_nccl=*/true, static_cast<uint16_t>(free_port() + 3));
}

// NCCL on a machine with one GPU: a one-rank communicator joins, sums in
// place (the identity for one rank) twice, and is destroyed; an id of the
// wrong size is refused. Two ranks need two GPUs (above).
TEST(DataParallel, OneNcclRankOnAGpuSumsInPlace) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "needs a GPU visible to a CUDA LibTorch";
  if (!nccl_compiled()) GTEST_SKIP() << "this build has no NCCL";
  const torch::Tensor host = torch::arange(1000, torch::kFloat32);
  torch::Tensor on_gpu = host.to(torch::Device("cuda:0"));
  {
    NcclAllReduce sum(nccl_unique_id(), 0, 1, 0, 60);
    sum.sum_in_place(on_gpu.data_ptr<float>(), static_cast<size_t>(on_gpu.numel()));
    sum.sum_in_place(on_gpu.data_ptr<float>(), static_cast<size_t>(on_gpu.numel()));
  }
  EXPECT_TRUE(torch::equal(on_gpu.cpu(), host));
  EXPECT_THROW(NcclAllReduce("short", 0, 1, 0, 5), Error);
}

TEST(DataParallel, BroadcastCarriesRankZerosBytes) {
  const uint16_t port = static_cast<uint16_t>(free_port() + 1);
  std::vector<std::string> seen(2);
  std::vector<std::string> errors(2);
  auto rank_main = [&](int32_t rank) {
    try {
      DataParallelGroup group({"127.0.0.1", port, rank, 2, 60, 120});
      std::string bytes = rank == 0 ? std::string("batch\0with a zero", 17) : "stale";
      group.broadcast_bytes(bytes);
      std::string empty = rank == 0 ? "" : "stale";
      group.broadcast_bytes(empty);
      seen[static_cast<size_t>(rank)] = bytes + "|" + empty;
    } catch (const std::exception& e) {
      errors[static_cast<size_t>(rank)] = e.what();
    }
  };
  std::thread r0(rank_main, 0), r1(rank_main, 1);
  r0.join();
  r1.join();
  ASSERT_EQ(errors[0] + errors[1], "");
  EXPECT_EQ(seen[1], std::string("batch\0with a zero", 17) + "|");
  EXPECT_EQ(seen[0], seen[1]);
}

TEST(DataParallel, ABadRendezvousIsAClearError) {
  EXPECT_THROW(parse_rendezvous("nohost", "--data-parallel"), UsageError);
  EXPECT_THROW(parse_rendezvous("host:99999", "--data-parallel"), UsageError);
  const DataParallelOptions o = parse_rendezvous("node-7:29400", "--data-parallel");
  EXPECT_EQ(o.host, "node-7");
  EXPECT_EQ(o.port, 29400);
  // Rank 1 with nobody serving the rendezvous: an error naming it, after the timeout.
  try {
    DataParallelGroup group({"127.0.0.1", static_cast<uint16_t>(free_port() + 2), 1, 2, 2, 10});
    FAIL() << "joined a group with no rank 0";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("could not join the group at 127.0.0.1:"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace graphworld::testing
