#include "python/observation_arrays.h"

#include <pybind11/numpy.h>

#include "common/error.h"

#include <cstring>
#include <string>
#include <vector>

namespace graphworld::python {
namespace {

// A new array of `shape` holding a copy of `values` (their count must be
// the shape's product).
template <typename T>
pybind11::array_t<T> array_of(const std::vector<T>& values, std::vector<pybind11::ssize_t> shape) {
  pybind11::array_t<T> out(shape);
  if (!values.empty()) std::memcpy(out.mutable_data(), values.data(), values.size() * sizeof(T));
  return out;
}

// arrays[key] as a flat vector of T, converted from any number type;
// UsageError naming the key when it is missing or holds `expected`
// elements not (expected < 0: any count).
template <typename T>
std::vector<T> vector_of(const pybind11::dict& arrays, const char* key, pybind11::ssize_t expected) {
  if (!arrays.contains(key))
    throw UsageError(std::string("the observation has no '") + key + "' (pass the dict reset() or step() returned)");
  const auto a = pybind11::array_t<T, pybind11::array::c_style | pybind11::array::forcecast>::ensure(arrays[key]);
  if (!a) throw UsageError(std::string("the observation's '") + key + "' is not an array of numbers");
  if (expected >= 0 && a.size() != expected)
    throw UsageError(std::string("the observation's '") + key + "' has " + std::to_string(a.size()) +
                     " elements where the others say " + std::to_string(expected));
  return std::vector<T>(a.data(), a.data() + a.size());
}

}  // namespace

Observation observation_from_arrays(const pybind11::dict& arrays) {
  Observation o;
  o.xfer_mask = vector_of<uint8_t>(arrays, "xfer_mask", -1);
  if (o.xfer_mask.size() < 1) throw UsageError("the observation's 'xfer_mask' is empty: it has N + 1 entries");
  o.num_xfers = static_cast<int32_t>(o.xfer_mask.size()) - 1;
  if (!arrays.contains("location_mask"))
    throw UsageError("the observation has no 'location_mask' (pass the dict reset() or step() returned)");
  const auto locations = pybind11::array::ensure(arrays["location_mask"]);
  if (!locations || locations.ndim() != 2 || locations.shape(0) != o.num_xfers)
    throw UsageError("the observation's 'location_mask' must be [N, L] with N = " + std::to_string(o.num_xfers) +
                     " (xfer_mask has N + 1 entries)");
  o.max_locations = static_cast<int32_t>(locations.shape(1));
  o.location_mask = vector_of<uint8_t>(arrays, "location_mask", -1);
  GraphTuple& g = o.graph;
  g.node_op = vector_of<int32_t>(arrays, "node_op", -1);
  g.num_nodes = static_cast<int32_t>(g.node_op.size());
  g.senders = vector_of<int32_t>(arrays, "senders", -1);
  g.num_edges = static_cast<int32_t>(g.senders.size());
  g.receivers = vector_of<int32_t>(arrays, "receivers", g.num_edges);
  g.node_features = vector_of<float>(arrays, "node_features", static_cast<pybind11::ssize_t>(g.num_nodes) * kNodeFeatureDim);
  g.edge_features = vector_of<float>(arrays, "edge_features", static_cast<pybind11::ssize_t>(g.num_edges) * kEdgeFeatureDim);
  g.globals = vector_of<float>(arrays, "globals", kGlobalFeatureDim);
  for (size_t e = 0; e < g.senders.size(); ++e)
    if (g.senders[e] < 0 || g.senders[e] >= g.num_nodes || g.receivers[e] < 0 || g.receivers[e] >= g.num_nodes)
      throw UsageError("the observation's edge " + std::to_string(e) + " names a node outside its " +
                       std::to_string(g.num_nodes) + " nodes");
  // Each part is checked before the next is sized by it.
  o.location_begin = vector_of<int32_t>(arrays, "location_begin", o.num_xfers + 1);
  if (o.location_begin.front() != 0) throw UsageError("the observation's 'location_begin' must start at 0");
  for (int32_t x = 0; x < o.num_xfers; ++x) {
    const int32_t count = o.location_count(x);
    if (count < 0 || count > o.max_locations)
      throw UsageError("the observation's 'location_begin' gives rule " + std::to_string(x) + " " +
                       std::to_string(count) + " locations (0 to L = " + std::to_string(o.max_locations) + ")");
    if ((count > 0) != (o.xfer_mask[static_cast<size_t>(x)] != 0))
      throw UsageError("the observation's 'xfer_mask' and 'location_begin' disagree on rule " + std::to_string(x) +
                       " (allowed exactly where it has locations)");
  }
  o.node_begin = vector_of<int32_t>(arrays, "node_begin", static_cast<pybind11::ssize_t>(o.location_begin.back()) + 1);
  if (o.node_begin.front() != 0) throw UsageError("the observation's 'node_begin' must start at 0");
  for (size_t e = 0; e + 1 < o.node_begin.size(); ++e)
    if (o.node_begin[e + 1] < o.node_begin[e])
      throw UsageError("the observation's 'node_begin' decreases at entry " + std::to_string(e));
  o.match_nodes = vector_of<int32_t>(arrays, "match_nodes", static_cast<pybind11::ssize_t>(o.node_begin.back()));
  if (arrays.contains("location_reward") || arrays.contains("xfer_reward")) {
    o.location_reward =
        vector_of<float>(arrays, "location_reward", static_cast<pybind11::ssize_t>(o.node_begin.size()) - 1);
    o.xfer_reward = vector_of<float>(arrays, "xfer_reward", static_cast<pybind11::ssize_t>(o.num_xfers) + 1);
  }
  for (int32_t node : o.match_nodes)
    if (node < 0 || node >= g.num_nodes)
      throw UsageError("the observation's 'match_nodes' names node " + std::to_string(node) + " of " +
                       std::to_string(g.num_nodes));
  return o;
}

pybind11::dict observation_arrays(const Observation& o) {
  const GraphTuple& g = o.graph;
  pybind11::dict out;
  out["xfer_mask"] = array_of(o.xfer_mask, {static_cast<pybind11::ssize_t>(o.xfer_mask.size())});
  out["location_mask"] = array_of(o.location_mask, {o.num_xfers, o.max_locations});
  out["node_features"] = array_of(g.node_features, {g.num_nodes, kNodeFeatureDim});
  out["edge_features"] = array_of(g.edge_features, {g.num_edges, kEdgeFeatureDim});
  out["senders"] = array_of(g.senders, {g.num_edges});
  out["receivers"] = array_of(g.receivers, {g.num_edges});
  out["globals"] = array_of(g.globals, {kGlobalFeatureDim});
  out["node_op"] = array_of(g.node_op, {g.num_nodes});
  out["location_begin"] = array_of(o.location_begin, {static_cast<pybind11::ssize_t>(o.location_begin.size())});
  out["node_begin"] = array_of(o.node_begin, {static_cast<pybind11::ssize_t>(o.node_begin.size())});
  out["match_nodes"] = array_of(o.match_nodes, {static_cast<pybind11::ssize_t>(o.match_nodes.size())});
  if (!o.xfer_reward.empty()) {
    out["location_reward"] = array_of(o.location_reward, {static_cast<pybind11::ssize_t>(o.location_reward.size())});
    out["xfer_reward"] = array_of(o.xfer_reward, {static_cast<pybind11::ssize_t>(o.xfer_reward.size())});
  }
  return out;
}

}  // namespace graphworld::python
