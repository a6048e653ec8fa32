// graphworld launch CLUSTER.yaml [key=value ...] [--dry-run]
// graphworld launch status RUN | launch cancel RUN | launch job RUN
//
// Cluster runs on Slurm. `launch CLUSTER.yaml` checks the cluster file and
// the training config it names, prepares the run folder (its CURVE keys,
// the resolved configs, the batch script) and submits the job with sbatch;
// submitting again for a run folder that already trained resumes it.
// `status` and `cancel` wrap squeue/sacct/scontrol and scancel; `job` is what
// the batch script runs (launch/slurm/cluster_job.h).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "common/atomic_file.h"
#include "common/checkpoint_file.h"
#include "common/error.h"
#include "common/json_writer.h"
#include "common/run_keys.h"
#include "launch/process/child_process.h"
#include "launch/slurm/cluster_config.h"
#include "launch/slurm/cluster_job.h"
#include "launch/commands.h"
#include "launch/slurm/slurm_client.h"
#include "launch/slurm/slurm_job.h"
#include "learner/training_config.h"

namespace graphworld {
namespace {
namespace fs = std::filesystem;

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  return text;
}

std::string job_id_file(const std::string& run_dir) { return slurm_dir(run_dir) + "/job_id"; }

std::string run_job_id(const std::string& run_dir) {
  if (!fs::is_directory(slurm_dir(run_dir)))
    throw UsageError(run_dir + " is not a cluster run folder (it has no slurm/ folder): give the folder "
                     "'graphworld launch' printed (run.output/run.name)");
  const std::string id = read_text(job_id_file(run_dir));
  if (id.empty()) throw UsageError(run_dir + ": no job was submitted for this run (slurm/job_id is missing)");
  return id;
}

// A new run's layout, or a resubmission's, against what the run folder
// already trained with: the actor numbers are part of a run.
void check_resubmission(const ClusterSpec& spec) {
  const TrainingOptions saved =
      training_options_from(load_config(training_config_schema(), spec.run_dir + "/config.yaml", {}));
  const int64_t real = saved.distributed.actors;
  if (real != spec.real_actors())
    throw ConfigError(spec.source + ": the run in " + spec.run_dir + " trains with " + std::to_string(real) +
                      " real actors but this layout gives " + std::to_string(spec.real_actors()) +
                      " (actors.nodes x actors.real_per_node); keep the layout to resume it, or choose a new run.name");
  if (saved.model_based.enabled && saved.model_based.dream_actors != spec.dream_actors())
    throw ConfigError(spec.source + ": the run in " + spec.run_dir + " trains with " +
                      std::to_string(saved.model_based.dream_actors) + " dream actors but this layout gives " +
                      std::to_string(spec.dream_actors()) + "; keep the layout to resume it");
}

int submit(const CliArgs& args) {
  const std::string path = args.positional(0, "CLUSTER.yaml (launch/cluster.yaml is an example)");
  std::vector<std::string> overrides;
  for (size_t i = 1; i < args.positional_count(); ++i) {
    const std::string& item = args.positional(i, "");
    if (item.find('=') == std::string::npos)
      throw UsageError("unexpected argument '" + item + "': give one CLUSTER.yaml and key=value overrides");
    overrides.push_back(item);
  }
  const ClusterSpec spec = load_cluster_spec(path, overrides, own_executable());
  const bool dry_run = args.flag("--dry-run");
  const bool resume = fs::exists(spec.run_dir + "/config.yaml");
  if (resume) check_resubmission(spec);
  const Config training = cluster_training_config(spec);
  const std::string script = sbatch_script(spec);
  if (dry_run) {
    std::printf("# %s (dry run: nothing written, nothing submitted)\n", (slurm_dir(spec.run_dir) + "/job.sbatch").c_str());
    std::printf("%s", script.c_str());
    JobNodes placeholders;
    for (int64_t i = 0; i < spec.learner_nodes; ++i) placeholders.learner.push_back("learner-" + std::to_string(i + 1));
    for (int64_t i = 0; i < spec.actor_nodes; ++i) placeholders.actors.push_back("actor-" + std::to_string(i + 1));
    std::printf("\n# the job's steps (node names stand for the allocation's: learner-N, actor-N)%s:\n",
                resume ? ", resuming the run" : "");
    for (const std::string& line : describe_job_steps(spec, placeholders, resume)) std::printf("%s\n", line.c_str());
    return 0;
  }
  // One job at a time per run: two learners would write one store.
  if (fs::exists(job_id_file(spec.run_dir))) {
    const std::string previous = read_text(job_id_file(spec.run_dir));
    const std::optional<SlurmJobState> state = query_slurm_job(previous);
    if (state && state->active())
      throw UsageError("job " + previous + " of " + spec.run_dir + " is " + state->state +
                       "; wait for it, or stop it with 'graphworld launch cancel " + spec.run_dir + "'");
  }
  std::error_code ec;
  fs::create_directories(slurm_dir(spec.run_dir), ec);
  if (ec) throw Error(spec.run_dir + ": cannot create the run folder (" + ec.message() + ")");
  make_run_keys(spec.run_dir);  // before the job: nodes never make keys on a shared filesystem
  write_file_atomically(slurm_dir(spec.run_dir) + "/cluster.yaml", spec.config.to_yaml());
  if (!resume) write_file_atomically(slurm_dir(spec.run_dir) + "/training.yaml", training.to_yaml());
  const std::string script_path = slurm_dir(spec.run_dir) + "/job.sbatch";
  write_file_atomically(script_path, script);
  fs::permissions(script_path, fs::perms::owner_exec, fs::perm_options::add, ec);
  fs::remove(cluster_stop_request_path(spec.run_dir), ec);  // a cancel of an earlier job is done
  const std::string id = submit_batch_script(script_path);
  write_file_atomically(job_id_file(spec.run_dir), id + "\n");
  std::ofstream(slurm_dir(spec.run_dir) + "/jobs", std::ios::app) << id << "\n";
  log_cluster_event(spec.run_dir, "submitted job " + id + (resume ? " (resumes the run)" : " (a new run)"));
  std::printf("submitted job %s: %s run %s\n", id.c_str(), resume ? "resuming" : "a new", spec.run_dir.c_str());
  std::printf("batch script %s\n", script_path.c_str());
  std::printf("job log      %s/job-%s.out\n", slurm_dir(spec.run_dir).c_str(), id.c_str());
  std::printf("status       graphworld launch status %s\n", spec.run_dir.c_str());
  std::printf("cancel       graphworld launch cancel %s\n", spec.run_dir.c_str());
  return 0;
}

// The name of the run's newest checkpoint ("" before the first).
std::string newest_checkpoint_name(const std::string& run_dir) {
  const std::vector<std::string> found = list_numbered_files(run_dir + "/checkpoints", "ckpt");
  return found.empty() ? std::string() : fs::path(found.back()).filename().string();
}

int status(const CliArgs& args) {
  const std::string run_dir = args.positional(1, "RUN (the run folder)");
  const std::string id = run_job_id(run_dir);
  const std::optional<SlurmJobState> state = query_slurm_job(id);
  const std::string checkpoint = newest_checkpoint_name(run_dir);
  const std::string events = read_text(slurm_dir(run_dir) + "/events.log");
  const std::string last_event = events.substr(events.rfind('\n') == std::string::npos ? 0 : events.rfind('\n') + 1);
  if (args.flag("--json")) {
    JsonWriter json;
    json.begin_object();
    json.key("run").value(run_dir);
    json.key("job_id").value(id);
    json.key("state").value(state ? state->state : "UNKNOWN");
    json.key("active").value(state && state->active());
    json.key("elapsed").value(state ? state->elapsed : "");
    json.key("time_limit").value(state ? state->time_limit : "");
    json.key("nodes").value(state ? state->nodes : "");
    json.key("exit_code").value(state ? state->exit_code : "");
    json.key("source").value(state ? state->source : "");
    json.key("newest_checkpoint").value(checkpoint);
    json.key("last_event").value(last_event);
    json.end_object();
    std::printf("%s\n", json.str().c_str());
    return 0;
  }
  if (state)
    std::printf("job %s  %s  elapsed %s of %s  %s%s  (from %s)\n", id.c_str(), state->state.c_str(), state->elapsed.c_str(),
                state->time_limit.c_str(), state->nodes.c_str(),
                state->exit_code.empty() ? "" : ("  exit " + state->exit_code).c_str(), state->source.c_str());
  else
    std::printf("job %s  no longer known to Slurm (no accounting kept here)\n", id.c_str());
  std::printf("checkpoint   %s\n", checkpoint.empty() ? "(none yet)" : (run_dir + "/checkpoints/" + checkpoint).c_str());
  if (!last_event.empty()) std::printf("last event   %s\n", last_event.c_str());
  std::printf("job log      %s/job-%s.out\n", slurm_dir(run_dir).c_str(), id.c_str());
  return 0;
}

int cancel(const CliArgs& args) {
  const std::string run_dir = args.positional(1, "RUN (the run folder)");
  const std::string id = run_job_id(run_dir);
  const double wait_s = args.double_value("--wait", 300.0);
  std::optional<SlurmJobState> state = query_slurm_job(id);
  if (!state || !state->active()) {
    std::printf("job %s is not queued or running (%s); nothing to cancel\n", id.c_str(), state ? state->state.c_str() : "unknown");
    return 0;
  }
  // A running job is asked to stop through the run folder, so its learner
  // writes a final checkpoint; scancel alone would race it with SIGKILL.
  if (state->state == "RUNNING" && !args.flag("--now")) {
    write_file_atomically(cluster_stop_request_path(run_dir), id + "\n");
    std::fprintf(stderr, "asked job %s to stop (final checkpoint), waiting up to %.0f s\n", id.c_str(), wait_s);
    const auto start = std::chrono::steady_clock::now();
    while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < wait_s) {
      state = query_slurm_job(id);
      if (!state || !state->active()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  }
  if (state && state->active()) cancel_slurm_job(id);
  std::error_code ec;
  fs::remove(cluster_stop_request_path(run_dir), ec);
  log_cluster_event(run_dir, "job " + id + " cancelled");
  const std::string checkpoint = newest_checkpoint_name(run_dir);
  std::printf("cancelled job %s\n", id.c_str());
  std::printf("checkpoint   %s\n", checkpoint.empty() ? "(none: the run had not started)" : (run_dir + "/checkpoints/" + checkpoint).c_str());
  std::printf("resume with  graphworld launch %s/slurm/cluster.yaml\n", run_dir.c_str());
  return 0;
}

int run_launch(const CliArgs& args) {
  const std::string& first = args.positional(0, "CLUSTER.yaml, or an action: status RUN, cancel RUN");
  if (first == "status") return status(args);
  if (first == "cancel") return cancel(args);
  if (first == "job") return run_cluster_job(args.positional(1, "RUN (the run folder)"));
  return submit(args);
}

}  // namespace

Subcommand launch_command() {
  return {{"launch",
           "CLUSTER.yaml [key=value ...] [--dry-run] | status RUN | cancel RUN",
           "Cluster runs on Slurm: submit a training run, ask about it, cancel it.",
           "CLUSTER.yaml  checks the cluster file (launch/cluster.yaml documents every key) and the training\n"
           "              config it names, makes the run folder run.output/run.name with its CURVE keys, writes\n"
           "              RUN/slurm/job.sbatch and submits it. Inside the job the learner and every actor are\n"
           "              job steps (srun); actors find the learner through RUN/endpoints. Submitting again\n"
           "              for a run that already trained resumes it from its newest checkpoint.\n"
           "              --dry-run prints the batch script and the job's steps; nothing is written or submitted.\n"
           "status RUN    the job's Slurm state (squeue, sacct or scontrol), the run's newest checkpoint and\n"
           "              the job's last event.\n"
           "cancel RUN    a running job is asked to stop (the learner writes a final checkpoint), then scancel\n"
           "              makes sure; a queued job is cancelled at once. Resume by submitting again.\n"
           "job RUN       what the batch script runs; not for use by hand.",
           {
               {"--dry-run", "", "", "print the batch script and the steps; submit nothing"},
               {"--json", "", "", "status: one JSON object"},
               {"--wait", "", "S", "cancel: how long a running job gets for its clean stop (default 300)"},
               {"--now", "", "", "cancel: scancel at once (the newest periodic checkpoint stands)"},
           }},
          run_launch};
}

}  // namespace graphworld
