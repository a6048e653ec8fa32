#include "python/observation_arrays.h"

#include <pybind11/numpy.h>

#include <cstring>
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

}  // namespace

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
  return out;
}

}  // namespace graphworld::python
