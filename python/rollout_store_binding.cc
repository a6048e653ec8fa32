#include "python/rollout_store_binding.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/config.h"
#include "common/error.h"
#include "common/rollout_store.h"
#include "launch/runs/run_replay.h"
#include "launch/runs/training_setup.h"
#include "python/observation_arrays.h"
#include "worldmodel/stored_episode_grouper.h"

namespace graphworld::python {
namespace {

namespace py = pybind11;

// Store order is read in slices of this many steps, and no further than
// the episodes asked for need: an observation dict holds the whole
// location_mask (N x L bytes, 261 KB at 1,307 rules and 200 locations), so
// a walk holds the open episodes, the ones asked for and one slice's worth
// of those that ended beyond them.
constexpr int64_t kSliceSteps = 256;

template <typename T, typename F>
py::array_t<T> column(const std::vector<StoredStep>& steps, F field) {
  py::array_t<T> out(static_cast<py::ssize_t>(steps.size()));
  T* data = out.mutable_data();
  for (size_t i = 0; i < steps.size(); ++i) data[i] = static_cast<T>(field(steps[i]));
  return out;
}

py::dict columns(const std::vector<StoredStep>& steps) {
  py::dict out;
  out["actor_id"] = column<uint32_t>(steps, [](const StoredStep& s) { return s.actor_id; });
  out["env_slot"] = column<int32_t>(steps, [](const StoredStep& s) { return s.env_slot; });
  out["policy_version"] = column<int64_t>(steps, [](const StoredStep& s) { return s.policy_version; });
  out["graph_index"] = column<int32_t>(steps, [](const StoredStep& s) { return s.graph_index; });
  out["episode_seed"] = column<uint64_t>(steps, [](const StoredStep& s) { return s.episode_seed; });
  out["episode_step"] = column<int32_t>(steps, [](const StoredStep& s) { return s.episode_step; });
  out["xfer"] = column<int32_t>(steps, [](const StoredStep& s) { return s.xfer; });
  out["location"] = column<int32_t>(steps, [](const StoredStep& s) { return s.location; });
  out["reward"] = column<float>(steps, [](const StoredStep& s) { return s.reward; });
  out["done"] = column<bool>(steps, [](const StoredStep& s) { return s.done != 0; });
  out["cost_ms"] = column<double>(steps, [](const StoredStep& s) { return s.cost_ms; });
  out["log_prob"] = column<float>(steps, [](const StoredStep& s) { return s.log_prob; });
  out["value"] = column<float>(steps, [](const StoredStep& s) { return s.value; });
  return out;
}

class PythonRolloutStore {
 public:
  explicit PythonRolloutStore(const std::string& path) : path_(path) {
    if (!std::filesystem::is_regular_file(path))
      throw UsageError(path + ": no such rollout store (a run's RUN/rollouts.h5)");
    store_ = std::make_unique<RolloutStoreReader>(path);
    if (store_->info().config_text.empty())
      throw FormatError(path + ": the store keeps no run config, so its observations cannot be rebuilt");
    rewind();
  }

  // Starts the episodes over from the store's first step.
  void rewind() {
    const RolloutStoreInfo& info = store_->info();
    const Config config = parse_config_text(training_config_schema(), info.config_text, path_ + " (its run config)");
    const std::string run_dir = std::filesystem::path(path_).parent_path().string();
    try {
      run_ = std::make_unique<RunReplay>(run_dir, training_options_from(config), info.graphs);
    } catch (const Error& e) {
      throw UsageError(path_ + ": its run's graphs or cost model cannot be set up again: " + e.what());
    }
    cursor_ = 0;
    open_ = {};
    ready_.clear();
    rebuilt_ = missed_ = 0;
  }

  py::dict read(int64_t begin, int64_t count) const {
    const int64_t steps = store_->steps();
    if (begin < 0 || count < 0 || begin > steps)
      throw UsageError("read(" + std::to_string(begin) + ", " + std::to_string(count) + "): the store holds steps [0, " +
                       std::to_string(steps) + ")");
    return columns(store_->read(begin, std::min(count, steps - begin)));
  }

  // Up to `count` more episodes in the order they end in the store (the
  // ones still open at its end last, marked incomplete); [] once all are
  // out.
  py::list next_episodes(int64_t count) {
    if (count < 1) throw UsageError("next_episodes() takes a count >= 1");
    while (static_cast<int64_t>(ready_.size()) < count && cursor_ < store_->steps()) read_slice();
    if (cursor_ >= store_->steps() && !open_.empty() && static_cast<int64_t>(ready_.size()) < count)
      open_.finish([this](Episode& episode, bool complete) { finish(episode, complete); });
    py::list out;
    while (!ready_.empty() && static_cast<int64_t>(out.size()) < count) {
      out.append(std::move(ready_.front()));
      ready_.pop_front();
    }
    return out;
  }

  int64_t steps() const { return store_->steps(); }
  const std::vector<std::string>& graphs() const { return store_->info().graphs; }
  int32_t num_xfers() const { return store_->info().num_xfers; }
  const std::string& config_text() const { return store_->info().config_text; }
  const std::string& run_id() const { return store_->info().run_id; }
  int64_t rebuilt() const { return rebuilt_; }
  int64_t missed() const { return missed_; }

 private:
  struct Episode {
    std::vector<StoredStep> steps;
    py::list observations;
  };

  void read_slice() {
    const int64_t count = std::min(kSliceSteps, store_->steps() - cursor_);
    const std::vector<StoredStep> slice = store_->read(cursor_, count);
    cursor_ += count;
    const auto ended = [this](Episode& episode, bool complete) { finish(episode, complete); };
    const ReplayReport report = run_->replay().replay(slice, [&](size_t i, const Observation& observation) {
      const StoredStep& s = slice[i];
      Episode* episode = open_.place(s, ended);
      if (!episode) return;  // its history is not in the store: no episode
      episode->steps.push_back(s);
      episode->observations.append(observation_arrays(observation));
      open_.step_added(s, ended);
    });
    rebuilt_ += report.rebuilt;
    missed_ += report.missed;
  }

  void finish(Episode& e, bool complete) {
    if (e.steps.empty()) return;
    const StoredStep& first = e.steps.front();
    py::dict out = columns(e.steps);
    const auto t = static_cast<py::ssize_t>(e.steps.size());
    py::array_t<int32_t> actions({t, py::ssize_t{2}});
    for (py::ssize_t i = 0; i < t; ++i) {
      actions.mutable_at(i, 0) = e.steps[static_cast<size_t>(i)].xfer;
      actions.mutable_at(i, 1) = e.steps[static_cast<size_t>(i)].location;
    }
    out["actions"] = actions;
    out["observations"] = std::move(e.observations);
    out["graph"] = graphs().at(static_cast<size_t>(first.graph_index));
    out["complete"] = complete;
    ready_.push_back(std::move(out));
  }

  std::string path_;
  std::unique_ptr<RolloutStoreReader> store_;
  std::unique_ptr<RunReplay> run_;
  int64_t cursor_ = 0, rebuilt_ = 0, missed_ = 0;
  StoredEpisodeGrouper<Episode> open_;
  std::deque<py::dict> ready_;
};

}  // namespace

void bind_rollout_store(py::module_& module) {
  py::class_<PythonRolloutStore>(module, "RolloutStore")
      .def(py::init<const std::string&>(), py::arg("path"))
      .def("read", &PythonRolloutStore::read, py::arg("begin"), py::arg("count"))
      .def("next_episodes", &PythonRolloutStore::next_episodes, py::arg("count"))
      .def_property_readonly("steps", &PythonRolloutStore::steps)
      .def_property_readonly("graphs", &PythonRolloutStore::graphs)
      .def_property_readonly("num_xfers", &PythonRolloutStore::num_xfers)
      .def_property_readonly("config_text", &PythonRolloutStore::config_text)
      .def_property_readonly("run_id", &PythonRolloutStore::run_id)
      .def_property_readonly("rebuilt_steps", &PythonRolloutStore::rebuilt)
      .def_property_readonly("missed_steps", &PythonRolloutStore::missed);
}

}  // namespace graphworld::python
