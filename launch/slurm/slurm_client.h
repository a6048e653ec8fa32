// Slurm's own commands, run for graphworld launch: sbatch to submit, squeue,
// sacct and scontrol to ask about a job, scancel to cancel, scontrol
// requeue from inside a job. Each failure is an Error that says which
// command failed and what it printed.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace graphworld {

struct SlurmJobState {
  std::string id;
  std::string state;       // PENDING, RUNNING, COMPLETED, CANCELLED, FAILED, TIMEOUT, REQUEUED...
  std::string elapsed;     // as Slurm prints it
  std::string time_limit;
  std::string nodes;       // node list, or the reason a pending job waits
  std::string exit_code;   // "0:0" once ended, where Slurm still knows
  std::string source;      // which command answered: squeue, sacct or scontrol
  bool active() const {
    return state == "PENDING" || state == "RUNNING" || state == "CONFIGURING" || state == "COMPLETING" ||
           state == "REQUEUED" || state == "REQUEUE_HOLD" || state == "REQUEUE_FED" || state == "SUSPENDED" ||
           state == "RESIZING" || state == "SIGNALING" || state == "STAGE_OUT" || state == "STOPPED";
  }
};

// Submits the batch script; returns the job id.
std::string submit_batch_script(const std::string& script_path);

// What Slurm knows of a job: squeue while it is queued or running, then
// sacct (where accounting is kept), then scontrol (for a few minutes after
// it ends). Empty if none of them knows it.
std::optional<SlurmJobState> query_slurm_job(const std::string& job_id);

// scancel JOB (Slurm signals every step with SIGTERM, then SIGKILL).
void cancel_slurm_job(const std::string& job_id);
// scontrol requeue JOB: the job ends now and queues again.
void requeue_slurm_job(const std::string& job_id);

// A node list such as "node[01-03],gpu7" as names (scontrol show hostnames).
std::vector<std::string> expand_node_list(const std::string& node_list);

}  // namespace graphworld
