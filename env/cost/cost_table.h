// One cost table for a whole run. Actors on different machines must price
// graphs identically or their rewards disagree; a measured cost model on
// each would not (different devices, noise). So a run that trains on
// measured (CPU) or cuda costs fixes a table at start: exported once with
// `graphworld cost export-table` (or by the learner from the training
// graphs) into the run folder, and read by every actor. A configuration the
// table lacks (a rewrite made a new op) is measured once by the actor that
// meets it first; the learner settles it for the run, and every actor that
// asks later gets the same number.
//
// The file format is the measured cache's (cost_cache_file.h); its
// fingerprint line names the device and model that measured it.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "env/cost/cost_cache_file.h"
#include "env/cost/cost_model.h"
#include "env/graph/graph.h"

namespace graphworld {

struct CostTable {
  std::string fingerprint;  // who measured it
  CostEntries entries;      // canonical key -> ms
};

// FormatError naming the file for anything that is not an intact table.
CostTable read_cost_table(const std::string& path);
// Writes (or merges into) the table at `path`.
void write_cost_table(const std::string& path, const CostTable& table);

// Prices every op configuration of `graphs` with `model` (which may measure
// them now), calling progress(done, total) as it goes.
CostTable export_cost_table(const std::vector<const Graph*>& graphs, CostModel& model,
                            const std::function<void(size_t done, size_t total)>& progress = {});

// A cost model that answers from a run's table. A configuration not in it is
// priced by `settle(key)`, which must return the run's one price for it;
// the answer is remembered.
class CostTableModel : public CostModel {
 public:
  using Settle = std::function<double(const OpCostKey& key)>;
  // `name` is the table's kind ("measured", "cuda"); `prices_layouts` as the
  // model that measured it.
  CostTableModel(std::string name, CostTable table, bool prices_layouts, Settle settle);

  std::string name() const override { return name_; }
  std::string description() const override;
  bool prices_layouts() const override { return prices_layouts_; }
  int64_t settled() const { return settled_; }  // configurations the table lacked

 protected:
  double compute_ms(const OpCostKey& key) override;

 private:
  std::string name_;
  CostTable table_;
  bool prices_layouts_;
  Settle settle_;
  int64_t settled_ = 0;
};

}  // namespace graphworld
