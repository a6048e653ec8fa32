#include "launch/pipeline/graph_summary.h"

#include <cstdio>

#include "env/ops/op_schema.h"

namespace graphworld {

GraphSummary summarize(const Graph& graph) {
  GraphSummary s;
  std::vector<bool> live = graph.live_ops();
  for (OpId id = 0; id < static_cast<OpId>(graph.num_ops()); ++id) {
    const Op& op = graph.op(id);
    if (!live[id] || op.is_leaf()) continue;
    ++s.ops;
    ++s.op_types[std::string(op_type_name(op.type))];
    s.flops += op_work(graph, id).flops;
  }
  for (OpId id : graph.input_ops()) s.inputs.push_back({graph.op(id).name, graph.op(id).outputs[0]});
  for (const GraphOutput& o : graph.outputs()) s.outputs.push_back({o.name, graph.info(o.ref)});
  s.params = graph.num_params();
  return s;
}

std::string format_summary(const GraphSummary& s) {
  char line[256];
  std::string out;
  std::snprintf(line, sizeof(line), "ops: %lld   params: %.2fM   flops: %.3f GFLOP\n", static_cast<long long>(s.ops),
                static_cast<double>(s.params) / 1e6, s.flops / 1e9);
  out += line;
  for (const auto& in : s.inputs) out += "input  " + in.name + ": " + dtype_name(in.info.dtype) + " " + shape_to_string(in.info.shape) + "\n";
  for (const auto& o : s.outputs) out += "output " + o.name + ": " + dtype_name(o.info.dtype) + " " + shape_to_string(o.info.shape) + "\n";
  out += "op types:";
  for (const auto& [type, count] : s.op_types) out += " " + type + "=" + std::to_string(count);
  return out + "\n";
}

void write_summary_json(const GraphSummary& s, JsonWriter& json) {
  json.key("ops").value(s.ops);
  json.key("op_types").begin_object();
  for (const auto& [type, count] : s.op_types) json.key(type).value(count);
  json.end_object();
  auto tensors = [&](const char* key, const std::vector<NamedTensor>& list) {
    json.key(key).begin_array();
    for (const auto& t : list) {
      json.begin_object();
      json.key("name").value(t.name);
      json.key("dtype").value(dtype_name(t.info.dtype));
      json.key("shape").value(t.info.shape);
      json.end_object();
    }
    json.end_array();
  };
  tensors("inputs", s.inputs);
  tensors("outputs", s.outputs);
  json.key("params").value(s.params);
  json.key("flops").value(s.flops);
}

}  // namespace graphworld
