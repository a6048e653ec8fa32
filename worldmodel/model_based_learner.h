// A model-based run's learning inside the distributed learner
// (learner/learner_extension.h). The schedule is the in-process agent's
// (model_based_training.h), spread over processes:
//
//   round 0   real actors play random episodes (model_based.random_episodes
//             per graph);
//   then, per round r = 1..model_based.rounds:
//     train   the world model learns from every real episode so far (the
//             encoder in round 1 only), on a thread of its own while the
//             learner keeps answering actors;
//     dream   dream actors step dream environments with the newest
//             controller; each of their messages is one PPO update
//             (model_based.dream_updates per round: the mix of dream to
//             real experience);
//     real    real actors play the round's episodes: the controller's
//             greedy one per graph, the dream's own greedy plan per graph
//             (model_based.verify_plans), then model_based.episodes_per_round
//             sampled ones per graph (only the greedy ones in the last
//             round). They measure the controller, show the world model
//             where its dream was wrong, and feed it. The last round's
//             greedy episodes wait for a calibration: the final
//             controller's model_based.calibration_episodes sampled ones
//             per graph, and the world model trained once more on them.
//
// After each round's real phase, the controller's greedy episodes (marked
// in their episode summaries) decide whether this round's world model and
// controller replace the kept ones in the run folder: the in-process
// agent's rule (replaces_kept_round). The metrics rows carry the round's
// means and the kept round's (greedy_real_round, greedy_real_best_reduction_pct,
// greedy_real_end_reduction_pct, kept_round, kept_real_reduction_pct,
// kept_real_end_reduction_pct).
//
// Real steps reach it as stored steps; whole episodes are rebuilt by
// replay (the same path as offline training from the store). Each phase
// change and each dream update publishes a new parameter version
// (model_based_parameters.h) and writes a metrics row.
//
// Torch-free header.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "learner/learner_extension.h"
#include "worldmodel/model_based_training.h"
#include "worldmodel/world_episode.h"

namespace graphworld {

struct ModelBasedRunOptions {
  ModelBasedOptions agent;          // rounds, episodes, world-model and dream settings, PPO
  std::vector<std::string> graphs;  // the run's training graphs
  int32_t num_xfers = 0;
  int32_t max_steps = 0;            // env.max_steps
  std::string rule_library_hash;
  int64_t max_policy_lag = 4;       // dream trajectories older than this are not learned from
  ReplayFunction replay;            // rebuilds observations of stored steps
  std::function<void(const std::string&)> log;  // progress lines
  // Where the kept round's world model and controller are saved ("" : not
  // saved): the round whose greedy episodes reached the most, as the
  // in-process agent keeps (model_based_training.h).
  std::string world_model_path;
  std::string controller_path;
};

std::unique_ptr<LearnerExtension> make_model_based_learner(ModelBasedRunOptions options);

}  // namespace graphworld
