// What the Slurm launch tests ask of a cluster run: its job's state and,
// when a wait fails, everything that says why.
#pragma once

#include <string>

#include "tests/launch/supervisor/distributed_test_support.h"

namespace graphworld::testing {

// The job's state as `graphworld launch status --json` reports it.
inline std::string cluster_job_state(const std::string& run) {
  std::string out;
  gw("launch status " + run + " --json", &out);
  const size_t at = out.find("\"state\":\"");
  return at == std::string::npos ? out : out.substr(at + 9, out.find('"', at + 9) - at - 9);
}

// The run's Slurm job id (the first line of RUN/slurm/job_id).
inline std::string cluster_job_id(const std::string& run) {
  const std::string text = read_file(run + "/slurm/job_id");
  return text.substr(0, text.find('\n'));
}

inline std::string cluster_job_log(const std::string& run) {
  return read_file(run + "/slurm/job-" + cluster_job_id(run) + ".out");
}

// Slurm's word on the job (all of `launch status`), the run's events and
// the end of the job's output, where a learner or actor that stopped says why.
inline std::string cluster_run_diagnosis(const std::string& run) {
  std::string status;
  gw("launch status " + run, &status);
  const std::string job_log = cluster_job_log(run);
  const size_t from = job_log.size() > 4000 ? job_log.size() - 4000 : 0;
  return "launch status:\n" + status + "\nevents.log:\n" + read_file(run + "/slurm/events.log") +
         "\njob output (end):\n" + job_log.substr(from);
}

}  // namespace graphworld::testing
