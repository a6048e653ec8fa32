#include "python/vector_env_binding.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/error.h"
#include "env/gym/graph_env.h"
#include "env/rules/rule_library.h"
#include "launch/pipeline/model_source.h"
#include "learner/worker_threads.h"
#include "python/env_settings.h"

namespace graphworld::python {
namespace {

namespace py = pybind11;

// One environment with its own cost model (cost models keep caches and are
// not shared across threads; the rules are read-only and shared).
struct Slot {
  std::unique_ptr<CostModel> cost;
  std::unique_ptr<GraphEnv> env;
  const Observation* observation = nullptr;
  uint64_t next_seed = 0;
  bool reset_next = false;  // it ended: the next step resets it
  double reward = 0;
  bool terminated = false, truncated = false;
  std::string rule, end_reason;
};

class PythonVectorEnv {
 public:
  PythonVectorEnv(const std::vector<std::string>& models, int32_t num_envs, const EnvSettings& settings,
                  int64_t batch, int32_t threads, uint64_t seed)
      : matcher_(default_rule_library().rules), threads_(std::max(1, threads)) {
    if (models.empty()) throw UsageError("VectorEnv needs at least one model");
    if (num_envs < 1 || num_envs > 4096) throw UsageError("num_envs must be in [1, 4096], got " + std::to_string(num_envs));
    if (threads < 1 || threads > 256) throw UsageError("threads must be in [1, 256], got " + std::to_string(threads));
    const GraphEnvOptions options = settings.env_options();
    std::vector<Graph> graphs;
    for (const std::string& model : models) graphs.push_back(load_model(model, batch).graph);
    for (int32_t i = 0; i < num_envs; ++i) {
      Slot slot;
      slot.cost = settings.make_cost();
      slot.env = std::make_unique<GraphEnv>(graphs[static_cast<size_t>(i) % graphs.size()], matcher_, *slot.cost, options);
      slots_.push_back(std::move(slot));
    }
    reseed(seed);
  }

  py::tuple reset(py::object seed) {
    if (!seed.is_none()) reseed(seed.cast<uint64_t>());
    {
      py::gil_scoped_release unlocked;
      for_each_slot([&](Slot& s, size_t) { start_episode(s); });
    }
    return py::make_tuple(batched_observations(), infos());
  }

  py::tuple step(const std::vector<std::pair<int32_t, int32_t>>& actions) {
    if (actions.size() != slots_.size())
      throw UsageError("step() takes one (xfer, location) per environment: " + std::to_string(slots_.size()) +
                       ", got " + std::to_string(actions.size()));
    if (slots_.front().observation == nullptr) throw UsageError("step() before reset(): call reset() first");
    // Every action is checked before any environment moves.
    for (size_t i = 0; i < slots_.size(); ++i) {
      if (slots_[i].reset_next) continue;
      check_action_named(*slots_[i].env, actions[i].first, actions[i].second, "environment " + std::to_string(i) + ": ",
                         "row " + std::to_string(i) + " of xfer_mask and location_mask");
    }
    {
      py::gil_scoped_release unlocked;
      for_each_slot([&](Slot& s, size_t i) {
        if (s.reset_next) {
          start_episode(s);
          return;
        }
        const StepResult r = s.env->step({actions[i].first, actions[i].second});
        s.observation = r.observation;
        s.reward = r.reward;
        s.truncated = r.done && r.info.end_reason == "max-steps";
        s.terminated = r.done && !s.truncated;
        s.rule = r.info.rule;
        s.end_reason = r.info.end_reason;
        s.reset_next = r.done;
      });
    }
    const size_t n = slots_.size();
    py::array_t<double> rewards(static_cast<py::ssize_t>(n));
    py::array_t<bool> terminated(static_cast<py::ssize_t>(n)), truncated(static_cast<py::ssize_t>(n));
    for (size_t i = 0; i < n; ++i) {
      rewards.mutable_at(i) = slots_[i].reward;
      terminated.mutable_at(i) = slots_[i].terminated;
      truncated.mutable_at(i) = slots_[i].truncated;
    }
    return py::make_tuple(batched_observations(), rewards, terminated, truncated, infos());
  }

  int32_t num_envs() const { return static_cast<int32_t>(slots_.size()); }
  int32_t num_xfers() const { return slots_.front().env->num_xfers(); }
  int32_t max_locations() const { return slots_.front().env->options().max_locations; }
  int32_t max_steps() const { return slots_.front().env->options().max_steps; }
  int32_t threads() const { return threads_.count(); }

 private:
  // Environment i's episodes take seeds seed + i, seed + i + n, seed + i + 2n, ...
  void reseed(uint64_t seed) {
    for (size_t i = 0; i < slots_.size(); ++i) slots_[i].next_seed = seed + i;
  }

  // The next episode of `s`: its next seed, then that plus the number of
  // environments, so no two environments share a seed.
  void start_episode(Slot& s) {
    s.observation = &s.env->reset(s.next_seed);
    s.next_seed += slots_.size();
    s.reset_next = false;
    s.reward = 0;
    s.terminated = s.truncated = false;
    s.rule.clear();
    s.end_reason.clear();
  }

  // f(slot, index) for every environment, each worker taking every
  // threads-th one; the first error is rethrown once all have finished.
  template <typename F>
  void for_each_slot(F f) {
    const size_t workers = static_cast<size_t>(threads_.count());
    threads_.run([&](int32_t k) {
      for (size_t i = static_cast<size_t>(k); i < slots_.size(); i += workers) f(slots_[i], i);
    });
  }

  template <typename T>
  static py::array_t<T> new_array(std::vector<py::ssize_t> shape) {
    return py::array_t<T>(shape);
  }

  py::dict batched_observations() const {
    const auto n = static_cast<py::ssize_t>(slots_.size());
    const int32_t x = num_xfers(), l = max_locations();
    py::ssize_t nodes = 0, edges = 0, locations = 0, matched = 0;
    for (const Slot& s : slots_) {
      nodes += s.observation->graph.num_nodes;
      edges += s.observation->graph.num_edges;
      locations += static_cast<py::ssize_t>(s.observation->node_begin.size()) - 1;
      matched += static_cast<py::ssize_t>(s.observation->match_nodes.size());
    }
    auto xfer_mask = new_array<uint8_t>({n, x + 1});
    auto location_mask = new_array<uint8_t>({n, x, l});
    auto n_node = new_array<int32_t>({n}), n_edge = new_array<int32_t>({n});
    auto node_features = new_array<float>({nodes, kNodeFeatureDim});
    auto edge_features = new_array<float>({edges, kEdgeFeatureDim});
    auto senders = new_array<int32_t>({edges}), receivers = new_array<int32_t>({edges});
    auto globals = new_array<float>({n, kGlobalFeatureDim});
    auto node_op = new_array<int32_t>({nodes});
    auto location_begin = new_array<int32_t>({n, x + 1});
    auto location_offset = new_array<int32_t>({n});
    auto node_begin = new_array<int32_t>({locations + 1});
    auto match_nodes = new_array<int32_t>({matched});
    py::ssize_t node_at = 0, edge_at = 0, location_at = 0, match_at = 0;
    for (py::ssize_t i = 0; i < n; ++i) {
      const Observation& o = *slots_[static_cast<size_t>(i)].observation;
      const GraphTuple& g = o.graph;
      std::memcpy(xfer_mask.mutable_data(i, 0), o.xfer_mask.data(), o.xfer_mask.size());
      std::memcpy(location_mask.mutable_data(i, 0, 0), o.location_mask.data(), o.location_mask.size());
      n_node.mutable_at(i) = g.num_nodes;
      n_edge.mutable_at(i) = g.num_edges;
      std::memcpy(node_features.mutable_data() + node_at * kNodeFeatureDim, g.node_features.data(),
                  g.node_features.size() * sizeof(float));
      std::memcpy(edge_features.mutable_data() + edge_at * kEdgeFeatureDim, g.edge_features.data(),
                  g.edge_features.size() * sizeof(float));
      for (int32_t e = 0; e < g.num_edges; ++e) {
        senders.mutable_at(edge_at + e) = g.senders[static_cast<size_t>(e)] + static_cast<int32_t>(node_at);
        receivers.mutable_at(edge_at + e) = g.receivers[static_cast<size_t>(e)] + static_cast<int32_t>(node_at);
      }
      std::memcpy(globals.mutable_data(i, 0), g.globals.data(), g.globals.size() * sizeof(float));
      std::memcpy(node_op.mutable_data() + node_at, g.node_op.data(), g.node_op.size() * sizeof(int32_t));
      std::memcpy(location_begin.mutable_data(i, 0), o.location_begin.data(), o.location_begin.size() * sizeof(int32_t));
      location_offset.mutable_at(i) = static_cast<int32_t>(location_at);
      const auto own_locations = static_cast<py::ssize_t>(o.node_begin.size()) - 1;
      for (py::ssize_t k = 0; k < own_locations; ++k)
        node_begin.mutable_at(location_at + k) = o.node_begin[static_cast<size_t>(k)] + static_cast<int32_t>(match_at);
      for (size_t k = 0; k < o.match_nodes.size(); ++k)
        match_nodes.mutable_at(match_at + static_cast<py::ssize_t>(k)) = o.match_nodes[k] + static_cast<int32_t>(node_at);
      node_at += g.num_nodes;
      edge_at += g.num_edges;
      location_at += own_locations;
      match_at += static_cast<py::ssize_t>(o.match_nodes.size());
    }
    node_begin.mutable_at(location_at) = static_cast<int32_t>(match_at);
    py::dict out;
    out["xfer_mask"] = xfer_mask;
    out["location_mask"] = location_mask;
    out["n_node"] = n_node;
    out["n_edge"] = n_edge;
    out["node_features"] = node_features;
    out["edge_features"] = edge_features;
    out["senders"] = senders;
    out["receivers"] = receivers;
    out["globals"] = globals;
    out["node_op"] = node_op;
    out["location_begin"] = location_begin;
    out["location_offset"] = location_offset;
    out["node_begin"] = node_begin;
    out["match_nodes"] = match_nodes;
    return out;
  }

  py::dict infos() const {
    const auto n = static_cast<py::ssize_t>(slots_.size());
    py::array_t<double> cost(n), initial(n), reduction(n);
    py::array_t<int32_t> steps(n);
    py::list rules, end_reasons;
    for (py::ssize_t i = 0; i < n; ++i) {
      const Slot& s = slots_[static_cast<size_t>(i)];
      cost.mutable_at(i) = s.env->cost_ms();
      initial.mutable_at(i) = s.env->initial_cost_ms();
      reduction.mutable_at(i) = reduction_pct(*s.env);
      steps.mutable_at(i) = s.env->steps();
      rules.append(s.rule);
      end_reasons.append(s.end_reason);
    }
    py::dict info;
    info["cost_ms"] = cost;
    info["initial_cost_ms"] = initial;
    info["reduction_pct"] = reduction;
    info["step"] = steps;
    info["rule"] = rules;
    info["end_reason"] = end_reasons;
    return info;
  }

  RuleMatcher matcher_;
  std::vector<Slot> slots_;
  WorkerThreads threads_;
};

}  // namespace

void bind_vector_env(py::module_& module) {
  py::class_<PythonVectorEnv>(module, "VectorEnv")
      .def(py::init([](const std::vector<std::string>& models, int32_t num_envs, const std::string& cost,
                       const std::string& rates, const std::string& gpu, int32_t max_steps, int32_t max_locations,
                       const std::string& reward, int64_t batch, int32_t threads, uint64_t seed) {
             return std::make_unique<PythonVectorEnv>(
                 models, num_envs, EnvSettings{cost, rates, gpu, max_steps, max_locations, reward}, batch, threads,
                 seed);
           }),
           py::arg("models"), py::arg("num_envs"), py::arg("cost"), py::arg("rates"), py::arg("gpu"),
           py::arg("max_steps"), py::arg("max_locations"), py::arg("reward"), py::arg("batch"), py::arg("threads"),
           py::arg("seed"))
      .def("reset", &PythonVectorEnv::reset, py::arg("seed") = py::none())
      .def("step", &PythonVectorEnv::step, py::arg("actions"))
      .def_property_readonly("num_envs", &PythonVectorEnv::num_envs)
      .def_property_readonly("num_xfers", &PythonVectorEnv::num_xfers)
      .def_property_readonly("max_locations", &PythonVectorEnv::max_locations)
      .def_property_readonly("max_steps", &PythonVectorEnv::max_steps)
      .def_property_readonly("threads", &PythonVectorEnv::threads);
}

}  // namespace graphworld::python
