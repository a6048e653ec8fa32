// The rollout store keeps ~60 bytes a step; each observation comes back by
// replaying its episode. Real rollouts go through a real HDF5 store, are
// read back and replayed, and every rebuilt observation must equal the one
// the collector sent.
#include <gtest/gtest.h>

#include <filesystem>

#include "common/error.h"
#include "learner/observation_replay.h"
#include "learner/rollout.h"
#include "tests/learner/training_fixture.h"

namespace graphworld {
namespace {

using testing::default_matcher;

TEST(ObservationReplay, ObservationsRebuiltFromTheStoreEqualThoseTheActorSent) {
  const std::vector<TrainingGraph> graphs = testing::zoo_graphs({"squeezenet1.1", "nasrnn"});
  auto cost = testing::gpu_like_cost();
  RolloutCollectorOptions options;
  options.num_envs = 3;
  options.steps_per_env = 10;
  options.env.max_steps = 7;  // episodes end inside rollouts and run across them
  options.seed = 11;
  RolloutCollector collector(graphs, default_matcher(), *cost, options);
  PolicyNetwork net = testing::small_network(5);
  std::vector<Rollout> sent;
  for (int r = 0; r < 3; ++r) sent.push_back(*collector.collect(net, r, nullptr));

  const std::string dir = testing::fresh_dir("observation_replay");
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/rollouts.h5";
  RolloutStoreInfo info;
  info.run_id = "replay";
  info.graphs = {"squeezenet1.1", "nasrnn"};
  info.num_xfers = static_cast<int32_t>(default_matcher().num_rules());
  {
    auto writer = RolloutStoreWriter::create(path, info);
    for (const Rollout& r : sent) writer->append(to_stored_steps(r, 4));
  }
  // The sent observations in store order: rollout by rollout, slot by slot.
  std::vector<const RolloutStep*> sent_steps;
  for (const Rollout& r : sent)
    for (const RolloutSegment& segment : r.segments)
      for (const RolloutStep& step : segment.steps) sent_steps.push_back(&step);

  RolloutStoreReader reader(path);
  const std::vector<StoredStep> stored = reader.read(0, reader.steps());
  ASSERT_EQ(stored.size(), sent_steps.size());
  ObservationReplay replay(graphs, default_matcher(), *cost, options.env);
  size_t rebuilt = 0;
  const ReplayReport report = replay.replay(stored, [&](size_t i, const Observation& observation) {
    testing::expect_same_observation(compact_observation(observation, stored[i].xfer), sent_steps[i]->observation,
                                     "step " + std::to_string(i));
    ++rebuilt;
  });
  EXPECT_EQ(report.missed, 0);
  EXPECT_EQ(report.cost_mismatches, 0);
  EXPECT_EQ(report.rebuilt, static_cast<int64_t>(stored.size()));
  EXPECT_EQ(rebuilt, stored.size());
  // Replayed under another cost model, the stored costs disagree.
  AnalyticCostModel builtin;
  ObservationReplay other_prices(graphs, default_matcher(), builtin, options.env);
  EXPECT_GT(other_prices.replay(stored, [](size_t, const Observation&) {}).cost_mismatches, 0);

  // Read from the middle, a replay cannot know how episodes began: those
  // steps are counted as missed, never guessed; later episodes come back.
  ObservationReplay from_middle(graphs, default_matcher(), *cost, options.env);
  const std::vector<StoredStep> tail(stored.begin() + 40, stored.end());
  size_t tail_rebuilt = 0;
  const int64_t tail_missed = from_middle.replay(tail, [&](size_t i, const Observation& observation) {
    testing::expect_same_observation(compact_observation(observation, tail[i].xfer), sent_steps[i + 40]->observation,
                                     "tail step " + std::to_string(i));
    ++tail_rebuilt;
  }).missed;
  EXPECT_GT(tail_missed, 0);
  EXPECT_GT(tail_rebuilt, 0u);
  EXPECT_EQ(tail_rebuilt + static_cast<size_t>(tail_missed), tail.size());
}

TEST(ObservationReplay, AnActionTheGraphDoesNotAllowNamesTheStep) {
  const std::vector<TrainingGraph> graphs = testing::zoo_graphs({"squeezenet1.1"});
  auto cost = testing::gpu_like_cost();
  ObservationReplay replay(graphs, default_matcher(), *cost, GraphEnvOptions{});
  StoredStep bad;
  bad.episode_seed = 3;
  bad.xfer = 0;
  bad.location = 1'000'000;
  try {
    replay.replay({bad}, [](size_t, const Observation&) {});
    FAIL() << "an impossible action was replayed";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("stored step 0"), std::string::npos) << e.what();
  }
  StoredStep other_graph;
  other_graph.graph_index = 2;
  EXPECT_THROW(replay.replay({other_graph}, [](size_t, const Observation&) {}), FormatError);
}

}  // namespace
}  // namespace graphworld
