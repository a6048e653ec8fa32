#include "launch/pipeline/onnxruntime_comparison.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <regex>

#include "common/atomic_file.h"
#include "common/error.h"
#include "env/onnx/node_counts.h"
#include "launch/process/command_output.h"

namespace graphworld {
namespace {

double json_number(const std::string& json, const std::string& key) {
  std::smatch m;
  if (!std::regex_search(json, m, std::regex("\"" + key + "\":(-?[0-9.eE+-]+)")))
    throw Error("onnxruntime comparison: no '" + key + "' in the script's output: " + json);
  return std::stod(m[1]);
}

}  // namespace

std::string onnxruntime_tools_dir() {
  if (const char* dir = std::getenv("GRAPHWORLD_ORT_TOOLS"); dir && *dir) return dir;
  return std::string(GRAPHWORLD_SOURCE_DIR) + "/tests/tools";
}

void require_onnxruntime() {
  const std::string script = onnxruntime_tools_dir() + "/ort_ab.mjs";
  if (!std::filesystem::exists(script))
    throw Error("the onnxruntime comparison script " + script +
                " is missing; set GRAPHWORLD_ORT_TOOLS to the folder holding ort_ab.mjs (tests/tools in graphworld's "
                "source tree)");
  if (std::system("command -v node >/dev/null 2>&1") != 0)
    throw Error("--verify-runtime onnxruntime needs Node.js ('node' is not on PATH); launch/install-deps installs it "
                "with onnxruntime-node, or use --verify-runtime executor");
  const char* modules = std::getenv("GRAPHWORLD_NODE_MODULES");
  const std::string dir = modules && *modules ? std::string(modules)
                                              : std::string(GRAPHWORLD_SOURCE_DIR) + "/build/node/node_modules";
  if (!std::filesystem::exists(dir + "/onnxruntime-node/package.json"))
    throw Error("--verify-runtime onnxruntime needs onnxruntime-node, not found in " + dir +
                "; run launch/install-deps (it installs it there), or set GRAPHWORLD_NODE_MODULES to a node_modules "
                "folder that holds it");
}

namespace {

// Runs `node tools/SCRIPT ARGS...` (no shell, so nothing needs quoting) and
// returns its stdout; on failure an Error starting with `what`, with
// onnxruntime's own message.
std::string run_onnxruntime_script(const std::string& script_name, std::vector<std::string> args,
                                   const std::string& what) {
  require_onnxruntime();
  args.insert(args.begin(), {"node", onnxruntime_tools_dir() + "/" + script_name});
  CommandOutput result = command_output(args);
  std::string& errors = result.err;
  while (!errors.empty() && (errors.back() == '\n' || errors.back() == '\r')) errors.pop_back();
  if (result.exit_code != 0)
    throw Error(what + ": " + (errors.empty() ? "node exited with status " + std::to_string(result.exit_code) : errors));
  return result.out;
}

}  // namespace

std::string onnxruntime_input_shapes(const Graph& graph) {
  std::string text;
  for (OpId id : graph.input_ops()) {
    const Op& op = graph.op(id);
    const Shape& shape = op.outputs[0].shape;
    // A scalar input has no symbolic dimension to fix (and no DIMS to write).
    if (shape.empty()) continue;
    text += (text.empty() ? "" : ";") + op.name + "=";
    for (size_t d = 0; d < shape.size(); ++d) text += (d ? "x" : "") + std::to_string(shape[d]);
  }
  return text;
}

OnnxRuntimeComparison compare_onnxruntime_latency(const std::string& original_path, const std::string& candidate_path,
                                                  const OnnxRuntimeComparisonOptions& options) {
  const std::string output = run_onnxruntime_script(
      "ort_ab.mjs",
      {"--a", original_path, "--b", candidate_path, "--rounds", std::to_string(options.rounds), "--iters",
       std::to_string(options.iters), "--min-round-ms", std::to_string(static_cast<int64_t>(options.min_round_ms)),
       "--threads", std::to_string(options.threads), "--opt", options.opt_level, "--input-shapes", options.input_shapes,
       "--json"},
      "onnxruntime could not compare " + original_path +
          " with the optimised model (optimize: --verify-runtime executor decides with the executor alone; evaluate: "
          "--no-onnxruntime)");
  OnnxRuntimeComparison result;
  result.iters = options.iters;
  result.original_ms = json_number(output, "a_ms");
  result.candidate_ms = json_number(output, "b_ms");
  result.speedup = json_number(output, "speedup");
  std::smatch m;
  if (std::regex_search(output, m, std::regex("\"ratios\":\\[([^\\]]*)\\]"))) {
    std::string list = m[1];
    std::regex number("-?[0-9.eE+-]+");
    for (auto it = std::sregex_iterator(list.begin(), list.end(), number); it != std::sregex_iterator(); ++it)
      result.ratios.push_back(std::stod(it->str()));
  }
  return result;
}

std::string compare_onnxruntime_graphs(const std::string& original_path, const std::string& candidate_path,
                                       const OnnxRuntimeComparisonOptions& options) {
  std::map<std::string, int64_t> counts[2];
  const std::string models[2] = {original_path, candidate_path};
  for (int k = 0; k < 2; ++k) {
    const std::string saved = candidate_path + (k == 0 ? ".ort-original.tmp" : ".ort-optimized.tmp");
    try {
      run_onnxruntime_script("ort_run.mjs",
                             {"--model", models[k], "--save-optimized", saved, "--opt", options.opt_level, "--threads",
                              std::to_string(options.threads)},
                             "onnxruntime could not save its optimised form of " + models[k]);
      counts[k] = onnx_node_counts(read_file(saved), saved + " (onnxruntime's optimised form of " + models[k] + ")");
    } catch (...) {
      std::error_code ignored;
      std::filesystem::remove(saved, ignored);
      throw;
    }
    std::error_code ignored;
    std::filesystem::remove(saved, ignored);
  }
  return node_count_difference(counts[0], counts[1]);
}

OnnxRuntimeOutputDifference compare_onnxruntime_outputs(const std::string& original_path,
                                                        const std::string& candidate_path, uint64_t seed,
                                                        const std::string& input_shapes) {
  const std::string output = run_onnxruntime_script(
      "ort_compare.mjs",
      {original_path, candidate_path, "--seed", std::to_string(seed), "--input-shapes", input_shapes, "--json"},
      "onnxruntime could not run " + original_path + " and " + candidate_path + " on the same inputs");
  OnnxRuntimeOutputDifference diff;
  diff.max_abs_err = json_number(output, "max_abs_err");
  diff.max_rel_err = json_number(output, "max_rel_err");
  diff.outputs = static_cast<int>(json_number(output, "outputs"));
  return diff;
}

}  // namespace graphworld
