// `graphworld train CONFIG` without --inline: the learner and
// distributed.actors actor processes on this machine, supervised.
//
// - The learner starts first; actors start once it is listening
//   (RUN/learner.ready).
// - A crashed actor is restarted with backoff (1 s, doubling to 8 s; reset
//   after a minute of running), under its old number; it rejoins with the
//   current parameters.
// - A crashed learner is restarted with --resume (at most 3 times); the
//   actors keep running and reconnect by themselves.
// - A stop request (Ctrl-C, SIGTERM) is passed to the learner alone, which
//   writes its final checkpoint, flushes the store and tells the actors to
//   stop; whatever still runs after 8 s gets SIGTERM, after 10 s SIGKILL.
// Children run in their own process groups and die with the launcher.
#pragma once

#include <csignal>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace graphworld {

struct SingleNodePlan {
  std::string run_dir;
  std::vector<std::string> learner_args;         // after the executable, for the first start
  std::vector<std::string> learner_resume_args;  // for restarts after a crash
  int32_t actors = 2;
  int32_t dream_actors = 0;  // model-based runs: 'actor --dream' processes, ids after the real ones
  bool quiet = false;

  // What differs inside a Slurm job (launch/slurm/cluster_job.h), where every
  // process is a job step started through srun:
  // Each child's command line, as the launcher would run it, to what is
  // started instead (srun ... followed by it). Empty: started as is.
  std::function<std::vector<std::string>(std::vector<std::string> argv)> wrap_learner;
  std::function<std::vector<std::string>(int32_t actor_id, std::vector<std::string> argv)> wrap_actor;
  std::vector<std::string> actor_args = {"--nice", "5"};  // after 'actor --run RUN --id K'
  int max_learner_restarts = 3;
  // The learner is asked to stop with this signal (srun forwards SIGUSR1 to
  // its task; a SIGTERM would end the step at once).
  int learner_stop_signal = SIGTERM;
  // How long a stop may take before what still runs is terminated, then killed.
  double stop_grace_s = 8.0, stop_kill_s = 10.0;
};

// Returns the exit code for `graphworld train`: 0 when training finished
// or stopped cleanly; 1 when the learner failed, or had to be killed.
int run_single_node(const SingleNodePlan& plan, const std::function<bool()>& stop_requested);

}  // namespace graphworld
