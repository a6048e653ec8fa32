#include "launch/runs/store_episode_set.h"

#include <algorithm>
#include <utility>

#include "common/error.h"

namespace graphworld {

StoreEpisodeSet::StoreEpisodeSet(const std::vector<std::string>& paths, const StoreEpisodeSetOptions& options,
                                 const std::function<void(const std::string&)>& progress) {
  if (options.resident_steps < 1) throw UsageError("--resident-steps must be at least 1");
  const int64_t stored = stored_steps_in(paths);
  const int64_t kept = options.first_steps > 0 ? std::min(stored, options.first_steps) : stored;
  if (kept > options.resident_steps) {
    file_ = std::make_unique<EpisodeFile>(options.spill_dir);
    if (progress)
      progress("the stores keep " + std::to_string(stored) + " steps, more than --resident-steps " +
               std::to_string(options.resident_steps) + ": their episodes are rebuilt into a temporary file in " +
               options.spill_dir + " (about 0.6 KiB a step, removed at exit) and trained a part at a time");
  }
  int64_t taken = 0;
  const int64_t first = options.first_steps;
  info_ = stream_store_episodes(
      paths,
      [&](WorldEpisode&& e) {
        if (first > 0 && taken >= first) return;
        taken += static_cast<int64_t>(e.steps.size());
        if (file_)
          file_->append(e);
        else
          in_memory_.push_back(std::move(e));
      },
      progress);
  // --first-steps N: the first episodes in store order holding N steps, what
  // a model-based run had when it last trained its model ("trained on N real
  // steps" in `worldmodel show`), to retrain offline on the same data.
  if (first > 0 && taken != first)
    throw UsageError("the stores' first episodes hold " + std::to_string(taken) + " steps, not --first-steps " +
                     std::to_string(first) + " (a count that ends an episode)");
  if (!file_) memory_source_ = std::make_unique<EpisodesInMemory>(in_memory_);
}

const EpisodeSource& StoreEpisodeSet::episodes() const {
  if (file_) return *file_;
  return *memory_source_;
}

EpisodeSplit split_by_flags(const EpisodeSource& all, const std::vector<bool>& held_out) {
  std::vector<size_t> train, held;
  for (size_t i = 0; i < all.size(); ++i) (i < held_out.size() && held_out[i] ? held : train).push_back(i);
  return {std::make_unique<EpisodeSelection>(all, std::move(train)),
          std::make_unique<EpisodeSelection>(all, std::move(held))};
}

}  // namespace graphworld
