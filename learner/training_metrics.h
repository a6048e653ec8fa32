// RUN/metrics.jsonl: one JSON object per update, written by both trainers
// and read by people, scripts and the report tools.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "learner/ppo_learner.h"

namespace graphworld {

// One update's metrics row.
struct UpdateReport {
  int64_t update = 0;
  int64_t env_steps = 0;        // real environment steps so far
  int64_t episodes = 0;         // episodes finished so far
  double wall_s = 0;            // training time so far (across resumes)
  double env_steps_per_s = 0;   // this update: its env steps over its collect + update time
  double collect_s = 0;
  int64_t episodes_this_update = 0;
  double mean_episode_reduction_pct = 0;  // over the episodes that ended in this update (0 if none)
  std::vector<std::pair<std::string, double>> best_reduction_pct;  // per training graph, so far
  UpdateStats stats;
  // Further named numbers, after the fixed ones (the distributed learner's
  // stale samples, policy lag, live actors, refused messages).
  std::vector<std::pair<std::string, double>> extra;
};

// Appends the row; Error if the write fails (disk full).
void append_metrics_row(const std::string& path, const UpdateReport& report);

// Drops rows after `update` (made by updates a resume redoes) and rows a
// crash cut short.
void truncate_metrics(const std::string& path, int64_t update);

}  // namespace graphworld
