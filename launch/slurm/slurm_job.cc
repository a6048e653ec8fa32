#include "launch/slurm/slurm_job.h"

#include <unistd.h>

#include <sstream>

#include "common/error.h"

namespace graphworld {
namespace {

std::string join(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

}  // namespace

std::string slurm_dir(const std::string& run_dir) { return run_dir + "/slurm"; }

std::string local_store_dir(const ClusterSpec& spec) {
  // Per user and run: /tmp is shared by everyone on the node.
  return spec.local_dir + "/graphworld-" + std::to_string(getuid()) + "-" + spec.name;
}

std::string shell_line(const std::vector<std::string>& argv) {
  std::string line;
  for (const std::string& arg : argv) {
    const bool plain = !arg.empty() && arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                             "0123456789_-+=./,:@%") == std::string::npos;
    std::string quoted = arg;
    if (!plain) {
      quoted = "'";
      for (char ch : arg) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
      quoted += "'";
    }
    line += (line.empty() ? "" : " ") + quoted;
  }
  return line;
}

std::string sbatch_script(const ClusterSpec& spec) {
  std::ostringstream s;
  const std::string logs = slurm_dir(spec.run_dir);
  s << "#!/bin/bash\n";
  s << "# graphworld cluster run '" << spec.name << "', written by 'graphworld launch " << spec.source << "'.\n";
  s << "# learner: " << spec.learner_nodes << " node(s), " << spec.learner_ranks_per_node << " rank(s) per node, "
    << spec.gpus_per_node << " GPU(s) per node, " << spec.cpus_per_rank << " CPU(s) per rank\n";
  if (spec.actor_nodes > 0)
    s << "# actors: " << spec.actor_nodes << " node(s) x (" << spec.real_per_node << " real + " << spec.dream_per_node
      << " dream), " << spec.cpus_per_actor << " CPU(s) each\n";
  else
    s << "# actors: " << spec.real_per_node << " real + " << spec.dream_per_node
      << " dream on the learner's first node, " << spec.cpus_per_actor << " CPU(s) each\n";
  s << "#SBATCH --job-name=" << spec.name << "\n";
  s << "#SBATCH --nodes=" << spec.total_nodes() << "\n";
  s << "#SBATCH --exclusive\n";
  s << "#SBATCH --time=" << spec.time_limit << "\n";
  if (!spec.partition.empty()) s << "#SBATCH --partition=" << spec.partition << "\n";
  if (!spec.account.empty()) s << "#SBATCH --account=" << spec.account << "\n";
  if (!spec.qos.empty()) s << "#SBATCH --qos=" << spec.qos << "\n";
  if (spec.gpus_per_node > 0) s << "#SBATCH --gpus-per-node=" << spec.gpus_per_node << "\n";
  s << "#SBATCH " << (spec.requeue ? "--requeue" : "--no-requeue") << "\n";
  // B: the batch shell alone is warned; it asks the learner for its final
  // checkpoint and stops the steps itself.
  s << "#SBATCH --signal=B:USR1@" << spec.warning_s << "\n";
  s << "#SBATCH --open-mode=append\n";
  s << "#SBATCH --output=" << logs << "/job-%j.out\n";
  for (const std::string& option : spec.extra_sbatch) s << "#SBATCH " << option << "\n";
  s << "\n";
  s << "# Starts the learner and actor steps, restarts failed actors, and on the\n";
  s << "# warning checkpoints and requeues the job; a new start resumes the run.\n";
  s << "exec " << shell_line({spec.executable, "launch", "job", spec.run_dir}) << "\n";
  return s.str();
}

JobNodes split_job_nodes(const ClusterSpec& spec, const std::vector<std::string>& allocation) {
  if (static_cast<int64_t>(allocation.size()) < spec.total_nodes())
    throw Error("the job has " + std::to_string(allocation.size()) + " node(s) but " + spec.source + " asks for " +
                std::to_string(spec.total_nodes()) + " (learner.nodes + actors.nodes)");
  JobNodes nodes;
  for (int64_t i = 0; i < spec.total_nodes(); ++i)
    (i < spec.learner_nodes ? nodes.learner : nodes.actors).push_back(allocation[static_cast<size_t>(i)]);
  return nodes;
}

const std::string& actor_node(const ClusterSpec& spec, const JobNodes& nodes, int64_t actor_id) {
  if (nodes.actors.empty()) return nodes.learner.front();
  const int64_t real = spec.real_actors();
  const int64_t index = actor_id < real ? actor_id / spec.real_per_node : (actor_id - real) / spec.dream_per_node;
  return nodes.actors.at(static_cast<size_t>(index));
}

std::vector<std::string> learner_step_prefix(const ClusterSpec& spec, const JobNodes& nodes) {
  std::vector<std::string> argv = {"srun",
                                   "--overlap",
                                   "--job-name=learner",
                                   "--nodes=" + std::to_string(spec.learner_nodes),
                                   "--ntasks=" + std::to_string(spec.learner_ranks()),
                                   "--ntasks-per-node=" + std::to_string(spec.learner_ranks_per_node),
                                   "--nodelist=" + join(nodes.learner, ","),
                                   "--cpus-per-task=" + std::to_string(spec.cpus_per_rank),
                                   "--kill-on-bad-exit=1"};
  if (spec.gpus_per_node > 0) argv.push_back("--gpus-per-task=1");
  return argv;
}

std::vector<std::string> actor_step_prefix(const ClusterSpec& spec, const JobNodes& nodes, int64_t actor_id) {
  const bool dream = actor_id >= spec.real_actors();
  std::vector<std::string> argv = {"srun",
                                   "--overlap",
                                   "--job-name=" + std::string(dream ? "dream-actor-" : "actor-") + std::to_string(actor_id),
                                   "--nodes=1",
                                   "--ntasks=1",
                                   "--nodelist=" + actor_node(spec, nodes, actor_id),
                                   "--cpus-per-task=" + std::to_string(spec.cpus_per_actor)};
  // Dream actors step their world model on a GPU where the nodes have them
  // (train.device: cuda); overlapping steps share it.
  if (dream && spec.gpus_per_node > 0) argv.push_back("--gpus-per-task=1");
  return argv;
}

std::vector<std::string> actor_extra_args(const ClusterSpec& spec) {
  if (spec.actor_nodes == 0) return {"--nice", "5"};
  return {};
}

std::vector<std::string> learner_command(const ClusterSpec& spec, const JobNodes& nodes, bool resume) {
  std::vector<std::string> argv = {spec.executable, "learner"};
  if (resume) {
    argv.insert(argv.end(), {"--resume", spec.run_dir});
  } else {
    argv.insert(argv.end(), {slurm_dir(spec.run_dir) + "/training.yaml", "--run", spec.run_dir});
  }
  // Every interface: actors on other nodes connect to the node's name,
  // which the learner writes to RUN/endpoints. Not loopback, so CURVE.
  argv.insert(argv.end(), {"--bind", "0.0.0.0", "--store-dir", local_store_dir(spec)});
  // Each task's rank and the rank count come from srun (SLURM_PROCID, SLURM_NTASKS).
  if (spec.learner_ranks() > 1)
    argv.insert(argv.end(), {"--data-parallel", nodes.learner.front() + ":" + std::to_string(spec.rendezvous_port)});
  return argv;
}

std::vector<std::string> describe_job_steps(const ClusterSpec& spec, const JobNodes& nodes, bool resume) {
  std::vector<std::string> lines;
  std::vector<std::string> learner = learner_step_prefix(spec, nodes);
  for (const std::string& arg : learner_command(spec, nodes, resume)) learner.push_back(arg);
  lines.push_back(shell_line(learner));
  for (int64_t k = 0; k < spec.real_actors() + spec.dream_actors(); ++k) {
    std::vector<std::string> actor = actor_step_prefix(spec, nodes, k);
    for (const std::string& arg : {spec.executable, std::string("actor"), std::string("--run"), spec.run_dir,
                                   std::string("--id"), std::to_string(k)})
      actor.push_back(arg);
    for (const std::string& arg : actor_extra_args(spec)) actor.push_back(arg);
    if (k >= spec.real_actors()) actor.push_back("--dream");
    lines.push_back(shell_line(actor));
  }
  return lines;
}

}  // namespace graphworld
