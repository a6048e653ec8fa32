#include "python/policy_binding.h"

#include <pybind11/stl.h>

#include <cstdint>
#include <mutex>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"
#include "launch/pipeline/policy_location.h"
#include "learner/policy_file.h"
#include "python/observation_arrays.h"

namespace graphworld::python {
namespace {

namespace py = pybind11;

class PythonPolicy {
 public:
  PythonPolicy(const std::string& spec, uint64_t seed)
      : path_(resolve_policy_path(spec)), loaded_(load_policy_file(path_)), rng_(seed) {}

  // The policy's action on one observation: the most likely xfer and
  // location when greedy, else sampled with the policy's own seeded
  // generator. ValueError when the observation's rules are not the
  // policy's.
  std::pair<int32_t, int32_t> act(const py::dict& arrays, bool greedy) {
    const Observation observation = observation_from_arrays(arrays);
    if (observation.num_xfers != loaded_.info.network.num_xfers)
      throw UsageError("the observation has " + std::to_string(observation.num_xfers) + " rules, the policy " + path_ +
                       " was trained on " + std::to_string(loaded_.info.network.num_xfers));
    std::vector<PolicyStep> steps;
    {
      py::gil_scoped_release unlocked;
      const std::lock_guard<std::mutex> one_at_a_time(mutex_);  // Python threads may share a policy
      steps = loaded_.network.act({&observation}, rng_, greedy);
    }
    return {steps.front().action.xfer, steps.front().action.location};
  }

  float value(const py::dict& arrays) {
    const Observation observation = observation_from_arrays(arrays);
    py::gil_scoped_release unlocked;
    const std::lock_guard<std::mutex> one_at_a_time(mutex_);
    return loaded_.network.values({&observation}).front();
  }

  const std::string& path() const { return path_; }
  const PolicyFileInfo& info() const { return loaded_.info; }

 private:
  std::string path_;
  LoadedPolicy loaded_;
  std::mt19937_64 rng_;
  std::mutex mutex_;  // the network and rng_, while the GIL is released
};

}  // namespace

void bind_policy(py::module_& module) {
  py::class_<PythonPolicy>(module, "Policy")
      .def(py::init<const std::string&, uint64_t>(), py::arg("path"), py::arg("seed"))
      .def("act", &PythonPolicy::act, py::arg("observation"), py::arg("greedy"))
      .def("value", &PythonPolicy::value, py::arg("observation"))
      .def_property_readonly("path", &PythonPolicy::path)
      .def_property_readonly("num_xfers", [](const PythonPolicy& p) { return p.info().network.num_xfers; })
      .def_property_readonly("max_steps", [](const PythonPolicy& p) { return p.info().max_steps; })
      .def_property_readonly("max_locations", [](const PythonPolicy& p) { return p.info().max_locations; })
      .def_property_readonly("cost_model", [](const PythonPolicy& p) { return p.info().cost_model; })
      .def_property_readonly("trained_on", [](const PythonPolicy& p) { return p.info().trained_on; })
      .def_property_readonly("env_steps", [](const PythonPolicy& p) { return p.info().env_steps; })
      .def_property_readonly("location_rewards",
                             [](const PythonPolicy& p) { return p.info().network.location_rewards; });
}

}  // namespace graphworld::python
