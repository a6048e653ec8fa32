// Internal to the importer: the state of one import and the helpers every op
// converter uses. Each ONNX value name maps to either a graph tensor or a
// known constant; constants turn into Weight ops only when a graph op reads
// them, so shape-computation subgraphs vanish.
#pragma once

#include <onnx/onnx_pb.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "env/ops/graph_builder.h"

namespace graphworld {

struct Value {
  std::string name;
  std::optional<TensorRef> ref;                // a tensor the graph computes
  std::shared_ptr<const TensorData> constant;  // or a value known at import
  std::string unsupported;                     // or why this output cannot be used

  bool is_constant() const { return constant != nullptr; }
};

class NodeAttrs {
 public:
  NodeAttrs(const onnx::NodeProto& node, std::string where) : node_(node), where_(std::move(where)) {}
  const onnx::AttributeProto* find(const std::string& name) const;
  bool has(const std::string& name) const { return find(name) != nullptr; }
  int64_t get_int(const std::string& name, int64_t fallback) const;
  float get_float(const std::string& name, float fallback) const;
  std::vector<int64_t> get_ints(const std::string& name, std::vector<int64_t> fallback = {}) const;
  std::string get_string(const std::string& name, std::string fallback) const;
  const onnx::TensorProto* get_tensor(const std::string& name) const;

 private:
  const onnx::AttributeProto& typed(const std::string& name, int type) const;
  const onnx::NodeProto& node_;
  std::string where_;
};

class ImportContext {
 public:
  ImportContext(std::string source, int64_t opset) : source(std::move(source)), opset(opset) {}

  GraphBuilder builder;
  std::string source;
  int64_t opset;
  std::unordered_map<std::string, Value> values;
  int64_t folded_nodes = 0;

  // "model.onnx: node 'Conv_3' (Conv)"
  std::string where(const onnx::NodeProto& node) const;
  bool has_input(const onnx::NodeProto& node, int index) const;
  const Value& input(const onnx::NodeProto& node, int index) const;
  TensorInfo input_info(const onnx::NodeProto& node, int index) const;
  TensorInfo info(const Value& value) const;
  // A constant input, required by graphworld's static-shape IR; `role` names
  // the input in the error ("shape", "pads").
  std::shared_ptr<const TensorData> constant(const onnx::NodeProto& node, int index, const char* role) const;
  std::vector<int64_t> constant_ints(const onnx::NodeProto& node, int index, const char* role) const;
  // The graph tensor for a value, adding a Weight op for a constant once.
  TensorRef tensor(const Value& value);

  // Adds an IR op for `node`, or evaluates it when all inputs are constant.
  // Errors in shapes are reported with the node's name.
  std::vector<Value> emit(const onnx::NodeProto& node, OpType type, const std::vector<Value>& inputs,
                          Attributes attrs, const std::string& name_suffix = "");
  // Binds node output `index` to `value`.
  void set_output(const onnx::NodeProto& node, int index, Value value);
  // Marks every output of `node` but the first as unusable, with a reason.
  void mark_extra_outputs_unsupported(const onnx::NodeProto& node, const std::string& why);

  Value constant_value(std::shared_ptr<const TensorData> data, std::string name) const;

 private:
  std::unordered_map<std::string, TensorRef> weight_refs_;
};

using NodeConverter = std::function<void(ImportContext&, const onnx::NodeProto&)>;
// Converters keyed by ONNX op type; the importer rejects any type not listed.
const std::map<std::string, NodeConverter>& node_converters();

// Converters with files of their own (import_resize.cc, import_einsum.cc).
void convert_resize(ImportContext& ctx, const onnx::NodeProto& node);
void convert_upsample(ImportContext& ctx, const onnx::NodeProto& node);
void convert_einsum(ImportContext& ctx, const onnx::NodeProto& node);

// Folds an ONNX op that has no IR counterpart (Shape, Gather, Cast, Where...)
// over constant inputs with ATen.
std::vector<std::shared_ptr<TensorData>> fold_onnx_only_op(const std::string& op_type, const NodeAttrs& attrs,
                                                           const std::vector<std::shared_ptr<const TensorData>>& inputs,
                                                           const std::string& where);

}  // namespace graphworld
