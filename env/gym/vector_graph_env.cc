#include "env/gym/vector_graph_env.h"

#include <algorithm>

#include "common/error.h"

namespace graphworld {

VectorGraphEnv::VectorGraphEnv(const std::vector<Graph>& graphs, int32_t num_envs, const RuleMatcher& matcher,
                               const CostFactory& make_cost, const GraphEnvOptions& options, int32_t threads,
                               uint64_t seed)
    : threads_(std::clamp(threads, 1, 256)) {
  if (graphs.empty()) throw UsageError("a vector of environments needs at least one model");
  if (num_envs < 1 || num_envs > 4096) throw UsageError("num_envs must be in [1, 4096], got " + std::to_string(num_envs));
  if (threads < 1 || threads > 256) throw UsageError("threads must be in [1, 256], got " + std::to_string(threads));
  for (int32_t i = 0; i < num_envs; ++i) {
    VectorEnvSlot slot;
    slot.cost = make_cost();
    slot.env = std::make_unique<GraphEnv>(graphs[static_cast<size_t>(i) % graphs.size()], matcher, *slot.cost, options);
    slots_.push_back(std::move(slot));
  }
  reseed(seed);
}

void VectorGraphEnv::reseed(uint64_t seed) {
  for (size_t i = 0; i < slots_.size(); ++i) slots_[i].next_seed = seed + i;
}

void VectorGraphEnv::start_episode(VectorEnvSlot& s) {
  s.observation = &s.env->reset(s.next_seed);
  s.next_seed += slots_.size();
  s.reward = 0;
  s.truncated = false;
  s.rule.clear();
  // A graph no rule matches ends its episode at once: said so, and reset
  // again by the next step, rather than refusing every step after.
  s.terminated = s.reset_next = s.env->done();
  s.end_reason = s.terminated ? "no-match" : "";
}

// f(slot, index) for every environment, worker k taking every threads-th
// one from k; the first error is rethrown once all have finished.
void VectorGraphEnv::for_each_slot(const std::function<void(VectorEnvSlot&, size_t)>& f) {
  const auto workers = static_cast<size_t>(threads_.count());
  threads_.run([&](int32_t k) {
    for (size_t i = static_cast<size_t>(k); i < slots_.size(); i += workers) f(slots_[i], i);
  });
}

void VectorGraphEnv::reset(std::optional<uint64_t> seed, const SlotVisitor& after) {
  if (seed) reseed(*seed);
  for_each_slot([&](VectorEnvSlot& s, size_t i) {
    start_episode(s);
    if (after) after(s, i);
  });
}

void VectorGraphEnv::step(std::span<const Action> actions, const SlotVisitor& after) {
  if (actions.size() != slots_.size())
    throw UsageError("step() takes one (xfer, location) per environment: " + std::to_string(slots_.size()) + ", got " +
                     std::to_string(actions.size()));
  if (!started()) throw UsageError("step() before reset(): call reset() first");
  for_each_slot([&](VectorEnvSlot& s, size_t i) {
    if (s.reset_next) {
      start_episode(s);
    } else {
      const StepResult r = s.env->step(actions[i]);
      s.observation = r.observation;
      s.reward = r.reward;
      s.truncated = r.done && r.info.end_reason == "max-steps";
      s.terminated = r.done && !s.truncated;
      s.rule = r.info.rule;
      s.end_reason = r.info.end_reason;
      s.reset_next = r.done;
    }
    if (after) after(s, i);
  });
}

}  // namespace graphworld
