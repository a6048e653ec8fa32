#include "python/vector_env_binding.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"
#include "env/gym/graph_env.h"
#include "env/gym/vector_graph_env.h"
#include "env/rules/rule_library.h"
#include "launch/pipeline/model_source.h"
#include "python/env_settings.h"
#include "python/location_mask_pool.h"

namespace graphworld::python {
namespace {

namespace py = pybind11;

// The Python face of VectorGraphEnv (env/gym/vector_graph_env.h): actions
// checked with the masks named, the GIL released while the environments
// step, and the results as NumPy arrays.
class PythonVectorEnv {
 public:
  PythonVectorEnv(const std::vector<std::string>& models, int32_t num_envs, const EnvSettings& settings,
                  int64_t batch, int32_t threads, uint64_t seed)
      : matcher_(default_rule_library().rules),
        envs_(load_graphs(models, batch), num_envs, matcher_, [&settings] { return settings.make_cost(); },
              settings.env_options(), threads, seed),
        location_masks_(LocationMaskPool::create(envs_.size(), static_cast<size_t>(num_xfers()),
                                                 static_cast<size_t>(max_locations()))) {}

  py::tuple reset(py::object seed) {
    const std::optional<uint64_t> restart = seed.is_none() ? std::nullopt : std::optional<uint64_t>(seed.cast<uint64_t>());
    Masks masks = new_masks();
    {
      py::gil_scoped_release unlocked;
      const std::lock_guard<std::mutex> one_at_a_time(mutex_);  // Python threads may share a VectorEnv
      envs_.reset(restart, masks.copier());
    }
    return py::make_tuple(batched_observations(std::move(masks)), infos());
  }

  // actions: int64 [num_envs, 2], (xfer, location) per row (VectorEnv.step
  // in vector_env.py converts and checks the shape).
  py::tuple step(const py::array_t<int64_t, py::array::c_style | py::array::forcecast>& pairs) {
    if (pairs.ndim() != 2 || pairs.shape(1) != 2 || static_cast<size_t>(pairs.shape(0)) != envs_.size())
      throw UsageError("step() takes one (xfer, location) per environment: an int array [" +
                       std::to_string(envs_.size()) + ", 2], got " + std::to_string(pairs.ndim() >= 1 ? pairs.shape(0) : 0) +
                       " rows");
    if (!envs_.started()) throw UsageError("step() before reset(): call reset() first");
    // Every action is checked before any environment moves; the names for
    // an error are built only when there is one.
    const int64_t* rows = pairs.data();
    std::vector<Action> actions(envs_.size());
    for (size_t i = 0; i < actions.size(); ++i) {
      const int64_t xfer = rows[2 * i], location = rows[2 * i + 1];
      if (xfer < INT32_MIN || xfer > INT32_MAX || location < INT32_MIN || location > INT32_MAX)
        throw UsageError("environment " + std::to_string(i) + ": action (" + std::to_string(xfer) + ", " +
                         std::to_string(location) + ") is out of range (see row " + std::to_string(i) +
                         " of xfer_mask and location_mask)");
      actions[i] = {static_cast<int32_t>(xfer), static_cast<int32_t>(location)};
      if (envs_.slot(i).reset_next) continue;
      try {
        envs_.slot(i).env->check_action(actions[i]);
      } catch (const UsageError&) {
        check_action_named(*envs_.slot(i).env, actions[i].xfer, actions[i].location,
                           "environment " + std::to_string(i) + ": ",
                           "row " + std::to_string(i) + " of xfer_mask and location_mask");
      }
    }
    Masks masks = new_masks();
    {
      py::gil_scoped_release unlocked;
      const std::lock_guard<std::mutex> one_at_a_time(mutex_);
      envs_.step(actions, masks.copier());
    }
    const size_t n = envs_.size();
    py::array_t<double> rewards(static_cast<py::ssize_t>(n));
    py::array_t<bool> terminated(static_cast<py::ssize_t>(n)), truncated(static_cast<py::ssize_t>(n));
    for (size_t i = 0; i < n; ++i) {
      rewards.mutable_at(i) = envs_.slot(i).reward;
      terminated.mutable_at(i) = envs_.slot(i).terminated;
      truncated.mutable_at(i) = envs_.slot(i).truncated;
    }
    return py::make_tuple(batched_observations(std::move(masks)), rewards, terminated, truncated, infos());
  }

  int32_t num_envs() const { return static_cast<int32_t>(envs_.size()); }
  int32_t num_xfers() const { return envs_.slot(0).env->num_xfers(); }
  int32_t max_locations() const { return envs_.slot(0).env->options().max_locations; }
  int32_t max_steps() const { return envs_.slot(0).env->options().max_steps; }
  int32_t threads() const { return envs_.threads(); }

 private:
  static std::vector<Graph> load_graphs(const std::vector<std::string>& models, int64_t batch) {
    if (models.empty()) throw UsageError("VectorEnv needs at least one model");
    std::vector<Graph> graphs;
    for (const std::string& model : models) graphs.push_back(load_model(model, batch).graph);
    return graphs;
  }

  template <typename T>
  static py::array_t<T> new_array(std::vector<py::ssize_t> shape) {
    return py::array_t<T>(shape);
  }

  // The masks, made with the GIL held and filled by the threads that step
  // (copier()), each right after its environment moved: xfer_mask whole,
  // location_mask (N x L bytes per environment, nearly all zero) through
  // the pool, which writes only the allowed rules' rows.
  struct Masks {
    py::array_t<uint8_t> xfer_mask;
    LocationMaskPool::Batch locations;
    uint8_t* xfer_rows = nullptr;
    size_t xfer_row = 0;
    VectorGraphEnv::SlotVisitor copier() {
      return [this](const VectorEnvSlot& s, size_t i) {
        const Observation& o = *s.observation;
        std::memcpy(xfer_rows + i * xfer_row, o.xfer_mask.data(), std::min(xfer_row, o.xfer_mask.size()));
        locations.fill(i, o);
      };
    }
  };
  Masks new_masks() const {
    Masks m;
    m.xfer_row = static_cast<size_t>(num_xfers()) + 1;
    m.xfer_mask = new_array<uint8_t>({static_cast<py::ssize_t>(envs_.size()), static_cast<py::ssize_t>(m.xfer_row)});
    m.xfer_rows = m.xfer_mask.mutable_data();
    m.locations = location_masks_->take();
    return m;
  }

  // The graphs as one batch, graph_nets style. Copied on this thread: a
  // second pass on the stepping threads cost more in waking them than the
  // copy of a few hundred kilobytes takes.
  py::dict batched_observations(Masks masks) const {
    const size_t count = envs_.size();
    const auto n = static_cast<py::ssize_t>(count);
    const int32_t x = num_xfers();
    struct Offsets {
      py::ssize_t node = 0, edge = 0, location = 0, match = 0;
    };
    std::vector<Offsets> at(count + 1);
    for (size_t i = 0; i < count; ++i) {
      const Observation& o = *envs_.slot(i).observation;
      at[i + 1].node = at[i].node + o.graph.num_nodes;
      at[i + 1].edge = at[i].edge + o.graph.num_edges;
      at[i + 1].location = at[i].location + static_cast<py::ssize_t>(o.node_begin.size()) - 1;
      at[i + 1].match = at[i].match + static_cast<py::ssize_t>(o.match_nodes.size());
    }
    const Offsets& total = at[count];
    auto n_node = new_array<int32_t>({n}), n_edge = new_array<int32_t>({n});
    auto node_features = new_array<float>({total.node, kNodeFeatureDim});
    auto edge_features = new_array<float>({total.edge, kEdgeFeatureDim});
    auto senders = new_array<int32_t>({total.edge}), receivers = new_array<int32_t>({total.edge});
    auto globals = new_array<float>({n, kGlobalFeatureDim});
    auto node_op = new_array<int32_t>({total.node});
    auto location_begin = new_array<int32_t>({n, x + 1});
    auto location_offset = new_array<int32_t>({n});
    auto node_begin = new_array<int32_t>({total.location + 1});
    auto match_nodes = new_array<int32_t>({total.match});
    const bool with_rewards = envs_.slot(0).env->options().location_rewards;
    auto location_reward = new_array<float>({with_rewards ? total.location : 0});
    auto xfer_reward = new_array<float>({with_rewards ? n : 0, x + 1});
    struct Out {
      int32_t *n_node, *n_edge, *senders, *receivers, *node_op, *location_begin, *location_offset, *node_begin,
          *match_nodes;
      float *node_features, *edge_features, *globals;
    } out{n_node.mutable_data(),         n_edge.mutable_data(),     senders.mutable_data(),
          receivers.mutable_data(),      node_op.mutable_data(),    location_begin.mutable_data(),
          location_offset.mutable_data(), node_begin.mutable_data(), match_nodes.mutable_data(),
          node_features.mutable_data(),  edge_features.mutable_data(), globals.mutable_data()};
    const auto begin_row = static_cast<size_t>(x) + 1;
    for (size_t i = 0; i < count; ++i) {
      const Observation& o = *envs_.slot(i).observation;
      const GraphTuple& g = o.graph;
      const Offsets& a = at[i];
      const auto node_base = static_cast<int32_t>(a.node), match_base = static_cast<int32_t>(a.match);
      out.n_node[i] = g.num_nodes;
      out.n_edge[i] = g.num_edges;
      std::memcpy(out.node_features + a.node * kNodeFeatureDim, g.node_features.data(),
                  g.node_features.size() * sizeof(float));
      std::memcpy(out.edge_features + a.edge * kEdgeFeatureDim, g.edge_features.data(),
                  g.edge_features.size() * sizeof(float));
      for (int32_t e = 0; e < g.num_edges; ++e) {
        out.senders[a.edge + e] = g.senders[static_cast<size_t>(e)] + node_base;
        out.receivers[a.edge + e] = g.receivers[static_cast<size_t>(e)] + node_base;
      }
      std::memcpy(out.globals + i * kGlobalFeatureDim, g.globals.data(), g.globals.size() * sizeof(float));
      std::memcpy(out.node_op + a.node, g.node_op.data(), g.node_op.size() * sizeof(int32_t));
      std::memcpy(out.location_begin + i * begin_row, o.location_begin.data(),
                  std::min(begin_row, o.location_begin.size()) * sizeof(int32_t));
      out.location_offset[i] = static_cast<int32_t>(a.location);
      const auto own_locations = static_cast<py::ssize_t>(o.node_begin.size()) - 1;
      for (py::ssize_t k = 0; k < own_locations; ++k)
        out.node_begin[a.location + k] = o.node_begin[static_cast<size_t>(k)] + match_base;
      for (size_t k = 0; k < o.match_nodes.size(); ++k)
        out.match_nodes[a.match + static_cast<py::ssize_t>(k)] = o.match_nodes[k] + node_base;
      if (with_rewards) {
        std::memcpy(location_reward.mutable_data() + a.location, o.location_reward.data(),
                    o.location_reward.size() * sizeof(float));
        std::memcpy(xfer_reward.mutable_data() + i * begin_row, o.xfer_reward.data(), begin_row * sizeof(float));
      }
    }
    out.node_begin[total.location] = static_cast<int32_t>(total.match);
    py::dict result;
    result["xfer_mask"] = std::move(masks.xfer_mask);
    result["location_mask"] = masks.locations.to_array();
    result["n_node"] = n_node;
    result["n_edge"] = n_edge;
    result["node_features"] = node_features;
    result["edge_features"] = edge_features;
    result["senders"] = senders;
    result["receivers"] = receivers;
    result["globals"] = globals;
    result["node_op"] = node_op;
    result["location_begin"] = location_begin;
    result["location_offset"] = location_offset;
    result["node_begin"] = node_begin;
    result["match_nodes"] = match_nodes;
    if (with_rewards) {
      result["location_reward"] = location_reward;
      result["xfer_reward"] = xfer_reward;
    }
    return result;
  }

  py::dict infos() const {
    const auto n = static_cast<py::ssize_t>(envs_.size());
    py::array_t<double> cost(n), initial(n), reduction(n);
    py::array_t<int32_t> steps(n);
    py::list rules, end_reasons;
    for (py::ssize_t i = 0; i < n; ++i) {
      const VectorEnvSlot& s = envs_.slot(static_cast<size_t>(i));
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

  RuleMatcher matcher_;  // before envs_, which holds a reference to it
  VectorGraphEnv envs_;
  std::shared_ptr<LocationMaskPool> location_masks_;
  // Steps one call at a time: with the GIL released, another Python thread
  // could otherwise step the same environments (WorkerThreads is not
  // reentrant).
  std::mutex mutex_;
};

}  // namespace

void bind_vector_env(py::module_& module) {
  py::class_<PythonVectorEnv>(module, "VectorEnv")
      .def(py::init([](const std::vector<std::string>& models, int32_t num_envs, const std::string& cost,
                       const std::string& rates, const std::string& gpu, int32_t max_steps, int32_t max_locations,
                       const std::string& reward, int64_t batch, int32_t threads, uint64_t seed,
                       bool location_rewards) {
             return std::make_unique<PythonVectorEnv>(
                 models, num_envs, EnvSettings{cost, rates, gpu, max_steps, max_locations, reward, location_rewards},
                 batch, threads, seed);
           }),
           py::arg("models"), py::arg("num_envs"), py::arg("cost"), py::arg("rates"), py::arg("gpu"),
           py::arg("max_steps"), py::arg("max_locations"), py::arg("reward"), py::arg("batch"), py::arg("threads"),
           py::arg("seed"), py::arg("location_rewards") = false)
      .def("reset", &PythonVectorEnv::reset, py::arg("seed") = py::none())
      .def("step", &PythonVectorEnv::step, py::arg("actions"))
      .def_property_readonly("num_envs", &PythonVectorEnv::num_envs)
      .def_property_readonly("num_xfers", &PythonVectorEnv::num_xfers)
      .def_property_readonly("max_locations", &PythonVectorEnv::max_locations)
      .def_property_readonly("max_steps", &PythonVectorEnv::max_steps)
      .def_property_readonly("threads", &PythonVectorEnv::threads);
}

}  // namespace graphworld::python
