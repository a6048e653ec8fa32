// The two kinds of actor of a model-based run (learner/actor_work.h), both
// acting with the world model and controller the learner publishes
// (model_based_parameters.h):
//
//   real    plays real episodes in GraphEnv: random ones before the first
//           world model, then the controller's (on the real encoder's z,
//           the world model's h and the real masks). Each episode goes to
//           the learner as a Rollout, so it lands in the rollout store like
//           any real step, and feeds the world model.
//   dream   steps a batch of dream environments (dream_env.h) with the
//           controller and sends DreamTrajectoryMessages for the learner's
//           PPO. It never touches a graph.
//
// Torch-free header.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "learner/actor_work.h"
#include "learner/rollout_collector.h"

namespace graphworld {

struct RealModelBasedOptions {
  GraphEnvOptions env;
  int32_t actor_index = 0;  // this actor's place among the run's real actors
  int32_t real_actors = 1;
  uint64_t seed = 0;        // differs per actor and per restart (actor_seed)
  int32_t max_message_steps = 1 << 20;  // an episode longer than this is refused at the start (config check)
  bool random_locations = false;        // model_based.random_locations: the random episodes' rules at random matches
  bool look_ahead_locations = false;    // model_based.look_ahead_locations: rules where they pay most within two rewrites
};

// Episode k of a round (counting over all real actors) is played by real
// actor k % real_actors: in the round's real phase each plays its share.
// Greedy episode k plays training graph k % graphs, as does sampled one.
// The matcher and cost model must outlive the work.
std::unique_ptr<ActorWork> make_real_model_based_work(std::vector<TrainingGraph> graphs, const RuleMatcher& matcher,
                                                      CostModel& cost, RealModelBasedOptions options);

struct DreamActorOptions {
  int64_t rows = 256;     // dream environments stepped together
  int32_t horizon = 16;   // steps of each per message
  double tau = 1.0;       // the world model's sampling temperature
  RewardKind dream_reward = RewardKind::Incremental;  // model_based.dream_reward: what a step pays the controller
  int32_t threads = 1;    // LibTorch threads
  uint64_t seed = 0;
  std::string device = "cpu";  // where the dream runs: "cpu" or "cuda:N" (learner/compute_device.h resolves)
};
std::unique_ptr<ActorWork> make_dream_work(DreamActorOptions options);

}  // namespace graphworld
