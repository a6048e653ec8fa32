#include "learner/training_metrics.h"

#include <cstdlib>
#include <fstream>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/json_writer.h"

namespace graphworld {

void append_metrics_row(const std::string& path, const UpdateReport& r) {
  JsonWriter j;
  j.begin_object()
      .key("update").value(r.update)
      .key("env_steps").value(r.env_steps)
      .key("episodes").value(r.episodes)
      .key("wall_s").value(r.wall_s)
      .key("env_steps_per_s").value(r.env_steps_per_s)
      .key("collect_s").value(r.collect_s)
      .key("update_s").value(r.stats.update_s)
      .key("episodes_this_update").value(r.episodes_this_update)
      .key("mean_episode_reduction_pct").value(r.mean_episode_reduction_pct)
      .key("policy_loss").value(r.stats.policy_loss)
      .key("value_loss").value(r.stats.value_loss)
      .key("entropy").value(r.stats.entropy)
      .key("approx_kl").value(r.stats.approx_kl)
      .key("clip_fraction").value(r.stats.clip_fraction)
      .key("explained_variance").value(r.stats.explained_variance)
      .key("grad_norm").value(r.stats.grad_norm)
      .key("skipped_minibatches").value(r.stats.skipped_minibatches);
  for (const auto& [name, value] : r.extra) j.key(name).value(value);
  j.key("best_reduction_pct").begin_object();
  for (const auto& [graph, pct] : r.best_reduction_pct) j.key(graph).value(pct);
  j.end_object().end_object();
  std::ofstream out(path, std::ios::app);
  out << j.str() << "\n";
  if (!out.flush()) throw Error(path + ": write failed (disk full?)");
}

void truncate_metrics(const std::string& path, int64_t update) {
  std::ifstream in(path);
  if (!in) return;
  std::string kept, line;
  const std::string prefix = "{\"update\":";
  while (std::getline(in, line)) {
    // A row cut short by a crash (no closing brace) is dropped with the rest.
    if (line.rfind(prefix, 0) != 0 || line.back() != '}') continue;
    char* end = nullptr;
    const long long row = std::strtoll(line.c_str() + prefix.size(), &end, 10);
    if (end == line.c_str() + prefix.size() || row > update) continue;
    kept += line + "\n";
  }
  write_file_atomically(path, kept);
}

}  // namespace graphworld
