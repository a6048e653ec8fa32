// train.device: cuda where this LibTorch and machine have it, else the CPU
// with a note that says why; a bad name is an error naming the key.
#include <gtest/gtest.h>

#include "common/error.h"
#include "learner/compute_device.h"
#include "learner/ppo_learner.h"
#include "tests/learner/training_fixture.h"

namespace graphworld::testing {
namespace {

TEST(ComputeDevice, CudaWhereItExistsOtherwiseTheCpuSayingWhy) {
  EXPECT_EQ(resolve_compute_device("cpu").device, "cpu");
  EXPECT_EQ(resolve_compute_device("cpu").note, "");
  const ResolvedDevice cuda = resolve_compute_device("cuda");
  if (cuda_available()) {
    EXPECT_EQ(cuda.device, "cuda:0");
    EXPECT_EQ(cuda.note, "");
  } else {
    EXPECT_EQ(cuda.device, "cpu");
    EXPECT_NE(cuda.note.find("train.device is cuda, but this graphworld's LibTorch"), std::string::npos) << cuda.note;
    EXPECT_NE(cuda.note.find("training on the CPU"), std::string::npos) << cuda.note;
  }
  try {
    resolve_compute_device("gpu0", "train.device");
    FAIL() << "accepted 'gpu0'";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("train.device must be cpu, cuda or cuda:N, got 'gpu0'"), std::string::npos);
  }
}

// The learner on the resolved device acts, updates and saves parameters
// that load into a CPU network (what actors do), whatever the device.
TEST(ComputeDevice, ALearnerOnTheResolvedDeviceSavesParametersTheCpuLoads) {
  PolicyNetworkConfig config;
  config.num_xfers = static_cast<int32_t>(default_matcher().num_rules());
  config.hidden = 16;
  config.message_rounds = 1;
  PpoLearner learner(config, PpoOptions{}, resolve_compute_device("cuda").device);
  auto cost = gpu_like_cost();
  RolloutCollectorOptions options;
  options.num_envs = 2;
  options.steps_per_env = 8;
  options.env.max_steps = 8;
  RolloutCollector collector(zoo_graphs({"squeezenet1.1"}), default_matcher(), *cost, options);
  const Rollout rollout = *collector.collect(learner.policy(), 0);
  const UpdateStats stats = learner.update({&rollout});
  EXPECT_EQ(stats.samples, 16);
  EXPECT_EQ(stats.skipped_minibatches, 0);
  PolicyNetwork on_cpu(config);
  on_cpu.load_parameters(learner.policy().save_parameters(), "the learner's parameters");
  EXPECT_EQ(on_cpu.device(), "cpu");
  std::vector<const Observation*> observations;
  for (const RolloutStep& s : rollout.segments.front().steps) observations.push_back(&s.observation);
  const std::vector<float> a = learner.policy().values(observations), b = on_cpu.values(observations);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-4);
  // And the learner's whole state round-trips.
  PpoLearner restored(config, PpoOptions{}, resolve_compute_device("cuda").device);
  restored.restore_state(learner.save_state(), "the learner's state");
  EXPECT_EQ(restored.version(), 1);
}

}  // namespace
}  // namespace graphworld::testing
