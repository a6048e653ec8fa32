// Zoo models: each builds a valid graph with the expected inputs and output,
// deterministically from its seed. (Execution and export are tested elsewhere.)
#include "env/zoo/zoo.h"

#include <gtest/gtest.h>

#include <cctype>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"
#include "env/ops/validate.h"

namespace graphworld {
namespace {

struct NamedShape {
  std::string name;
  Shape shape;
};

// What each model looks like at batch 1.
struct Expected {
  std::string model;
  std::vector<NamedShape> inputs;
  Shape output;
};

void PrintTo(const Expected& e, std::ostream* os) { *os << e.model; }

std::vector<Expected> expected_models() {
  const Shape image224 = {1, 3, 224, 224};
  return {
      {"bert", {{"input", {1, 64, 1024}}}, {1, 64, 1024}},
      {"bert-full", {{"input", {1, 64, 1024}}}, {1, 64, 1024}},
      {"resnet18", {{"input", image224}}, {1, 1000}},
      {"resnet50", {{"input", {1, 64, 56, 56}}}, {1, 2048, 7, 7}},
      {"resnet50-full", {{"input", image224}}, {1, 1000}},
      {"squeezenet1.1", {{"input", image224}}, {1, 1000}},
      {"inceptionv3", {{"input", {1, 3, 299, 299}}}, {1, 1000}},
      {"resnext50", {{"input", image224}}, {1, 1000}},
      {"nasnet-a", {{"input", image224}}, {1, 5120, 7, 7}},
      {"nasrnn",
       {{"x0", {1, 512}}, {"x1", {1, 512}}, {"x2", {1, 512}}, {"x3", {1, 512}}, {"x4", {1, 512}},
        {"state", {1, 512}}},
       {1, 512}},
      {"vit-base", {{"input", image224}}, {1, 1000}},
  };
}

Graph build(const std::string& model, int64_t batch, uint64_t seed) {
  return build_zoo_model(model, ZooOptions{.batch = batch, .seed = seed});
}

Shape output_shape(const Graph& graph) { return graph.info(graph.outputs().at(0).ref).shape; }

TEST(Zoo, ListsEveryModelInAStableOrder) {
  std::vector<std::string> names;
  for (const ZooModel& model : zoo_models()) {
    names.push_back(model.name);
    EXPECT_FALSE(model.description.empty()) << model.name;
    EXPECT_NE(model.build, nullptr) << model.name;
  }
  std::vector<std::string> expected;
  for (const Expected& e : expected_models()) expected.push_back(e.model);
  EXPECT_EQ(names, expected);
}

class ZooModelTest : public testing::TestWithParam<Expected> {};

TEST_P(ZooModelTest, BuildsAValidGraphWithTheExpectedSignature) {
  const Expected& expected = GetParam();
  Graph graph = build(expected.model, 1, 0);
  EXPECT_NO_THROW(validate_graph(graph));

  ASSERT_EQ(graph.input_ops().size(), expected.inputs.size());
  for (size_t i = 0; i < expected.inputs.size(); ++i) {
    const Op& input = graph.op(graph.input_ops()[i]);
    EXPECT_EQ(input.name, expected.inputs[i].name);
    EXPECT_EQ(input.outputs.at(0).shape, expected.inputs[i].shape) << input.name;
    EXPECT_EQ(input.outputs.at(0).dtype, DType::Float32) << input.name;
  }
  ASSERT_EQ(graph.outputs().size(), 1u);
  EXPECT_EQ(graph.outputs()[0].name, "output");
  EXPECT_EQ(output_shape(graph), expected.output);
}

TEST_P(ZooModelTest, HasUniqueOpNamesAndNoDeadOps) {
  Graph graph = build(GetParam().model, 1, 0);
  std::set<std::string> names;
  for (const Op& op : graph.ops()) {
    EXPECT_FALSE(op.name.empty());
    EXPECT_TRUE(names.insert(op.name).second) << "duplicate op name " << op.name;
  }
  std::vector<bool> live = graph.live_ops();
  for (OpId id = 0; id < static_cast<OpId>(graph.num_ops()); ++id)
    EXPECT_TRUE(live[id]) << describe_op(graph, id) << " does not reach the output";
}

TEST_P(ZooModelTest, SameSeedGivesTheSameGraph) {
  Graph a = build(GetParam().model, 1, 7);
  Graph b = build(GetParam().model, 1, 7);
  EXPECT_EQ(a.structural_hash(), b.structural_hash());
  EXPECT_TRUE(a.structurally_equal(b));
}

TEST_P(ZooModelTest, DifferentSeedGivesDifferentWeights) {
  Graph a = build(GetParam().model, 1, 7);
  Graph b = build(GetParam().model, 1, 8);
  EXPECT_FALSE(a.structurally_equal(b));
}

TEST_P(ZooModelTest, BatchIsTheLeadingDimension) {
  const Expected& expected = GetParam();
  Graph graph = build(expected.model, 3, 0);
  EXPECT_NO_THROW(validate_graph(graph));
  for (OpId id : graph.input_ops()) EXPECT_EQ(graph.op(id).outputs.at(0).shape.at(0), 3) << graph.op(id).name;
  Shape want = expected.output;
  want[0] = 3;
  EXPECT_EQ(output_shape(graph), want);
}

std::string test_name(const testing::TestParamInfo<Expected>& info) {
  std::string name = info.param.model;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(AllModels, ZooModelTest, testing::ValuesIn(expected_models()), test_name);

TEST(Zoo, BertBuildsAtBatch2) {
  Graph graph = build("bert", 2, 0);
  EXPECT_NO_THROW(validate_graph(graph));
  EXPECT_EQ(graph.op(graph.input_ops().at(0)).outputs.at(0).shape, (Shape{2, 64, 1024}));
  EXPECT_EQ(output_shape(graph), (Shape{2, 64, 1024}));
}

TEST(Zoo, UnknownModelThrowsUsageErrorListingTheKnownOnes) {
  try {
    build_zoo_model("resnet51");
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("unknown zoo model 'resnet51'"), std::string::npos) << message;
    EXPECT_NE(message.find("resnet50"), std::string::npos) << message;
    EXPECT_NE(message.find("vit-base"), std::string::npos) << message;
  }
}

TEST(Zoo, BatchBelowOneThrowsUsageError) {
  EXPECT_THROW(build("bert", 0, 0), UsageError);
  EXPECT_THROW(build("resnet18", -1, 0), UsageError);
}

}  // namespace
}  // namespace graphworld
