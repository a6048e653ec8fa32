#include "python/graph_env_binding.h"

#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <string>

#include "common/error.h"
#include "env/gym/graph_env.h"
#include "env/rules/rule_library.h"
#include "launch/pipeline/model_source.h"
#include "python/env_settings.h"
#include "python/observation_arrays.h"

namespace graphworld::python {
namespace {

namespace py = pybind11;

// What a GraphEnv needs kept alive beside it: the model's graph is copied
// into the env, but the rules and the cost model are shared with it.
class PythonGraphEnv {
 public:
  PythonGraphEnv(const std::string& model, const EnvSettings& settings, int64_t batch)
      : matcher_(default_rule_library().rules), cost_(settings.make_cost()) {
    const GraphEnvOptions options = settings.env_options();
    LoadedModel loaded = load_model(model, batch);
    source_ = loaded.source;
    env_ = std::make_unique<GraphEnv>(std::move(loaded.graph), matcher_, *cost_, options);
  }

  py::tuple reset(uint64_t seed) {
    const Observation* observation = nullptr;
    {
      py::gil_scoped_release unlocked;
      observation = &env_->reset(seed);
    }
    return py::make_tuple(observation_arrays(*observation), info_of(nullptr));
  }

  py::tuple step(int32_t xfer, int32_t location) {
    if (env_->done())
      throw UsageError("step() after the episode ended (terminated or truncated): call reset() first");
    check_action_named(*env_, xfer, location, "", "the observation's xfer_mask and location_mask");
    StepResult result;
    {
      py::gil_scoped_release unlocked;
      result = env_->step({xfer, location});
    }
    // Gymnasium's two endings: the episode ended by itself (NO-OP, or no
    // rule applies any more), or the horizon cut it short.
    const bool truncated = result.done && result.info.end_reason == "max-steps";
    const bool terminated = result.done && !truncated;
    return py::make_tuple(observation_arrays(*result.observation), result.reward, terminated, truncated,
                          info_of(&result.info));
  }

  int32_t num_xfers() const { return env_->num_xfers(); }
  int32_t max_locations() const { return env_->options().max_locations; }
  int32_t max_steps() const { return env_->options().max_steps; }
  const std::string& source() const { return source_; }
  std::string rule_name(int32_t xfer) const {
    if (xfer < 0 || xfer > env_->num_xfers())
      throw UsageError("rule " + std::to_string(xfer) + " is out of range [0, " + std::to_string(env_->num_xfers()) +
                       "] (" + std::to_string(env_->num_xfers()) + " is NO-OP)");
    return xfer == env_->num_xfers() ? "no-op" : matcher_.rules()[static_cast<size_t>(xfer)].name;
  }

 private:
  py::dict info_of(const StepInfo* step) const {
    py::dict info;
    info["cost_ms"] = env_->cost_ms();
    info["initial_cost_ms"] = env_->initial_cost_ms();
    info["reduction_pct"] = reduction_pct(*env_);
    info["step"] = env_->steps();
    info["rule"] = step ? step->rule : std::string();
    if (step && !step->end_reason.empty()) info["end_reason"] = step->end_reason;
    return info;
  }

  RuleMatcher matcher_;
  std::unique_ptr<CostModel> cost_;
  std::unique_ptr<GraphEnv> env_;
  std::string source_;
};

}  // namespace

void bind_graph_env(py::module_& module) {
  py::class_<PythonGraphEnv>(module, "GraphEnv")
      .def(py::init([](const std::string& model, const std::string& cost, const std::string& rates,
                       const std::string& gpu, int32_t max_steps, int32_t max_locations, const std::string& reward,
                       int64_t batch, bool location_rewards) {
             return std::make_unique<PythonGraphEnv>(
                 model, EnvSettings{cost, rates, gpu, max_steps, max_locations, reward, location_rewards}, batch);
           }),
           py::arg("model"), py::arg("cost"), py::arg("rates"), py::arg("gpu"), py::arg("max_steps"),
           py::arg("max_locations"), py::arg("reward"), py::arg("batch"), py::arg("location_rewards") = false)
      .def("reset", &PythonGraphEnv::reset, py::arg("seed"), "(observation, info) of a new episode")
      .def("step", &PythonGraphEnv::step, py::arg("xfer"), py::arg("location"),
           "(observation, reward, terminated, truncated, info)")
      .def("rule_name", &PythonGraphEnv::rule_name, py::arg("xfer"))
      .def_property_readonly("num_xfers", &PythonGraphEnv::num_xfers)
      .def_property_readonly("max_locations", &PythonGraphEnv::max_locations)
      .def_property_readonly("max_steps", &PythonGraphEnv::max_steps)
      .def_property_readonly("source", &PythonGraphEnv::source);
}

}  // namespace graphworld::python
