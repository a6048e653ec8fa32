// An actor process's work: a RolloutCollector over the run's training
// graphs, acting with the newest parameters the learner sent, streaming each
// rollout to the learner as one trajectory message made with one parameter
// version.
//
// It holds no state worth saving: a restarted actor starts fresh episodes
// (its seed mixes the run's seed, its id and its incarnation), asks for the
// current parameters and goes on. While the learner is away it keeps
// retrying; when a learner answers again, a new incarnation included, it
// takes that learner's parameters, even an older version after a resume.
//
// Liveness: a heartbeat goes out every second, from inside collection (the
// collector polls once per environment step), so a long rollout never
// looks like a dead actor. run() returns when the learner says stop or
// should_stop() turns true, within about 100 ms.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "common/transport.h"
#include "learner/actor_work.h"
#include "learner/rollout_collector.h"

namespace graphworld {

struct ActorOptions {
  uint32_t actor_id = 0;
  uint64_t incarnation = 0;         // new per process start
  std::string run_id;
  TransportOptions transport;
  double heartbeat_every_s = 1.0;
  int32_t threads = 1;              // LibTorch threads for inference
  // Trajectory messages the learner may not yet have taken when a new
  // rollout starts. The learner takes messages until it has a batch, then
  // updates; with 0, a rollout made while it updates is taken right after,
  // one version old (as the in-process trainer's overlap), and no rollout
  // waits in a queue behind another. An actor faster than the learner would
  // otherwise fill the queues with rollouts too old to learn from. The
  // learner repeats its count with every heartbeat reply, so a lost receipt
  // heals within a second; a message it never took (refused) is given up
  // after receipt_wait_s, but only while the learner answers (a paused or
  // gone learner keeps its actors waiting).
  int32_t max_unreceipted = 0;
  double receipt_wait_s = 10.0;
  double learner_timeout_s = 5.0;   // silence after which the learner is reported lost
  PolicyNetworkConfig network;      // as the learner's
  RolloutCollectorOptions collector;  // its seed is replaced by one derived from id and incarnation
};

struct ActorCounters {
  int64_t rollouts_sent = 0, steps_sent = 0;
  int64_t parameter_versions = 0;   // distinct versions taken
  int64_t refused_messages = 0;
  int64_t learner_losses = 0;
  int64_t costs_settled = 0;        // configurations priced by the learner's answer
  // Made with a learner's parameters while a restarted learner took over:
  // that learner would refuse them, so they are not sent.
  int64_t rollouts_dropped = 0;
  int64_t receipt_timeouts = 0;     // rollouts started without the last one's receipt (receipt_wait_s)
};

// Distinct random streams per actor and per restart, from the run's seed.
uint64_t actor_seed(uint64_t run_seed, uint32_t actor_id, uint64_t incarnation);

class Actor {
 public:
  // A model-free actor: PPO rollouts of the policy network in real
  // environments. The matcher and cost model must outlive the actor.
  Actor(std::vector<TrainingGraph> graphs, const RuleMatcher& matcher, CostModel& cost,
        const LearnerEndpoints& endpoints, ActorOptions options);
  // An actor doing `work` (learner/actor_work.h) with the same connection;
  // options.network and options.collector are unused.
  Actor(std::unique_ptr<ActorWork> work, const LearnerEndpoints& endpoints, ActorOptions options);
  ~Actor();

  // Returns the reason it stopped.
  std::string run(const std::function<bool()>& should_stop);
  const ActorCounters& counters() const;

  // The run's price of an op configuration this actor's cost table lacks:
  // asks the learner; if the run has no price yet, measures it here
  // (`measure`) and proposes it; the learner keeps the first proposal, and
  // its answer is what every actor uses. Asks again every 2 s while the
  // learner is away. Called by the cost model while run() steps
  // environments; once the actor is stopping it returns a local measurement,
  // and that rollout is never sent.
  double settle_cost(const std::string& key, const std::function<double()>& measure);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace graphworld
