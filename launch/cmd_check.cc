// graphworld check A B [--json]: are two models numerically equivalent?
#include <cstdio>

#include "common/error.h"
#include "common/json_writer.h"
#include "env/ops/executor.h"
#include "launch/commands.h"
#include "launch/pipeline/model_source.h"
#include "launch/pipeline/output_compare.h"

namespace graphworld {
namespace {

void require_same_inputs(const Graph& a, const Graph& b) {
  if (a.input_ops().size() != b.input_ops().size())
    throw UsageError("the models take different numbers of inputs: " + std::to_string(a.input_ops().size()) + " and " +
                     std::to_string(b.input_ops().size()));
  for (size_t k = 0; k < a.input_ops().size(); ++k) {
    const Op& x = a.op(a.input_ops()[k]);
    const Op& y = b.op(b.input_ops()[k]);
    if (x.outputs[0] != y.outputs[0])
      throw UsageError("input " + std::to_string(k) + " differs: '" + x.name + "' " + shape_to_string(x.outputs[0].shape) +
                       " vs '" + y.name + "' " + shape_to_string(y.outputs[0].shape));
  }
}

int run_check(const CliArgs& args) {
  const std::string& a_spec = args.positional(0, "two models A and B");
  const std::string& b_spec = args.positional(1, "two models A and B");
  args.expect_at_most(2);
  double rtol = args.double_value("--rtol", 1e-4);
  uint64_t seed = static_cast<uint64_t>(args.int_value("--seed", 1));
  LoadedModel a = load_model(a_spec, 1, import_options_from(args));
  LoadedModel b = load_model(b_spec, 1, import_options_from(args));
  require_same_inputs(a.graph, b.graph);
  ExecutorOptions options;
  options.threads = static_cast<int>(args.int_value("--threads", 0));
  auto inputs = random_inputs(a.graph, seed);
  auto out_a = Executor(a.graph, options).run(inputs);
  auto out_b = Executor(b.graph, options).run(inputs);
  OutputDifference diff = compare_outputs(out_a, out_b);
  bool equivalent = diff.max_rel_err <= rtol;
  if (args.flag("--json")) {
    JsonWriter json;
    json.begin_object()
        .key("max_abs_err").value(diff.max_abs_err)
        .key("max_rel_err").value(diff.max_rel_err)
        .key("equivalent").value(equivalent)
        .key("rtol").value(rtol)
        .key("outputs").value(static_cast<int64_t>(out_a.size()))
        .end_object();
    std::printf("%s\n", json.str().c_str());
  } else {
    std::printf("%s vs %s: max abs err %.3g, max rel err %.3g -> %s (rtol %.1g, %zu outputs, seed %llu)\n",
                a.source.c_str(), b.source.c_str(), diff.max_abs_err, diff.max_rel_err,
                equivalent ? "equivalent" : "NOT equivalent", rtol, out_a.size(), static_cast<unsigned long long>(seed));
  }
  return equivalent ? 0 : 1;
}

}  // namespace

Subcommand check_command() {
  return {{"check",
           "A B",
           "Run two models on the same seeded random inputs and compare their outputs.",
           "Relative error is max|a-b| / max|a| per output. Exit status: 0 equivalent, 1 not equivalent, 2 error.\n"
           "JSON keys: max_abs_err, max_rel_err, equivalent, rtol, outputs.",
           {{"--rtol", "", "R", "largest relative error still called equivalent (default 1e-4)"},
            {"--seed", "", "S", "seed of the random inputs (default 1)"},
            {"--threads", "", "T", "intra-op threads (default: all cores)"},
            {"--json", "", "", "print one JSON object"},
            input_shape_option()}},
          run_check};
}

}  // namespace graphworld
