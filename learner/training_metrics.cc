#include "learner/training_metrics.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/json_writer.h"
#include "common/tensorboard/event_file.h"

namespace graphworld {

namespace {

std::string folder_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

// The extra numbers' TensorBoard group, by what they are about.
std::string extra_tag(const std::string& name) {
  for (const char* prefix : {"held_out_", "world_model_", "wm_"})
    if (name.rfind(prefix, 0) == 0) return "world_model/" + name;
  if (name.rfind("dream_", 0) == 0) return "dream/" + name;
  return "learner/" + name;
}

// The row as TensorBoard scalars at step env_steps (the x axis people compare
// runs on); "progress/update" lets a resume drop the rows it redoes.
ScalarEvent scalar_event_of(const UpdateReport& r) {
  ScalarEvent e;
  e.step = r.env_steps;
  e.wall_time = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  auto add = [&](const std::string& tag, double value) { e.values.emplace_back(tag, static_cast<float>(value)); };
  add("progress/update", static_cast<double>(r.update));
  add("progress/episodes", static_cast<double>(r.episodes));
  add("progress/wall_s", r.wall_s);
  add("throughput/env_steps_per_s", r.env_steps_per_s);
  add("throughput/collect_s", r.collect_s);
  add("throughput/update_s", r.stats.update_s);
  add("reduction/mean_episode_pct", r.mean_episode_reduction_pct);
  for (const auto& [graph, pct] : r.best_reduction_pct) add("reduction/best_pct/" + graph, pct);
  add("ppo/policy_loss", r.stats.policy_loss);
  add("ppo/value_loss", r.stats.value_loss);
  add("ppo/entropy", r.stats.entropy);
  add("ppo/approx_kl", r.stats.approx_kl);
  add("ppo/clip_fraction", r.stats.clip_fraction);
  add("ppo/explained_variance", r.stats.explained_variance);
  add("ppo/grad_norm", r.stats.grad_norm);
  for (const auto& [name, value] : r.extra) add(extra_tag(name), value);
  return e;
}

float value_of(const ScalarEvent& event, const std::string& tag, float missing) {
  for (const auto& [t, v] : event.values)
    if (t == tag) return v;
  return missing;
}

}  // namespace

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
  append_scalar_event(event_file_path(folder_of(path)), scalar_event_of(r));
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
  // The event file follows: events of the dropped updates go too. It is a
  // view of the metrics, so damage to it must not stop a resume: it is set
  // aside (RUN/*.damaged) and a new one starts.
  const std::string events = event_file_path(folder_of(path));
  try {
    filter_event_file(events, [update](const ScalarEvent& event) {
      return value_of(event, "progress/update", 0.0f) <= static_cast<float>(update);
    });
  } catch (const FormatError& e) {
    std::error_code ignored;
    std::filesystem::rename(events, events + ".damaged", ignored);
    std::fprintf(stderr, "warning: %s; set aside as %s.damaged, TensorBoard events start again from here\n", e.what(),
                 events.c_str());
  }
}

}  // namespace graphworld
