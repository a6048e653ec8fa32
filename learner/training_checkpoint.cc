#include "learner/training_checkpoint.h"

#include <algorithm>
#include <cmath>

#include "common/checkpoint_file.h"
#include "common/error.h"
#include "learner/torch_bytes.h"
#include "learner/training_config.h"

namespace graphworld {
namespace {

constexpr const char* kCheckpointKind = "checkpoint";
constexpr const char* kCheckpointPrefix = "ckpt";

// Settings a resumed run may change: they decide how long it runs and how
// often it saves, not what it learns. (Not train.threads: a different thread
// count may split reductions differently and round differently.)
const std::vector<std::string>& resumable_keys() {
  static const std::vector<std::string> keys = {"train.total_env_steps", "train.checkpoint_every",
                                                "train.keep_checkpoints", "train.device", "distributed.actors",
                                                "distributed.heartbeat_timeout_s", "distributed.store_flush_s"};
  return keys;
}

// The first setting, other than the resumable ones, that differs between
// the run's config and this one ("" when none does).
std::string changed_setting(const Config& run, const Config& now) {
  const std::vector<std::string>& resumable = resumable_keys();
  for (const std::string& key : run.keys()) {
    if (std::find(resumable.begin(), resumable.end(), key) != resumable.end()) continue;
    if (run.value_text(key) != now.value_text(key))
      return "'" + key + "' is " + run.value_text(key) + " in the run, " + now.value_text(key) + " now";
  }
  return "";
}

}  // namespace

void check_resumable(const CheckpointContents& saved, const Config& now, const std::string& rule_library_hash,
                     int32_t num_xfers, const std::string& path) {
  if (saved.rule_library_hash != rule_library_hash || saved.num_xfers != num_xfers)
    throw UsageError(path + ": the run was trained with another rule library (hash " + saved.rule_library_hash + ", " +
                     std::to_string(saved.num_xfers) + " rules) than this one (hash " + rule_library_hash + ", " +
                     std::to_string(num_xfers) + " rules); resume with the library it started with (env.rules)");
  const std::string difference = changed_setting(saved.config, now);
  if (!difference.empty())
    throw ConfigError(path + ": resuming must keep the run's settings (only train.total_env_steps, "
                      "train.checkpoint_every, train.keep_checkpoints, train.device and the distributed.actors, "
                      "heartbeat_timeout_s and store_flush_s may change): " + difference);
}

std::string write_checkpoint_file(const std::string& run_dir, int64_t updates, const CheckpointContents& c, int keep) {
  torch::serialize::OutputArchive archive;
  archive.write("learner", bytes_to_tensor(c.learner_state));
  archive.write("collector", bytes_to_tensor(c.collector_state));
  archive.write("actor", bytes_to_tensor(c.actor_parameters));
  archive.write("rule_library_hash", bytes_to_tensor(c.rule_library_hash));
  archive.write("num_xfers", torch::tensor({int64_t{c.num_xfers}}, torch::kInt64));
  archive.write("config", bytes_to_tensor(c.config.to_yaml()));
  archive.write("counters", torch::tensor({c.env_steps, c.episodes, static_cast<int64_t>(std::llround(c.wall_s * 1e6))},
                                          torch::kInt64));
  const LearnerCounters& k = c.learner_counters;
  // Doubles: every count stays exact below 2^53, and lag_sum is fractional.
  archive.write("learner_counters",
                torch::tensor({static_cast<double>(k.messages), static_cast<double>(k.refused_messages),
                               static_cast<double>(k.stale_samples), k.lag_sum, static_cast<double>(k.lag_samples),
                               static_cast<double>(k.actor_joins), static_cast<double>(k.actor_losses)},
                              torch::kFloat64));
  const std::string dir = run_dir + "/checkpoints";
  const std::string path = dir + "/" + kCheckpointPrefix + "-" + std::to_string(updates) + ".ckpt";
  write_checked_file(path, kCheckpointKind, archive_to_bytes(archive));
  prune_numbered_files(dir, kCheckpointPrefix, static_cast<size_t>(keep));
  return path;
}

std::string newest_checkpoint(const std::string& run_dir) {
  const std::vector<std::string> found = list_numbered_files(run_dir + "/checkpoints", kCheckpointPrefix);
  if (found.empty())
    throw UsageError(run_dir + ": no checkpoint in " + run_dir +
                     "/checkpoints; it is not a training run folder, or its run stopped before writing one (delete "
                     "it or train into a new folder)");
  return found.back();
}

CheckpointContents read_checkpoint(const std::string& path) {
  const std::string payload = read_checked_file(path, kCheckpointKind);
  torch::serialize::InputArchive archive;
  archive_from_bytes(archive, payload, path);
  CheckpointContents c;
  c.config = parse_config_text(training_config_schema(), read_bytes(archive, "config", path), path + " (its config)");
  c.learner_state = read_bytes(archive, "learner", path);
  const torch::Tensor counters = read_tensor(archive, "counters", path);
  if (counters.numel() != 3) throw FormatError(path + ": 'counters' has " + std::to_string(counters.numel()) + " entries, not 3");
  c.env_steps = counters[0].item<int64_t>();
  c.episodes = counters[1].item<int64_t>();
  c.wall_s = static_cast<double>(counters[2].item<int64_t>()) / 1e6;
  c.collector_state = read_bytes(archive, "collector", path);
  c.actor_parameters = read_bytes(archive, "actor", path);
  c.rule_library_hash = read_bytes(archive, "rule_library_hash", path);
  c.num_xfers = static_cast<int32_t>(read_tensor(archive, "num_xfers", path).item<int64_t>());
  torch::Tensor learner_counters;
  if (archive.try_read("learner_counters", learner_counters)) {  // absent in older checkpoints: zeros
    if (learner_counters.numel() != 7 || learner_counters.scalar_type() != torch::kFloat64)
      throw FormatError(path + ": 'learner_counters' is not 7 float64 entries; the file is damaged");
    const auto n = learner_counters.accessor<double, 1>();
    LearnerCounters& k = c.learner_counters;
    k.messages = static_cast<int64_t>(n[0]);
    k.refused_messages = static_cast<int64_t>(n[1]);
    k.stale_samples = static_cast<int64_t>(n[2]);
    k.lag_sum = n[3];
    k.lag_samples = static_cast<int64_t>(n[4]);
    k.actor_joins = static_cast<int64_t>(n[5]);
    k.actor_losses = static_cast<int64_t>(n[6]);
  }
  torch::serialize::InputArchive learner;
  archive_from_bytes(learner, c.learner_state, path + " (learner state)");
  c.updates = read_tensor(learner, "version", path).item<int64_t>();
  return c;
}

}  // namespace graphworld
