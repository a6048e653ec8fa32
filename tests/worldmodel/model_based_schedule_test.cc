// The schedule rules the in-process agent and the distributed learner
// share (model_based_training.h).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "worldmodel/model_based_training.h"

namespace graphworld {
namespace {

ModelBasedOptions schedule(int32_t rounds, int32_t calibration_episodes) {
  ModelBasedOptions options;
  options.settings.rounds = rounds;
  options.settings.calibration_episodes = calibration_episodes;
  options.seed = 7;
  options.settings.encoder_epochs = 40;
  options.settings.epochs = 100;
  options.settings.later_epochs = 30;
  return options;
}

// z must keep its meaning under a trained controller: the encoder trains
// in round 1's first training only, also when round 1 is the last and
// calibrates (a one-round run).
TEST(ModelBasedSchedule, OnlyRoundOnesFirstTrainingMovesTheEncoder) {
  const ModelBasedOptions options = schedule(1, 4);
  const WorldModelTrainOptions first = world_model_training_for(options, 1, false);
  EXPECT_EQ(first.encoder_epochs, 40);
  EXPECT_EQ(first.epochs, 100);
  EXPECT_EQ(first.seed, 8u);
  const WorldModelTrainOptions calibration = world_model_training_for(options, 1, true);
  EXPECT_EQ(calibration.encoder_epochs, 0);
  EXPECT_EQ(calibration.epochs, 30);
  EXPECT_EQ(calibration.seed, 8u);
  const WorldModelTrainOptions third = world_model_training_for(schedule(6, 4), 3, false);
  EXPECT_EQ(third.encoder_epochs, 0);
  EXPECT_EQ(third.epochs, 30);
  EXPECT_EQ(third.seed, 10u);
}

// The controller trained on the h of the model before the calibration:
// only that retraining keeps the controller's memory, and only by default.
TEST(ModelBasedSchedule, OnlyTheCalibrationKeepsTheControllersMemory) {
  ModelBasedOptions options = schedule(3, 4);
  EXPECT_FALSE(world_model_training_for(options, 1, false).keep_controller_memory);
  EXPECT_FALSE(world_model_training_for(options, 3, false).keep_controller_memory);
  EXPECT_TRUE(world_model_training_for(options, 3, true).keep_controller_memory);
  options.settings.calibration_keeps_controller_memory = false;
  EXPECT_FALSE(world_model_training_for(options, 3, true).keep_controller_memory);
}

TEST(ModelBasedSchedule, OnlyTheLastRoundCalibratesAndOnlyWhenAsked) {
  EXPECT_FALSE(calibrates_after(schedule(3, 4), 2));
  EXPECT_TRUE(calibrates_after(schedule(3, 4), 3));
  EXPECT_FALSE(calibrates_after(schedule(3, 0), 3));
  EXPECT_TRUE(calibrates_after(schedule(1, 1), 1));
}

ModelBasedRound round_of(std::vector<std::pair<double, double>> best_and_end) {
  ModelBasedRound round;
  for (const auto& [best, end] : best_and_end) {
    GraphOutcome g;
    g.real_best_reduction = best;
    g.real_reduction = end;
    round.graphs.push_back(g);
  }
  return round;
}

TEST(ModelBasedSchedule, RoundsAreMeasuredByTheMeanOverTheirGraphs) {
  const ModelBasedRound round = round_of({{9.5, 9.0}, {14.5, 12.0}});
  EXPECT_DOUBLE_EQ(mean_real_reduction(round), 12.0);
  EXPECT_DOUBLE_EQ(mean_real_end_reduction(round), 10.5);
  EXPECT_EQ(mean_real_reduction(ModelBasedRound{}), 0.0);
}

// ResNet-50-full's case: two rounds pass through 9.467% on their way, one
// stopping one fold later (9.457%), the other going on to 9.28%. The one
// that stops nearer its best is kept; more on the way always wins.
TEST(ModelBasedSchedule, OfRoundsThatReachedAsMuchTheOneEndingHighestIsKept) {
  EXPECT_FALSE(replaces_kept_round({9.467, 9.28}, {9.467, 9.457})) << "goes past its best";
  EXPECT_TRUE(replaces_kept_round({9.467, 9.457}, {9.467, 9.28})) << "stops nearer it";
  EXPECT_TRUE(replaces_kept_round({9.467, 9.457}, {9.467, 9.457})) << "the later of equal rounds";
  EXPECT_TRUE(replaces_kept_round({9.470, 8.0}, {9.467, 9.467})) << "more on the way";
  EXPECT_FALSE(replaces_kept_round({9.460, 9.460}, {9.467, 8.0})) << "less on the way";
  EXPECT_TRUE(replaces_kept_round({9.467 + 1e-12, 9.3}, {9.467, 9.3})) << "rounding is not a difference";
  EXPECT_FALSE(replaces_kept_round({9.467 + 1e-12, 9.2}, {9.467, 9.3})) << "rounding is not a difference";
}

// A distributed run measures a round by the means over its graphs of the
// greedy episodes' figures; a round missing a graph's is not measured.
TEST(ModelBasedSchedule, ADistributedRoundIsMeasuredOnlyWithEveryGraphsGreedyEpisode) {
  const std::map<std::string, GreedyOutcome> by_graph = {
      {"resnet18", {16.37, 16.37}}, {"nasrnn", {39.45, 38.89}}, {"bert", {18.46, 18.46}}};
  const auto two = mean_greedy_outcome(by_graph, {"resnet18", "nasrnn"});
  ASSERT_TRUE(two.has_value());
  EXPECT_DOUBLE_EQ(two->best_reduction, (16.37 + 39.45) / 2);
  EXPECT_DOUBLE_EQ(two->end_reduction, (16.37 + 38.89) / 2);
  // A graph named twice in the run counts once, as its episodes are keyed by name.
  const auto twice = mean_greedy_outcome(by_graph, {"nasrnn", "resnet18", "nasrnn"});
  ASSERT_TRUE(twice.has_value());
  EXPECT_DOUBLE_EQ(twice->best_reduction, two->best_reduction);
  EXPECT_FALSE(mean_greedy_outcome(by_graph, {"resnet18", "vit-base"}).has_value()) << "vit-base has no greedy episode";
  EXPECT_FALSE(mean_greedy_outcome(by_graph, {}).has_value());
}

}  // namespace
}  // namespace graphworld
