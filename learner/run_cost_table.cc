#include "learner/run_cost_table.h"

#include <cstdio>
#include <filesystem>

#include "common/error.h"
#include "common/stopwatch.h"
#include "env/cost/analytic_cost_model.h"
#include "common/atomic_file.h"
#include "env/cost/cost_model_factory.h"
#include "env/cost/gpu_cost_model.h"

namespace graphworld {
namespace fs = std::filesystem;

std::string run_cost_table_path(const std::string& run_dir) { return run_dir + "/cost_table"; }
std::string run_rates_path(const std::string& run_dir) { return run_dir + "/cost_rates.yaml"; }
std::string run_gpu_profile_path(const std::string& run_dir) { return run_dir + "/gpu_profile.yaml"; }
std::string run_gpu_table_path(const std::string& run_dir) { return run_dir + "/gpu_table"; }

std::unique_ptr<CostModel> run_gpu_cost_model(const std::string& run_dir) {
  GpuDevice device = load_gpu_device(run_gpu_profile_path(run_dir));
  const std::string table = run_gpu_table_path(run_dir);
  if (!fs::exists(table)) return std::make_unique<GpuCostModel>(std::move(device), std::nullopt);
  CostTable measured = read_gpu_table(table, device);
  return std::make_unique<GpuCostModel>(std::move(device), std::move(measured), table);
}

namespace {

// Copies the GPU's profile and table into the run folder, so every actor
// prices from the same numbers even if configs/gpu changes mid-run.
void prepare_run_gpu_model(const std::string& run_dir, const TrainingOptions& options) {
  if (fs::exists(run_gpu_profile_path(run_dir))) return;  // a resumed run keeps its own
  const GpuDevice device = load_gpu_device(options.gpu);  // a clear error now, not in every actor
  const std::string table = options.gpu_table == "auto" ? shipped_gpu_table_path(device)
                            : options.gpu_table == "none" ? ""
                                                          : options.gpu_table;
  if (!table.empty()) {
    read_gpu_table(table, device);
    copy_file_atomically(table, run_gpu_table_path(run_dir));
  }
  copy_file_atomically(device.source, run_gpu_profile_path(run_dir));
}

}  // namespace

void prepare_run_cost_model(const std::string& run_dir, const TrainingOptions& options,
                            const std::vector<TrainingGraph>& graphs) {
  std::error_code ec;
  if (options.cost_model == "gpu") return prepare_run_gpu_model(run_dir, options);
  if (options.cost_model == "analytic") {
    if (options.rates == "builtin" || fs::exists(run_rates_path(run_dir))) return;
    load_analytic_rates(options.rates);  // a clear error now, not in every actor
    fs::copy_file(options.rates, run_rates_path(run_dir), ec);
    if (ec) throw Error(run_rates_path(run_dir) + ": cannot copy the rates from " + options.rates + " (" + ec.message() + ")");
    return;
  }
  const std::string path = run_cost_table_path(run_dir);
  if (fs::exists(path)) {
    read_cost_table(path);  // still whole?
    return;
  }
  CostModelOptions cost;
  cost.kind = options.cost_model;
  std::shared_ptr<CostModel> measure = make_cost_model(cost);
  // Every configuration of the training graphs as given is in the table, so
  // actors start their episodes without asking: from env.cost_table where it
  // has them, measured here otherwise.
  CostModel* model = measure.get();
  std::unique_ptr<CostTableModel> given_model;
  CostTable given;
  if (!options.cost_table.empty()) {
    given = read_cost_table(options.cost_table);
    std::fprintf(stderr, "learner: the run prices from %s (%zu configurations, measured by %s)\n",
                 options.cost_table.c_str(), given.entries.size(), given.fingerprint.c_str());
    given_model = std::make_unique<CostTableModel>(options.cost_model, given, measure->prices_layouts(),
                                                   [measure](const OpCostKey& key) { return measure->key_cost_ms(key); });
    model = given_model.get();
  }
  std::vector<const Graph*> pointers;
  for (const TrainingGraph& g : graphs) pointers.push_back(&g.graph);
  Stopwatch clock, since_print;
  CostTable table = export_cost_table(pointers, *model, [&](size_t done, size_t total) {
    if (since_print.elapsed_s() < 2.0 && done != total) return;
    since_print.restart();
    std::fprintf(stderr, "learner: pricing the training graphs for the run's cost table: %zu of %zu configurations, %.1f s\n",
                 done, total, clock.elapsed_s());
  });
  measure->flush();
  if (!options.cost_table.empty()) {
    table.fingerprint = given.fingerprint;
    table.entries.insert(given.entries.begin(), given.entries.end());
  }
  write_cost_table(path, table);
}

std::unique_ptr<CostModel> actor_cost_model(const std::string& run_dir, const TrainingOptions& options,
                                            ActorCostSettle settle) {
  if (options.cost_model == "gpu") return run_gpu_cost_model(run_dir);
  if (options.cost_model == "analytic") {
    const std::string rates = run_rates_path(run_dir);
    if (!fs::exists(rates)) return std::make_unique<AnalyticCostModel>();
    return std::make_unique<AnalyticCostModel>(load_analytic_rates(rates));
  }
  // This machine's own model measures what the run has no price for yet;
  // made only then, so an actor whose table has everything needs no
  // measuring device (no GPU for a cuda table). One thread, as the actor's
  // inference, so measuring leaves the other cores alone.
  CostModelOptions cost;
  cost.kind = options.cost_model;
  cost.threads = options.threads;
  auto local = std::make_shared<std::unique_ptr<CostModel>>();
  return std::make_unique<CostTableModel>(
      options.cost_model, read_cost_table(run_cost_table_path(run_dir)), cost_kind_prices_layouts(cost.kind),
      [local, cost, settle](const OpCostKey& key) {
        return settle(key.canonical(), [&] {
          if (!*local) *local = make_cost_model(cost);
          return (*local)->key_cost_ms(key);
        });
      });
}

RunCostTable::RunCostTable(const std::string& run_dir) : path_(run_cost_table_path(run_dir)) {
  present_ = fs::exists(path_);
  if (present_) table_ = read_cost_table(path_);
}

std::optional<double> RunCostTable::find(const std::string& key) const {
  const auto found = table_.entries.find(key);
  if (found == table_.entries.end()) return std::nullopt;
  return found->second;
}

double RunCostTable::settle(const std::string& key, double proposed) {
  if (!present_) throw UsageError("this run prices with analytic rates; it has no cost table to settle '" + key + "' in");
  if (const std::optional<double> known = find(key)) return *known;
  const double ms = round_to_cache_precision(proposed);
  if (table_.entries.size() >= kMaxEntries) return ms;
  table_.entries.emplace(key, ms);
  ++added_;
  try {
    write_cost_table(path_, CostTable{table_.fingerprint, {{key, ms}}});
  } catch (const Error& e) {
    // The run goes on with the price in memory; a resumed learner would
    // lack it, and the first actor to meet it again would measure it anew.
    std::fprintf(stderr, "learner: cannot append to %s: %s\n", path_.c_str(), e.what());
  }
  return ms;
}

}  // namespace graphworld
