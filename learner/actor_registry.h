// The learner's view of its actors: who said hello, when each was last
// heard from, and which have gone silent for longer than the heartbeat
// timeout. An actor is known by its id; a new incarnation (a restarted
// process) replaces the old one.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace graphworld {

class ActorRegistry {
 public:
  using Clock = std::chrono::steady_clock;

  explicit ActorRegistry(double timeout_s) : timeout_s_(timeout_s) {}

  // Any message from the actor. Returns true if it is new, or a new
  // incarnation, or back after being counted lost (the caller sends it the
  // current parameters and logs the join).
  bool heard_from(uint32_t actor_id, uint64_t incarnation, const std::string& peer, Clock::time_point now);
  // Actors silent for longer than the timeout, each reported once per loss.
  std::vector<uint32_t> newly_lost(Clock::time_point now);

  int32_t alive() const;
  // A resumed learner goes on from the run's counts (its checkpoint's).
  void continue_counts(int64_t joins, int64_t losses) {
    joins_ = joins;
    losses_ = losses;
  }
  int64_t joins() const { return joins_; }
  int64_t losses() const { return losses_; }
  // The routing identities of the live actors (for broadcasts like stop).
  std::vector<std::string> live_peers() const;
  // The routing identity of this incarnation of the actor, or empty if it
  // has not said hello (or a newer incarnation has).
  std::string peer_of(uint32_t actor_id, uint64_t incarnation) const;

 private:
  struct Entry {
    uint64_t incarnation = 0;
    std::string peer;
    Clock::time_point last_seen;
    bool lost = false;
  };
  double timeout_s_;
  std::map<uint32_t, Entry> actors_;
  int64_t joins_ = 0, losses_ = 0;
};

}  // namespace graphworld
