// What an actor process does with the parameters its learner sends. The
// Actor (actors/actor.h) owns the connection: joining, heartbeats,
// parameter assembly, receipts, stopping. An ActorWork owns the acting:
// the model-free policy's rollouts in real environments (actors/), a
// model-based run's real episodes and dream rollouts (worldmodel/).
//
// Torch-free: the interface between the connection and the learning code.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "learner/wire_message.h"

namespace graphworld {

class ActorWork {
 public:
  virtual ~ActorWork() = default;

  // Takes the parameter blob of `version` (what the learner published).
  // Throws Error to refuse it; the work then keeps what it held.
  virtual void load_parameters(const std::string& blob, int64_t version) = 0;

  // Whether the parameters held ask for work now. A model-based run's
  // learner says, in its parameters, which actors it wants and when; a
  // work that has none waits for newer parameters.
  virtual bool has_work() const { return true; }

  // One trajectory message's body (a Rollout or a DreamTrajectoryMessage),
  // made with the parameters held, start to end. `stop_now` is polled
  // often (it also keeps the connection alive); nullopt when it turned true.
  virtual std::optional<MessageBody> make(const std::function<bool()>& stop_now) = 0;
};

}  // namespace graphworld
