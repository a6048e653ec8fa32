// graphworld zoo NAME -o OUT.onnx | graphworld zoo --list
#include <cstdio>

#include "common/error.h"
#include "env/onnx/onnx_export.h"
#include "env/zoo/zoo.h"
#include "launch/commands.h"
#include "launch/pipeline/graph_summary.h"

namespace graphworld {
namespace {

int run_zoo(const CliArgs& args) {
  if (args.flag("--list")) {
    for (const ZooModel& m : zoo_models()) std::printf("%-14s %s\n", m.name.c_str(), m.description.c_str());
    return 0;
  }
  const std::string& name = args.positional(0, "a zoo model NAME (or --list)");
  args.expect_at_most(1);
  auto out = args.value("--output");
  if (!out) throw UsageError("'graphworld zoo " + name + "' needs -o OUT.onnx; see 'graphworld zoo --help'");
  ZooOptions options;
  options.batch = args.int_value("--batch", 1);
  options.seed = static_cast<uint64_t>(args.int_value("--seed", 0));
  Graph graph = build_zoo_model(name, options);
  export_onnx_file(graph, *out);
  GraphSummary summary = summarize(graph);
  std::printf("wrote %s: %s, %lld ops, %.2fM params\n", out->c_str(), name.c_str(), static_cast<long long>(summary.ops),
              static_cast<double>(summary.params) / 1e6);
  return 0;
}

}  // namespace

Subcommand zoo_command() {
  return {{"zoo",
           "NAME",
           "Build a benchmark graph from the zoo and write it as ONNX, or list the zoo.",
           "Zoo weights are seeded-random: the same --seed gives the same model.",
           {{"--list", "", "", "list the zoo models"},
            {"--output", "-o", "OUT.onnx", "where to write the model"},
            {"--batch", "", "N", "batch size (default 1)"},
            {"--seed", "", "S", "weight seed (default 0)"}}},
          run_zoo};
}

}  // namespace graphworld
