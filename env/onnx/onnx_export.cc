#include "env/onnx/onnx_export.h"

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <unordered_map>

#include "common/error.h"
#include "env/onnx/tensor_proto.h"
#include "env/ops/constant_eval.h"

namespace graphworld {
namespace {

class Exporter {
 public:
  Exporter(const Graph& graph, onnx::GraphProto* out) : g_(graph), out_(out) {}

  void run() {
    std::vector<bool> live = g_.live_ops();
    names_.resize(g_.num_ops());
    // Graph inputs and outputs keep their names; everything else gets a unique one.
    for (OpId id : g_.input_ops()) reserve(g_.op(id).name);
    for (const GraphOutput& o : g_.outputs()) reserve(o.name);
    for (OpId id : g_.input_ops()) {
      names_[id] = {g_.op(id).name};
      add_value_info(out_->add_input(), g_.op(id).name, g_.op(id).outputs[0]);
    }
    fold_constants(live);
    std::set<TensorRef> output_refs;
    std::set<OpId> input_set(g_.input_ops().begin(), g_.input_ops().end());
    for (const GraphOutput& o : g_.outputs()) {
      // A tensor can carry the output name when it is computed, not yet named by
      // another output, and not a graph input or weight.
      bool nameable = !g_.op(o.ref.op).is_leaf() && !constant_[o.ref.op] && !output_refs.count(o.ref);
      if (nameable) {
        output_refs.insert(o.ref);
        output_name_[o.ref] = o.name;
      }
    }
    for (OpId id : g_.topological_order()) {
      if (!live[id] || input_set.count(id)) continue;
      const Op& op = g_.op(id);
      names_[id].resize(op.outputs.size());
      for (size_t k = 0; k < op.outputs.size(); ++k) {
        TensorRef ref{id, static_cast<int32_t>(k)};
        auto named = output_name_.find(ref);
        names_[id][k] = named != output_name_.end() ? named->second
                                                    : unique(op.name.empty() ? "t" : op.name, k, op.outputs.size());
      }
      if (constant_[id]) {
        tensor_to_proto(*folded_.at(id), names_[id][0], out_->add_initializer());
        continue;
      }
      emit_op(id);
    }
    for (const GraphOutput& o : g_.outputs()) {
      const std::string& produced = names_[o.ref.op][o.ref.index];
      if (produced != o.name) {  // output is an input, a weight, or a duplicate: route through Identity
        onnx::NodeProto* node = out_->add_node();
        node->set_op_type("Identity");
        node->set_name(unique(o.name + "/identity", 0, 1));
        node->add_input(produced);
        node->add_output(o.name);
      }
      add_value_info(out_->add_output(), o.name, g_.info(o.ref));
    }
  }

 private:
  void reserve(const std::string& name) { used_.insert(name); }

  std::string unique(const std::string& base, size_t k, size_t count) {
    std::string name = count > 1 ? base + ":" + std::to_string(k) : base;
    if (used_.insert(name).second) return name;
    for (int n = 1;; ++n) {
      std::string candidate = name + "_" + std::to_string(n);
      if (used_.insert(candidate).second) return candidate;
    }
  }

  static void add_value_info(onnx::ValueInfoProto* info, const std::string& name, const TensorInfo& t) {
    info->set_name(name);
    auto* tensor = info->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(t.dtype == DType::Float32 ? onnx::TensorProto::FLOAT : onnx::TensorProto::INT64);
    auto* shape = tensor->mutable_shape();
    for (int64_t d : t.shape) shape->add_dim()->set_dim_value(d);
  }

  // Weights and ops computed only from weights become initializers.
  void fold_constants(const std::vector<bool>& live) {
    constant_.assign(g_.num_ops(), false);
    for (OpId id : g_.topological_order()) {
      const Op& op = g_.op(id);
      if (op.type == OpType::Input || !live[id]) continue;
      if (op.type == OpType::Weight) {
        constant_[id] = true;
        if (op.value) {
          folded_[id] = op.value;
        } else {
          auto data = std::make_shared<TensorData>(DType::Float32, op.outputs[0].shape);
          fill_random(*op.random, data->floats(), data->numel());
          folded_[id] = data;
        }
        continue;
      }
      bool all = !op.inputs.empty();
      for (const TensorRef& ref : op.inputs) all = all && constant_[ref.op] && g_.op(ref.op).outputs.size() == 1;
      if (!all || op.outputs.size() != 1) continue;
      std::vector<std::shared_ptr<const TensorData>> args;
      for (const TensorRef& ref : op.inputs) args.push_back(folded_.at(ref.op));
      folded_[id] = evaluate_op(op, args).at(0);
      constant_[id] = true;
    }
  }

  std::string int_initializer(const std::string& base, const std::vector<int64_t>& values) {
    std::string name = unique(base, 0, 1);
    tensor_to_proto(*TensorData::from_ints({static_cast<int64_t>(values.size())}, values), name, out_->add_initializer());
    return name;
  }

  std::string float_scalar(const std::string& base, float value) {
    std::string name = unique(base, 0, 1);
    tensor_to_proto(*TensorData::from_floats({}, {value}), name, out_->add_initializer());
    return name;
  }

  onnx::NodeProto* node(const std::string& type, const std::string& name) {
    onnx::NodeProto* n = out_->add_node();
    n->set_op_type(type);
    n->set_name(unique(name.empty() ? type : name, 0, 1));
    return n;
  }

  static void set_ints(onnx::NodeProto* n, const char* name, const std::vector<int64_t>& values) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t v : values) a->add_ints(v);
  }
  static void set_int(onnx::NodeProto* n, const char* name, int64_t value) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(value);
  }
  static void set_float(onnx::NodeProto* n, const char* name, double value) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(static_cast<float>(value));
  }

  std::string input_name(const TensorRef& ref) const { return names_[ref.op][ref.index]; }

  // Emits `type` reading the op's inputs; with a fused activation the main
  // node writes an intermediate and the activation node writes the output.
  onnx::NodeProto* main_node(OpId id, const std::string& type) {
    const Op& op = g_.op(id);
    onnx::NodeProto* n = node(type, op.name);
    for (const TensorRef& ref : op.inputs) n->add_input(input_name(ref));
    auto act = static_cast<Activation>(op.attrs.get_int(AttrKey::Activation, 0));
    if (act == Activation::None) {
      for (const std::string& name : names_[id]) n->add_output(name);
      return n;
    }
    std::string pre = unique(names_[id][0] + "/pre_activation", 0, 1);
    n->add_output(pre);
    const char* act_type = act == Activation::Relu ? "Relu" : act == Activation::Sigmoid ? "Sigmoid" : "Tanh";
    onnx::NodeProto* a = node(act_type, op.name + "/" + act_type);
    a->add_input(pre);
    a->add_output(names_[id][0]);
    return n;
  }

  void emit_op(OpId id) {
    const Op& op = g_.op(id);
    const Attributes& at = op.attrs;
    switch (op.type) {
      case OpType::Conv: {
        onnx::NodeProto* n = main_node(id, "Conv");
        const Shape& w = g_.info(op.inputs[1]).shape;
        set_ints(n, "kernel_shape", {w[2], w[3]});
        set_ints(n, "strides", at.get_ints(AttrKey::Strides, {1, 1}));
        set_ints(n, "pads", at.get_ints(AttrKey::Pads, {0, 0, 0, 0}));
        set_ints(n, "dilations", at.get_ints(AttrKey::Dilations, {1, 1}));
        set_int(n, "group", at.get_int(AttrKey::Group, 1));
        return;
      }
      case OpType::MatMul: main_node(id, "MatMul"); return;
      case OpType::Gemm: {
        onnx::NodeProto* n = main_node(id, "Gemm");
        set_float(n, "alpha", at.get_float(AttrKey::Alpha, 1));
        set_float(n, "beta", at.get_float(AttrKey::Beta, 1));
        set_int(n, "transA", at.get_int(AttrKey::TransA, 0));
        set_int(n, "transB", at.get_int(AttrKey::TransB, 0));
        return;
      }
      case OpType::Add: main_node(id, "Add"); return;
      case OpType::Sub: main_node(id, "Sub"); return;
      case OpType::Mul: main_node(id, "Mul"); return;
      case OpType::Div: main_node(id, "Div"); return;
      case OpType::Pow: main_node(id, "Pow"); return;
      case OpType::Sqrt: main_node(id, "Sqrt"); return;
      case OpType::Relu: main_node(id, "Relu"); return;
      case OpType::Sigmoid: main_node(id, "Sigmoid"); return;
      case OpType::Tanh: main_node(id, "Tanh"); return;
      case OpType::Erf: main_node(id, "Erf"); return;
      case OpType::Identity:
      case OpType::Dropout: main_node(id, "Identity"); return;
      case OpType::Clip: {
        onnx::NodeProto* n = main_node(id, "Clip");
        n->add_input(at.has(AttrKey::Min) ? float_scalar(op.name + "/min", static_cast<float>(at.get_float(AttrKey::Min, 0)))
                                          : std::string());
        if (at.has(AttrKey::Max)) n->add_input(float_scalar(op.name + "/max", static_cast<float>(at.get_float(AttrKey::Max, 0))));
        return;
      }
      case OpType::Gelu: {
        // Gelu(x) = 0.5 * x * (1 + erf(x / sqrt(2))); ONNX has no Gelu before opset 20.
        std::string x = input_name(op.inputs[0]);
        std::string scaled = unique(op.name + "/scaled", 0, 1), erf = unique(op.name + "/erf", 0, 1);
        std::string plus = unique(op.name + "/plus_one", 0, 1), times = unique(op.name + "/times_x", 0, 1);
        auto binary = [&](const char* type, const std::string& a, const std::string& b, const std::string& o) {
          onnx::NodeProto* n = node(type, op.name + "/" + type);
          n->add_input(a);
          n->add_input(b);
          n->add_output(o);
        };
        binary("Div", x, float_scalar(op.name + "/sqrt2", static_cast<float>(std::sqrt(2.0))), scaled);
        onnx::NodeProto* e = node("Erf", op.name + "/Erf");
        e->add_input(scaled);
        e->add_output(erf);
        binary("Add", erf, float_scalar(op.name + "/one", 1.0f), plus);
        binary("Mul", x, plus, times);
        binary("Mul", times, float_scalar(op.name + "/half", 0.5f), names_[id][0]);
        return;
      }
      case OpType::Softmax: set_int(main_node(id, "Softmax"), "axis", at.get_int(AttrKey::Axis, -1)); return;
      case OpType::LayerNorm: {
        onnx::NodeProto* n = main_node(id, "LayerNormalization");
        set_int(n, "axis", at.get_int(AttrKey::Axis, -1));
        set_float(n, "epsilon", at.get_float(AttrKey::Epsilon, 1e-5));
        return;
      }
      case OpType::BatchNorm:
        set_float(main_node(id, "BatchNormalization"), "epsilon", at.get_float(AttrKey::Epsilon, 1e-5));
        return;
      case OpType::MaxPool:
      case OpType::AvgPool: {
        onnx::NodeProto* n = main_node(id, op.type == OpType::MaxPool ? "MaxPool" : "AveragePool");
        set_ints(n, "kernel_shape", at.require_ints(AttrKey::KernelShape));
        set_ints(n, "strides", at.get_ints(AttrKey::Strides, {1, 1}));
        set_ints(n, "pads", at.get_ints(AttrKey::Pads, {0, 0, 0, 0}));
        set_int(n, "ceil_mode", at.get_int(AttrKey::CeilMode, 0));
        if (op.type == OpType::AvgPool) set_int(n, "count_include_pad", at.get_int(AttrKey::CountIncludePad, 0));
        if (at.has(AttrKey::Dilations)) set_ints(n, "dilations", at.require_ints(AttrKey::Dilations));
        return;
      }
      case OpType::GlobalAvgPool: main_node(id, "GlobalAveragePool"); return;
      case OpType::ReduceMean: {
        onnx::NodeProto* n = main_node(id, "ReduceMean");
        if (at.has(AttrKey::Axes)) set_ints(n, "axes", at.require_ints(AttrKey::Axes));
        set_int(n, "keepdims", at.get_int(AttrKey::KeepDims, 1));
        return;
      }
      case OpType::ReduceSum: {
        onnx::NodeProto* n = main_node(id, "ReduceSum");
        if (at.has(AttrKey::Axes)) n->add_input(int_initializer(op.name + "/axes", at.require_ints(AttrKey::Axes)));
        set_int(n, "keepdims", at.get_int(AttrKey::KeepDims, 1));
        return;
      }
      case OpType::Concat: set_int(main_node(id, "Concat"), "axis", at.require_int(AttrKey::Axis)); return;
      case OpType::Split: {
        onnx::NodeProto* n = main_node(id, "Split");
        n->add_input(int_initializer(op.name + "/split", at.require_ints(AttrKey::Split)));
        set_int(n, "axis", at.get_int(AttrKey::Axis, 0));
        return;
      }
      case OpType::Slice: {
        onnx::NodeProto* n = main_node(id, "Slice");
        n->add_input(int_initializer(op.name + "/starts", at.require_ints(AttrKey::Starts)));
        n->add_input(int_initializer(op.name + "/ends", at.require_ints(AttrKey::Ends)));
        n->add_input(int_initializer(op.name + "/axes", at.require_ints(AttrKey::Axes)));
        n->add_input(int_initializer(op.name + "/steps", at.get_ints(AttrKey::Steps, std::vector<int64_t>(
                                                                                          at.require_ints(AttrKey::Axes).size(), 1))));
        return;
      }
      case OpType::Reshape:
      case OpType::Flatten:
      case OpType::Squeeze:
      case OpType::Unsqueeze: {
        // All four are exported as a Reshape to the known output shape.
        onnx::NodeProto* n = main_node(id, "Reshape");
        n->add_input(int_initializer(op.name + "/shape", op.outputs[0].shape));
        // A 0 in the target shape means "copy that input dim" unless allowzero is set.
        const Shape& shape = op.outputs[0].shape;
        if (std::find(shape.begin(), shape.end(), 0) != shape.end()) set_int(n, "allowzero", 1);
        return;
      }
      case OpType::Transpose: {
        onnx::NodeProto* n = main_node(id, "Transpose");
        if (at.has(AttrKey::Perm)) set_ints(n, "perm", at.require_ints(AttrKey::Perm));
        return;
      }
      case OpType::Pad: {
        onnx::NodeProto* n = main_node(id, "Pad");
        n->add_input(int_initializer(op.name + "/pads", at.require_ints(AttrKey::Pads)));
        if (op.outputs[0].dtype == DType::Int64) {
          std::string name = unique(op.name + "/value", 0, 1);
          tensor_to_proto(*TensorData::from_ints({}, {static_cast<int64_t>(at.get_float(AttrKey::Value, 0))}), name,
                          out_->add_initializer());
          n->add_input(name);
        } else {
          n->add_input(float_scalar(op.name + "/value", static_cast<float>(at.get_float(AttrKey::Value, 0))));
        }
        return;
      }
      case OpType::EnlargeKernel: {
        // Normally folded (its input is a weight); on a computed tensor it is a Pad.
        auto kernel = at.require_ints(AttrKey::KernelShape);
        const Shape& in = g_.info(op.inputs[0]).shape;
        int64_t dh = (kernel[0] - in[2]) / 2, dw = (kernel[1] - in[3]) / 2;
        onnx::NodeProto* n = main_node(id, "Pad");
        n->add_input(int_initializer(op.name + "/pads", {0, 0, dh, dw, 0, 0, dh, dw}));
        return;
      }
      case OpType::Input:
      case OpType::Weight:
      case OpType::kCount: break;
    }
    throw GraphError("cannot export " + describe_op(g_, id));
  }

  const Graph& g_;
  onnx::GraphProto* out_;
  std::vector<std::vector<std::string>> names_;
  std::set<std::string> used_;
  std::map<TensorRef, std::string> output_name_;
  std::vector<bool> constant_;
  std::unordered_map<OpId, std::shared_ptr<const TensorData>> folded_;
};

}  // namespace

std::string export_onnx_bytes(const Graph& graph, const ExportOptions& options) {
  onnx::ModelProto model;
  model.set_ir_version(8);  // IR version of ONNX 1.12, which defines opset 17
  model.set_producer_name("graphworld");
  model.set_producer_version(options.producer_version);
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(kExportOpset);
  onnx::GraphProto* out = model.mutable_graph();
  out->set_name("graphworld");
  Exporter(graph, out).run();
  std::string bytes;
  if (!model.SerializeToString(&bytes))
    throw Error("serialising the ONNX model failed (it may exceed protobuf's 2 GiB limit)");
  return bytes;
}

void export_onnx_file(const Graph& graph, const std::string& path, const ExportOptions& options) {
  std::string bytes = export_onnx_bytes(graph, options);
  std::string temp = path + ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error(path + ": cannot open for writing");
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out.flush()) throw Error(path + ": write failed (disk full?)");
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    std::remove(temp.c_str());
    throw Error(path + ": cannot replace the file");
  }
}

void check_onnx_model_bytes(const std::string& bytes, const std::string& source) {
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) throw ImportError(source + ": not a valid ONNX model");
  try {
    onnx::checker::check_model(model);
    onnx::ShapeInferenceOptions strict(/*check_type=*/true, /*strict_mode=*/1, /*data_prop=*/false);
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), strict);
  } catch (const std::exception& e) {
    throw ImportError(source + ": fails the ONNX checker: " + e.what());
  }
}

}  // namespace graphworld
