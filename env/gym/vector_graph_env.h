// Many GraphEnvs stepped together on a fixed set of threads: what Python's
// graphworld.VectorEnv steps (python/vector_env_binding.cc) and what
// `graphworld env-bench MODEL --envs N --threads T` times.
//
// Environment i rewrites graphs[i % graphs.size()] with a cost model of its
// own (cost models keep caches and are not shared between threads); the
// rule matcher is read-only and shared. Environment i's episodes are seeded
// seed + i, seed + i + n, seed + i + 2n, ... (n environments), so no two
// share a seed. Auto-reset is Gymnasium 1.x's next-step mode: an
// environment whose episode ended is reset by the following step(), which
// ignores its action and leaves reward 0 and both end flags false.
//
//   VectorGraphEnv envs({graph}, 8, matcher, make_cost, options, 2, 0);
//   envs.reset();
//   envs.step(actions);                 // one Action per environment
//   envs.slot(3).observation->xfer_mask ...
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/worker_threads.h"
#include "env/gym/graph_env.h"

namespace graphworld {

// One environment and what its last reset() or step() gave.
struct VectorEnvSlot {
  std::unique_ptr<CostModel> cost;
  std::unique_ptr<GraphEnv> env;
  const Observation* observation = nullptr;  // GraphEnv's; valid until its next step
  double reward = 0;
  bool terminated = false;  // NO-OP, or no rule applies
  bool truncated = false;   // max_steps reached
  std::string rule, end_reason;
  bool reset_next = false;  // it ended: the next step() resets it
  uint64_t next_seed = 0;
};

class VectorGraphEnv {
 public:
  using CostFactory = std::function<std::unique_ptr<CostModel>()>;
  // `matcher` must outlive this. UsageError for no graphs, num_envs outside
  // [1, 4096] or threads outside [1, 256].
  VectorGraphEnv(const std::vector<Graph>& graphs, int32_t num_envs, const RuleMatcher& matcher,
                 const CostFactory& make_cost, const GraphEnvOptions& options, int32_t threads, uint64_t seed);

  // Called on the worker thread that just reset or stepped environment i,
  // while its observation is still in that core's cache: where a caller
  // copies the observation out (VectorEnv's NumPy arrays), in parallel.
  using SlotVisitor = std::function<void(const VectorEnvSlot& slot, size_t i)>;

  // Resets every environment; a seed restarts the seeds (as the constructor's).
  void reset(std::optional<uint64_t> seed = std::nullopt, const SlotVisitor& after = {});
  // One step of every environment: actions[i] for environment i (ignored
  // where it resets). UsageError before any environment moves when the
  // count is wrong or reset() was never called; an action the mask forbids
  // fails in GraphEnv::step (check them first: GraphEnv::check_action).
  void step(std::span<const Action> actions, const SlotVisitor& after = {});

  size_t size() const { return slots_.size(); }
  const VectorEnvSlot& slot(size_t i) const { return slots_.at(i); }
  int32_t threads() const { return threads_.count(); }
  bool started() const { return !slots_.empty() && slots_.front().observation != nullptr; }

 private:
  void reseed(uint64_t seed);
  void start_episode(VectorEnvSlot& s);
  void for_each_slot(const std::function<void(VectorEnvSlot&, size_t)>& f);

  std::vector<VectorEnvSlot> slots_;
  WorkerThreads threads_;
};

}  // namespace graphworld
