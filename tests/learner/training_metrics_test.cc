// metrics.jsonl and its TensorBoard twin: every row becomes one event at
// step env_steps holding the row's numbers, and a resume that redoes
// updates drops them from both files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/tensorboard/event_file.h"
#include "learner/training_metrics.h"
#include "tests/support/test_env.h"

namespace graphworld {
namespace {

UpdateReport report_for(int64_t update) {
  UpdateReport r;
  r.update = update;
  r.env_steps = 256 * update;
  r.episodes = 4 * update;
  r.wall_s = 1.5 * static_cast<double>(update);
  r.mean_episode_reduction_pct = 2.5 * static_cast<double>(update);
  r.best_reduction_pct = {{"resnet18", 10.0 + static_cast<double>(update)}, {"bert", 0.25}};
  r.stats.entropy = 3.0 - 0.125 * static_cast<double>(update);
  r.stats.policy_loss = -0.5;
  r.extra = {{"held_out_mask_f1", 0.75}, {"dream_greedy_reduction_pct", 6.5}, {"live_actors", 2}};
  return r;
}

float value(const ScalarEvent& e, const std::string& tag) {
  for (const auto& [t, v] : e.values)
    if (t == tag) return v;
  ADD_FAILURE() << tag << " missing at step " << e.step;
  return -1;
}

TEST(TrainingMetrics, EveryRowIsATensorBoardEventAndAResumeDropsRedoneUpdates) {
  const std::string run = testing::scratch_dir() + "/metrics-events-run";
  std::filesystem::remove_all(run);
  std::filesystem::create_directories(run);
  for (int64_t u = 1; u <= 5; ++u) append_metrics_row(run + "/metrics.jsonl", report_for(u));

  EventFileContents events = read_event_file(event_file_path(run));
  ASSERT_EQ(events.scalars.size(), 5u);
  for (int64_t u = 1; u <= 5; ++u) {
    const ScalarEvent& e = events.scalars[static_cast<size_t>(u - 1)];
    EXPECT_EQ(e.step, 256 * u);
    EXPECT_EQ(value(e, "progress/update"), static_cast<float>(u));
    EXPECT_EQ(value(e, "ppo/entropy"), static_cast<float>(3.0 - 0.125 * static_cast<double>(u)));
    EXPECT_EQ(value(e, "reduction/best_pct/resnet18"), static_cast<float>(10 + u));
    EXPECT_EQ(value(e, "reduction/best_pct/bert"), 0.25f);
    EXPECT_EQ(value(e, "reduction/mean_episode_pct"), static_cast<float>(2.5 * static_cast<double>(u)));
    EXPECT_EQ(value(e, "world_model/held_out_mask_f1"), 0.75f);
    EXPECT_EQ(value(e, "dream/dream_greedy_reduction_pct"), 6.5f);
    EXPECT_EQ(value(e, "learner/live_actors"), 2.0f);
    EXPECT_GT(e.wall_time, 1.6e9);  // seconds since the epoch, as TensorBoard expects
  }

  // A resume from update 3: both files keep updates 1 to 3, then grow again.
  truncate_metrics(run + "/metrics.jsonl", 3);
  events = read_event_file(event_file_path(run));
  ASSERT_EQ(events.scalars.size(), 3u);
  EXPECT_EQ(events.scalars.back().step, 3 * 256);
  append_metrics_row(run + "/metrics.jsonl", report_for(4));
  events = read_event_file(event_file_path(run));
  ASSERT_EQ(events.scalars.size(), 4u);
  EXPECT_EQ(events.scalars.back().step, 4 * 256);
  std::ifstream metrics(run + "/metrics.jsonl");
  int rows = 0;
  for (std::string line; std::getline(metrics, line);) ++rows;
  EXPECT_EQ(rows, 4);
}

}  // namespace
}  // namespace graphworld
