// Malformed and unsupported models get a clear ImportError, never a crash.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <fstream>

#include "common/error.h"
#include "env/onnx/onnx_import.h"
#include "tests/support/test_env.h"

namespace graphworld {
namespace {

// Builds small ONNX models directly with the ONNX protobuf classes.
class OnnxModel {
 public:
  explicit OnnxModel(int64_t opset = 13) {
    model_.set_ir_version(8);
    auto* op = model_.add_opset_import();
    op->set_domain("");
    op->set_version(opset);
  }
  OnnxModel& input(const std::string& name, const std::vector<int64_t>& dims, const std::string& symbolic = "") {
    auto* in = model_.mutable_graph()->add_input();
    in->set_name(name);
    auto* t = in->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
    if (!symbolic.empty()) t->mutable_shape()->add_dim()->set_dim_param(symbolic);
    return *this;
  }
  OnnxModel& weight(const std::string& name, const std::vector<int64_t>& dims) {
    auto* w = model_.mutable_graph()->add_initializer();
    w->set_name(name);
    w->set_data_type(onnx::TensorProto::FLOAT);
    int64_t n = 1;
    for (int64_t d : dims) {
      w->add_dims(d);
      n *= d;
    }
    for (int64_t i = 0; i < n; ++i) w->add_float_data(0.5f);
    return *this;
  }
  onnx::NodeProto* node(const std::string& type, const std::string& name, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& domain = "") {
    auto* n = model_.mutable_graph()->add_node();
    n->set_op_type(type);
    n->set_name(name);
    n->set_domain(domain);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return n;
  }
  OnnxModel& output(const std::string& name) {
    model_.mutable_graph()->add_output()->set_name(name);
    return *this;
  }
  std::string bytes() const { return model_.SerializeAsString(); }

 private:
  onnx::ModelProto model_;
};

std::string import_error(const std::string& bytes) {
  try {
    import_onnx_bytes(bytes, "bad.onnx");
  } catch (const ImportError& e) {
    return e.what();
  }
  return "";
}

// y = x + w, where initializer w claims `dims` but stores `raw` bytes.
std::string model_adding_raw_initializer(const std::vector<int64_t>& dims, const std::string& raw) {
  onnx::ModelProto model;
  model.ParseFromString(OnnxModel().input("x", {2}).bytes());
  auto* w = model.mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) w->add_dims(d);
  w->set_raw_data(raw);
  auto* node = model.mutable_graph()->add_node();
  node->set_op_type("Add");
  node->add_input("x");
  node->add_input("w");
  node->add_output("y");
  model.mutable_graph()->add_output()->set_name("y");
  return model.SerializeAsString();
}

void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "expected '" << part << "' in: " << text;
}

TEST(BadInput, GarbageBytesAndEmptyFile) {
  std::string garbage;
  for (int i = 0; i < 4096; ++i) garbage += static_cast<char>((i * 7919 + 13) % 256);
  expect_contains(import_error(garbage), "bad.onnx: not a valid ONNX model");
  expect_contains(import_error(""), "empty");
  expect_contains(import_error("hello, world"), "bad.onnx");
}

TEST(BadInput, TruncatedRealModelAtManyPoints) {
  std::string bytes = read_file_bytes(testing::model_path("squeezenet1_1.onnx"));
  for (double fraction : {0.001, 0.1, 0.5, 0.9, 0.999}) {
    std::string cut = bytes.substr(0, static_cast<size_t>(static_cast<double>(bytes.size()) * fraction));
    std::string error = import_error(cut);
    EXPECT_FALSE(error.empty()) << "truncated at " << fraction << " was accepted";
    expect_contains(error, "bad.onnx");
  }
  std::string one_short = import_error(bytes.substr(0, bytes.size() - 1));
  EXPECT_FALSE(one_short.empty());
}

TEST(BadInput, MissingFileAndDirectory) {
  try {
    import_onnx_file("/nonexistent/model.onnx");
    FAIL();
  } catch (const ImportError& e) {
    expect_contains(e.what(), "/nonexistent/model.onnx: cannot open");
  }
  EXPECT_THROW(import_onnx_file(testing::scratch_dir()), ImportError);
}

TEST(BadInput, DanglingInputNamesNodeAndValue) {
  OnnxModel m;
  m.input("x", {1, 4});
  m.node("Relu", "first_relu", {"x"}, {"r"});
  m.node("Add", "the_add", {"r", "ghost"}, {"y"});
  m.output("y");
  std::string error = import_error(m.bytes());
  expect_contains(error, "node 'the_add' (Add)");
  expect_contains(error, "'ghost'");
  expect_contains(error, "dangling");
}

TEST(BadInput, RankTheOpCannotTake) {
  OnnxModel m;
  m.input("x", {1, 3, 8}).weight("w", {4, 3, 3});
  m.node("Conv", "conv1d", {"x", "w"}, {"y"});
  m.output("y");
  std::string error = import_error(m.bytes());
  expect_contains(error, "node 'conv1d' (Conv)");
  expect_contains(error, "rank 4");

  OnnxModel mm;
  mm.input("a", {2, 3}).weight("b", {4, 5});
  mm.node("MatMul", "mm", {"a", "b"}, {"y"});
  mm.output("y");
  expect_contains(import_error(mm.bytes()), "inner dimensions differ");
}

TEST(BadInput, EveryUnsupportedOpListedOnceWithNodesAndOpset) {
  OnnxModel m(13);
  m.input("x", {1, 4});
  m.node("LSTM", "lstm_a", {"x"}, {"a"});
  m.node("Relu", "fine", {"a"}, {"b"});
  m.node("LSTM", "lstm_b", {"b"}, {"c"});
  m.node("NonMaxSuppression", "nms", {"c"}, {"d"});
  m.node("FusedThing", "custom", {"d"}, {"y"}, "com.vendor");
  m.output("y");
  std::string error = import_error(m.bytes());
  expect_contains(error, "3 unsupported op types (opset 13)");
  expect_contains(error, "LSTM (2 nodes: lstm_a, lstm_b)");
  expect_contains(error, "NonMaxSuppression (1 node: nms)");
  expect_contains(error, "com.vendor::FusedThing");
  expect_contains(error, "Nothing was imported");
}

TEST(BadInput, SymbolicDimensionsAndOpsetRange) {
  OnnxModel sym;
  sym.input("x", {1}, "batch");
  sym.node("Relu", "r", {"x"}, {"y"});
  sym.output("y");
  std::string error = import_error(sym.bytes());
  expect_contains(error, "graph input 'x'");
  expect_contains(error, "'batch'");

  expect_contains(error, "dimension 1");
  expect_contains(error, "--input-shape x=1xN");

  OnnxModel old(6);
  old.input("x", {1, 4});
  old.node("Relu", "r", {"x"}, {"y"});
  old.output("y");
  expect_contains(import_error(old.bytes()), "opset 6 is not supported (graphworld imports opsets 7 to 21)");
  OnnxModel future(22);
  future.input("x", {1, 4});
  future.node("Relu", "r", {"x"}, {"y"});
  future.output("y");
  expect_contains(import_error(future.bytes()), "opset 22 is not supported");
}

TEST(BadInput, UnsupportedModeAndComputedShape) {
  OnnxModel pad(13);
  pad.input("x", {1, 4});
  auto* n = pad.node("Pad", "reflect_pad", {"x", "pads"}, {"y"});
  auto* mode = n->add_attribute();
  mode->set_name("mode");
  mode->set_type(onnx::AttributeProto::STRING);
  mode->set_s("reflect");
  pad.output("y");
  // 'pads' is missing too, but the mode is checked first and named.
  expect_contains(import_error(pad.bytes()), "pad mode 'reflect'");

  OnnxModel reshape(13);
  reshape.input("x", {2, 3}).input("shape_in", {2});
  reshape.node("Reshape", "dyn", {"x", "shape_in"}, {"y"});
  reshape.output("y");
  std::string error = import_error(reshape.bytes());
  expect_contains(error, "node 'dyn' (Reshape)");
  expect_contains(error, "constant");
}

TEST(BadInput, MissingGraphOutputAndCorruptInitializer) {
  OnnxModel m;
  m.input("x", {1, 4});
  m.node("Relu", "r", {"x"}, {"y"});
  m.output("nothing_makes_this");
  expect_contains(import_error(m.bytes()), "graph output 'nothing_makes_this'");

  // 4 floats need 16 bytes.
  expect_contains(import_error(model_adding_raw_initializer({4}, std::string(7, '\0'))), "initializer 'w'");
}

TEST(BadInput, HostileAttributesAndHeadersAreErrorsNotCrashes) {
  OnnxModel zero_stride;
  zero_stride.input("x", {1, 1, 8, 8}).weight("w", {1, 1, 3, 3});
  auto* conv = zero_stride.node("Conv", "conv", {"x", "w"}, {"y"});
  auto* pad = conv->add_attribute();
  pad->set_name("auto_pad");
  pad->set_type(onnx::AttributeProto::STRING);
  pad->set_s("SAME_UPPER");
  auto* strides = conv->add_attribute();
  strides->set_name("strides");
  strides->set_type(onnx::AttributeProto::INTS);
  strides->add_ints(0);
  strides->add_ints(0);
  zero_stride.output("y");
  expect_contains(import_error(zero_stride.bytes()), "must be >= 1");

  OnnxModel empty_shape;
  empty_shape.input("x", {2});
  empty_shape.node("ConstantOfShape", "cos", {""}, {"c"});
  empty_shape.node("Add", "add", {"x", "c"}, {"y"});
  empty_shape.output("y");
  expect_contains(import_error(empty_shape.bytes()), "node 'cos' (ConstantOfShape)");

  std::string huge = model_adding_raw_initializer({int64_t{1} << 32, int64_t{1} << 32}, std::string(8, '\0'));
  expect_contains(import_error(huge), "initializer 'w'");
}

}  // namespace
}  // namespace graphworld
