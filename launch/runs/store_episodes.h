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
  // The runs were model-based with model_based.best_locations: their rules
  // went to their best-paying location (WorldModelInfo::best_locations).
  bool best_locations = false;
  // ... and model_based.look_ahead_locations: where they paid most within
  // two rewrites (WorldModelInfo::look_ahead_locations).
  bool look_ahead_locations = false;
  std::string rule_library_hash;
  int64_t stored_steps = 0, rebuilt_steps = 0, missed_steps = 0, cost_mismatches = 0;
};

// FormatError / UsageError naming the store when a file is not a rollout
// store, its config cannot be read, or the stores disagree on the rules or
// the episode horizon. `progress` gets one line per store, and one per
// slice read while a large store is replayed.
StoreEpisodes load_store_episodes(const std::vector<std::string>& paths,
                                  const std::function<void(const std::string&)>& progress);

// The same, streamed, for stores whose episodes would not fit in memory:
// each store is read and replayed in slices of `slice_steps` stored steps,
// and every episode goes to `sink` as it ends (graph_index into the
// result's `graphs`); the result's `episodes` stay empty. An episode still
// open at a slice's end carries over to the next, so the sink sees the
// episodes load_store_episodes returns, in the same order.
using EpisodeSink = std::function<void(WorldEpisode&&)>;
StoreEpisodes stream_store_episodes(const std::vector<std::string>& paths, const EpisodeSink& sink,
                                    const std::function<void(const std::string&)>& progress,
                                    int64_t slice_steps = 65536);

// Steps kept in the stores (before replay), read from their headers:
// what decides whether their episodes are held in memory.
int64_t stored_steps_in(const std::vector<std::string>& paths);

}  // namespace graphworld
