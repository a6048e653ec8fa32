#include "env/onnx/import_gelu.h"

#include <cmath>
#include <optional>
#include <unordered_map>
#include <vector>

#include "env/graph/tensor.h"
#include "env/onnx/tensor_proto.h"

namespace graphworld {
namespace {

// The graph's single-element float constants by value name: initializers,
// and Constant nodes' `value` or `value_float`.
std::unordered_map<std::string, double> scalar_constants(const onnx::GraphProto& graph) {
  std::unordered_map<std::string, double> scalars;
  auto add = [&](const std::string& name, const onnx::TensorProto& proto) {
    try {
      std::shared_ptr<TensorData> data = tensor_from_proto(proto, name);
      if (data->numel() == 1 && data->dtype() == DType::Float32) scalars[name] = data->floats()[0];
    } catch (const std::exception&) {
      // Not a tensor this importer reads; the node that uses it reports that.
    }
  };
  for (const onnx::TensorProto& init : graph.initializer()) add(init.name(), init);
  for (const onnx::NodeProto& node : graph.node()) {
    if (node.op_type() != "Constant" || node.output_size() != 1) continue;
    for (const onnx::AttributeProto& attr : node.attribute()) {
      if (attr.name() == "value" && attr.has_t()) add(node.output(0), attr.t());
      if (attr.name() == "value_float") scalars[node.output(0)] = attr.f();
    }
  }
  return scalars;
}

class GeluMatcher {
 public:
  explicit GeluMatcher(const onnx::GraphProto& graph) : graph_(graph), scalars_(scalar_constants(graph)) {
    for (int i = 0; i < graph.node_size(); ++i)
      for (const std::string& out : graph.node(i).output())
        if (!out.empty()) producer_[out] = i;
    for (const onnx::NodeProto& node : graph.node())
      for (const std::string& in : node.input()) ++readers_[in];
    for (const onnx::ValueInfoProto& out : graph.output()) ++readers_[out.name()];
  }

  // Whether node `i` ends a Gelu group; fills `x` and the group's other nodes.
  bool match(int i, GeluSpellings::Input& x, std::vector<int>& inner) const {
    const onnx::NodeProto& last = graph_.node(i);
    if (!binary(last, "Mul")) return false;
    for (int side = 0; side < 2; ++side) {
      const std::string& a = last.input(side);
      const std::string& b = last.input(1 - side);
      inner.clear();
      // (x * (1 + erf)) * 0.5, (x * 0.5) * (1 + erf) and x * ((1 + erf) * 0.5).
      if (is_scalar(a, 0.5)) {
        if (const int m = inner_node(b, "Mul"); m >= 0 && binary(graph_.node(m), "Mul")) {
          const onnx::NodeProto& mul = graph_.node(m);
          for (int s = 0; s < 2; ++s)
            if (erf_term(mul.input(1 - s), mul.input(s), inner)) return done(m, x, inner);
        }
      }
      if (const int m = inner_node(b, "Mul"); m >= 0 && binary(graph_.node(m), "Mul")) {
        const onnx::NodeProto& mul = graph_.node(m);
        for (int s = 0; s < 2; ++s)
          if (is_scalar(mul.input(1 - s), 0.5) && erf_term(a, mul.input(s), inner)) return done(m, x, inner);
        for (int s = 0; s < 2; ++s)
          if (is_scalar(mul.input(1 - s), 0.5) && erf_term(mul.input(s), a, inner)) return done(m, x, inner);
      }
    }
    return false;
  }

 private:
  static bool binary(const onnx::NodeProto& node, const char* type) {
    return node.op_type() == type && node.domain().empty() && node.input_size() == 2 && node.output_size() == 1;
  }

  bool is_scalar(const std::string& name, double value) const {
    auto it = scalars_.find(name);
    return it != scalars_.end() && std::abs(it->second - value) <= 1e-4 * std::abs(value);
  }

  // The node that computes `value` when it is of `type` and nothing but the
  // group reads its output (one reader, not a graph output); else -1.
  int inner_node(const std::string& value, const char* type) const {
    auto it = producer_.find(value);
    if (it == producer_.end()) return -1;
    const onnx::NodeProto& node = graph_.node(it->second);
    if (node.op_type() != type || !node.domain().empty() || node.output_size() != 1) return -1;
    auto readers = readers_.find(value);
    if (readers == readers_.end() || readers->second != 1) return -1;
    return it->second;
  }

  // Whether `value` is 1 + erf(x / sqrt(2)) (or erf(x * 1/sqrt(2))), each
  // node read only by the next; appends those nodes to `inner`.
  bool erf_term(const std::string& value, const std::string& x, std::vector<int>& inner) const {
    const int add = inner_node(value, "Add");
    if (add < 0 || !binary(graph_.node(add), "Add")) return false;
    const onnx::NodeProto& plus = graph_.node(add);
    for (int s = 0; s < 2; ++s) {
      if (!is_scalar(plus.input(1 - s), 1.0)) continue;
      const int erf = inner_node(plus.input(s), "Erf");
      if (erf < 0 || graph_.node(erf).input_size() != 1) continue;
      const std::string& scaled = graph_.node(erf).input(0);
      int scale = inner_node(scaled, "Div");
      const bool divides = scale >= 0 && binary(graph_.node(scale), "Div") && graph_.node(scale).input(0) == x &&
                           is_scalar(graph_.node(scale).input(1), std::sqrt(2.0));
      if (!divides) {
        scale = inner_node(scaled, "Mul");
        if (scale < 0 || !binary(graph_.node(scale), "Mul")) continue;
        const onnx::NodeProto& mul = graph_.node(scale);
        const bool multiplies = (mul.input(0) == x && is_scalar(mul.input(1), std::sqrt(0.5))) ||
                                (mul.input(1) == x && is_scalar(mul.input(0), std::sqrt(0.5)));
        if (!multiplies) continue;
      }
      inner.insert(inner.end(), {add, erf, scale});
      return true;
    }
    return false;
  }

  // The scale node is the last erf_term appended; x is its non-constant input.
  bool done(int mul, GeluSpellings::Input& x, std::vector<int>& inner) const {
    const int scale = inner.back();
    x.node = scale;
    x.input = is_scalar(graph_.node(scale).input(0), std::sqrt(0.5)) ? 1 : 0;
    inner.push_back(mul);
    return true;
  }

  const onnx::GraphProto& graph_;
  std::unordered_map<std::string, double> scalars_;
  std::unordered_map<std::string, int> producer_;
  std::unordered_map<std::string, int> readers_;
};

}  // namespace

GeluSpellings find_gelu_spellings(const onnx::GraphProto& graph) {
  GeluSpellings found;
  const GeluMatcher matcher(graph);
  GeluSpellings::Input x;
  std::vector<int> inner;
  for (int i = 0; i < graph.node_size(); ++i) {
    if (!matcher.match(i, x, inner)) continue;
    bool taken = false;  // a node already in another group (cannot happen with one reader each, but cheap to rule out)
    for (int n : inner) taken = taken || found.inner_nodes.count(n) || found.result_node_input.count(n);
    if (taken) continue;
    found.result_node_input[i] = x;
    found.inner_nodes.insert(inner.begin(), inner.end());
  }
  return found;
}

}  // namespace graphworld
