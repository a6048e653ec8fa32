#include "launch/slurm/cluster_config.h"

#include <filesystem>
#include <regex>

#include "common/config_table.h"
#include "common/error.h"
#include "launch/runs/training_setup.h"
#include "learner/training_config.h"

namespace graphworld {
namespace {
namespace fs = std::filesystem;

// A path in cluster.yaml: absolute as given, else from the working
// directory, else beside cluster.yaml (the way training configs name files).
std::string resolve_beside(const std::string& item, const std::string& cluster_path) {
  if (item.empty() || fs::path(item).is_absolute()) return item;
  if (fs::exists(item)) return fs::absolute(item).lexically_normal().string();
  const fs::path beside = fs::absolute(fs::path(cluster_path).parent_path() / item).lexically_normal();
  return fs::exists(beside) ? beside.string() : fs::absolute(item).lexically_normal().string();
}

// The cluster.yaml keys, each with the ClusterSpec field it fills (as
// given; load_cluster_spec then resolves paths and checks them).
const ConfigTable<ClusterSpec>& cluster_keys() {
  static const ConfigTable<ClusterSpec> keys = [] {
    ConfigTable<ClusterSpec> k;
    k.text(
        "run.name", "", "the run's name: the Slurm job name and the run folder under run.output",
        [](ClusterSpec& o) -> auto& { return o.name; });
    k.text(
        "run.output", "", "a folder on a filesystem every node sees; the run folder is run.output/run.name",
        [](ClusterSpec& o) -> auto& { return o.output; });
    k.text(
        "run.training_config", "", "the training config the run trains with (configs/train.yaml lists its keys)",
        [](ClusterSpec& o) -> auto& { return o.training_config; });
    k.texts(
        "run.overrides", {}, "key=value overrides of the training config",
        [](ClusterSpec& o) -> auto& { return o.training_overrides; });
    k.text(
        "slurm.partition", "", "sbatch --partition; empty: the cluster's default",
        [](ClusterSpec& o) -> auto& { return o.partition; });
    k.text(
        "slurm.account", "", "sbatch --account; empty: your default account",
        [](ClusterSpec& o) -> auto& { return o.account; });
    k.text(
        "slurm.qos", "", "sbatch --qos; empty: the default", [](ClusterSpec& o) -> auto& { return o.qos; });
    k.text(
        "slurm.time_limit", "01:00:00", "sbatch --time (M, M:S, H:M:S, D-H, D-H:M or D-H:M:S)",
        [](ClusterSpec& o) -> auto& { return o.time_limit; });
    k.boolean(
        "slurm.requeue", true,
        "requeue on preemption, and requeue itself after the time-limit warning; the next start resumes "
        "from the newest checkpoint",
        [](ClusterSpec& o) -> auto& { return o.requeue; });
    k.integer(
        "slurm.warning_s", 300, 10, 86400,
        "seconds before the time limit that Slurm warns the job (SIGUSR1) so it checkpoints and requeues",
        [](ClusterSpec& o) -> auto& { return o.warning_s; });
    k.texts(
        "slurm.extra_options", {}, "more sbatch options, each as on the command line (--constraint=a100)",
        [](ClusterSpec& o) -> auto& { return o.extra_sbatch; });
    k.integer(
        "learner.nodes", 1, 1, 4096, "nodes for learner ranks",
        [](ClusterSpec& o) -> auto& { return o.learner_nodes; });
    k.integer(
        "learner.gpus_per_node", 0, 0, 64, "GPUs per learner node (sbatch --gpus-per-node); 0: CPU learners",
        [](ClusterSpec& o) -> auto& { return o.gpus_per_node; });
    k.integer(
        "learner.ranks_per_node", 0, 0, 256,
        "learner processes per learner node; 0: one per GPU, or one on a node without GPUs",
        [](ClusterSpec& o) -> auto& { return o.learner_ranks_per_node; });
    k.integer(
        "learner.cpus_per_rank", 2, 1, 1024, "CPUs each learner process uses (srun --cpus-per-task)",
        [](ClusterSpec& o) -> auto& { return o.cpus_per_rank; });
    k.integer(
        "learner.port", 29400, 1024, 65535,
        "with several learner ranks: the port on the first learner node where they meet (c10d TCPStore)",
        [](ClusterSpec& o) -> auto& { return o.rendezvous_port; });
    k.text(
        "learner.local_dir", "/tmp",
        "a folder on the learner node's own disk for the rollout store (copied to the run folder at "
        "every checkpoint and at the end)",
        [](ClusterSpec& o) -> auto& { return o.local_dir; });
    k.integer(
        "actors.nodes", 1, 0, 65536, "nodes for actors; 0: the actors share the learner's first node",
        [](ClusterSpec& o) -> auto& { return o.actor_nodes; });
    k.integer(
        "actors.real_per_node", 2, 0, 4096, "real-environment actors per actor node",
        [](ClusterSpec& o) -> auto& { return o.real_per_node; });
    k.integer(
        "actors.dream_per_node", 0, 0, 4096, "dream actors per actor node (model-based training configs)",
        [](ClusterSpec& o) -> auto& { return o.dream_per_node; });
    k.integer(
        "actors.cpus_per_actor", 1, 1, 1024, "CPUs each actor uses (srun --cpus-per-task)",
        [](ClusterSpec& o) -> auto& { return o.cpus_per_actor; });
    k.text(
        "graphworld", "", "the graphworld executable as the nodes see it; empty: the one running launch",
        [](ClusterSpec& o) -> auto& { return o.executable; });
    return k;
  }();
  return keys;
}

}  // namespace

const ConfigSchema& cluster_config_schema() { return cluster_keys().schema; }

bool is_slurm_time(const std::string& text) { return slurm_time_seconds(text) >= 0; }

int64_t slurm_time_seconds(const std::string& text) {
  static const std::regex form(R"(^(?:(\d+)-)?(\d+)(?::(\d{1,2}))?(?::(\d{1,2}))?$)");
  std::smatch m;
  if (!std::regex_match(text, m, form) || text.size() > 20) return -1;
  auto part = [&](int i) { return m[i].matched ? std::stoll(m[i].str()) : int64_t{0}; };
  const bool days = m[1].matched;
  // Without days: M, M:S or H:M:S; with days: D-H, D-H:M or D-H:M:S.
  if (days) return part(1) * 86400 + part(2) * 3600 + part(3) * 60 + part(4);
  if (m[4].matched) return part(2) * 3600 + part(3) * 60 + part(4);
  return part(2) * 60 + part(3);
}

ClusterSpec load_cluster_spec(const std::string& path, const std::vector<std::string>& overrides,
                              const std::string& default_executable, bool check_training) {
  const Config config = load_config(cluster_config_schema(), path, overrides);
  ClusterSpec spec = cluster_keys().options_from(config);
  spec.source = path;
  spec.config = config;
  auto fail = [&](const std::string& key, const std::string& what) {
    return ConfigError(path + ": '" + key + "' " + what);
  };
  if (!std::regex_match(spec.name, std::regex(R"(^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$)")))
    throw fail("run.name", spec.name.empty() ? "is required: it names the job and the run folder"
                                             : "must be 1 to 64 letters, digits, '.', '_' or '-' (starting with a "
                                               "letter or digit), got '" +
                                                   spec.name + "'");
  if (spec.output.empty()) throw fail("run.output", "is required: a folder on a filesystem every node of the job sees");
  if (spec.output.find_first_of(" \t\n%") != std::string::npos)
    throw fail("run.output",
               "must not hold spaces or '%' (Slurm's file patterns read them), got '" + spec.output + "'");
  spec.run_dir = (fs::path(resolve_beside(spec.output, path)) / spec.name).lexically_normal().string();
  spec.training_config = resolve_beside(spec.training_config, path);
  if (spec.training_config.empty())
    throw fail("run.training_config", "is required: the training config to run (configs/train.yaml lists its keys)");

  if (!is_slurm_time(spec.time_limit))
    throw fail("slurm.time_limit",
               "must be a Slurm time (M, M:S, H:M:S, D-H, D-H:M or D-H:M:S), got '" + spec.time_limit + "'");
  // The warning ends the job's work: it must leave the job time to train.
  if (slurm_time_seconds(spec.time_limit) < 2 * spec.warning_s)
    throw fail("slurm.time_limit", "is " + spec.time_limit + " but 'slurm.warning_s' (" +
                                       std::to_string(spec.warning_s) +
                                       " s) asks for the stop that long before it: give a time limit of at least twice "
                                       "the warning, or a shorter warning");
  for (const std::string& option : spec.extra_sbatch)
    if (option.rfind("--", 0) != 0 || option.find('\n') != std::string::npos)
      throw fail("slurm.extra_options",
                 "items are sbatch long options such as --constraint=a100, got '" + option + "'");

  // learner.ranks_per_node 0: one rank per GPU, or one on a node without GPUs.
  if (spec.learner_ranks_per_node == 0) spec.learner_ranks_per_node = std::max<int64_t>(spec.gpus_per_node, 1);
  if (spec.gpus_per_node > 0 && spec.learner_ranks_per_node > spec.gpus_per_node)
    throw fail("learner.ranks_per_node", "is " + std::to_string(spec.learner_ranks_per_node) +
                                             " but a learner node has " + std::to_string(spec.gpus_per_node) +
                                             " GPUs (learner.gpus_per_node); give each rank a GPU, or set 0");
  if (spec.local_dir.empty() || !fs::path(spec.local_dir).is_absolute())
    throw fail("learner.local_dir",
               "must be an absolute folder on the learner node's own disk, got '" + spec.local_dir + "'");
  if (spec.real_per_node < 1)
    throw fail("actors.real_per_node", "must be at least 1: every run needs real-environment actors");

  if (spec.executable.empty()) spec.executable = default_executable;
  spec.executable = resolve_beside(spec.executable, path);
  // The run folder keeps this config (RUN/slurm/cluster.yaml): its paths
  // must mean the same from there.
  spec.config.set("run.output", fs::path(spec.run_dir).parent_path().string(), path);
  spec.config.set("run.training_config", spec.training_config, path);
  spec.config.set("graphworld", spec.executable, path);

  if (check_training) {
    if (!fs::is_regular_file(spec.training_config))
      throw fail("run.training_config", "names " + spec.training_config + ", which is not a file");
    const bool model_based = training_options_from(cluster_training_config(spec)).model_based.enabled;
    if (spec.dream_per_node > 0 && !model_based)
      throw fail("actors.dream_per_node", "is " + std::to_string(spec.dream_per_node) + " but " + spec.training_config +
                                              " is a model-free config (model_based.enabled is false): set it to 0");
    if (spec.learner_ranks() > 1 && model_based)
      throw fail("learner.ranks_per_node", "gives " + std::to_string(spec.learner_ranks()) + " learner ranks but " +
                                               spec.training_config +
                                               " trains the model-based agent, which runs one "
                                               "learner rank: set learner.nodes 1 and learner.ranks_per_node 1");
    if (spec.dream_per_node == 0 && model_based)
      throw fail("actors.dream_per_node",
                 "is 0 but " + spec.training_config +
                     " trains the model-based agent, whose controller learns from dream actors: "
                     "set it to 1 or more");
  }
  return spec;
}

Config cluster_training_config(const ClusterSpec& spec) {
  std::vector<std::string> overrides = spec.training_overrides;
  overrides.push_back("distributed.actors=" + std::to_string(spec.real_actors()));
  if (spec.dream_actors() > 0) overrides.push_back("model_based.dream_actors=" + std::to_string(spec.dream_actors()));
  try {
    return load_training_config(spec.training_config, overrides);
  } catch (const ConfigError& e) {
    throw ConfigError(spec.source + ": run.training_config: " + e.what());
  }
}

}  // namespace graphworld
