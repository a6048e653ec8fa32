// The parameters a model-based run's learner publishes (one blob, sent as
// ParameterChunks like the model-free policy's): the world model and the
// controller, and the schedule position that tells each actor what to do.
//
//   generation 0      no world model yet: real actors explore at random
//   real_episodes N   real actors are wanted for the round's first N real
//                     episodes: the first `greedy_episodes` greedy (episode
//                     k on training graph k % graphs), then one per entry of
//                     `plans` following that dream plan in the real graph,
//                     the rest sampled with `explore`; 0: real actors wait
//   dream             dream actors are wanted (the controller is training)
//
// Torch-free.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace graphworld {

struct ModelBasedParameters {
  int64_t generation = 0;       // the world model's; 0: none yet
  int32_t round = 0;            // 0: the random episodes before the first model
  // Changes whenever the learner asks its real actors to play their shares
  // of the round's episodes from the start (a new phase, a resume, or
  // episodes it waited for in vain).
  int64_t ask = 0;
  int32_t real_episodes = 0;    // real episodes wanted this round (over all real actors)
  int32_t greedy_episodes = 0;  // of which the first this many act greedily
  double explore = 0;           // chance of a random allowed action in sampled episodes
  int32_t random_steps = 0;     // rewrites a random episode takes before it stops (0: until none applies)
  bool dream = false;           // dream actors wanted
  // The dream's greedy plan per training graph (xfer ids), to be played in
  // the real graphs so the world model sees where its dream was wrong.
  std::vector<std::vector<int32_t>> plans;
  std::string world_model;      // WorldModel::to_bytes(); empty in generation 0
  std::string controller;       // controller_to_bytes(); empty in generation 0
};

std::string encode_model_based_parameters(const ModelBasedParameters& parameters);
// FormatError naming `what` when the blob is not one.
ModelBasedParameters decode_model_based_parameters(const std::string& blob, const std::string& what);

}  // namespace graphworld
