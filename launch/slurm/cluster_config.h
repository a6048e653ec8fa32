// launch/cluster.yaml: how a training run is laid out on a Slurm cluster.
//
// The keys (launch/cluster.yaml documents each) are checked the way
// training configs are (common/config.h): an unknown key, a wrong type or a
// value out of range is a ConfigError naming the file, the key and the
// nearest valid key. On top of that, load_cluster_spec checks what a schema
// cannot: a usable run name and time limit, at least one real actor, dream
// actors only for a model-based training config, and the training config
// itself (loaded with its overrides, so its errors surface before a job
// waits in a queue for hours).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "common/config.h"

namespace graphworld {

const ConfigSchema& cluster_config_schema();

struct ClusterSpec {
  std::string source;  // the cluster.yaml it came from (for messages)
  Config config;       // every key resolved (saved as RUN/slurm/cluster.yaml)

  // The keys' values (cluster_config.cc's key table fills them; the
  // defaults are the table's), paths resolved and checked.
  std::string name;             // run.name: job name and run folder name
  std::string output;           // run.output, as given
  std::string run_dir;          // run.output/run.name, absolute
  std::string training_config;  // run.training_config, absolute
  std::vector<std::string> training_overrides;

  std::string partition, account, qos, time_limit;
  bool requeue = false;
  int64_t warning_s = 0;
  std::vector<std::string> extra_sbatch;  // slurm.extra_options, each an sbatch option

  int64_t learner_nodes = 0, gpus_per_node = 0, learner_ranks_per_node = 0, cpus_per_rank = 0;
  int64_t rendezvous_port = 0;  // learner.port: where data-parallel ranks meet
  std::string local_dir;  // learner.local_dir: the learner node's own disk, for the rollout store

  int64_t actor_nodes = 0;  // 0: actors share the learner's first node
  int64_t real_per_node = 0, dream_per_node = 0, cpus_per_actor = 0;
  std::string executable;  // graphworld on the nodes, absolute

  int64_t real_actors() const { return std::max<int64_t>(actor_nodes, 1) * real_per_node; }
  int64_t dream_actors() const { return std::max<int64_t>(actor_nodes, 1) * dream_per_node; }
  int64_t total_nodes() const { return learner_nodes + actor_nodes; }
  int64_t learner_ranks() const { return learner_nodes * learner_ranks_per_node; }
};

// From a cluster.yaml and `key=value` overrides. With `check_training`, the
// training config is loaded too (ConfigError naming it); a job reading its
// run folder's copy skips that. `default_executable` fills an empty
// `graphworld` key.
ClusterSpec load_cluster_spec(const std::string& path, const std::vector<std::string>& overrides,
                              const std::string& default_executable, bool check_training = true);

// The training config a new cluster run starts from: run.training_config
// with its overrides, paths absolute, and the actor counts the cluster
// layout gives (distributed.actors, model_based.dream_actors).
Config cluster_training_config(const ClusterSpec& spec);

// True for Slurm's time formats: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S.
bool is_slurm_time(const std::string& text);
// The same as seconds; -1 if it is not one.
int64_t slurm_time_seconds(const std::string& text);

}  // namespace graphworld
