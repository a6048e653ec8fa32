// How a distributed run fixes its cost model at start, so every actor
// prices graphs the same way (env/cost/cost_table.h says why):
// - analytic: the rates are copied into RUN/cost_rates.yaml (unless built-in),
//   so an edit of the original file mid-run changes nothing;
// - measured / cuda: RUN/cost_table holds the run's table, copied from
//   env.cost_table or measured by the learner from the training graphs;
// - gpu: the GPU's profile is copied into RUN/gpu_profile.yaml and its
//   measured table, if any, into RUN/gpu_table. The gpu model is
//   deterministic, so what the table lacks needs no settling.
// Actors price from these files (actor_cost_model); the learner settles
// configurations the table lacks (RunCostTable) and appends them to it.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "env/cost/cost_table.h"
#include "learner/rollout_collector.h"
#include "learner/training_config.h"

namespace graphworld {

std::string run_cost_table_path(const std::string& run_dir);
std::string run_rates_path(const std::string& run_dir);
std::string run_gpu_profile_path(const std::string& run_dir);
std::string run_gpu_table_path(const std::string& run_dir);
// The gpu cost model of a run folder prepared for env.cost_model gpu.
std::unique_ptr<CostModel> run_gpu_cost_model(const std::string& run_dir);

// The learner, before any actor starts. A resumed run keeps its files.
// Prints progress on stderr while it measures.
void prepare_run_cost_model(const std::string& run_dir, const TrainingOptions& options,
                            const std::vector<TrainingGraph>& graphs);

// An actor's cost model: the run's rates or table. For a table, `settle`
// gets each configuration it lacks, with a function that measures it on
// this machine, and returns the run's price (the learner's answer).
using ActorCostSettle = std::function<double(const std::string& key, const std::function<double()>& measure)>;
std::unique_ptr<CostModel> actor_cost_model(const std::string& run_dir, const TrainingOptions& options,
                                            ActorCostSettle settle);

// The learner's copy of the run's table, settling what actors propose.
class RunCostTable {
 public:
  // No table (analytic runs): settle() refuses everything.
  explicit RunCostTable(const std::string& run_dir);
  bool present() const { return present_; }
  std::optional<double> find(const std::string& key) const;
  // The run's price of `key`: the table's, or else `proposed`, which becomes
  // the run's and is appended to the file. Past kMaxEntries (a run whose
  // actors propose without end is broken or hostile) proposals are answered
  // with themselves and not kept.
  double settle(const std::string& key, double proposed);
  static constexpr size_t kMaxEntries = 1'000'000;
  int64_t added() const { return added_; }

 private:
  std::string path_;
  bool present_ = false;
  CostTable table_;
  int64_t added_ = 0;
};

}  // namespace graphworld
