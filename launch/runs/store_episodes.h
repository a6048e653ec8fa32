// Real episodes read back from one or several rollout stores (a run's
// rollouts.h5), for offline world-model training and evaluation. Each
// store's own resolved config (kept in the store) says which graphs, rules,
// cost model and episode settings its run had; observations are rebuilt by
// replaying (learner/observation_replay.h) with the cost model of the run
// folder the store sits in (its rates or cost table), or the config's.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "worldmodel/world_episode.h"

namespace graphworld {

struct StoreEpisodes {
  std::vector<WorldEpisode> episodes;  // graph_index into `graphs`
  std::vector<std::string> graphs;     // merged over the stores, by name
  int32_t num_xfers = 0;
  int32_t max_steps = 0;
  std::string reward;  // the runs' reward kind (incremental, final, measured)
  std::string rule_library_hash;
  int64_t stored_steps = 0, rebuilt_steps = 0, missed_steps = 0, cost_mismatches = 0;
};

// FormatError / UsageError naming the store when a file is not a rollout
// store, its config cannot be read, or the stores disagree on the rules or
// the episode horizon. `progress` gets one line per store.
StoreEpisodes load_store_episodes(const std::vector<std::string>& paths,
                                  const std::function<void(const std::string&)>& progress);

}  // namespace graphworld
