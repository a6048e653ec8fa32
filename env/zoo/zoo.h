// Builders for the benchmark graphs, with the configurations used in the
// literature (TASO's benchmark set plus full-size vision and transformer
// models). Weights are seeded-random, so graphs are small to hold and the same
// seed gives the same graph, values included.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "env/graph/graph.h"

namespace graphworld {

struct ZooOptions {
  int64_t batch = 1;
  uint64_t seed = 0;  // seeds every random weight
};

struct ZooModel {
  std::string name;         // "bert", "resnet50", ...
  std::string description;  // one line: source and configuration
  Graph (*build)(const ZooOptions& options);
};

// Every model, in a stable order.
const std::vector<ZooModel>& zoo_models();

// Builds the named model; throws UsageError listing the known names if the
// name is unknown.
Graph build_zoo_model(std::string_view name, const ZooOptions& options = {});

}  // namespace graphworld
