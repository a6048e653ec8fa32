#include "learner/trainer.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "common/atomic_file.h"
#include "common/checkpoint_file.h"
#include "common/error.h"
#include "learner/compute_device.h"
#include "common/json_writer.h"
#include "common/stopwatch.h"
#include "env/onnx/onnx_export.h"
#include "learner/compute_threads.h"
#include "learner/policy_file.h"
#include "learner/torch_bytes.h"

namespace graphworld {
namespace fs = std::filesystem;

namespace {

std::string file_safe(const std::string& name) {
  std::string s;
  for (char c : name) s += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') ? c : '_';
  return s;
}

}  // namespace

Trainer::Trainer(const RunSettings& settings, std::vector<TrainingGraph> graphs, const RuleMatcher& matcher, CostModel& cost,
                 const std::string& run_dir, bool resume, const std::string& checkpoint)
    : config_(settings.resolved), options_(settings.options), run_dir_(run_dir) {
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
  const ResolvedDevice device = resolve_compute_device(options_.device);
  if (!device.note.empty()) std::cerr << "train: " << device.note << "\n";
  learner_ = std::make_unique<PpoLearner>(options_.network, options_.ppo, device.device);
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
  CheckpointContents c;
  c.config = config_;
  c.learner_state = learner_->save_state();
  c.collector_state = serialize_collector_state(pending_start_);
  c.actor_parameters = actor_->save_parameters();
  c.rule_library_hash = rule_library_hash_;
  c.num_xfers = options_.network.num_xfers;
  c.env_steps = env_steps_;
  c.episodes = episodes_;
  c.wall_s = wall_s_;
  return write_checkpoint_file(run_dir_, learner_->version(), c, options_.keep_checkpoints);
}

void Trainer::load_checkpoint(const std::string& path) {
  const CheckpointContents saved = read_checkpoint(path);
  check_resumable(saved, config_, rule_library_hash_, options_.network.num_xfers, path);
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
    if (options_.cost_model == "gpu") {
      report.extra.emplace_back("cost_table_hits", static_cast<double>(pending->cost_table_hits));
      report.extra.emplace_back("cost_model_fallbacks", static_cast<double>(pending->cost_model_fallbacks));
    }
    // The row goes out before the checkpoint: a resume drops rows after its
    // checkpoint, so a crash between the two loses nothing.
    append_metrics_row(run_dir_ + "/metrics.jsonl", report);
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
