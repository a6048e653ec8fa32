// The learner process of the distributed system: it receives actors'
// trajectories over the transport, checks each message
// (learner/wire_message.h), keeps every valid step in the run's HDF5
// rollout store, learns only from samples at most
// distributed.max_policy_lag versions old, updates PPO once a rollout's worth of steps
// (env.num_envs x env.steps_per_env) is in hand, and publishes each new
// parameter version. It is the in-process Trainer's PpoLearner, checkpoint
// files and metrics rows, with the collector moved out to actor processes.
//
// Run folder, beside the Trainer's files:
//   endpoints        where actors connect (written once bound)
//   rollouts.h5      the rollout store (common/rollout_store.h)
//
// Actors are stateless: on a resume the learner goes on from its
// checkpoint, the store drops any unflushed tail, and actors that reconnect
// get the current parameters at once. Nothing here blocks for longer than
// one PPO update; a stop writes a final checkpoint, flushes the store and
// tells the live actors to stop.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/transport.h"
#include "learner/learner_counters.h"
#include "learner/learner_extension.h"
#include "learner/trainer.h"

namespace graphworld {

class DataParallelGroup;

struct DistributedLearnerOptions {
  std::string bind_host = "127.0.0.1";
  // CURVE with the run's keys (common/run_keys.h), made if missing. A run
  // whose folder holds keys always uses them; a non-loopback bind needs them.
  bool curve = false;
  TransportOptions transport;
  std::string run_id;                 // messages of other runs are refused
  std::vector<std::string> graphs;    // the training graphs' names, in config order (index = graph_index)
  int32_t num_xfers = 0;
  std::string rule_library_hash;
  // Called once the run folder exists, before the transport binds: fixes the
  // run's cost model there (learner/run_cost_table.h).
  std::function<void(const std::string& run_dir)> prepare_run_folder;
  // A model-based run: called once the run folder is prepared, it makes
  // what takes the place of PPO on real samples (learner/learner_extension.h).
  // Real trajectories then feed it, dream trajectories are taken, and the
  // run ends when its schedule does or at train.total_env_steps real steps.
  std::function<std::unique_ptr<LearnerExtension>(const std::string& run_dir)> make_extension;
  // Where the rollout store is written; empty: the run folder. A cluster
  // learner keeps it on its node's local disk (HDF5's SWMR and file locks
  // are unreliable on NFS) and copies it to RUN/rollouts.h5 after every
  // checkpoint and at the end; a resume on a node without the local file
  // starts from that copy.
  std::string store_dir;
  // Rank 0 of data-parallel learners (learner/data_parallel.h), or nullptr.
  // It sends the other ranks its learner state now and every update's
  // batch; the group must outlive run().
  DataParallelGroup* data_parallel = nullptr;
};

class DistributedLearner {
 public:
  // Binds the transport and writes RUN/endpoints; a resume starts from the
  // newest checkpoint (or `checkpoint`), its counters included, and appends
  // to the existing store.
  // Refusals as Trainer's.
  DistributedLearner(const RunSettings& settings, DistributedLearnerOptions options, const std::string& run_dir, bool resume,
                     const std::string& checkpoint = "");
  ~DistributedLearner();

  const LearnerEndpoints& endpoints() const;

  TrainingOutcome run(const std::function<bool()>& should_stop = {},
                      const std::function<void(const UpdateReport&)>& on_update = {});

  const LearnerCounters& counters() const;
  int64_t version() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace graphworld
