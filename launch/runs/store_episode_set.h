// The rebuilt episodes of rollout stores, held where they fit: in memory
// when the stores keep at most `resident_steps` steps, otherwise in a
// nameless file on disk (worldmodel/episode_file.h) and read back a batch
// at a time, so that offline world-model training and evaluation work on
// stores far larger than memory. What `worldmodel train` and `worldmodel
// eval` read.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "launch/runs/store_episodes.h"
#include "worldmodel/episode_file.h"
#include "worldmodel/episode_source.h"

namespace graphworld {

struct StoreEpisodeSetOptions {
  // Stores keeping more steps than this are rebuilt into a file.
  int64_t resident_steps = 1'000'000;
  std::string spill_dir = ".";  // where that file goes
  // > 0: only the first episodes in store order, holding exactly this many
  // steps (UsageError when no episode ends there).
  int64_t first_steps = 0;
};

class StoreEpisodeSet {
 public:
  // Errors as load_store_episodes; `progress` gets its lines.
  StoreEpisodeSet(const std::vector<std::string>& paths, const StoreEpisodeSetOptions& options,
                  const std::function<void(const std::string&)>& progress);
  // Not moved: episodes() may refer to this object's own vector.
  StoreEpisodeSet(StoreEpisodeSet&&) = delete;
  StoreEpisodeSet& operator=(StoreEpisodeSet&&) = delete;

  // The stores' rules, horizon, graphs and replay counts (no episodes).
  const StoreEpisodes& info() const { return info_; }
  const EpisodeSource& episodes() const;
  bool on_disk() const { return file_ != nullptr; }
  int64_t bytes_on_disk() const { return file_ ? file_->bytes() : 0; }

 private:
  StoreEpisodes info_;
  std::vector<WorldEpisode> in_memory_;
  std::unique_ptr<EpisodesInMemory> memory_source_;
  std::unique_ptr<EpisodeFile> file_;
};

// Train and held-out episodes of a source, by flags (held_out_by_shuffle,
// held_out_by_arrival).
struct EpisodeSplit {
  std::unique_ptr<EpisodeSelection> train, held_out;
};
EpisodeSplit split_by_flags(const EpisodeSource& all, const std::vector<bool>& held_out);

}  // namespace graphworld
