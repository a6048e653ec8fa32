// _core.RolloutStore: a run's rollouts.h5 from Python, for offline RL: the
// stored columns as NumPy arrays, and the episodes with each step's
// observation rebuilt by replaying it (learner/observation_replay.h) with
// the run's own rules, graphs and cost model.
#pragma once

#include <pybind11/pybind11.h>

namespace graphworld::python {

void bind_rollout_store(pybind11::module_& module);

}  // namespace graphworld::python
