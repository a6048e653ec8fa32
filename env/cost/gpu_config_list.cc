#include "env/cost/gpu_config_list.h"

#include <cmath>
#include <fstream>
#include <sstream>
#include <unordered_set>

#include "common/atomic_file.h"
#include "common/error.h"
#include "env/cost/cost_cache_file.h"
#include "env/cost/cuda_op_spec_text.h"
#include "env/cost/cuda_op_timer.h"

namespace graphworld {
namespace {

constexpr const char* kListMagic = "graphworld-gpu-configs 1";

std::string where(const std::string& path, size_t line) { return path + ":" + std::to_string(line); }

}  // namespace

double RecordingCostModel::compute_ms(const OpCostKey& key) {
  if (keys_.size() < max_keys_) keys_.push_back(key);
  else truncated_ = true;
  return inner_.key_cost_ms(key);
}

std::vector<GpuConfig> gpu_configs_for(const std::vector<OpCostKey>& keys, size_t* skipped) {
  std::vector<GpuConfig> out;
  std::unordered_set<std::string> seen;
  size_t not_timed = 0;
  for (const OpCostKey& key : keys) {
    if (key.type == OpType::Split) continue;  // views on a GPU: the gpu model prices them at zero
    std::string canonical = key.canonical();
    if (!seen.insert(canonical).second) continue;
    try {
      out.push_back({std::move(canonical), cuda_spec_to_text(cuda_spec_for(key))});
    } catch (const GraphError&) {
      ++not_timed;
    }
  }
  if (skipped) *skipped = not_timed;
  return out;
}

void write_gpu_config_list(const std::string& path, const std::vector<GpuConfig>& configs) {
  std::ostringstream text;
  text << kListMagic << "\n";
  for (const GpuConfig& c : configs) text << c.key << "\t" << c.spec << "\n";
  write_file_atomically(path, text.str());
}

std::vector<GpuConfig> read_gpu_config_list(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw FormatError(path + ": cannot read the configuration list (make one with 'graphworld cost export-gpu-configs')");
  std::string line;
  if (!std::getline(in, line) || line != kListMagic)
    throw FormatError(path + ": not a configuration list (its first line must be '" + kListMagic + "')");
  std::vector<GpuConfig> out;
  for (size_t number = 2; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    const size_t tab = line.find('\t');
    if (tab == std::string::npos) throw FormatError(where(path, number) + ": expected KEY<tab>SPEC");
    GpuConfig c{line.substr(0, tab), line.substr(tab + 1)};
    try {
      cuda_spec_from_text(c.spec);
    } catch (const std::invalid_argument& e) {
      throw FormatError(where(path, number) + ": " + e.what());
    }
    out.push_back(std::move(c));
  }
  return out;
}

CostTable read_gpu_timings(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw FormatError(path + ": cannot read the GPU timings");
  std::string line;
  const std::string prefix = "fingerprint ";
  if (!std::getline(in, line) || line.rfind(prefix, 0) != 0 || line.find("gpu=") == std::string::npos)
    throw FormatError(path + ": the first line must be 'fingerprint gpu=...', as the GPU timer writes it");
  CostTable table;
  table.fingerprint = line.substr(prefix.size());
  for (size_t number = 2; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    const size_t tab = line.find('\t');
    if (tab == std::string::npos) throw FormatError(where(path, number) + ": expected MS<tab>KEY");
    double ms = 0;
    try {
      size_t used = 0;
      ms = std::stod(line.substr(0, tab), &used);
      if (used != tab) throw std::invalid_argument("trailing text");
    } catch (const std::logic_error&) {
      throw FormatError(where(path, number) + ": '" + line.substr(0, tab) + "' is not a time in milliseconds");
    }
    if (!(ms > 0) || !std::isfinite(ms)) throw FormatError(where(path, number) + ": a time must be a finite number > 0 ms");
    if (!table.entries.emplace(line.substr(tab + 1), round_to_cache_precision(ms)).second)
      throw FormatError(where(path, number) + ": the configuration '" + line.substr(tab + 1) + "' was timed twice");
  }
  if (table.entries.empty()) throw FormatError(path + ": no timings in the file");
  return table;
}

}  // namespace graphworld
