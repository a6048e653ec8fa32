// The schedule rules the in-process agent and the distributed learner
// share (model_based_training.h).
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace graphworld
