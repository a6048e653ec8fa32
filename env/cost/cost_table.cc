#include "env/cost/cost_table.h"

#include <fstream>

#include "common/error.h"
#include "env/cost/graph_cost.h"

namespace graphworld {

CostTable read_cost_table(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw FormatError(path + ": cannot read the cost table (make one with 'graphworld cost export-table')");
  std::string magic, fingerprint_line;
  std::getline(in, magic);
  std::getline(in, fingerprint_line);
  const std::string prefix = "fingerprint ";
  if (fingerprint_line.rfind(prefix, 0) != 0)
    throw FormatError(path + ": not a cost table (no fingerprint line); make one with 'graphworld cost export-table'");
  CostTable table;
  table.fingerprint = fingerprint_line.substr(prefix.size());
  CostCacheFile file(path, table.fingerprint);
  table.entries = file.load_read_only();
  if (!file.problem().empty())
    throw FormatError(path + ": the cost table is damaged (" + file.problem() + "); export it again");
  return table;
}

void write_cost_table(const std::string& path, const CostTable& table) {
  CostCacheFile(path, table.fingerprint).merge_and_save(table.entries);
}

CostTable export_cost_table(const std::vector<const Graph*>& graphs, CostModel& model,
                            const std::function<void(size_t, size_t)>& progress) {
  std::vector<OpCostKey> keys;
  for (const Graph* g : graphs)
    for (OpCostKey& key : priced_op_keys(*g, model.prices_layouts())) keys.push_back(std::move(key));
  CostTable table;
  std::string who = model.description();
  for (char& c : who)
    if (c == '\n' || c == '\r') c = ' ';
  table.fingerprint = who;
  for (size_t i = 0; i < keys.size(); ++i) {
    table.entries[keys[i].canonical()] = round_to_cache_precision(model.key_cost_ms(keys[i]));
    if (progress) progress(i + 1, keys.size());
  }
  return table;
}

CostTableModel::CostTableModel(std::string name, CostTable table, bool prices_layouts, Settle settle)
    : name_(std::move(name)), table_(std::move(table)), prices_layouts_(prices_layouts), settle_(std::move(settle)) {}

std::string CostTableModel::description() const {
  return "the run's cost table (" + std::to_string(table_.entries.size()) + " configurations, measured by " +
         table_.fingerprint + ")";
}

double CostTableModel::compute_ms(const OpCostKey& key) {
  const std::string canonical = key.canonical();
  const auto found = table_.entries.find(canonical);
  if (found != table_.entries.end()) {
    ++stats_.cache_hits;
    return found->second;
  }
  const double ms = settle_(key);
  table_.entries.emplace(canonical, ms);
  ++settled_;
  ++stats_.measured_now;
  return ms;
}

}  // namespace graphworld
