// What `graphworld import` reports about a graph.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/json_writer.h"
#include "env/graph/graph.h"

namespace graphworld {

struct NamedTensor {
  std::string name;
  TensorInfo info;
};

struct GraphSummary {
  int64_t ops = 0;  // compute ops (inputs and weights not counted)
  std::map<std::string, int64_t> op_types;
  std::vector<NamedTensor> inputs;
  std::vector<NamedTensor> outputs;
  int64_t params = 0;  // float weight elements
  double flops = 0;    // per inference
};

GraphSummary summarize(const Graph& graph);
std::string format_summary(const GraphSummary& summary);  // human-readable, several lines
void write_summary_json(const GraphSummary& summary, JsonWriter& json);  // keys only, inside an open object

}  // namespace graphworld
