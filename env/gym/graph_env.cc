#include "env/gym/graph_env.h"

#include <algorithm>
#include <cstring>

#include "common/error.h"
#include "common/latency.h"
#include "env/gym/graph_features.h"
#include "env/ops/executor.h"
#include "env/search/rewrite_price.h"

namespace graphworld {

RewardKind reward_kind_from_name(const std::string& name) {
  if (name == "incremental") return RewardKind::Incremental;
  if (name == "final") return RewardKind::Final;
  if (name == "measured") return RewardKind::Measured;
  throw UsageError("unknown reward '" + name + "': use incremental, final or measured");
}

std::string reward_kind_name(RewardKind kind) {
  switch (kind) {
    case RewardKind::Incremental: return "incremental";
    case RewardKind::Final: return "final";
    case RewardKind::Measured: return "measured";
  }
  return "?";
}

Action random_allowed_action(const Observation& obs, std::mt19937_64& rng) {
  std::vector<int32_t> xfers;
  for (int32_t x = 0; x < obs.num_xfers; ++x)
    if (obs.xfer_mask[static_cast<size_t>(x)]) xfers.push_back(x);
  if (xfers.empty()) return {obs.num_xfers, 0};
  const int32_t xfer = xfers[rng() % xfers.size()];
  return {xfer, static_cast<int32_t>(rng() % static_cast<uint64_t>(obs.location_count(xfer)))};
}

std::span<const int32_t> Observation::matched_nodes(int32_t xfer, int32_t location) const {
  if (xfer < 0 || xfer >= num_xfers || location < 0 || location >= location_count(xfer)) return {};
  const auto e = static_cast<size_t>(location_begin[static_cast<size_t>(xfer)] + location);
  return std::span<const int32_t>(match_nodes).subspan(static_cast<size_t>(node_begin[e]),
                                                       static_cast<size_t>(node_begin[e + 1] - node_begin[e]));
}

GraphEnv::GraphEnv(Graph graph, const RuleMatcher& matcher, CostModel& cost_model, GraphEnvOptions options)
    : matcher_(&matcher),
      options_(options),
      rewriter_(matcher, std::move(graph)),
      cost_(cost_model) {
  if (options_.max_locations < 1) throw UsageError("max_locations must be >= 1 (got " + std::to_string(options_.max_locations) + ")");
  if (options_.max_steps < 1) throw UsageError("max_steps must be >= 1 (got " + std::to_string(options_.max_steps) + ")");
  if (options_.latency_repeats < 1)
    throw UsageError("latency_repeats must be >= 1 (got " + std::to_string(options_.latency_repeats) + ")");
  initial_hash_ = rewriter_.graph().structural_hash();
  initial_cost_ms_ = cost_.reset(rewriter_.graph());
  if (!(initial_cost_ms_ > 0)) throw UsageError("the graph costs nothing to run (no priced ops): there is nothing to optimise");
  observation_.num_xfers = num_xfers();
  observation_.max_locations = options_.max_locations;
  initial_rewriter_ = std::make_shared<const GraphRewriter>(rewriter_);
  initial_cost_ = std::make_shared<const CostTracker>(cost_);
}

const Observation& GraphEnv::reset(uint64_t seed) {
  rewriter_ = *initial_rewriter_;
  cost_ = *initial_cost_;
  record_ = EpisodeRecord{initial_hash_, seed, {}};
  done_ = rewriter_.matches().empty();
  refresh_masks(true);
  refresh_graph_tuple();
  return observation_;
}

const RuleMatch& GraphEnv::match_at(Action action) const {
  check_action(action);
  if (action.xfer == noop()) throw UsageError("NO-OP has no match");
  return rewriter_.matches()[static_cast<size_t>(match_begin_[static_cast<size_t>(action.xfer)] + action.location)];
}

void GraphEnv::check_action(Action action) const {
  if (done_) throw UsageError("the episode is over: call reset() before step()");
  // Built only on the way to an error: step() checks every action.
  auto what = [&] {
    return "action (xfer " + std::to_string(action.xfer) + ", location " + std::to_string(action.location) + ")";
  };
  if (action.xfer < 0 || action.xfer > noop())
    throw UsageError(what() + ": xfer must be in [0, " + std::to_string(noop()) + "], where " + std::to_string(noop()) +
                     " is NO-OP");
  if (action.xfer == noop()) return;
  const std::string& rule = matcher_->rules()[static_cast<size_t>(action.xfer)].name;
  if (action.location < 0 || action.location >= options_.max_locations)
    throw UsageError(what() + ": location must be in [0, " + std::to_string(options_.max_locations) + ")");
  const int32_t count = observation_.location_count(action.xfer);
  if (count == 0) throw UsageError(what() + ": rule '" + rule + "' applies nowhere now (masked)");
  if (action.location >= count)
    throw UsageError(what() + ": rule '" + rule + "' has only " + std::to_string(count) + " locations now (masked)");
}

StepResult GraphEnv::step(Action action) {
  check_action(action);
  StepResult result;
  const double before = cost_.total_ms();
  if (action.xfer == noop()) {
    done_ = true;
    result.info.end_reason = "no-op";
  } else {
    const auto i = static_cast<size_t>(match_begin_[static_cast<size_t>(action.xfer)] + action.location);
    result.info.rule = matcher_->rules()[static_cast<size_t>(action.xfer)].name;
    RewriteResult rewrite = rewriter_.apply(i);
    cost_.update(rewriter_.graph(), rewrite.removed, rewrite.added_or_changed());
  }
  record_.actions.push_back({action.xfer, action.location});
  if (!done_ && rewriter_.matches().empty()) {
    done_ = true;
    result.info.end_reason = "no-match";
  }
  if (!done_ && steps() >= options_.max_steps) {
    done_ = true;
    result.info.end_reason = "max-steps";
  }
  const double after = cost_.total_ms();
  switch (options_.reward) {
    case RewardKind::Incremental: result.reward = 100.0 * (before - after) / initial_cost_ms_; break;
    case RewardKind::Final:
      if (done_) result.reward = 100.0 * (initial_cost_ms_ - after) / initial_cost_ms_;
      break;
    case RewardKind::Measured:
      if (done_) {
        if (initial_latency_ms_ < 0) initial_latency_ms_ = measure_latency_ms(initial_rewriter_->graph());
        result.info.initial_latency_ms = initial_latency_ms_;
        result.info.latency_ms = measure_latency_ms(rewriter_.graph().pruned());
        result.reward = 100.0 * (initial_latency_ms_ - result.info.latency_ms) / initial_latency_ms_;
      }
      break;
  }
  refresh_masks(false);
  refresh_graph_tuple();
  result.observation = &observation_;
  result.done = done_;
  result.info.cost_ms = after;
  result.info.initial_cost_ms = initial_cost_ms_;
  result.info.step = steps();
  return result;
}

void GraphEnv::replay(const EpisodeRecord& record) {
  if (record.graph_hash != initial_hash_)
    throw UsageError("the episode was recorded on another graph (its hash differs from this environment's)");
  reset(record.seed);
  for (size_t k = 0; k < record.actions.size(); ++k) {
    try {
      step({record.actions[k].xfer, record.actions[k].location});
    } catch (const UsageError& e) {
      throw UsageError("replaying action " + std::to_string(k) + ": " + e.what());
    }
  }
}

void GraphEnv::refresh_masks(bool all_rows) {
  const auto n = static_cast<size_t>(num_xfers());
  const auto L = static_cast<size_t>(options_.max_locations);
  Observation& o = observation_;
  const std::vector<RuleMatch>& matches = rewriter_.matches();
  std::vector<int32_t> old_count = match_count_;
  match_begin_.assign(n, 0);
  match_count_.assign(n, 0);
  for (size_t i = matches.size(); i-- > 0;) {
    const auto r = static_cast<size_t>(matches[i].rule);
    match_begin_[r] = static_cast<int32_t>(i);
    ++match_count_[r];
  }
  if (all_rows || o.location_mask.size() != n * L) {
    o.location_mask.assign(n * L, 0);
    old_count.assign(n, 0);
  }
  o.xfer_mask.assign(n + 1, 0);
  o.xfer_mask[n] = 1;  // NO-OP
  o.location_begin.assign(n + 1, 0);
  size_t allowed = 0;
  for (size_t r = 0; r < n; ++r) {
    const auto count = static_cast<size_t>(std::min<int32_t>(match_count_[r], options_.max_locations));
    const auto was = static_cast<size_t>(std::min<int32_t>(old_count[r], options_.max_locations));
    // Only rows whose count changed are rewritten.
    if (count != was) {
      uint8_t* row = o.location_mask.data() + r * L;
      std::memset(row, 0, L);
      std::memset(row, 1, count);
    }
    o.xfer_mask[r] = count > 0;
    allowed += count > 0;
    o.location_begin[r + 1] = o.location_begin[r] + static_cast<int32_t>(count);
  }
  if (done_) {
    // A finished episode allows nothing until reset().
    std::fill(o.xfer_mask.begin(), o.xfer_mask.end(), 0);
    std::fill(o.location_mask.begin(), o.location_mask.end(), 0);
    std::fill(o.location_begin.begin(), o.location_begin.end(), 0);
    match_count_.assign(n, 0);
  }
  allowed_xfers_ = done_ ? 0 : allowed;
  o.match_count = match_count_;
}

void GraphEnv::refresh_graph_tuple() {
  Observation& o = observation_;
  GlobalInputs g{cost_.total_ms(), initial_cost_ms_, steps(), options_.max_steps,
                 rewriter_.matches().size(),   allowed_xfers_, static_cast<size_t>(num_xfers())};
  build_graph_tuple(rewriter_.graph(), rewriter_.index(), cost_, g, o.graph, op_to_node_);
  // Matched nodes of every allowed (xfer, location), in location order.
  o.node_begin.assign(1, 0);
  o.match_nodes.clear();
  o.location_reward.clear();
  const auto n = static_cast<size_t>(num_xfers());
  if (options_.location_rewards) o.xfer_reward.assign(n + 1, 0.0f);
  for (size_t r = 0; r < n; ++r) {
    const int32_t count = o.location_begin[r + 1] - o.location_begin[r];
    for (int32_t l = 0; l < count; ++l) {
      const auto match = static_cast<size_t>(match_begin_[r] + l);
      for (OpId op : rewriter_.matches()[match].ops) o.match_nodes.push_back(op_to_node_[static_cast<size_t>(op)]);
      o.node_begin.push_back(static_cast<int32_t>(o.match_nodes.size()));
      if (options_.location_rewards) {
        const auto reward = static_cast<float>(
            100.0 * (cost_.total_ms() - cost_after_rewrite(rewriter_, match, cost_)) / initial_cost_ms_);
        o.location_reward.push_back(reward);
        o.xfer_reward[r] = l == 0 ? reward : std::max(o.xfer_reward[r], reward);
      }
    }
  }
}

double GraphEnv::measure_latency_ms(const Graph& graph) const {
  Executor executor(graph, ExecutorOptions{options_.latency_threads});
  executor.run(random_inputs(graph, record_.seed));
  return measure_latency([&] { executor.run_for_timing(); }, 1, options_.latency_repeats).median_ms;
}

}  // namespace graphworld
