// Gelu written as its erf formula (five ONNX nodes) is read back as one Gelu
// op, in every order exporters write it, and nothing else is.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "env/onnx/onnx_export.h"
#include "env/onnx/onnx_import.h"
#include "env/ops/graph_builder.h"
#include "tests/support/test_env.h"

namespace graphworld {
namespace {

// A model y = f(x) over x: float[2, 8], built node by node.
class ModelWriter {
 public:
  ModelWriter() {
    model_.set_ir_version(8);
    model_.add_opset_import()->set_version(17);
    onnx::ValueInfoProto* in = model_.mutable_graph()->add_input();
    in->set_name("x");
    set_type(in);
  }

  // A scalar constant, as an initializer or as a Constant node.
  std::string scalar(float value, bool as_constant_node = false) {
    const std::string name = "c" + std::to_string(count_++);
    onnx::TensorProto* t = nullptr;
    if (as_constant_node) {
      onnx::NodeProto* node = model_.mutable_graph()->add_node();
      node->set_op_type("Constant");
      node->add_output(name);
      onnx::AttributeProto* attr = node->add_attribute();
      attr->set_name("value");
      attr->set_type(onnx::AttributeProto::TENSOR);
      t = attr->mutable_t();
    } else {
      t = model_.mutable_graph()->add_initializer();
      t->set_name(name);
    }
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_float_data(value);
    return name;
  }

  std::string node(const std::string& type, const std::vector<std::string>& inputs) {
    onnx::NodeProto* n = model_.mutable_graph()->add_node();
    n->set_op_type(type);
    n->set_name(type + "_" + std::to_string(count_));
    for (const std::string& in : inputs) n->add_input(in);
    const std::string out = "v" + std::to_string(count_++);
    n->add_output(out);
    return out;
  }

  void output(const std::string& name) {
    onnx::ValueInfoProto* out = model_.mutable_graph()->add_output();
    out->set_name(name);
    set_type(out);
  }

  Graph import() const { return import_onnx_bytes(model_.SerializeAsString(), "hand-written model"); }

 private:
  static void set_type(onnx::ValueInfoProto* v) {
    onnx::TypeProto_Tensor* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    t->mutable_shape()->add_dim()->set_dim_value(2);
    t->mutable_shape()->add_dim()->set_dim_value(8);
  }

  onnx::ModelProto model_;
  int count_ = 0;
};

const float kSqrt2 = static_cast<float>(std::sqrt(2.0));

// 1 + erf(x / sqrt(2)), or erf(x * 1/sqrt(2)).
std::string one_plus_erf(ModelWriter& m, bool multiply, bool constant_nodes) {
  const std::string scaled = multiply ? m.node("Mul", {m.scalar(1 / kSqrt2, constant_nodes), "x"})
                                      : m.node("Div", {"x", m.scalar(kSqrt2, constant_nodes)});
  return m.node("Add", {m.scalar(1.0f, constant_nodes), m.node("Erf", {scaled})});
}

TEST(ImportGelu, EveryOrderOfTheProductIsOneGelu) {
  for (int order = 0; order < 3; ++order) {
    for (bool multiply : {false, true}) {
      ModelWriter m;
      const bool constant_nodes = order == 1;
      const std::string p = one_plus_erf(m, multiply, constant_nodes);
      std::string y;
      if (order == 0) y = m.node("Mul", {m.node("Mul", {"x", p}), m.scalar(0.5f)});         // PyTorch's
      if (order == 1) y = m.node("Mul", {m.node("Mul", {m.scalar(0.5f, true), "x"}), p});  // 0.5 * x * (1 + erf)
      if (order == 2) y = m.node("Mul", {"x", m.node("Mul", {p, m.scalar(0.5f)})});         // x * ((1 + erf) * 0.5)
      m.output(y);
      auto counts = testing::op_type_counts(m.import());
      EXPECT_EQ(counts[OpType::Gelu], 1) << "order " << order << (multiply ? ", times 1/sqrt(2)" : "");
      EXPECT_EQ(counts[OpType::Erf], 0) << "order " << order;
      EXPECT_EQ(counts[OpType::Mul], 0) << "order " << order;
    }
  }
}

TEST(ImportGelu, OtherConstantsOrSharedValuesStayAsWritten) {
  auto gelus = [](float half, float one, float root, int shared) {
    ModelWriter m;
    const std::string scaled = m.node("Div", {"x", m.scalar(root)});
    const std::string erf = m.node("Erf", {scaled});
    const std::string plus = m.node("Add", {erf, m.scalar(one)});
    const std::string y = m.node("Mul", {m.node("Mul", {"x", plus}), m.scalar(half)});
    m.output(y);
    if (shared == 1) m.output(erf);                       // the erf is also a graph output
    if (shared == 2) m.output(m.node("Relu", {plus}));    // 1 + erf is read elsewhere too
    auto counts = testing::op_type_counts(m.import());
    EXPECT_EQ(counts[OpType::Gelu] + counts[OpType::Erf], 1) << "one or the other";
    return counts[OpType::Gelu];
  };
  EXPECT_EQ(gelus(0.5f, 1.0f, kSqrt2, 0), 1);
  EXPECT_EQ(gelus(0.6f, 1.0f, kSqrt2, 0), 0) << "not a half";
  EXPECT_EQ(gelus(0.5f, 2.0f, kSqrt2, 0), 0) << "not 1 + erf";
  EXPECT_EQ(gelus(0.5f, 1.0f, 2.0f, 0), 0) << "not x / sqrt(2)";
  EXPECT_EQ(gelus(0.5f, 1.0f, kSqrt2, 1), 0) << "erf read outside";
  EXPECT_EQ(gelus(0.5f, 1.0f, kSqrt2, 2), 0) << "1 + erf read outside";
}

TEST(ImportGelu, ATorchExportReadsItsGelusAsOps) {
  for (const char* file : {"transformer_encoder_op13.onnx", "transformer_encoder_op17.onnx"}) {
    auto counts = testing::op_type_counts(import_onnx_file(testing::model_path(file)));
    EXPECT_EQ(counts[OpType::Gelu], 2) << file << ": one per encoder layer";
    EXPECT_EQ(counts[OpType::Erf], 0) << file;
  }
}

TEST(ImportGelu, AWrittenGraphReadsBackWithItsOps) {
  // A transformer MLP's shape (MatMul, bias, Gelu, MatMul) and a Gelu that
  // reads the graph input.
  GraphBuilder b(5);
  TensorRef x = b.input("x", {1, 4, 8});
  TensorRef h = b.add1(OpType::MatMul, {x, b.random_weight({8, 16}, -1, 1, "w1")}, {}, "fc1");
  h = b.add1(OpType::Add, {h, b.random_weight({16}, -1, 1, "b1")}, {}, "bias1");
  h = b.add1(OpType::Gelu, {h}, {}, "gelu1");
  TensorRef y = b.add1(OpType::MatMul, {h, b.random_weight({16, 8}, -1, 1, "w2")}, {}, "fc2");
  b.output(b.add1(OpType::Mul, {y, b.add1(OpType::Gelu, {x}, {}, "gelu0")}, {}, "gate"), "y");
  const Graph written = b.finish();
  const Graph back = import_onnx_bytes(export_onnx_bytes(written), "written MLP");
  auto before = testing::op_type_counts(written), after = testing::op_type_counts(back);
  EXPECT_EQ(before[OpType::Gelu], 2);
  EXPECT_EQ(after[OpType::Gelu], 2);
  EXPECT_EQ(after[OpType::Erf], 0);
  EXPECT_EQ(after[OpType::Mul], before[OpType::Mul]);
  EXPECT_EQ(after[OpType::Div], 0);
}

}  // namespace
}  // namespace graphworld
