#include "launch/slurm/slurm_client.h"

#include <sstream>

#include "common/error.h"
#include "launch/process/command_output.h"

namespace graphworld {
namespace {

std::string trimmed(std::string text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  size_t start = 0;
  while (start < text.size() && std::isspace(static_cast<unsigned char>(text[start]))) ++start;
  return text.substr(start);
}

CommandOutput slurm(const std::vector<std::string>& argv) {
  if (!on_path(argv.at(0)))
    throw Error(argv[0] + " is not on PATH: this needs Slurm's client commands (Debian: slurm-client) on a machine "
                "that can reach the cluster's controller");
  return command_output(argv);
}

Error failed(const std::vector<std::string>& argv, const CommandOutput& r) {
  std::string line;
  for (const std::string& a : argv) line += (line.empty() ? "" : " ") + a;
  const std::string said = trimmed(r.err.empty() ? r.out : r.err);
  return Error("'" + line + "' failed (exit code " + std::to_string(r.exit_code) + ")" +
               (said.empty() ? std::string() : ": " + said));
}

std::vector<std::string> split(const std::string& line, char separator) {
  std::vector<std::string> fields;
  std::stringstream in(line);
  std::string field;
  while (std::getline(in, field, separator)) fields.push_back(trimmed(field));
  return fields;
}

// "JobState=RUNNING Reason=None ..." from scontrol show job.
std::string scontrol_field(const std::string& text, const std::string& key) {
  const size_t at = text.find(" " + key + "=") != std::string::npos ? text.find(" " + key + "=") + 1 : text.find(key + "=");
  if (at == std::string::npos) return "";
  const size_t start = at + key.size() + 1;
  const size_t end = text.find_first_of(" \n", start);
  return text.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

}  // namespace

std::string submit_batch_script(const std::string& script_path) {
  const std::vector<std::string> argv = {"sbatch", "--parsable", script_path};
  const CommandOutput r = slurm(argv);
  if (r.exit_code != 0) throw failed(argv, r);
  // --parsable prints "ID" or "ID;CLUSTER".
  const std::string id = trimmed(split(trimmed(r.out), ';').at(0));
  if (id.empty() || id.find_first_not_of("0123456789_") != std::string::npos)
    throw Error("sbatch printed no job id (it printed '" + trimmed(r.out) + "')");
  return id;
}

std::optional<SlurmJobState> query_slurm_job(const std::string& job_id) {
  {
    const std::vector<std::string> argv = {"squeue", "--noheader", "--jobs=" + job_id, "--format=%i|%T|%M|%l|%R"};
    const CommandOutput r = slurm(argv);
    // squeue fails with "Invalid job id" for a job it has forgotten; any
    // other failure (the controller unreachable) says nothing of the job.
    if (r.exit_code != 0 && r.err.find("Invalid job id") == std::string::npos) throw failed(argv, r);
    if (r.exit_code == 0)
      for (const std::string& line : split(r.out, '\n')) {
        const std::vector<std::string> f = split(line, '|');
        if (f.size() == 5 && f[0] == job_id) return SlurmJobState{f[0], f[1], f[2], f[3], f[4], "", "squeue"};
      }
  }
  {
    const std::vector<std::string> argv = {"sacct", "--noheader", "--allocations", "--parsable2", "--jobs=" + job_id,
                                           "--format=JobID,State,Elapsed,Timelimit,NodeList,ExitCode"};
    const CommandOutput r = command_output(argv);
    if (r.exit_code == 0)
      for (const std::string& line : split(r.out, '\n')) {
        const std::vector<std::string> f = split(line, '|');
        // sacct's state may read "CANCELLED by 0".
        if (f.size() == 6 && f[0] == job_id) return SlurmJobState{f[0], split(f[1], ' ').at(0), f[2], f[3], f[4], f[5], "sacct"};
      }
  }
  const CommandOutput r = command_output({"scontrol", "show", "job", job_id});
  if (r.exit_code != 0) return std::nullopt;
  SlurmJobState s;
  s.id = job_id;
  s.state = scontrol_field(r.out, "JobState");
  s.elapsed = scontrol_field(r.out, "RunTime");
  s.time_limit = scontrol_field(r.out, "TimeLimit");
  s.nodes = scontrol_field(r.out, "NodeList");
  s.exit_code = scontrol_field(r.out, "ExitCode");
  s.source = "scontrol";
  if (s.state.empty()) return std::nullopt;
  return s;
}

void cancel_slurm_job(const std::string& job_id) {
  const std::vector<std::string> argv = {"scancel", job_id};
  const CommandOutput r = slurm(argv);
  if (r.exit_code != 0) throw failed(argv, r);
}

void requeue_slurm_job(const std::string& job_id) {
  const std::vector<std::string> argv = {"scontrol", "requeue", job_id};
  const CommandOutput r = slurm(argv);
  if (r.exit_code != 0) throw failed(argv, r);
}

std::vector<std::string> expand_node_list(const std::string& node_list) {
  const std::vector<std::string> argv = {"scontrol", "show", "hostnames", node_list};
  const CommandOutput r = slurm(argv);
  if (r.exit_code != 0) throw failed(argv, r);
  std::vector<std::string> nodes;
  for (const std::string& n : split(r.out, '\n'))
    if (!n.empty()) nodes.push_back(n);
  if (nodes.empty()) throw Error("scontrol show hostnames '" + node_list + "' named no node");
  return nodes;
}

}  // namespace graphworld
