#include "launch/slurm/cluster_job.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "common/error.h"
#include "common/run_keys.h"
#include "learner/training_checkpoint.h"
#include "launch/process/child_process.h"
#include "launch/slurm/cluster_config.h"
#include "launch/process/command_output.h"
#include "launch/supervisor/single_node_launcher.h"
#include "launch/slurm/slurm_client.h"
#include "launch/slurm/slurm_job.h"
#include "launch/process/stop_signal.h"

namespace graphworld {
namespace {
namespace fs = std::filesystem;

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

// argv[0] is this executable as the launcher found it; the steps run the
// one cluster.yaml names, as the dry run printed.
std::vector<std::string> with_prefix(std::vector<std::string> prefix, const std::string& executable,
                                     std::vector<std::string> argv) {
  argv.at(0) = executable;
  // The launcher starts children without a shell.
  const std::string srun = find_on_path(prefix.at(0));
  if (srun.empty()) throw Error(prefix[0] + " is not on PATH inside the job; the job steps need Slurm's srun");
  prefix[0] = srun;
  prefix.insert(prefix.end(), argv.begin(), argv.end());
  return prefix;
}

}  // namespace

std::string cluster_stop_request_path(const std::string& run_dir) { return slurm_dir(run_dir) + "/stop"; }

void log_cluster_event(const std::string& run_dir, const std::string& line) {
  const std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", std::localtime(&now));
  std::ofstream(slurm_dir(run_dir) + "/events.log", std::ios::app) << stamp << "  " << line << "\n";
  std::fprintf(stderr, "launch: %s\n", line.c_str());
}

int run_cluster_job(const std::string& run_dir) {
  const std::string job_id = environment("SLURM_JOB_ID");
  const std::string node_list = environment("SLURM_JOB_NODELIST");
  if (job_id.empty() || node_list.empty())
    throw UsageError("'graphworld launch job' runs inside the Slurm job that 'graphworld launch CLUSTER.yaml' "
                     "submits (SLURM_JOB_ID and SLURM_JOB_NODELIST are not set here)");
  const std::string saved = slurm_dir(run_dir) + "/cluster.yaml";
  if (!fs::is_regular_file(saved))
    throw UsageError(run_dir + " holds no slurm/cluster.yaml: it was not made by 'graphworld launch'");
  ClusterSpec spec = load_cluster_spec(saved, {}, own_executable(), /*check_training=*/false);
  spec.run_dir = fs::absolute(run_dir).lexically_normal().string();  // wherever the folder is now
  const JobNodes nodes = split_job_nodes(spec, expand_node_list(node_list));
  // The learner writes config.yaml when a new run starts, before its first
  // checkpoint: from then on every start of this job, or of a new one,
  // resumes. A folder without it holds nothing to resume (a job stopped
  // while its learner was starting): the new start clears what is there.
  const bool resume = fs::exists(run_dir + "/config.yaml");
  if (!resume) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(run_dir, ec))
      if (!is_launcher_entry(entry.path().filename().string())) fs::remove_all(entry.path(), ec);
  }
  const std::string restarts = environment("SLURM_RESTART_COUNT");
  std::string where = nodes.learner.front();
  for (size_t i = 1; i < nodes.learner.size(); ++i) where += "," + nodes.learner[i];
  log_cluster_event(run_dir, "job " + job_id + (restarts.empty() || restarts == "0" ? "" : " (restart " + restarts + ")") +
                                 " started: learner on " + where + ", " + std::to_string(nodes.actors.size()) +
                                 " actor node(s); " +
                                 (resume ? "resuming from " + newest_checkpoint(run_dir) : std::string("a new run")));

  SingleNodePlan plan;
  plan.run_dir = run_dir;
  std::vector<std::string> learner = learner_command(spec, nodes, resume);
  plan.learner_args.assign(learner.begin() + 1, learner.end());
  plan.actors = static_cast<int32_t>(spec.real_actors());
  plan.dream_actors = static_cast<int32_t>(spec.dream_actors());
  plan.actor_args = actor_extra_args(spec);
  plan.max_learner_restarts = 0;
  plan.learner_stop_signal = SIGUSR1;
  // The final checkpoint and the store's copy must fit in the warning.
  plan.stop_grace_s = static_cast<double>(spec.warning_s) * 0.6;
  plan.stop_kill_s = static_cast<double>(spec.warning_s) * 0.8;
  plan.wrap_learner = [&](std::vector<std::string> argv) {
    return with_prefix(learner_step_prefix(spec, nodes), spec.executable, std::move(argv));
  };
  plan.wrap_actor = [&](int32_t id, std::vector<std::string> argv) {
    return with_prefix(actor_step_prefix(spec, nodes, id), spec.executable, std::move(argv));
  };
  install_stop_signals();
  const std::string stop_file = cluster_stop_request_path(run_dir);
  bool cancelled = false;
  const int code = run_single_node(plan, [&] {
    if (!cancelled && fs::exists(stop_file)) cancelled = true;
    return cancelled || stop_requested();
  });
  const int signal = stop_signal_number();
  restore_default_signals();
  std::error_code ec;
  if (cancelled) {
    fs::remove(stop_file, ec);
    log_cluster_event(run_dir, "job " + job_id + " stopped by 'graphworld launch cancel'");
    return code;
  }
  if (signal == SIGUSR1 && spec.requeue) {
    log_cluster_event(run_dir, "job " + job_id + " warned before its time limit: " +
                                   (code == 0 ? std::string("checkpointed")
                                              : "the learner did not stop cleanly, its newest checkpoint stands") +
                                   "; requeueing it");
    requeue_slurm_job(job_id);
    return 0;
  }
  if (signal != 0)
    log_cluster_event(run_dir, "job " + job_id + " stopped by signal " + std::to_string(signal));
  else
    log_cluster_event(run_dir, "job " + job_id + (code == 0 ? " finished" : " ended: the learner failed (exit status " +
                                                                               std::to_string(code) + ")"));
  return code;
}

}  // namespace graphworld
