// Shared helpers for the test suite: where generated models live, and the
// independent runtime (onnxruntime-node) driven through tests/tools scripts.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "env/graph/graph.h"

namespace graphworld::testing {

// Directory of models exported by tests/data/export_models.py (ctest sets
// GRAPHWORLD_TEST_MODELS). Fails the calling test if a model is missing.
std::string model_path(const std::string& file_name);
std::string source_dir();
std::string graphworld_binary();  // the CLI under test
std::string scratch_dir();  // a fresh per-process directory under the build tree

// Writes tensors in the tests/tools tensor-directory format.
void write_tensor_dir(const std::string& dir, const std::vector<std::string>& names,
                      const std::vector<std::shared_ptr<const TensorData>>& tensors);
std::vector<std::shared_ptr<TensorData>> read_tensor_dir(const std::string& dir);

// Runs `model` in onnxruntime (graph optimisations off, 1 thread) on the given
// inputs, named as the graph's inputs.
std::vector<std::shared_ptr<TensorData>> run_onnxruntime(const std::string& model_file, const Graph& graph,
                                                         const std::vector<std::shared_ptr<const TensorData>>& inputs);

struct OrtComparison {
  double max_abs_err = -1;
  double max_rel_err = -1;
  int outputs = 0;
};
// tests/tools/ort_compare.mjs: both models in onnxruntime on the same inputs;
// `input_shapes` ("x=1x3x64x64;ids=1x16") fixes symbolic input dimensions.
OrtComparison ort_compare(const std::string& model_a, const std::string& model_b, const std::string& input_shapes = "");
// The same for many B models against one A, in one onnxruntime process.
std::vector<OrtComparison> ort_compare_many(const std::string& model_a, const std::vector<std::string>& models_b);

// How many ops of each type a graph has.
std::map<OpType, int> op_type_counts(const Graph& graph);

// max |a - b| / max |a| over the elements (scale at least 1e-30); infinite
// when `expected` holds NaN or infinity, since such a reference proves nothing.
double relative_error(const TensorData& expected, const TensorData& actual);

// Runs a shell command, returning its exit status and combined output. The
// captured output is capped (its head and tail are kept) so that a runaway
// child cannot exhaust the test process's memory.
int run_command(const std::string& command, std::string* output);

// "" when the two files hold the same bytes, otherwise what differs (sizes,
// first differing offset). Tests compare model files through this rather than
// EXPECT_EQ on their contents, whose failure message would print (and diff)
// tens of megabytes.
std::string file_difference(const std::string& path_a, const std::string& path_b);

}  // namespace graphworld::testing
