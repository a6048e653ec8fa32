// Helpers for tests that run the distributed system as processes: a small
// training command, the metrics rows it writes, background processes found
// by their command line, and waiting with a deadline.
#pragma once

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "common/stopwatch.h"
#include "tests/launch/cli_test_support.h"

namespace graphworld::testing {

inline std::string fresh(const std::string& name) {
  const std::string dir = scratch_dir() + "/" + name;
  std::filesystem::remove_all(dir);
  return dir;
}

// A small, fast run: squeezenet under GPU-like rates, where rewrites pay off.
inline std::string train_command(const std::string& run, int64_t steps, const std::string& extra = "") {
  return graphworld_binary() + " train " + source_dir() + "/configs/train.yaml --run " + run +
         " env.num_envs=4 env.steps_per_env=32 env.max_steps=50 ppo.minibatch_size=64 train.checkpoint_every=4"
         " env.rates=" + source_dir() + "/configs/gpu_rates.yaml train.total_env_steps=" +
         std::to_string(steps) + " " + extra;
}

struct MetricsRow {
  int64_t update = 0, env_steps = 0;
  double mean_reduction = 0, actors_alive = 0, joins = 0, refused = 0, lag = 0, stale = 0, learner_rss_mib = 0,
         costs_settled = 0, cost_table_hits = 0, cost_model_fallbacks = 0;  // -1: not in the row
  double wall_s = 0;
  // Where the learner's and the actors' time went (cumulative seconds).
  double time_ingest_s = 0, time_store_s = 0, time_update_s = 0, time_broadcast_s = 0;
  double actors_wait_s = 0, actors_collect_s = 0, actors_send_s = 0, actors_steps_sent = 0;
};

inline double number_after(const std::string& line, const std::string& key) {
  const size_t at = line.find("\"" + key + "\":");
  return at == std::string::npos ? -1 : std::stod(line.substr(at + key.size() + 3));
}

inline std::vector<MetricsRow> read_metrics(const std::string& run) {
  std::vector<MetricsRow> rows;
  std::ifstream in(run + "/metrics.jsonl");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line.back() != '}') continue;
    MetricsRow r;
    r.update = static_cast<int64_t>(number_after(line, "update"));
    r.env_steps = static_cast<int64_t>(number_after(line, "env_steps"));
    r.mean_reduction = number_after(line, "mean_episode_reduction_pct");
    r.actors_alive = number_after(line, "actors_alive");
    r.joins = number_after(line, "actor_joins");
    r.refused = number_after(line, "refused_messages");
    r.lag = number_after(line, "mean_policy_lag");
    r.stale = number_after(line, "stale_samples");
    r.cost_table_hits = number_after(line, "cost_table_hits");
    r.cost_model_fallbacks = number_after(line, "cost_model_fallbacks");
    r.learner_rss_mib = number_after(line, "learner_rss_mib");
    r.costs_settled = number_after(line, "costs_settled");
    r.wall_s = number_after(line, "wall_s");
    r.time_ingest_s = number_after(line, "time_ingest_s");
    r.time_store_s = number_after(line, "time_store_s");
    r.time_update_s = number_after(line, "time_update_s");
    r.time_broadcast_s = number_after(line, "time_broadcast_s");
    r.actors_wait_s = number_after(line, "actors_wait_s");
    r.actors_collect_s = number_after(line, "actors_collect_s");
    r.actors_send_s = number_after(line, "actors_send_s");
    r.actors_steps_sent = number_after(line, "actors_steps_sent");
    rows.push_back(r);
  }
  return rows;
}

// Runs `command` in the background with its output in `log`; returns its pid.
inline pid_t start_background(const std::string& command, const std::string& log) {
  std::string out;
  const std::string script = "( " + command + " > " + log + " 2>&1 & echo $! )";
  run_command(script, &out);
  return static_cast<pid_t>(std::stol(out));
}

// The pid of the process whose command line matches `pattern` (pgrep -f), or 0.
inline pid_t find_process(const std::string& pattern) {
  // "[a]ctor" matches "actor" but not the shell running this pgrep, whose
  // command line holds the pattern itself.
  const std::string guarded = "[" + pattern.substr(0, 1) + "]" + pattern.substr(1);
  std::string out;
  if (run_command("pgrep -n -f -- '" + guarded + "'", &out) != 0 || out.empty()) return 0;
  return static_cast<pid_t>(std::stol(out));
}

inline bool wait_for(double seconds, const std::function<bool()>& condition) {
  Stopwatch clock;
  while (clock.elapsed_s() < seconds) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return condition();
}

inline bool exited(pid_t pid) { return ::kill(pid, 0) != 0; }

inline std::string read_file(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Waits for the launcher to end (it is not our child: the shell started it).
inline bool launcher_ended(pid_t pid, double seconds) { return wait_for(seconds, [&] { return exited(pid); }); }

}  // namespace graphworld::testing
