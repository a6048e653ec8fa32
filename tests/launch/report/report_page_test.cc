// The report's pairing of each model-based round's dream prediction with the
// real episodes that follow it, on rows written by hand.
#include <gtest/gtest.h>

#include "launch/report/report_page.h"

namespace graphworld {
namespace {

MetricsRow row(std::map<std::string, double> values) {
  MetricsRow r;
  r.values = std::move(values);
  return r;
}

TEST(ReportPage, DreamRoundsPairEachPredictionWithTheRealEpisodesAfterIt) {
  RunData run;
  run.model_based = true;
  run.rows = {
      row({{"round", 1}, {"episodes_this_update", 4}, {"mean_episode_reduction_pct", -9}}),  // random episodes: no round yet
      row({{"round", 1}, {"world_model_s", 2}, {"episodes_this_update", 0}}),
      row({{"round", 1}, {"dream_greedy_reduction_pct", 5}, {"episodes_this_update", 0}}),
      row({{"round", 2}, {"episodes_this_update", 2}, {"mean_episode_reduction_pct", 10}}),
      row({{"round", 2}, {"episodes_this_update", 1}, {"mean_episode_reduction_pct", 4}}),
      // The next world model: episodes from here on belong to no prediction.
      row({{"round", 2}, {"world_model_s", 2}, {"episodes_this_update", 5}, {"mean_episode_reduction_pct", 50}}),
      row({{"round", 2}, {"dream_greedy_reduction_pct", 7}, {"episodes_this_update", 0}}),
  };
  const std::vector<DreamRound> rounds = dream_rounds(run);
  ASSERT_EQ(rounds.size(), 2u);
  EXPECT_EQ(rounds[0].round, 1);
  EXPECT_EQ(rounds[0].predicted_pct, 5);
  EXPECT_EQ(rounds[0].real_episodes, 3);
  EXPECT_DOUBLE_EQ(rounds[0].real_pct, (2 * 10.0 + 1 * 4.0) / 3);  // weighted by episodes: 8
  EXPECT_EQ(rounds[1].round, 2);
  EXPECT_EQ(rounds[1].predicted_pct, 7);
  EXPECT_EQ(rounds[1].real_episodes, 0);  // the run ended before real episodes followed
}

TEST(ReportPage, AModelFreeRunHasNoDreamRounds) {
  RunData run;
  run.rows = {row({{"episodes_this_update", 3}, {"mean_episode_reduction_pct", 2}})};
  EXPECT_TRUE(dream_rounds(run).empty());
}

}  // namespace
}  // namespace graphworld
