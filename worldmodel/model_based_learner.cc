#include "worldmodel/model_based_learner.h"

#include <chrono>
#include <cmath>
#include <deque>
#include <future>
#include <map>
#include <random>
#include <sstream>

#include "common/error.h"
#include "learner/torch_bytes.h"
#include "worldmodel/controller.h"
#include "worldmodel/dream_message.h"
#include "worldmodel/dream_trainer.h"
#include "worldmodel/model_based_parameters.h"
#include "worldmodel/world_model_modules.h"

namespace graphworld {

namespace {

using Clock = std::chrono::steady_clock;
constexpr int64_t kStateFormat = 1;
constexpr double kAskAgainS = 120.0;

class ModelBasedLearner final : public LearnerExtension {
 public:
  explicit ModelBasedLearner(ModelBasedRunOptions options) : options_(std::move(options)), rng_(options_.agent.seed) {
    const ModelBasedSettings& a = options_.agent.settings;
    if (a.rounds < 1 || a.random_episodes < 1 || a.dream_updates < 1 || a.episodes_per_round < 0)
      throw UsageError("model_based: rounds, random_episodes and dream_updates must be at least 1");
    if (!(a.holdout > 0 && a.holdout < 1)) throw UsageError("model_based.holdout must lie in (0, 1)");
    if (!options_.replay) throw UsageError("a model-based learner needs a way to replay real steps");
    wanted_ = a.random_episodes * static_cast<int32_t>(options_.graphs.size());
    rebuild_blob();
  }

  ~ModelBasedLearner() override {
    if (training_.valid()) training_.wait();
  }

  int64_t version() const override { return version_; }
  std::string parameters() const override { return blob_; }

  void take_real(const std::vector<StoredStep>& steps, const std::vector<EpisodeSummary>& summaries) override {
    note_greedy_episodes(steps, summaries);
    for (const StoredStep& step : steps) {
      std::vector<StoredStep>& open = open_[{step.actor_id, step.env_slot}];
      // Only whole episodes can be replayed: a step that does not continue
      // the slot's episode (a restarted actor) starts over or is dropped.
      if (step.episode_step == 0) {
        open.clear();
      } else if (open.empty() || open.back().episode_seed != step.episode_seed ||
                 open.back().episode_step + 1 != step.episode_step) {
        open.clear();
        continue;
      }
      open.push_back(step);
      if (!step.done) continue;
      const bool counts = open.front().policy_version >= phase_version_;
      std::vector<WorldEpisode> episodes;
      try {
        episodes = episodes_from_stored_steps(open, options_.replay);
      } catch (const Error& e) {
        // One episode the replay cannot rebuild (its store and this build
        // disagree) is dropped, not the run; it is asked for again.
        ++unreplayable_;
        log(std::string("a real episode could not be rebuilt and is left out: ") + e.what());
      }
      open.clear();
      for (WorldEpisode& e : episodes) {
        if (!e.complete()) continue;
        real_steps_ += static_cast<int64_t>(e.steps.size());
        (held_out_on_arrival(++arrived_, options_.agent.settings.holdout) ? held_out_ : data_).push_back(std::move(e));
        if (counts && (phase_ == Phase::kRandom || phase_ == Phase::kReal)) {
          ++episodes_in_phase_;
          last_counted_ = Clock::now();
        }
      }
    }
  }

  bool take_dream(const DreamTrajectoryMessage& dream, int64_t version) override {
    if (phase_ != Phase::kDream || dream.world_model != generation_ || version_ - version > options_.max_policy_lag ||
        version > version_ || dreams_.size() >= 2)
      return false;
    try {
      dreams_.push_back(dream_batch_from_message(dream, *model_));
    } catch (const UsageError& e) {
      log(std::string("a dream trajectory was refused: ") + e.what());
      return false;
    }
    return true;
  }

  bool advance(UpdateReport& report) override {
    switch (phase_) {
      case Phase::kRandom:
        if (episodes_in_phase_ < wanted_) return ask_again(report);
        log("round 0: " + std::to_string(episodes_in_phase_) + " random real episodes, " +
            std::to_string(real_steps_) + " real steps");
        start_training();
        return publish(report);
      case Phase::kTraining:
        if (training_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return false;
        finish_training(report);
        return publish(report);
      case Phase::kDream: {
        if (dreams_.empty()) return false;
        const DreamBatch batch = std::move(dreams_.front());
        dreams_.pop_front();
        const DreamUpdateReport r = learn_from_dream_batch(controller_, *optimizer_, batch, options_.agent.ppo,
                                                           options_.agent.settings.step_cost, rng_);
        controller_bytes_ = controller_to_bytes(controller_);
        ++dream_updates_;
        dream_steps_ += r.dream_steps;
        if (r.episodes > 0) dream_return_ = r.mean_return;
        report.stats = r.ppo;
        report.stats.samples = r.dream_steps;
        report.stats.update_s = r.seconds;
        if (dream_updates_ >= options_.agent.settings.dream_updates) {
          log("round " + std::to_string(round_) + ": " + std::to_string(dream_updates_) +
              " controller updates in the dream, mean predicted reduction " + format(dream_return_) + "%");
          const int32_t graphs = static_cast<int32_t>(options_.graphs.size());
          const bool last = round_ >= options_.agent.settings.rounds;
          if (calibrates_after(options_.agent, round_)) {
            // The final controller's own real episodes first, for the world
            // model to learn from before it predicts that controller.
            log("round " + std::to_string(round_) + ": calibration: the final controller plays " +
                std::to_string(options_.agent.settings.calibration_episodes) + " sampled episodes per graph");
            calibrating_ = true;
            plans_ = 0;
            enter(Phase::kReal, graphs * options_.agent.settings.calibration_episodes);
            return publish(report);
          }
          plan_dreams();
          report.extra.emplace_back("dream_greedy_reduction_pct", dream_greedy_);
          plans_ = last || !options_.agent.settings.verify_plans ? 0 : static_cast<int32_t>(plans_by_graph_.size());
          enter(Phase::kReal, graphs * (1 + (last ? 0 : options_.agent.settings.episodes_per_round)) + plans_);
        }
        return publish(report);
      }
      case Phase::kReal:
        if (episodes_in_phase_ < wanted_) return ask_again(report);
        log("round " + std::to_string(round_) + ": " + std::to_string(episodes_in_phase_) +
            " controller episodes in the real graphs; " + std::to_string(real_steps_) + " real steps so far");
        // The round's agent is measured before the next training changes its world model.
        if (!calibrating_) keep_if_best(report);
        if (!calibrating_ && round_ >= options_.agent.settings.rounds) {
          if (kept_round_ == 0) {
            log("no round's greedy episodes reached every graph; the run folder keeps the last world model and controller");
            save_agent();
          }
          enter(Phase::kDone, 0);
        } else {
          start_training();  // the next round's, or the calibration's within this one
        }
        return publish(report);
      case Phase::kDone:
        return false;
    }
    return false;
  }

  bool finished() const override { return phase_ == Phase::kDone && !training_.valid(); }

  std::string save_state() const override {
    torch::serialize::OutputArchive archive;
    archive.write("version", torch::tensor(version_));
    archive.write("schedule", torch::tensor(std::vector<int64_t>{kStateFormat, round_, static_cast<int64_t>(phase_),
                                                                 generation_, dream_updates_, dream_steps_}));
    archive.write("models", bytes_to_tensor(blob_));
    archive.write("kept", torch::tensor(std::vector<double>{static_cast<double>(kept_round_), kept_.best_reduction,
                                                                kept_.end_reduction},
                                        torch::kDouble));
    return archive_to_bytes(archive);
  }

  // The world model and controller come back as saved; the real episodes
  // are rebuilt from the store (it may hold steps after the checkpoint:
  // they are real, so they are kept). A run stopped before its first world
  // model goes on collecting random episodes; one stopped later redoes its
  // round from the world model's training (the controller's optimizer
  // state starts afresh). The version goes on from the saved one.
  void restore_state(const std::string& state, const std::vector<StoredStep>& stored, const std::string& what) override {
    torch::serialize::InputArchive archive;
    archive_from_bytes(archive, state, what + " (model-based learner state)");
    const torch::Tensor schedule = read_tensor(archive, "schedule", what);
    if (schedule.numel() != 6 || schedule[0].item<int64_t>() != kStateFormat)
      throw FormatError(what + ": not a model-based learner state this build reads");
    const int64_t saved_version = read_tensor(archive, "version", what).item<int64_t>();
    const auto saved_round = static_cast<int32_t>(schedule[1].item<int64_t>());
    const auto saved_phase = static_cast<Phase>(schedule[2].item<int64_t>());
    const ModelBasedParameters p = decode_model_based_parameters(read_bytes(archive, "models", what), what);
    if (p.generation > 0) {
      model_ = std::make_unique<WorldModel>(WorldModel::from_bytes(p.world_model, what));
      // Its episodes were played one way; the resumed actors must go on so.
      const WorldModelInfo& info = model_->info();
      if (info.best_locations != options_.agent.settings.best_locations ||
          info.look_ahead_locations != options_.agent.settings.look_ahead_locations)
        throw UsageError(what + ": the run's world model learned from rules applied at " +
                         rule_placement(info.best_locations, info.look_ahead_locations) +
                         "; resume it with model_based.best_locations: " + (info.best_locations ? "true" : "false") +
                         " and model_based.look_ahead_locations: " + (info.look_ahead_locations ? "true" : "false"));
      controller_ = controller_from_bytes(p.controller, *model_, what);
      optimizer_ = std::make_unique<torch::optim::Adam>(controller_->parameters(),
                                                        torch::optim::AdamOptions(options_.agent.ppo.learning_rate));
      world_model_bytes_ = p.world_model;
      controller_bytes_ = p.controller;
    }
    // The kept round's agent stays in the run folder; a state written
    // before rounds were kept has none.
    torch::Tensor kept;
    if (archive.try_read("kept", kept) && kept.numel() == 3) {
      kept = kept.to(torch::kDouble);
      kept_round_ = static_cast<int32_t>(kept[0].item<double>());
      kept_ = GreedyOutcome{kept[1].item<double>(), kept[2].item<double>()};
    }
    version_ = saved_version;
    generation_ = p.generation;
    dream_steps_ = schedule[5].item<int64_t>();
    phase_ = Phase::kRandom;
    phase_version_ = 0;
    take_real(stored, {});
    log("resumed in round " + std::to_string(saved_round) + " with " + std::to_string(data_.size() + held_out_.size()) +
        " real episodes (" + std::to_string(real_steps_) + " steps) rebuilt from the store");
    if (saved_phase == Phase::kDone) {
      round_ = saved_round;
      enter(Phase::kDone, 0);
    } else if (saved_phase == Phase::kRandom || !model_) {
      // episodes_in_phase_ counts the random episodes already stored; the
      // actors are asked afresh (their shares may be lost with the crash).
      wanted_ = options_.agent.settings.random_episodes * static_cast<int32_t>(options_.graphs.size());
      ++ask_;
    } else {
      round_ = saved_round - 1;
      start_training();
    }
    rebuild_blob();
  }

 private:
  enum class Phase { kRandom, kTraining, kDream, kReal, kDone };

  void log(const std::string& line) const {
    if (options_.log) options_.log("model-based: " + line);
  }
  static std::string format(double x) {
    std::ostringstream out;
    out.precision(3);
    out << std::fixed << x;
    return out.str();
  }

  // The dream's greedy episode from each graph's real start, with the
  // controller just trained: its predicted reduction (the dream's side of
  // the dream-versus-real gap) and its plan, which real actors play.
  void plan_dreams() {
    const std::vector<DreamEpisode> episodes =
        dream_greedy_episodes(*model_, controller_, model_->impl().starts, options_.agent.settings.tau, options_.agent.seed);
    plans_by_graph_.clear();
    if (model_->impl().starts.size(0) != static_cast<int64_t>(options_.graphs.size())) {
      dream_greedy_ = 0;  // some graph has no real start yet: no plan can be matched to its graph
      return;
    }
    double sum = 0;
    for (const DreamEpisode& e : episodes) {
      plans_by_graph_.push_back(e.xfers);
      sum += e.predicted_reduction;
    }
    dream_greedy_ = episodes.empty() ? 0.0 : sum / static_cast<double>(episodes.size());
  }

  // Episodes can go missing (an actor restarted mid-episode, a message
  // refused, an episode the replay could not rebuild, a learner restarted
  // before its store was flushed): after kAskAgainS without a counted
  // episode the real actors are asked to play their shares again. Extra
  // episodes are only more data.
  bool ask_again(UpdateReport& report) {
    if (std::chrono::duration<double>(Clock::now() - last_counted_).count() < kAskAgainS) return false;
    log("round " + std::to_string(round_) + ": " + std::to_string(episodes_in_phase_) + " of " +
        std::to_string(wanted_) + " real episodes after " + std::to_string(static_cast<int>(kAskAgainS)) +
        " s without one; asking the real actors again");
    ++ask_;
    last_counted_ = Clock::now();
    return publish(report);
  }

  void enter(Phase phase, int32_t wanted) {
    ++ask_;
    greedy_by_graph_.clear();
    last_counted_ = Clock::now();
    phase_ = phase;
    wanted_ = wanted;
    episodes_in_phase_ = 0;
    // Real episodes count for this phase only when acted with its parameters.
    phase_version_ = version_ + 1;
  }

  // Trains the world model on a copy of the episodes so far, on its own
  // thread: real steps still arriving go to the next round. The last
  // round's calibration trains it once more within that round.
  void start_training() {
    if (!calibrating_) ++round_;
    enter(Phase::kTraining, 0);
    if (!model_) {
      WorldModelInfo info;
      info.max_steps = options_.max_steps;
      info.best_locations = options_.agent.settings.best_locations;
      info.look_ahead_locations = options_.agent.settings.look_ahead_locations;
      info.feature_version = kObservationFeatureVersion;
      info.graphs = options_.graphs;
      info.rule_library_hash = options_.rule_library_hash;
      model_ = std::make_unique<WorldModel>(world_model_config(options_.agent.settings), XferVocabulary::from_episodes(data_, options_.num_xfers),
                                            info, options_.agent.seed);
    }
    WorldModelTrainOptions world = world_model_training_for(options_.agent, round_, calibrating_);
    world.on_epoch = nullptr;
    training_started_ = Clock::now();
    training_ = std::async(std::launch::async, [model = model_.get(), train = data_, held_out = held_out_, world] {
      model->train(train, held_out, world);
      model->info().trained_steps = count_steps(train) + count_steps(held_out);
      TrainingOutcome outcome;
      outcome.train_losses = model->losses(train);
      outcome.has_held_out = !held_out.empty();
      if (outcome.has_held_out) {
        outcome.accuracy = model->evaluate(held_out);
        outcome.held_out_losses = model->losses(held_out);
      }
      return outcome;
    });
    log("round " + std::to_string(round_) + ": training the world model on " + std::to_string(data_.size()) +
        " episodes (" + std::to_string(held_out_.size()) + " held out)");
  }

  void finish_training(UpdateReport& report) {
    const TrainingOutcome outcome = training_.get();  // rethrows what training threw
    const WorldModelAccuracy& accuracy = outcome.accuracy;
    const double seconds = std::chrono::duration<double>(Clock::now() - training_started_).count();
    if (!controller_) {
      controller_ = make_controller(*model_, options_.agent.seed);
      optimizer_ = std::make_unique<torch::optim::Adam>(controller_->parameters(),
                                                        torch::optim::AdamOptions(options_.agent.ppo.learning_rate));
    }
    ++generation_;
    world_model_bytes_ = model_->to_bytes();
    controller_bytes_ = controller_to_bytes(controller_);
    log("round " + std::to_string(round_) + ": world model " + std::to_string(generation_) + " trained in " +
        format(seconds) + " s; held out: mask F1 " + format(accuracy.mask_f1) + ", done accuracy " +
        format(accuracy.done_accuracy) + ", reward MAE " + format(accuracy.reward_mae));
    report.extra.emplace_back("world_model_s", seconds);
    report.extra.emplace_back("world_model_trained_steps", static_cast<double>(model_->info().trained_steps));
    report.extra.emplace_back("held_out_mask_f1", accuracy.mask_f1);
    report.extra.emplace_back("held_out_done_accuracy", accuracy.done_accuracy);
    report.extra.emplace_back("held_out_reward_mae", accuracy.reward_mae);
    report.extra.emplace_back("held_out_z_nll", accuracy.z_nll);
    // The kept model's loss per head (what the report plots per round).
    for (const auto& [split, losses] : {std::pair<const char*, const WorldModelHeadLosses&>{"train", outcome.train_losses},
                                        {"held_out", outcome.held_out_losses}}) {
      if (std::string(split) == "held_out" && !outcome.has_held_out) continue;  // no held-out episodes: no such loss
      const std::string prefix = std::string("wm_") + split + "_loss_";
      report.extra.emplace_back(prefix + "z_nll", losses.z_nll);
      report.extra.emplace_back(prefix + "reward", losses.reward);
      report.extra.emplace_back(prefix + "done", losses.done);
      report.extra.emplace_back(prefix + "mask", losses.mask);
      report.extra.emplace_back(prefix + "locations", losses.locations);
    }
    dream_updates_ = 0;
    dreams_.clear();
    if (calibrating_) {  // the controller is final: the dream now only predicts it
      calibrating_ = false;
      plan_dreams();
      report.extra.emplace_back("dream_greedy_reduction_pct", dream_greedy_);
      enter(Phase::kReal, static_cast<int32_t>(options_.graphs.size()));
      return;
    }
    enter(Phase::kDream, 0);
  }

  // The controller's greedy episodes of this round's real phase (played
  // with its parameters), per graph: the cheapest graph on the way and
  // where the episode ended. The first per graph counts (an actor asked
  // again plays the same greedy episode again).
  void note_greedy_episodes(const std::vector<StoredStep>& steps, const std::vector<EpisodeSummary>& summaries) {
    if (phase_ != Phase::kReal || calibrating_ || steps.empty() || steps.front().policy_version < phase_version_) return;
    for (const EpisodeSummary& e : summaries)
      if (e.greedy) greedy_by_graph_.emplace(e.graph, GreedyOutcome{e.best_reduction_pct, e.reduction_pct});
  }

  // The in-process agent's rule (model_based_training.h): the round whose
  // greedy controller reached the most on its way, mean over the graphs;
  // of rounds that reached as much, the one whose episodes end highest,
  // then the later. Its world model and controller go to the run folder.
  void keep_if_best(UpdateReport& report) {
    const std::optional<GreedyOutcome> outcome = mean_greedy_outcome(greedy_by_graph_, options_.graphs);
    if (!outcome) {
      log("round " + std::to_string(round_) + ": greedy episodes arrived for " + std::to_string(greedy_by_graph_.size()) +
          " graphs, not all of them; the round is not compared");
      return;
    }
    report.extra.emplace_back("greedy_real_round", round_);
    report.extra.emplace_back("greedy_real_best_reduction_pct", outcome->best_reduction);
    report.extra.emplace_back("greedy_real_end_reduction_pct", outcome->end_reduction);
    if (kept_round_ == 0 || replaces_kept_round(*outcome, kept_)) {
      kept_round_ = round_;
      kept_ = *outcome;
      save_agent();
    }
    log("round " + std::to_string(round_) + ": the greedy controller reached " + format(outcome->best_reduction) +
        "% on its way and ended at " + format(outcome->end_reduction) + "% (mean over the graphs); kept: round " +
        std::to_string(kept_round_) + " (" + format(kept_.best_reduction) + "%)");
  }

  void save_agent() {
    if (!model_) return;
    if (!options_.world_model_path.empty()) model_->save(options_.world_model_path);
    if (!options_.controller_path.empty() && controller_) save_controller(options_.controller_path, controller_);
  }

  bool publish(UpdateReport& report) {
    ++version_;
    rebuild_blob();
    if (kept_round_ > 0) {
      report.extra.emplace_back("kept_round", kept_round_);
      report.extra.emplace_back("kept_real_reduction_pct", kept_.best_reduction);
      report.extra.emplace_back("kept_real_end_reduction_pct", kept_.end_reduction);
    }
    report.extra.emplace_back("round", round_);
    report.extra.emplace_back("world_model_generation", static_cast<double>(generation_));
    report.extra.emplace_back("dream_updates", dream_updates_);
    report.extra.emplace_back("dream_steps", static_cast<double>(dream_steps_));
    report.extra.emplace_back("dream_mean_return_pct", dream_return_);
    report.extra.emplace_back("world_model_real_steps", static_cast<double>(real_steps_));
    report.extra.emplace_back("unreplayable_episodes", static_cast<double>(unreplayable_));
    return true;
  }

  void rebuild_blob() {
    ModelBasedParameters p;
    p.generation = generation_;
    p.round = round_;
    p.ask = ask_;
    if (phase_ == Phase::kRandom || phase_ == Phase::kReal) p.real_episodes = wanted_;
    if (phase_ == Phase::kReal && !calibrating_) p.greedy_episodes = static_cast<int32_t>(options_.graphs.size());
    p.explore = calibrating_ ? 0.0 : options_.agent.settings.explore;  // as the in-process calibration
    p.random_steps = options_.agent.settings.random_steps;
    p.dream = phase_ == Phase::kDream;
    if (phase_ == Phase::kReal)
      p.plans.assign(plans_by_graph_.begin(), plans_by_graph_.begin() + std::min(plans_by_graph_.size(), static_cast<size_t>(plans_)));
    if (generation_ > 0) {
      p.world_model = world_model_bytes_;
      p.controller = controller_bytes_;
    }
    blob_ = encode_model_based_parameters(p);
  }

  ModelBasedRunOptions options_;
  std::mt19937_64 rng_;  // minibatch order of the controller's updates
  Phase phase_ = Phase::kRandom;
  int32_t round_ = 0, wanted_ = 0, episodes_in_phase_ = 0, dream_updates_ = 0;
  int64_t version_ = 0, phase_version_ = 0, generation_ = 0;
  int64_t real_steps_ = 0, dream_steps_ = 0, arrived_ = 0;
  double dream_return_ = 0, dream_greedy_ = 0;
  int64_t ask_ = 0, unreplayable_ = 0;
  Clock::time_point last_counted_ = Clock::now();
  std::vector<std::vector<int32_t>> plans_by_graph_;  // the dream's greedy plans, per start
  int32_t plans_ = 0;                                 // how many of them real actors play this round
  // This real phase's greedy episodes: per graph name, (best on the way, end), percent.
  std::map<std::string, GreedyOutcome> greedy_by_graph_;
  // The round kept (0: none yet) and its means over the graphs, percent.
  int32_t kept_round_ = 0;
  GreedyOutcome kept_;
  // The last round's calibration: its real episodes are sampled ones, and
  // the training they start ends in the greedy evaluation, not a dream.
  bool calibrating_ = false;
  std::map<std::pair<uint32_t, int32_t>, std::vector<StoredStep>> open_;  // per (actor, slot): its episode so far
  // Each episode goes to training or held out once, as it arrives (the
  // MDN-RNN keeps its weights across rounds).
  std::vector<WorldEpisode> data_, held_out_;
  std::unique_ptr<WorldModel> model_;
  DreamController controller_{nullptr};
  std::unique_ptr<torch::optim::Adam> optimizer_;
  std::deque<DreamBatch> dreams_;  // accepted, not yet learned from (at most 2)
  // What a round's world-model training yields besides the model.
  struct TrainingOutcome {
    WorldModelAccuracy accuracy;  // on the held-out episodes (zero without them)
    WorldModelHeadLosses train_losses, held_out_losses;
    bool has_held_out = false;
  };
  std::future<TrainingOutcome> training_;
  Clock::time_point training_started_;
  std::string world_model_bytes_, controller_bytes_, blob_;
};

}  // namespace

std::unique_ptr<LearnerExtension> make_model_based_learner(ModelBasedRunOptions options) {
  return std::make_unique<ModelBasedLearner>(std::move(options));
}

}  // namespace graphworld
