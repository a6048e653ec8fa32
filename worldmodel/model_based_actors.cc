#include "worldmodel/model_based_actors.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "common/error.h"
#include "learner/rollout.h"
#include "worldmodel/controller.h"
#include "worldmodel/device_random.h"
#include "worldmodel/dream_message.h"
#include "worldmodel/dream_trainer.h"
#include "worldmodel/model_based_parameters.h"
#include "worldmodel/world_model_modules.h"

namespace graphworld {

namespace {

// The world model and controller of one generation, as an actor holds them.
struct HeldModels {
  int64_t generation = 0;
  std::unique_ptr<WorldModel> model;
  DreamController controller{nullptr};

  // Takes `p`: a new generation's world model is loaded whole, a new
  // controller version only replaces the controller.
  void take(const ModelBasedParameters& p, const std::string& what) {
    if (p.generation == 0) {
      generation = 0;
      model.reset();
      model_bytes.clear();
      controller = nullptr;
      return;
    }
    // Compared by content: a resumed learner may make another model under
    // a generation number it had used before.
    std::unique_ptr<WorldModel> next_model;
    if (p.generation != generation || !model || p.world_model != model_bytes)
      next_model = std::make_unique<WorldModel>(WorldModel::from_bytes(p.world_model, what));
    DreamController next = controller_from_bytes(p.controller, next_model ? *next_model : *model, what);
    if (next_model) {
      model = std::move(next_model);
      model_bytes = p.world_model;
    }
    controller = next;
    generation = p.generation;
  }
  std::string model_bytes;  // what `model` was loaded from
};

class RealModelBasedWork final : public ActorWork {
 public:
  RealModelBasedWork(std::vector<TrainingGraph> graphs, const RuleMatcher& matcher, CostModel& cost,
                     RealModelBasedOptions options)
      : options_(options), rng_(options.seed) {
    if (graphs.empty()) throw UsageError("a real actor needs at least one training graph");
    if (options.real_actors < 1 || options.actor_index < 0 || options.actor_index >= options.real_actors)
      throw UsageError("real actor " + std::to_string(options.actor_index) + " of " +
                       std::to_string(options.real_actors) + ": no such place");
    if (options.env.max_steps > options.max_message_steps)
      throw UsageError("env.max_steps " + std::to_string(options.env.max_steps) + " is longer than one trajectory " +
                       "message may be (env.num_envs x env.steps_per_env = " +
                       std::to_string(options.max_message_steps) + "); a model-based run sends whole episodes");
    for (TrainingGraph& g : graphs) {
      names_.push_back(g.name);
      envs_.push_back(std::make_unique<GraphEnv>(std::move(g.graph), matcher, cost, options.env));
    }
  }

  void load_parameters(const std::string& blob, int64_t version) override {
    const std::string what = "model-based parameters of version " + std::to_string(version);
    ModelBasedParameters p = decode_model_based_parameters(blob, what);
    models_.take(p, what);
    // A new ask starts this actor's share of the round's episodes anew.
    if (p.ask != schedule_.ask) next_share_ = 0;
    schedule_ = std::move(p);
    schedule_.world_model.clear();
    schedule_.controller.clear();
  }

  bool has_work() const override { return episode_index() < schedule_.real_episodes; }

  std::optional<MessageBody> make(const std::function<bool()>& stop_now) override {
    const int32_t k = episode_index();
    ++next_share_;
    // Greedy episodes first, then the dream's plans (one per graph), then sampled ones.
    const int32_t plan = k - schedule_.greedy_episodes;
    const bool plan_episode = models_.model && plan >= 0 && plan < static_cast<int32_t>(schedule_.plans.size());
    const size_t g = static_cast<size_t>(plan_episode ? plan : k) % envs_.size();
    GraphEnv& env = *envs_[g];
    const uint64_t seed = rng_();
    Rollout rollout;
    RolloutSegment segment;
    double best_cost = 0;
    bool stopped = false;
    // The controller's greedy episodes measure the round; the learner keeps
    // the round they measure best.
    const bool greedy = models_.model && !plan_episode && k < schedule_.greedy_episodes;
    auto record = [&](Observation before, Action action, float log_prob, float value, const StepResult& r) {
      RolloutStep step;
      step.observation = std::move(before);
      step.action = action;
      step.log_prob = log_prob;
      step.value = value;
      step.reward = static_cast<float>(r.reward);
      step.done = r.done;
      step.graph_index = static_cast<int32_t>(g);
      step.episode_seed = seed;
      step.episode_step = static_cast<int32_t>(segment.steps.size());
      step.cost_ms = r.info.cost_ms;
      best_cost = segment.steps.empty() ? r.info.cost_ms : std::min(best_cost, r.info.cost_ms);
      segment.steps.push_back(std::move(step));
      if (r.done) {
        EpisodeSummary e;
        e.graph = names_[g];
        const double c0 = r.info.initial_cost_ms;
        e.reduction_pct = c0 > 0 ? 100.0 * (c0 - r.info.cost_ms) / c0 : 0.0;
        e.best_reduction_pct = c0 > 0 ? 100.0 * (c0 - best_cost) / c0 : 0.0;
        e.steps = static_cast<int32_t>(segment.steps.size());
        e.greedy = greedy;
        rollout.episodes.push_back(e);
      }
      stopped = stopped || stop_now();
    };
    if (!models_.model) {
      episode_by(random_rule_chooser(0.0, schedule_.random_steps, options_.random_locations,
                                     options_.look_ahead_locations),
                 env, seed, record);
    } else if (plan_episode) {
      episode_by(plan_chooser(schedule_.plans[static_cast<size_t>(plan)], options_.look_ahead_locations), env, seed,
                 [&](Observation before, Action action, float, float, const StepResult& r) {
                   record(std::move(before), action, 0.0f, 0.0f, r);
                 });
    } else {
      real_controller_episode(env, static_cast<int32_t>(g), *models_.model, models_.controller, greedy,
                              schedule_.explore, rng_, seed, record);
    }
    if (stopped) return std::nullopt;
    rollout.segments.push_back(std::move(segment));
    return MessageBody{std::move(rollout)};
  }

 private:
  // The round's episode this actor plays next (over all real actors).
  int32_t episode_index() const { return options_.actor_index + next_share_ * options_.real_actors; }

  // An episode whose actions `choose` picks: random ones before the first
  // world model (a uniformly random allowed rule, NO-OP only when none
  // applies or after model_based.random_steps rewrites), or a dream's plan
  // played in the real graph. The log-probability reported is the uniform
  // choice's.
  void episode_by(const ActionChooser& choose, GraphEnv& env, uint64_t seed, const RealStepCallback& record) {
    const Observation* observation = &env.reset(seed);
    for (int32_t step = 0;; ++step) {
      const Action action = choose(env, step, rng_);
      int32_t allowed = 0;
      for (uint8_t bit : observation->xfer_mask) allowed += bit ? 1 : 0;
      Observation before = compact_observation(*observation, action.xfer);
      const StepResult r = env.step(action);
      // NO-OP is allowed too, but the random choice takes it only when nothing
      // else is or its rewrites are spent: then it is certain.
      const int32_t choices = action.xfer == env.noop() ? 1 : std::max(1, allowed - (allowed > 1 ? 1 : 0));
      record(std::move(before), action, -static_cast<float>(std::log(static_cast<double>(choices))), 0.0f, r);
      if (r.done) break;
      observation = r.observation;
    }
  }

  RealModelBasedOptions options_;
  std::vector<std::string> names_;
  std::vector<std::unique_ptr<GraphEnv>> envs_;
  std::mt19937_64 rng_;
  HeldModels models_;
  ModelBasedParameters schedule_;  // without the model bytes
  int32_t next_share_ = 0;         // episodes of this round's share played
};

class DreamWork final : public ActorWork {
 public:
  explicit DreamWork(DreamActorOptions options)
      : options_(options), generator_(seeded_generator(torch::Device(options.device), options.seed)) {
    if (options.rows < 1 || options.horizon < 1) throw UsageError("a dream actor needs rows >= 1 and horizon >= 1");
  }

  void load_parameters(const std::string& blob, int64_t version) override {
    const std::string what = "model-based parameters of version " + std::to_string(version);
    const ModelBasedParameters p = decode_model_based_parameters(blob, what);
    const WorldModel* before = models_.model.get();
    // The dream refers to the model: it goes first, and comes back only
    // once the new parameters are wholly taken.
    dream_ = false;
    if (!p.dream || p.generation == 0 || p.world_model != models_.model_bytes) env_.reset();
    models_.take(p, what);
    if (models_.model && options_.device != "cpu") {
      // Parameters arrive as host bytes; the dream runs on the device.
      const torch::Device device(options_.device);
      if (models_.model.get() != before) models_.model->impl().to_device(device);
      models_.controller->to(device);
    }
    if (!models_.model) {
      env_.reset();
    } else if (!env_ || models_.model.get() != before) {
      // A new world model: its dream starts over from its own real starts.
      DreamOptions dream;
      dream.batch = options_.rows;
      dream.tau = options_.tau;
      dream.max_steps = std::max(1, models_.model->info().max_steps);
      dream.seed = options_.seed + static_cast<uint64_t>(models_.generation);
      dream.check_each_step = false;  // its actions come from the mask; checked per batch
      env_ = std::make_unique<DreamEnv>(*models_.model, models_.model->impl().starts, dream);
    }
    dream_ = p.dream && models_.model && env_;
  }

  bool has_work() const override { return dream_; }

  std::optional<MessageBody> make(const std::function<bool()>& stop_now) override {
    if (stop_now()) return std::nullopt;
    const DreamBatch batch = collect_dream_batch(*env_, models_.controller, options_.horizon, generator_, options_.dream_reward);
    return MessageBody{dream_batch_to_message(batch, models_.generation)};
  }

 private:
  DreamActorOptions options_;
  torch::Generator generator_;
  HeldModels models_;
  std::unique_ptr<DreamEnv> env_;
  bool dream_ = false;
};

}  // namespace

std::unique_ptr<ActorWork> make_real_model_based_work(std::vector<TrainingGraph> graphs, const RuleMatcher& matcher,
                                                      CostModel& cost, RealModelBasedOptions options) {
  return std::make_unique<RealModelBasedWork>(std::move(graphs), matcher, cost, options);
}

std::unique_ptr<ActorWork> make_dream_work(DreamActorOptions options) { return std::make_unique<DreamWork>(options); }

}  // namespace graphworld
