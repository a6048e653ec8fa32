#include "learner/trainer.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/atomic_file.h"
#include "common/checkpoint_file.h"
#include "common/error.h"
#include "common/json_writer.h"
#include "common/stopwatch.h"
#include "env/onnx/onnx_export.h"
#include "learner/compute_threads.h"
#include "learner/policy_file.h"
#include "learner/torch_bytes.h"

namespace graphworld {
namespace fs = std::filesystem;

namespace {

constexpr const char* kCheckpointKind = "checkpoint";
constexpr const char* kCheckpointPrefix = "ckpt";

// Settings a resumed run may change: they decide how long it runs and how
// often it saves, not what it learns. (Not train.threads: a different thread
// count may split reductions differently and round differently.)
const std::vector<std::string>& resumable_keys() {
  static const std::vector<std::string> keys = {"train.total_env_steps", "train.checkpoint_every",
                                                "train.keep_checkpoints"};
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

std::string file_safe(const std::string& name) {
  std::string s;
  for (char c : name) s += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') ? c : '_';
  return s;
}

// Rows of metrics.jsonl after `update` were made by updates a resume redoes.
void truncate_metrics(const std::string& path, int64_t update) {
  std::ifstream in(path);
  if (!in) return;
  std::string kept, line;
  const std::string prefix = "{\"update\":";
  while (std::getline(in, line)) {
    // A row cut short by a crash (no closing brace) is dropped with the rest.
    if (line.rfind(prefix, 0) != 0 || line.back() != '}') continue;
    char* end = nullptr;
    const long long row = std::strtoll(line.c_str() + prefix.size(), &end, 10);
    if (end == line.c_str() + prefix.size() || row > update) continue;
    kept += line + "\n";
  }
  write_file_atomically(path, kept);
}

}  // namespace

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
  torch::serialize::InputArchive learner;
  archive_from_bytes(learner, c.learner_state, path + " (learner state)");
  c.updates = read_tensor(learner, "version", path).item<int64_t>();
  return c;
}

Trainer::Trainer(const Config& config, std::vector<TrainingGraph> graphs, const RuleMatcher& matcher, CostModel& cost,
                 const std::string& run_dir, bool resume, const std::string& checkpoint)
    : config_(config), options_(training_options_from(config)), run_dir_(run_dir) {
  options_.network.num_xfers = static_cast<int32_t>(matcher.num_rules());
  RuleLibrary library;
  library.rules = matcher.rules();
  rule_library_hash_ = rule_library_hash(library);
  std::error_code ec;
  if (!resume && fs::exists(run_dir_) && !fs::is_empty(run_dir_, ec))
    throw UsageError(run_dir_ + " already holds files; continue that run with --resume " + run_dir_ +
                     ", or choose a new folder");
  const std::string resume_from = resume ? (checkpoint.empty() ? newest_checkpoint(run_dir_) : checkpoint) : "";
  // Everything that can refuse the run is built before the folder exists,
  // so a refused start leaves nothing behind to get in the way of a retry.
  learner_ = std::make_unique<PpoLearner>(options_.network, options_.ppo);
  collector_ = std::make_unique<RolloutCollector>(std::move(graphs), matcher, cost, options_.collector);
  actor_ = std::make_unique<PolicyNetwork>(options_.network);
  actor_->copy_parameters_from(learner_->policy());
  pending_start_ = collector_->state();
  for (const BestGraph& b : collector_->best()) written_best_ms_.push_back(b.cost_ms);
  if (resume) {
    load_checkpoint(resume_from);
  } else {
    fs::create_directories(run_dir_ + "/checkpoints", ec);
    if (ec) throw Error(run_dir_ + ": cannot create the run folder (" + ec.message() + ")");
    write_checkpoint();  // ckpt-0: a run killed before its first update can be resumed
  }
  // The resolved config, with any lengthened train.total_env_steps, so that
  // a later plain --resume continues with what this one asked for.
  write_file_atomically(run_dir_ + "/config.yaml", config_.to_yaml());
}

Trainer::~Trainer() = default;

std::string Trainer::write_checkpoint() {
  torch::serialize::OutputArchive archive;
  archive.write("learner", bytes_to_tensor(learner_->save_state()));
  archive.write("collector", bytes_to_tensor(serialize_collector_state(pending_start_)));
  archive.write("actor", bytes_to_tensor(actor_->save_parameters()));
  archive.write("rule_library_hash", bytes_to_tensor(rule_library_hash_));
  archive.write("num_xfers", torch::tensor({int64_t{options_.network.num_xfers}}, torch::kInt64));
  archive.write("config", bytes_to_tensor(config_.to_yaml()));
  archive.write("counters", torch::tensor({env_steps_, episodes_, static_cast<int64_t>(std::llround(wall_s_ * 1e6))},
                                          torch::kInt64));
  const std::string dir = run_dir_ + "/checkpoints";
  const std::string path = dir + "/" + kCheckpointPrefix + "-" + std::to_string(learner_->version()) + ".ckpt";
  write_checked_file(path, kCheckpointKind, archive_to_bytes(archive));
  prune_numbered_files(dir, kCheckpointPrefix, static_cast<size_t>(options_.keep_checkpoints));
  return path;
}

void Trainer::load_checkpoint(const std::string& path) {
  const CheckpointContents saved = read_checkpoint(path);
  if (saved.rule_library_hash != rule_library_hash_ || saved.num_xfers != options_.network.num_xfers)
    throw UsageError(path + ": the run was trained with another rule library (hash " + saved.rule_library_hash + ", " +
                     std::to_string(saved.num_xfers) + " rules) than this one (hash " + rule_library_hash_ + ", " +
                     std::to_string(options_.network.num_xfers) + " rules); resume with the library it started with "
                     "(env.rules)");
  const std::string difference = changed_setting(saved.config, config_);
  if (!difference.empty())
    throw ConfigError(path + ": resuming must keep the run's settings (only train.total_env_steps, "
                      "train.checkpoint_every, train.keep_checkpoints and train.threads may change): " + difference);
  learner_->restore_state(saved.learner_state, path);
  pending_start_ = parse_collector_state(saved.collector_state, path);
  try {
    collector_->restore(pending_start_);
  } catch (const FormatError& e) {
    throw FormatError(path + ": " + e.what() + "; a training graph changed since the run started: restore it, or "
                      "start a new run");
  }
  actor_->load_parameters(saved.actor_parameters, path);
  env_steps_ = saved.env_steps;
  episodes_ = saved.episodes;
  wall_s_ = saved.wall_s;
  for (size_t g = 0; g < written_best_ms_.size(); ++g) written_best_ms_[g] = collector_->best()[g].cost_ms;
  truncate_metrics(run_dir_ + "/metrics.jsonl", learner_->version());
}

void Trainer::write_best_graphs() {
  const std::vector<BestGraph>& best = collector_->best();
  bool changed = false;
  std::error_code ec;
  fs::create_directories(run_dir_ + "/best", ec);
  for (size_t g = 0; g < best.size(); ++g) {
    if (!best[g].graph || !(best[g].cost_ms < written_best_ms_[g])) continue;
    export_onnx_file(*best[g].graph, run_dir_ + "/best/" + file_safe(collector_->graphs()[g].name) + ".onnx");
    written_best_ms_[g] = best[g].cost_ms;
    changed = true;
  }
  if (!changed) return;
  JsonWriter j;
  j.begin_object().key("graphs").begin_array();
  for (size_t g = 0; g < best.size(); ++g) {
    j.begin_object()
        .key("graph").value(collector_->graphs()[g].name)
        .key("initial_cost_ms").value(best[g].initial_cost_ms)
        .key("best_cost_ms").value(best[g].cost_ms)
        .key("reduction_pct").value(best[g].reduction_pct())
        .key("file");
    // A best graph restored from a checkpoint has its file from before.
    if (written_best_ms_[g] < best[g].initial_cost_ms) j.value("best/" + file_safe(collector_->graphs()[g].name) + ".onnx");
    else j.null_value();
    j.end_object();
  }
  j.end_array().end_object();
  write_file_atomically(run_dir_ + "/best/summary.json", j.str() + "\n");
}

void Trainer::append_metrics(const UpdateReport& r) {
  JsonWriter j;
  j.begin_object()
      .key("update").value(r.update)
      .key("env_steps").value(r.env_steps)
      .key("episodes").value(r.episodes)
      .key("wall_s").value(r.wall_s)
      .key("env_steps_per_s").value(r.env_steps_per_s)
      .key("collect_s").value(r.collect_s)
      .key("update_s").value(r.stats.update_s)
      .key("episodes_this_update").value(r.episodes_this_update)
      .key("mean_episode_reduction_pct").value(r.mean_episode_reduction_pct)
      .key("policy_loss").value(r.stats.policy_loss)
      .key("value_loss").value(r.stats.value_loss)
      .key("entropy").value(r.stats.entropy)
      .key("approx_kl").value(r.stats.approx_kl)
      .key("clip_fraction").value(r.stats.clip_fraction)
      .key("explained_variance").value(r.stats.explained_variance)
      .key("grad_norm").value(r.stats.grad_norm)
      .key("best_reduction_pct").begin_object();
  for (const auto& [graph, pct] : r.best_reduction_pct) j.key(graph).value(pct);
  j.end_object().end_object();
  std::ofstream out(run_dir_ + "/metrics.jsonl", std::ios::app);
  out << j.str() << "\n";
  if (!out.flush()) throw Error(run_dir_ + "/metrics.jsonl: write failed (disk full?)");
}

TrainingOutcome Trainer::run(const std::function<bool()>& should_stop,
                             const std::function<void(const UpdateReport&)>& on_update) {
  ComputeThreads threads(options_.threads);
  keep_freed_tensor_memory();
  TrainingOutcome outcome;
  int64_t checkpointed_version = -1;
  // Collects from pending_start_ (where the collector stands) with `policy`;
  // nothing when stopped, the collector back at pending_start_.
  auto collect = [&](PolicyNetwork& policy, int64_t version) {
    return collector_->collect(policy, version, should_stop);
  };
  std::optional<Rollout> pending;
  if (options_.overlap && env_steps_ < options_.total_env_steps) {
    pending = collect(*actor_, learner_->version());
    if (!pending) {
      outcome.stopped_early = true;
    } else {
      // On a resume the actor held the parameters one update old; the
      // rollout after this one is collected with the learner's.
      actor_->copy_parameters_from(learner_->policy());
      pending_start_ = collector_->state();
    }
  }
  while (env_steps_ < options_.total_env_steps && !outcome.stopped_early) {
    Stopwatch clock;
    UpdateReport report;
    std::optional<Rollout> next;
    RolloutCollectorState next_start;
    if (!options_.overlap) {
      pending = collect(learner_->policy(), learner_->version());
      if (!pending) {
        outcome.stopped_early = true;
        break;
      }
      report.collect_s = clock.elapsed_s();
      report.stats = learner_->update({&*pending});
    } else {
      // The next rollout, with the parameters one update old, on a second
      // thread; none after the rollout that ends the run.
      const bool last = env_steps_ + pending->env_steps() >= options_.total_env_steps;
      const int64_t acting_version = learner_->version();
      next_start = collector_->state();
      std::thread actor;
      std::exception_ptr actor_error;
      if (!last)
        actor = std::thread([&] {
          try {
            Stopwatch actor_clock;
            next = collect(*actor_, acting_version);
            report.collect_s = actor_clock.elapsed_s();
          } catch (...) {
            actor_error = std::current_exception();
          }
        });
      try {
        report.stats = learner_->update({&*pending});
      } catch (...) {
        if (actor.joinable()) actor.join();
        throw;
      }
      if (actor.joinable()) actor.join();
      if (actor_error) std::rethrow_exception(actor_error);
    }
    env_steps_ += pending->env_steps();
    episodes_ += static_cast<int64_t>(pending->episodes.size());
    report.update = learner_->version();
    report.env_steps = env_steps_;
    report.episodes = episodes_;
    report.episodes_this_update = static_cast<int64_t>(pending->episodes.size());
    double sum = 0;
    for (const EpisodeSummary& e : pending->episodes) sum += e.reduction_pct;
    report.mean_episode_reduction_pct = pending->episodes.empty() ? 0.0 : sum / static_cast<double>(pending->episodes.size());
    for (size_t g = 0; g < collector_->graphs().size(); ++g)
      report.best_reduction_pct.emplace_back(collector_->graphs()[g].name, collector_->best()[g].reduction_pct());
    write_best_graphs();
    // What comes next is collected from here: the next rollout (if any) was
    // collected from next_start with the actor's parameters, which the
    // checkpoint must hold before they move on.
    if (options_.overlap) pending_start_ = next_start;
    else pending_start_ = collector_->state();
    if (!options_.overlap) actor_->copy_parameters_from(learner_->policy());
    const bool stop_now = should_stop && should_stop();
    const double elapsed = clock.elapsed_s();
    wall_s_ += elapsed;
    report.wall_s = wall_s_;
    report.env_steps_per_s = static_cast<double>(report.stats.samples) / elapsed;
    // The row goes out before the checkpoint: a resume drops rows after its
    // checkpoint, so a crash between the two loses nothing.
    append_metrics(report);
    if (learner_->version() % options_.checkpoint_every == 0 || stop_now ||
        env_steps_ >= options_.total_env_steps || (options_.overlap && !next && env_steps_ < options_.total_env_steps)) {
      outcome.last_checkpoint = write_checkpoint();
      checkpointed_version = learner_->version();
    }
    if (on_update) on_update(report);
    if (stop_now && next) {
      // Stopping with the next rollout in hand: it is dropped, and the
      // collector goes back to where it started, as the checkpoint says.
      collector_->restore(pending_start_);
      next.reset();
    }
    pending = std::move(next);
    if (options_.overlap && pending) {
      // The next rollout is in hand; the one after it is collected from
      // where the collector stands, with the parameters just learned. (With
      // none in hand, pending_start_ and the actor still describe the next.)
      actor_->copy_parameters_from(learner_->policy());
      pending_start_ = collector_->state();
    }
    if (stop_now || (options_.overlap && !pending && env_steps_ < options_.total_env_steps)) {
      outcome.stopped_early = true;
      break;
    }
  }
  if (checkpointed_version != learner_->version()) outcome.last_checkpoint = write_checkpoint();
  outcome.updates = learner_->version();
  outcome.env_steps = env_steps_;
  return outcome;
}

}  // namespace graphworld
