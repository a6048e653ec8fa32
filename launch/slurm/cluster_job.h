// `graphworld launch job RUN`: what the Slurm batch script runs (see
// launch/slurm/slurm_job.h for the steps). It reads RUN/slurm/cluster.yaml,
// splits the allocation's nodes into learner and actor nodes, and
// supervises the steps with the single-node launcher's rules, except that a
// failed learner ends the job (status 1) instead of holding its nodes.
//
// A new run starts from RUN/slurm/training.yaml; a run folder that already
// holds RUN/config.yaml is resumed from its newest checkpoint, whether the
// job was requeued or submitted again.
//
// Stopping:
// - SIGUSR1 (Slurm's warning before the time limit): the learner writes its
//   final checkpoint, the steps end, and the job requeues itself
//   (slurm.requeue) to go on from that checkpoint.
// - RUN/slurm/stop (written by `graphworld launch cancel`), SIGTERM or
//   Ctrl-C: the same clean stop, without the requeue.
// Each start and stop is a line in RUN/slurm/events.log.
#pragma once

#include <string>

namespace graphworld {

// Runs inside the job (SLURM_JOB_ID and SLURM_JOB_NODELIST set); returns
// the job's exit status.
int run_cluster_job(const std::string& run_dir);

// The file `launch cancel` writes to ask a running job for a clean stop.
std::string cluster_stop_request_path(const std::string& run_dir);
// Appends a timestamped line to RUN/slurm/events.log.
void log_cluster_event(const std::string& run_dir, const std::string& line);

}  // namespace graphworld
