// What every training command shares: reading CONFIG [key=value ...] or
// --resume RUN into a resolved config and run folder, loading the training
// graphs, and building the run's cost model. `train`, `learner` and `actor`
// all go through here, so a run's processes see the same graphs, in the
// same order, priced the same way.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/config.h"
#include "env/cost/cost_model.h"
#include "launch/cli_args.h"
#include "learner/rollout_collector.h"
#include "learner/training_config.h"

namespace graphworld {

struct TrainingRun {
  Config config;  // resolved; file-valued keys absolute for a new run
  TrainingOptions options;
  std::string run_dir;
  bool resume = false;
};

// From `command CONFIG [key=value ...] [--run DIR]` or `command --resume RUN
// [key=value ...]`. UsageError / ConfigError naming what is wrong.
TrainingRun prepare_training_run(const CliArgs& args, const std::string& command = "train");

// A new run's training config: CONFIG with its overrides, file-valued keys
// made absolute (found from the working directory or beside CONFIG).
Config load_training_config(const std::string& config_path, const std::vector<std::string>& overrides);

// A zoo name is its own name; a file is named by its stem. Names are made
// unique (they name metrics and the files in best/).
std::vector<TrainingGraph> load_training_graphs(const std::vector<std::string>& specs);

std::unique_ptr<CostModel> training_cost_model(const TrainingOptions& options);

}  // namespace graphworld
