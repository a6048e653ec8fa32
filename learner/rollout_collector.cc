#include "learner/rollout_collector.h"

#include <sstream>

#include "common/error.h"

namespace graphworld {

RolloutCollector::RolloutCollector(std::vector<TrainingGraph> graphs, const RuleMatcher& matcher, CostModel& cost,
                                   RolloutCollectorOptions options)
    : graphs_(std::move(graphs)), options_(options), rng_(options.seed), cost_(&cost) {
  if (graphs_.empty()) throw UsageError("training needs at least one graph");
  if (options_.num_envs < 1) throw UsageError("num_envs must be at least 1");
  if (options_.steps_per_env < 1) throw UsageError("steps_per_env must be at least 1");
  for (const TrainingGraph& g : graphs_) {
    std::unique_ptr<GraphEnv> env;
    try {
      env = std::make_unique<GraphEnv>(g.graph, matcher, cost, options_.env);
    } catch (const UsageError& e) {
      throw UsageError("training graph '" + g.name + "': " + e.what());
    }
    env->reset(0);
    if (env->done())
      throw UsageError("training graph '" + g.name + "': no rule of the library applies to it, so there is nothing "
                       "to learn on it; remove it from the training set");
    BestGraph best;
    best.initial_cost_ms = best.cost_ms = env->initial_cost_ms();
    best_.push_back(std::move(best));
    prototypes_.push_back(std::move(env));
  }
  slots_.resize(static_cast<size_t>(options_.num_envs));
  for (Slot& slot : slots_) reset_slot(slot);
}

RolloutCollector::~RolloutCollector() = default;

void RolloutCollector::reset_slot(Slot& slot) {
  slot.graph_index = static_cast<int32_t>(std::uniform_int_distribution<size_t>(0, graphs_.size() - 1)(rng_));
  slot.env = prototypes_[static_cast<size_t>(slot.graph_index)]->clone();
  slot.env->reset(rng_());
  slot.best_cost_ms = slot.env->cost_ms();
}

void RolloutCollector::note_cost(Slot& slot) {
  const double cost = slot.env->cost_ms();
  if (cost < slot.best_cost_ms) slot.best_cost_ms = cost;
  BestGraph& best = best_[static_cast<size_t>(slot.graph_index)];
  if (cost < best.cost_ms) {
    best.cost_ms = cost;
    best.graph = slot.env->graph().pruned();
  }
}

std::optional<Rollout> RolloutCollector::collect(PolicyNetwork& policy, int64_t policy_version,
                                                 const std::function<bool()>& should_stop) {
  const RolloutCollectorState before = state();
  const size_t envs = slots_.size();
  Rollout rollout;
  rollout.policy_version = policy_version;
  rollout.segments.resize(envs);
  for (RolloutSegment& s : rollout.segments) s.steps.reserve(static_cast<size_t>(options_.steps_per_env));
  std::vector<const Observation*> observations(envs);
  for (int32_t t = 0; t < options_.steps_per_env; ++t) {
    if (should_stop && should_stop()) {
      restore(before);
      return std::nullopt;
    }
    for (size_t i = 0; i < envs; ++i) observations[i] = &slots_[i].env->observation();
    const std::vector<PolicyStep> acted = policy.act(observations, rng_);
    for (size_t i = 0; i < envs; ++i) {
      Slot& slot = slots_[i];
      RolloutStep step;
      step.observation = compact_observation(*observations[i], acted[i].action.xfer);
      step.action = acted[i].action;
      step.log_prob = acted[i].log_prob;
      step.value = acted[i].value;
      step.graph_index = slot.graph_index;
      step.episode_seed = slot.env->record().seed;
      step.episode_step = slot.env->steps();
      const StepResult result = slot.env->step(acted[i].action);  // invalidates observations[i]
      step.reward = static_cast<float>(result.reward);
      step.done = result.done;
      step.cost_ms = result.info.cost_ms;
      note_cost(slot);
      if (result.done) {
        EpisodeSummary episode;
        episode.graph = graphs_[static_cast<size_t>(slot.graph_index)].name;
        episode.reduction_pct = 100.0 * (result.info.initial_cost_ms - result.info.cost_ms) / result.info.initial_cost_ms;
        episode.best_reduction_pct = 100.0 * (result.info.initial_cost_ms - slot.best_cost_ms) / result.info.initial_cost_ms;
        episode.steps = result.info.step;
        rollout.episodes.push_back(std::move(episode));
        reset_slot(slot);
      }
      rollout.segments[i].steps.push_back(std::move(step));
    }
  }
  for (size_t i = 0; i < envs; ++i) observations[i] = &slots_[i].env->observation();
  const std::vector<float> bootstrap = policy.values(observations);
  for (size_t i = 0; i < envs; ++i) rollout.segments[i].bootstrap_value = bootstrap[i];
  rollout.cost_table_hits = cost_->stats().table_hits;
  rollout.cost_model_fallbacks = cost_->stats().model_fallbacks;
  return rollout;
}

RolloutCollectorState RolloutCollector::state() const {
  RolloutCollectorState s;
  for (const Slot& slot : slots_) s.slots.push_back({slot.graph_index, slot.env->record(), slot.best_cost_ms});
  std::ostringstream rng;
  rng << rng_;
  s.rng = rng.str();
  for (const BestGraph& b : best_) s.best_cost_ms.push_back(b.cost_ms);
  return s;
}

void RolloutCollector::restore(const RolloutCollectorState& state) {
  if (state.slots.size() != slots_.size())
    throw FormatError("the saved collector has " + std::to_string(state.slots.size()) + " environments, this one " +
                      std::to_string(slots_.size()) + " (num_envs differs)");
  if (state.best_cost_ms.size() != graphs_.size())
    throw FormatError("the saved collector trained on " + std::to_string(state.best_cost_ms.size()) +
                      " graphs, this one on " + std::to_string(graphs_.size()));
  std::istringstream rng_text(state.rng);
  std::mt19937_64 rng;
  if (!(rng_text >> rng)) throw FormatError("the saved collector's random stream is unreadable");
  std::vector<Slot> slots(slots_.size());
  for (size_t i = 0; i < slots.size(); ++i) {
    const EnvSlotState& saved = state.slots[i];
    if (saved.graph_index < 0 || static_cast<size_t>(saved.graph_index) >= graphs_.size())
      throw FormatError("environment " + std::to_string(i) + " names training graph " +
                        std::to_string(saved.graph_index) + ", which this run does not have");
    slots[i].graph_index = saved.graph_index;
    slots[i].env = prototypes_[static_cast<size_t>(saved.graph_index)]->clone();
    try {
      slots[i].env->replay(saved.episode);
    } catch (const UsageError& e) {
      throw FormatError("environment " + std::to_string(i) + " cannot replay its episode on '" +
                        graphs_[static_cast<size_t>(saved.graph_index)].name + "': " + e.what());
    }
    slots[i].best_cost_ms = saved.best_cost_ms;
  }
  slots_ = std::move(slots);
  rng_ = rng;
  // The best graphs themselves are kept: a cost restored from a checkpoint
  // without its graph only raises the bar a new best must clear.
  for (size_t g = 0; g < graphs_.size(); ++g)
    if (state.best_cost_ms[g] < best_[g].cost_ms) best_[g].cost_ms = state.best_cost_ms[g];
}

std::string serialize_collector_state(const RolloutCollectorState& state) {
  std::ostringstream out;
  out.precision(17);
  out << "graphworld-collector 1\n" << "rng " << state.rng << "\n";
  out << "best " << state.best_cost_ms.size();
  for (double c : state.best_cost_ms) out << ' ' << c;
  out << "\nslots " << state.slots.size() << "\n";
  for (const EnvSlotState& s : state.slots) {
    out << s.graph_index << ' ' << s.best_cost_ms << ' ' << s.episode.graph_hash << ' ' << s.episode.seed << ' '
        << s.episode.actions.size();
    for (const auto& a : s.episode.actions) out << ' ' << a.xfer << ' ' << a.location;
    out << "\n";
  }
  return out.str();
}

RolloutCollectorState parse_collector_state(const std::string& text, const std::string& what) {
  std::istringstream in(text);
  std::string line;
  int line_number = 0;
  auto next_line = [&](const char* expected) -> std::istringstream {
    if (!std::getline(in, line)) throw FormatError(what + ": collector state ends before its " + expected);
    ++line_number;
    return std::istringstream(line);
  };
  auto fail = [&](const char* item) {
    throw FormatError(what + ": collector state line " + std::to_string(line_number) + ": malformed " + item);
  };
  RolloutCollectorState state;
  {
    std::istringstream header = next_line("header");
    std::string magic;
    int version = 0;
    if (!(header >> magic >> version) || magic != "graphworld-collector" || version != 1) fail("header");
  }
  {
    std::istringstream rng = next_line("random stream");
    std::string tag;
    if (!(rng >> tag) || tag != "rng") fail("random stream");
    std::getline(rng, state.rng);
  }
  {
    std::istringstream best = next_line("best costs");
    std::string tag;
    size_t count = 0;
    if (!(best >> tag >> count) || tag != "best" || count > (1u << 20)) fail("best costs");
    state.best_cost_ms.resize(count);
    for (double& c : state.best_cost_ms)
      if (!(best >> c)) fail("best costs");
  }
  size_t slots = 0;
  {
    std::istringstream header = next_line("slots");
    std::string tag;
    if (!(header >> tag >> slots) || tag != "slots" || slots > (1u << 20)) fail("slot count");
  }
  for (size_t i = 0; i < slots; ++i) {
    std::istringstream row = next_line("environments");
    EnvSlotState s;
    size_t actions = 0;
    if (!(row >> s.graph_index >> s.best_cost_ms >> s.episode.graph_hash >> s.episode.seed >> actions) ||
        actions > (1u << 24))
      fail("environment");
    s.episode.actions.resize(actions);
    for (auto& a : s.episode.actions)
      if (!(row >> a.xfer >> a.location)) fail("environment action");
    state.slots.push_back(std::move(s));
  }
  return state;
}

}  // namespace graphworld
