#include "learner/actor_registry.h"

namespace graphworld {

bool ActorRegistry::heard_from(uint32_t actor_id, uint64_t incarnation, const std::string& peer,
                               Clock::time_point now) {
  auto [it, inserted] = actors_.try_emplace(actor_id);
  Entry& e = it->second;
  const bool joined = inserted || e.lost || e.incarnation != incarnation;
  e.incarnation = incarnation;
  e.peer = peer;
  e.last_seen = now;
  e.lost = false;
  if (joined) ++joins_;
  return joined;
}

std::vector<uint32_t> ActorRegistry::newly_lost(Clock::time_point now) {
  std::vector<uint32_t> lost;
  for (auto& [id, e] : actors_)
    if (!e.lost && std::chrono::duration<double>(now - e.last_seen).count() > timeout_s_) {
      e.lost = true;
      ++losses_;
      lost.push_back(id);
    }
  return lost;
}

int32_t ActorRegistry::alive() const {
  int32_t n = 0;
  for (const auto& [id, e] : actors_) n += e.lost ? 0 : 1;
  return n;
}

std::vector<std::string> ActorRegistry::live_peers() const {
  std::vector<std::string> peers;
  for (const auto& [id, e] : actors_)
    if (!e.lost) peers.push_back(e.peer);
  return peers;
}

std::string ActorRegistry::peer_of(uint32_t actor_id, uint64_t incarnation) const {
  const auto it = actors_.find(actor_id);
  return it != actors_.end() && it->second.incarnation == incarnation ? it->second.peer : std::string();
}

}  // namespace graphworld
