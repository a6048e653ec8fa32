// What optimize ships: every exported model (zoo graphs, the torchvision
// exports, and each of them after search) holds no initializer that nothing
// reads, and an optimised file is no larger than its input plus the
// weights the rewrites genuinely added (initializers whose contents the
// input does not hold). Node names and the producer header may differ by a
// few hundred bytes; kNodeMetadataSlack bounds that, far below any weight.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "env/cost/analytic_cost_model.h"
#include "env/onnx/onnx_export.h"
#include "env/onnx/onnx_import.h"
#include "env/rules/rule_library.h"
#include "env/search/search.h"
#include "env/zoo/zoo.h"
#include "tests/support/test_env.h"

namespace graphworld {
namespace {

const RuleMatcher& matcher() {
  static const RuleMatcher m(default_rule_library().rules);
  return m;
}

onnx::ModelProto parse(const std::string& bytes) {
  onnx::ModelProto model;
  EXPECT_TRUE(model.ParseFromString(bytes));
  return model;
}

// Names of initializers that no node and no graph output reads.
std::vector<std::string> unread_initializers(const onnx::ModelProto& model) {
  std::set<std::string> read;
  for (const onnx::NodeProto& node : model.graph().node())
    for (const std::string& input : node.input()) read.insert(input);
  for (const onnx::ValueInfoProto& output : model.graph().output()) read.insert(output.name());
  std::vector<std::string> unread;
  for (const onnx::TensorProto& t : model.graph().initializer())
    if (!read.count(t.name())) unread.push_back(t.name());
  return unread;
}

// An initializer's contents, independent of its name and of how the bytes
// are stored (raw_data or a typed field).
std::string contents(const onnx::TensorProto& t) {
  std::ostringstream key;
  key << t.data_type() << ':';
  for (int64_t d : t.dims()) key << d << ',';
  key << ':';
  if (t.has_raw_data()) {
    key << t.raw_data();
  } else {
    for (float f : t.float_data()) key.write(reinterpret_cast<const char*>(&f), sizeof f);
    for (int64_t i : t.int64_data()) key.write(reinterpret_cast<const char*>(&i), sizeof i);
    for (int32_t i : t.int32_data()) key.write(reinterpret_cast<const char*>(&i), sizeof i);
  }
  return key.str();
}

size_t data_bytes(const onnx::TensorProto& t);

// Value bytes of the output's initializers whose contents the input lacks.
size_t added_weight_bytes(const onnx::ModelProto& input, const onnx::ModelProto& output) {
  std::set<std::string> before;
  for (const onnx::TensorProto& t : input.graph().initializer()) before.insert(contents(t));
  size_t added = 0;
  for (const onnx::TensorProto& t : output.graph().initializer())
    if (!before.count(contents(t))) added += data_bytes(t);
  return added;
}

constexpr size_t kNodeMetadataSlack = 64 * 1024;

// The bytes of a tensor's values, however they are stored (names excluded).
size_t data_bytes(const onnx::TensorProto& t) {
  return t.raw_data().size() + 4 * static_cast<size_t>(t.float_data_size()) +
         8 * static_cast<size_t>(t.int64_data_size()) + 4 * static_cast<size_t>(t.int32_data_size());
}

size_t initializer_bytes(const onnx::ModelProto& model) {
  size_t bytes = 0;
  for (const onnx::TensorProto& t : model.graph().initializer()) bytes += data_bytes(t);
  return bytes;
}

// Imports the input file, searches it, exports the result, and checks both
// files. Returns the number of rewrites applied.
size_t check_model(const std::string& label, const std::string& input_bytes) {
  SCOPED_TRACE(label);
  const onnx::ModelProto input = parse(input_bytes);
  const Graph original = import_onnx_bytes(input_bytes, label);
  const std::string reexported = export_onnx_bytes(original);
  EXPECT_EQ(unread_initializers(parse(reexported)), std::vector<std::string>{}) << "re-export of the input";

  AnalyticCostModel cost;
  SearchOptions options;
  options.budget = 40;
  const SearchResult result = greedy_search(original, matcher(), cost, options);
  const std::string optimised_bytes = export_onnx_bytes(result.graph);
  const onnx::ModelProto optimised = parse(optimised_bytes);
  EXPECT_EQ(unread_initializers(optimised), std::vector<std::string>{}) << result.applied.size() << " rewrites";
  const size_t added = added_weight_bytes(input, optimised);
  EXPECT_LE(initializer_bytes(optimised), initializer_bytes(input) + added)
      << "weights: input " << initializer_bytes(input) << " bytes, output " << initializer_bytes(optimised)
      << " bytes, added " << added << " bytes, " << result.applied.size() << " rewrites";
  EXPECT_LE(optimised_bytes.size(), input_bytes.size() + added + kNodeMetadataSlack)
      << "input " << input_bytes.size() << " bytes, output " << optimised_bytes.size() << " bytes, added weights "
      << added << " bytes, " << result.applied.size() << " rewrites";
  return result.applied.size();
}

TEST(OptimizedExport, ZooModelsShipOnlyWhatTheyRead) {
  std::map<std::string, size_t> rewrites;
  for (const ZooModel& m : zoo_models())
    rewrites[m.name] = check_model("zoo " + m.name, export_onnx_bytes(build_zoo_model(m.name, {})));
  // The convolutional graphs and NasRNN take rewrites under the analytic model,
  // so the optimised side of the check is exercised.
  for (const char* name : {"resnet50", "squeezenet1.1", "inceptionv3", "nasrnn"}) EXPECT_GT(rewrites[name], 0u) << name;
}

TEST(OptimizedExport, TorchvisionExportsShipOnlyWhatTheyRead) {
  std::map<std::string, size_t> rewrites;
  for (const char* name : {"resnet18_bn", "resnet18_folded", "squeezenet1_1", "resnet50_bn", "resnet50_folded",
                           "inception_v3_bn", "inception_v3_folded", "transformer_encoder_op13",
                           "transformer_encoder_op17", "mlp"})
    rewrites[name] = check_model(name, read_file_bytes(testing::model_path(std::string(name) + ".onnx")));
  for (const char* name : {"resnet18_bn", "resnet50_bn", "inception_v3_bn"}) EXPECT_GT(rewrites[name], 0u) << name;
}

// The defect this guards against: folding a BatchNorm into a conv left the
// conv's original kernel and the BatchNorm's four vectors in the file.
TEST(OptimizedExport, FoldedBatchNormLeavesNoDeadWeights) {
  const std::string bytes = read_file_bytes(testing::model_path("resnet18_bn.onnx"));
  const Graph original = import_onnx_bytes(bytes, "resnet18_bn");
  AnalyticCostModel cost;
  SearchOptions options;
  options.budget = 200;
  const SearchResult result = greedy_search(original, matcher(), cost, options);
  ASSERT_GT(result.applied_counts().count("fold-conv-batchnorm"), 0u);
  const onnx::ModelProto optimised = parse(export_onnx_bytes(result.graph));
  int batchnorms = 0;
  for (const onnx::NodeProto& node : optimised.graph().node()) batchnorms += node.op_type() == "BatchNormalization";
  // Each folded BatchNorm leaves one conv kernel and one bias; nothing of its own.
  const onnx::ModelProto input = parse(bytes);
  EXPECT_LT(optimised.graph().initializer_size(), input.graph().initializer_size()) << batchnorms << " BatchNorms left";
}

}  // namespace
}  // namespace graphworld
