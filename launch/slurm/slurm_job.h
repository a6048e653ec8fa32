// What a cluster run asks of Slurm: the batch script `graphworld launch`
// submits, and the job steps that script's `graphworld launch job` starts.
//
// The batch script allocates learner.nodes + actors.nodes whole nodes and
// runs one program, `graphworld launch job RUN`, which supervises the steps
// the way `graphworld train` supervises local processes
// (launch/supervisor/single_node_launcher.h):
// - one learner step (srun, one task per learner rank) on the first
//   learner.nodes nodes of the allocation;
// - one step per actor (srun --ntasks=1) on the actor nodes, real actors
//   first and then dream actors, actors.real_per_node and
//   actors.dream_per_node of each on every actor node. A crashed actor is
//   started again; a failed learner ends the job with a non-zero status.
// Steps share their nodes' resources (srun --overlap): the allocation is
// exclusive, and an actor must not wait for CPUs the learner step holds.
#pragma once

#include <string>
#include <vector>

#include "launch/slurm/cluster_config.h"

namespace graphworld {

// The sbatch script, complete: #SBATCH lines, then the job itself.
std::string sbatch_script(const ClusterSpec& spec);

// The allocation's nodes split by role: learner nodes first, then actor
// nodes (none when actors share the learner's first node). Error if the
// allocation has fewer nodes than the spec asks for.
struct JobNodes {
  std::vector<std::string> learner, actors;
};
JobNodes split_job_nodes(const ClusterSpec& spec, const std::vector<std::string>& allocation);

// The node actor `actor_id` runs on (real actors 0.., dream actors after).
const std::string& actor_node(const ClusterSpec& spec, const JobNodes& nodes, int64_t actor_id);

// srun's options for the learner step and for one actor's step; the
// command follows them.
std::vector<std::string> learner_step_prefix(const ClusterSpec& spec, const JobNodes& nodes);
std::vector<std::string> actor_step_prefix(const ClusterSpec& spec, const JobNodes& nodes, int64_t actor_id);
// Extra options of every actor command ('--nice 5' when actors share the
// learner's node, so the learner keeps its cores).
std::vector<std::string> actor_extra_args(const ClusterSpec& spec);

// The learner's command within its step, for a new run or a resume. With
// several ranks they meet at the first learner node (--data-parallel).
std::vector<std::string> learner_command(const ClusterSpec& spec, const JobNodes& nodes, bool resume);

// Every step the job starts, one command line each (for --dry-run, with
// node names as placeholders: learner-1, actor-1, ...).
std::vector<std::string> describe_job_steps(const ClusterSpec& spec, const JobNodes& nodes, bool resume);

// Where the job keeps its files inside the run folder.
std::string slurm_dir(const std::string& run_dir);           // RUN/slurm
std::string local_store_dir(const ClusterSpec& spec);         // learner.local_dir/graphworld-NAME

// A command line as one shell-safe line (quoted where needed).
std::string shell_line(const std::vector<std::string>& argv);

}  // namespace graphworld
