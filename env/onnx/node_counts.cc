#include "env/onnx/node_counts.h"

#include <onnx/onnx_pb.h>

#include <set>

#include "common/error.h"

namespace graphworld {

namespace {

void count_nodes(const onnx::GraphProto& graph, std::map<std::string, int64_t>& counts) {
  for (const onnx::NodeProto& node : graph.node()) {
    const bool default_domain = node.domain().empty() || node.domain() == "ai.onnx";
    // graphworld's exporter writes a Flatten as the Reshape it is; both are
    // views, so they count as one op type.
    std::string type = default_domain && node.op_type() == "Flatten" ? "Reshape" : node.op_type();
    for (const onnx::AttributeProto& attr : node.attribute())
      if (attr.name() == "group" && attr.i() > 1) type += "[group=" + std::to_string(attr.i()) + "]";
    ++counts[default_domain ? type : node.domain() + ":" + type];
    for (const onnx::AttributeProto& attr : node.attribute()) {
      if (attr.has_g()) count_nodes(attr.g(), counts);
      for (const onnx::GraphProto& g : attr.graphs()) count_nodes(g, counts);
    }
  }
}

}  // namespace

std::map<std::string, int64_t> onnx_node_counts(const std::string& bytes, const std::string& source) {
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) throw ImportError(source + ": not a valid ONNX model");
  std::map<std::string, int64_t> counts;
  count_nodes(model.graph(), counts);
  return counts;
}

std::string node_count_difference(const std::map<std::string, int64_t>& before,
                                  const std::map<std::string, int64_t>& after, size_t max_entries) {
  std::set<std::string> types;
  for (const auto& [type, n] : before) types.insert(type);
  for (const auto& [type, n] : after) types.insert(type);
  std::string text;
  size_t listed = 0, unlisted = 0;
  for (const std::string& type : types) {
    const auto a = before.find(type), b = after.find(type);
    const int64_t from = a == before.end() ? 0 : a->second, to = b == after.end() ? 0 : b->second;
    if (from == to) continue;
    if (listed == max_entries) {
      ++unlisted;
      continue;
    }
    text += (text.empty() ? "" : ", ") + type + " " + std::to_string(from) + "→" + std::to_string(to);
    ++listed;
  }
  if (unlisted > 0) text += " and " + std::to_string(unlisted) + " more";
  return text;
}

}  // namespace graphworld
