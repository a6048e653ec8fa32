// Which episode each stored step belongs to, as a rollout store is read in
// order: each (actor id, env slot) in store order, an episode from its
// step 0 to its done. A step whose episode history is not in what was read
// (the store began mid-episode, or a step could not be rebuilt) starts no
// episode, and the unfinished episode of its slot ends there. The rule
// world-model episodes (StoredEpisodeAssembler) and Python's
// RolloutStore.episodes() both follow; `Episode` is theirs, with `steps`.
#pragma once

#include <cstdint>
#include <map>
#include <utility>

#include "common/rollout_store.h"

namespace graphworld {

template <typename Episode>
class StoredEpisodeGrouper {
 public:
  // The episode `s` extends (the caller appends s to it, then calls
  // step_added), or nullptr where its history is missing. An unfinished
  // episode of the slot that `s` does not continue goes to
  // ended(episode, false) first.
  template <typename Ended>
  Episode* place(const StoredStep& s, Ended&& ended) {
    const auto key = std::make_pair(s.actor_id, s.env_slot);
    auto it = open_.find(key);
    if (it != open_.end() && s.episode_step != 0 && static_cast<int64_t>(it->second.steps.size()) == s.episode_step)
      return &it->second;
    if (it != open_.end()) {
      if (!it->second.steps.empty()) ended(it->second, false);
      open_.erase(it);
    }
    if (s.episode_step != 0) return nullptr;
    return &open_.try_emplace(key).first->second;
  }

  // After appending `s`: its episode goes to ended(episode, true) if s ended it.
  template <typename Ended>
  void step_added(const StoredStep& s, Ended&& ended) {
    if (!s.done) return;
    const auto it = open_.find(std::make_pair(s.actor_id, s.env_slot));
    ended(it->second, true);
    open_.erase(it);
  }

  // The episodes the data leaves unfinished, by (actor id, env slot).
  template <typename Ended>
  void finish(Ended&& ended) {
    for (auto& [key, episode] : open_)
      if (!episode.steps.empty()) ended(episode, false);
    open_.clear();
  }

  bool empty() const { return open_.empty(); }
  int64_t open_steps() const {
    int64_t n = 0;
    for (const auto& [key, episode] : open_) n += static_cast<int64_t>(episode.steps.size());
    return n;
  }

 private:
  std::map<std::pair<uint32_t, int32_t>, Episode> open_;
};

}  // namespace graphworld
