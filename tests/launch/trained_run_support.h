// What the evaluate and report tests share: a tiny model-free run trained
// in-process by the real CLI, its exported policy, and small run settings.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/launch/cli_test_support.h"

namespace graphworld::testing {

inline const std::string kSmall =
    " env.num_envs=4 env.steps_per_env=16 env.max_steps=20 ppo.epochs=2 ppo.minibatch_size=32 --quiet";

inline std::string gpu_rates() { return source_dir() + "/configs/gpu_rates.yaml"; }

// A tiny model-free run trained in-process, and its exported policy.
struct TrainedRun {
  std::string run, policy;
};

inline const TrainedRun& model_free_run() {
  static const TrainedRun trained = [] {
    TrainedRun t{scratch_dir() + "/report-mf-run", scratch_dir() + "/report-mf.gwpolicy"};
    std::filesystem::remove_all(t.run);
    std::string out;
    EXPECT_EQ(gw("train --inline " + source_dir() + "/configs/train.yaml --run " + t.run + kSmall +
                     " train.graphs=[squeezenet1.1] train.total_env_steps=192 env.rates=" + gpu_rates(),
                 &out),
              0)
        << out;
    EXPECT_EQ(gw("policy export " + t.run + " -o " + t.policy, &out), 0) << out;
    return t;
  }();
  return trained;
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace graphworld::testing
