#include "env/ops/validate.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "env/ops/graph_builder.h"

namespace graphworld {
namespace {

TEST(Validate, NamesTheOpWithAShapeMismatch) {
  GraphBuilder b;
  TensorRef x = b.input("x", {2, 3});
  TensorRef r = b.add1(OpType::Relu, {x}, {}, "act");
  b.output(r, "y");
  Graph g = b.finish();
  g.mutable_op(r.op).outputs[0].shape = {3, 2};
  try {
    validate_graph(g);
    FAIL() << "mismatch not found";
  } catch (const GraphError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("shape mismatch"), std::string::npos) << what;
    EXPECT_NE(what.find("'act'"), std::string::npos) << what;
    EXPECT_NE(what.find("[3,2]"), std::string::npos) << what;
  }
}

TEST(Validate, RejectsGraphWithoutOutputsAndWeightWithWrongData) {
  GraphBuilder b;
  b.input("x", {2});
  EXPECT_THROW(validate_graph(b.graph()), GraphError);
  Graph g;
  OpId w = g.add_weight("w", TensorData::from_floats({2}, {1, 2}));
  g.add_output({w, 0}, "y");
  g.mutable_op(w).outputs[0].shape = {3};
  EXPECT_THROW(validate_graph(g), GraphError);
}

}  // namespace
}  // namespace graphworld
