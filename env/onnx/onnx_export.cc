#include "env/onnx/onnx_export.h"

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <unordered_map>

#include "common/atomic_file.h"
#include "common/error.h"
#include "env/onnx/export_spelling.h"
#include "env/onnx/grouped_conv_spelling.h"
#include "env/onnx/tensor_proto.h"
#include "env/ops/resize_coordinates.h"
#include "env/ops/constant_eval.h"

namespace graphworld {
namespace {

const char* activation_node_type(Activation act) {
  switch (act) {
    case Activation::Relu: return "Relu";
    case Activation::Sigmoid: return "Sigmoid";
    case Activation::Tanh: return "Tanh";
    case Activation::HardSigmoid: return "HardSigmoid";
    case Activation::HardSwish: return "HardSwish";
    case Activation::LeakyRelu: return "LeakyRelu";
    case Activation::None: break;
  }
  return "Identity";
}

class Exporter {
 public:
  Exporter(const Graph& graph, onnx::GraphProto* out, bool spell, int64_t regroup_channel_block)
      : g_(graph), out_(out), spell_(spell), regroup_channel_block_(regroup_channel_block) {}

  // After run(): grouped convs written with fewer, wider groups.
  int64_t regrouped_convs() const { return regrouped_convs_; }

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
    written_.assign(g_.num_ops(), false);
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
    // Every tensor is named before any node is written: a conv written as
    // pieces writes the outputs of the Split that follows it.
    const std::vector<OpId> order = g_.topological_order();
    for (OpId id : order) {
      if (!live[id] || input_set.count(id)) continue;
      const Op& op = g_.op(id);
      names_[id].resize(op.outputs.size());
      for (size_t k = 0; k < op.outputs.size(); ++k) {
        TensorRef ref{id, static_cast<int32_t>(k)};
        auto named = output_name_.find(ref);
        names_[id][k] = named != output_name_.end() ? named->second
                                                    : unique(op.name.empty() ? "t" : op.name, k, op.outputs.size());
      }
    }
    for (OpId id : order) {
      if (!live[id] || input_set.count(id)) continue;
      if (constant_[id]) continue;  // written when a node first reads it (input_name)
      emit_op(id);
    }
    for (const GraphOutput& o : g_.outputs()) {
      const std::string produced = input_name(o.ref);
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

  // Weights and ops computed only from weights become initializers, but
  // only those a written node or a graph output reads: a rewrite that folds
  // a BatchNorm into a conv leaves the conv's original kernel and the
  // BatchNorm's statistics behind as inputs of the fold, and writing them
  // would ship dead weights (onnxruntime warns about each one). Each needed
  // constant is evaluated once, and an intermediate is released after its
  // last reader.
  void fold_constants(const std::vector<bool>& live) {
    const std::vector<OpId> order = g_.topological_order();
    constant_.assign(g_.num_ops(), false);
    for (OpId id : order) {
      const Op& op = g_.op(id);
      if (op.type == OpType::Input || !live[id]) continue;
      if (op.type == OpType::Weight) {
        constant_[id] = true;
        continue;
      }
      bool all = !op.inputs.empty() && op.outputs.size() == 1;
      for (const TensorRef& ref : op.inputs) all = all && constant_[ref.op] && g_.op(ref.op).outputs.size() == 1;
      constant_[id] = all;
    }
    if (spell_) spelling_ = plan_export_spelling(g_, live, constant_);
    // needed_: constants a computed op or a graph output reads. Whether one
    // is written is decided at emission: a conv written as pieces reads its
    // kernel only to slice it, and that kernel is never written.
    needed_.assign(g_.num_ops(), false);
    for (OpId id : order) {
      if (!live[id] || constant_[id] || g_.op(id).type == OpType::Input) continue;
      for (const TensorRef& ref : g_.op(id).inputs)
        if (constant_[ref.op]) needed_[ref.op] = true;
    }
    for (const GraphOutput& o : g_.outputs())
      if (constant_[o.ref.op]) needed_[o.ref.op] = true;
    // Which constants must be evaluated (needed ones and what they are made
    // from), and how many evaluated constants read each.
    std::vector<bool> evaluate(g_.num_ops(), false);
    std::vector<int> pending_readers(g_.num_ops(), 0);
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      OpId id = *it;
      if (!constant_[id] || !(needed_[id] || evaluate[id])) continue;
      evaluate[id] = true;
      for (const TensorRef& ref : g_.op(id).inputs) {
        evaluate[ref.op] = true;
        ++pending_readers[ref.op];
      }
    }
    for (OpId id : order) {
      if (!evaluate[id]) continue;
      const Op& op = g_.op(id);
      if (op.type == OpType::Weight) {
        if (op.value) {
          folded_[id] = op.value;
        } else {
          auto data = std::make_shared<TensorData>(DType::Float32, op.outputs[0].shape);
          fill_random(*op.random, data->floats(), data->numel());
          folded_[id] = data;
        }
        continue;
      }
      std::vector<std::shared_ptr<const TensorData>> args;
      for (const TensorRef& ref : op.inputs) args.push_back(folded_.at(ref.op));
      folded_[id] = evaluate_op(op, args).at(0);
      for (const TensorRef& ref : op.inputs)
        if (--pending_readers[ref.op] == 0 && !needed_[ref.op]) folded_.erase(ref.op);
    }
  }

  // Writes a needed constant, or points its name at an equal one already
  // written: rewrites can leave two constants with the same contents (the
  // same kernel reached along two paths), and one copy is enough.
  void write_initializer(OpId id) {
    if (written_[id]) return;
    written_[id] = true;
    const TensorData& data = *folded_.at(id);
    auto& same_shape = written_by_shape_[{static_cast<int>(data.dtype()), data.shape()}];
    for (const auto& [name, earlier] : same_shape) {
      if (std::memcmp(earlier->raw(), data.raw(), data.nbytes()) == 0) {
        names_[id][0] = name;
        return;
      }
    }
    tensor_to_proto(data, names_[id][0], out_->add_initializer());
    same_shape.emplace_back(names_[id][0], folded_.at(id));
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

  // A node of a multi-node spelling (Gelu, Mish, Gathers): named after the op.
  onnx::NodeProto* node(const std::string& type, const std::string& name, const std::vector<std::string>& inputs,
                        const std::string& output) {
    onnx::NodeProto* n = node(type, name);
    for (const std::string& input : inputs) n->add_input(input);
    n->add_output(output);
    return n;
  }

  static void set_ints(onnx::NodeProto* n, const char* name, const std::vector<int64_t>& values) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t v : values) a->add_ints(v);
  }
  static void set_string(onnx::NodeProto* n, const char* name, std::string_view value) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(std::string(value));
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

  // A node's input; a constant is written as an initializer on first use,
  // so constants that nothing written reads never reach the file.
  std::string input_name(const TensorRef& ref) {
    if (constant_[ref.op]) write_initializer(ref.op);
    return names_[ref.op][ref.index];
  }

  // Emits `type` reading the op's inputs; with a fused activation the main
  // node writes an intermediate and the activation node writes the output.
  onnx::NodeProto* main_node(OpId id, const std::string& type) {
    std::vector<std::string> inputs;
    for (const TensorRef& ref : g_.op(id).inputs) inputs.push_back(input_name(ref));
    return main_node(id, type, inputs);
  }
  onnx::NodeProto* main_node(OpId id, const std::string& type, const std::vector<std::string>& inputs) {
    const Op& op = g_.op(id);
    auto act = static_cast<Activation>(op.attrs.get_int(AttrKey::Activation, 0));
    if (auto moved = spelling_.conv_activation.find(id); moved != spelling_.conv_activation.end()) act = moved->second;
    return node_with_activation(type, op.name, inputs, names_[id], act, op.attrs);
  }

  // A node, and with an activation a second node the runtime fuses back into it.
  onnx::NodeProto* node_with_activation(const std::string& type, const std::string& base_name,
                                        const std::vector<std::string>& inputs,
                                        const std::vector<std::string>& outputs, Activation act,
                                        const Attributes& params = {}) {
    onnx::NodeProto* n = node(type, base_name);
    for (const std::string& name : inputs) n->add_input(name);
    if (act == Activation::None) {
      for (const std::string& name : outputs) n->add_output(name);
      return n;
    }
    std::string pre = unique(outputs[0] + "/pre_activation", 0, 1);
    n->add_output(pre);
    const char* act_type = activation_node_type(act);
    onnx::NodeProto* a = node(act_type, base_name + "/" + act_type);
    a->add_input(pre);
    a->add_output(outputs[0]);
    if (act == Activation::HardSigmoid) {
      set_float(a, "alpha", params.get_float(AttrKey::ActivationAlpha, 0.2));
      set_float(a, "beta", params.get_float(AttrKey::ActivationBeta, 0.5));
    }
    if (act == Activation::LeakyRelu) set_float(a, "alpha", params.get_float(AttrKey::ActivationAlpha, 0.01));
    return n;
  }

  std::string tensor_initializer(const std::string& base, const TensorData& data) {
    std::string name = unique(base, 0, 1);
    tensor_to_proto(data, name, out_->add_initializer());
    return name;
  }

  // A conv whose only reader is a channel Split, written as one conv per
  // piece: each reads its slice of the kernel and bias and writes the
  // Split's output, so a runtime sees plain Conv -> (BatchNorm, activation)
  // chains it can fuse (see export_spelling.h).
  void emit_conv_pieces(OpId conv, const std::vector<ExportSpelling::ConvPiece>& pieces) {
    std::vector<std::string> outputs;
    for (const ExportSpelling::ConvPiece& piece : pieces) outputs.push_back(names_[piece.out.op][piece.out.index]);
    emit_conv_pieces(conv, pieces, outputs);
  }

  // A conv whose kernel is several merged kernels with no Split after it:
  // its pieces, then a Concat that writes the conv's output.
  bool emit_conv_runs(OpId conv) {
    const Op& op = g_.op(conv);
    if (op.attrs.get_int(AttrKey::Group, 1) != 1 || op.outputs[0].shape.size() != 4 || !constant_[op.inputs[1].op])
      return false;
    for (size_t k = 2; k < op.inputs.size(); ++k)
      if (!constant_[op.inputs[k].op]) return false;
    const auto runs = kernel_channel_runs(*folded_.at(op.inputs[1].op), op.attrs.get_ints(AttrKey::Pads, {0, 0, 0, 0}),
                                          op.attrs.get_ints(AttrKey::Dilations, {1, 1}));
    if (runs.size() < 2) return false;
    std::vector<ExportSpelling::ConvPiece> pieces;
    std::vector<std::string> outputs;
    for (const auto& [begin, end] : runs) {
      ExportSpelling::ConvPiece piece;
      piece.begin = begin;
      piece.end = end;
      if (auto moved = spelling_.conv_activation.find(conv); moved != spelling_.conv_activation.end())
        piece.activation = moved->second;
      pieces.push_back(piece);
      outputs.push_back(unique(names_[conv][0] + "/run", pieces.size() - 1, runs.size()));
    }
    emit_conv_pieces(conv, pieces, outputs);
    onnx::NodeProto* concat = node("Concat", op.name + "/Concat");
    for (const std::string& name : outputs) concat->add_input(name);
    concat->add_output(names_[conv][0]);
    set_int(concat, "axis", 1);
    return true;
  }

  void emit_conv_pieces(OpId conv, const std::vector<ExportSpelling::ConvPiece>& pieces,
                        const std::vector<std::string>& outputs) {
    const Op& op = g_.op(conv);
    const Attributes& at = op.attrs;
    const TensorData& kernel = *folded_.at(op.inputs[1].op);
    const TensorData* bias = op.inputs.size() > 2 ? folded_.at(op.inputs[2].op).get() : nullptr;
    const auto conv_act = static_cast<Activation>(at.get_int(AttrKey::Activation, 0));
    const std::vector<int64_t> dilations = at.get_ints(AttrKey::Dilations, {1, 1});
    for (size_t k = 0; k < pieces.size(); ++k) {
      const int64_t begin = pieces[k].begin, end = pieces[k].end;
      std::vector<int64_t> pads = at.get_ints(AttrKey::Pads, {0, 0, 0, 0});
      std::shared_ptr<TensorData> piece = conv_kernel_piece(kernel, begin, end, pads, dilations);
      const std::string piece_name = op.name + "/piece" + std::to_string(k);
      std::vector<std::string> inputs = {input_name(pieces[k].input.value_or(op.inputs[0])),
                                         tensor_initializer(piece_name + "/W", *piece)};
      if (bias) {
        std::vector<float> values(bias->floats() + begin, bias->floats() + end);
        inputs.push_back(tensor_initializer(piece_name + "/B", *TensorData::from_floats({end - begin}, values)));
      }
      const std::string& out = outputs[k];
      const Activation act = conv_act != Activation::None ? conv_act : pieces[k].activation;
      onnx::NodeProto* n = node_with_activation("Conv", piece_name, inputs, {out}, act, at);
      set_ints(n, "kernel_shape", {piece->shape()[2], piece->shape()[3]});
      set_ints(n, "strides", at.get_ints(AttrKey::Strides, {1, 1}));
      set_ints(n, "pads", pads);
      set_ints(n, "dilations", dilations);
      set_int(n, "group", pieces[k].groups);
    }
  }

  // A grouped conv whose groups are narrower than onnxruntime's channel
  // block, written with fewer groups and a block-diagonal kernel
  // (grouped_conv_spelling.h). The original kernel is not written (unless
  // another node reads it); convs that share a kernel share its regrouping.
  bool emit_regrouped_conv(OpId id) {
    const Op& op = g_.op(id);
    const int64_t factor = regroup_factor_of(g_, op, regroup_channel_block_);
    if (factor == 1 || !constant_[op.inputs[1].op]) return false;
    const int64_t groups = op.attrs.get_int(AttrKey::Group, 1);
    auto [kernel, fresh] = regrouped_kernel_names_.try_emplace({op.inputs[1], factor});
    if (fresh)
      kernel->second = tensor_initializer(op.name + "/W_regrouped",
                                          *regrouped_kernel(*folded_.at(op.inputs[1].op), groups, factor));
    std::vector<std::string> inputs;
    for (size_t k = 0; k < op.inputs.size(); ++k) inputs.push_back(k == 1 ? kernel->second : input_name(op.inputs[k]));
    set_window_attributes(main_node(id, "Conv", inputs), op, groups / factor);
    ++regrouped_convs_;
    return true;
  }

  // Conv's and ConvTranspose's window: the kernel from the weight's last two dims.
  void set_window_attributes(onnx::NodeProto* n, const Op& op) {
    set_window_attributes(n, op, op.attrs.get_int(AttrKey::Group, 1));
  }
  void set_window_attributes(onnx::NodeProto* n, const Op& op, int64_t group) {
    const Shape& w = g_.info(op.inputs[1]).shape;
    set_ints(n, "kernel_shape", {w[2], w[3]});
    set_ints(n, "strides", op.attrs.get_ints(AttrKey::Strides, {1, 1}));
    set_ints(n, "pads", op.attrs.get_ints(AttrKey::Pads, {0, 0, 0, 0}));
    set_ints(n, "dilations", op.attrs.get_ints(AttrKey::Dilations, {1, 1}));
    set_int(n, "group", group);
  }

  // tf_half_pixel_for_nn left ONNX at opset 13; written at opset 17 a
  // nearest Resize in that mode is one Gather per resized axis, of the input
  // indices it samples (exact, and any runtime reads it).
  void emit_resize_as_gathers(OpId id) {
    const Op& op = g_.op(id);
    const auto nearest = static_cast<ResizeNearestMode>(op.attrs.get_int(AttrKey::NearestMode, 0));
    const Shape& in = g_.info(op.inputs[0]).shape;
    const Shape& out = op.outputs[0].shape;
    std::string current = input_name(op.inputs[0]);
    std::vector<size_t> axes;
    for (size_t axis = 0; axis < in.size(); ++axis)
      if (in[axis] != out[axis]) axes.push_back(axis);
    if (axes.empty()) axes.push_back(0);  // same size: still one node, so the output gets its name
    for (size_t k = 0; k < axes.size(); ++k) {
      const size_t axis = axes[k];
      const std::string indices =
          int_initializer(op.name + "/indices" + std::to_string(axis),
                          resize_nearest_indices(ResizeCoordinateMode::TfHalfPixelForNearest, nearest, in[axis], out[axis]));
      const std::string resized =
          k + 1 == axes.size() ? names_[id][0] : unique(op.name + "/resized" + std::to_string(axis), 0, 1);
      set_int(node("Gather", op.name + "/Gather" + std::to_string(axis), {current, indices}, resized), "axis",
              static_cast<int64_t>(axis));
      current = resized;
    }
  }

  void emit_op(OpId id) {
    const Op& op = g_.op(id);
    const Attributes& at = op.attrs;
    if (auto pieces = spelling_.conv_pieces.find(id); pieces != spelling_.conv_pieces.end()) {
      emit_conv_pieces(id, pieces->second);
      return;
    }
    if (spelling_.split_written_as_pieces.count(id) || spelling_.concat_not_written.count(id)) return;
    if (spelling_.activation_into_concat_inputs.count(id)) {
      // The convs feeding the Concat apply the activation already.
      names_[id][0] = names_[op.inputs[0].op][op.inputs[0].index];
      return;
    }
    switch (op.type) {
      case OpType::Conv: {
        if (spell_ && emit_conv_runs(id)) return;
        if (regroup_channel_block_ > 1 && emit_regrouped_conv(id)) return;
        set_window_attributes(main_node(id, "Conv"), op);
        return;
      }
      case OpType::MatMul: main_node(id, spelling_.matmul_as_gemm.count(id) ? "Gemm" : "MatMul"); return;
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
        node("Div", op.name + "/Div", {x, float_scalar(op.name + "/sqrt2", static_cast<float>(std::sqrt(2.0)))}, scaled);
        node("Erf", op.name + "/Erf", {scaled}, erf);
        node("Add", op.name + "/Add", {erf, float_scalar(op.name + "/one", 1.0f)}, plus);
        node("Mul", op.name + "/Mul", {x, plus}, times);
        node("Mul", op.name + "/Mul", {times, float_scalar(op.name + "/half", 0.5f)}, names_[id][0]);
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
      case OpType::HardSigmoid: {
        onnx::NodeProto* n = main_node(id, "HardSigmoid");
        set_float(n, "alpha", at.get_float(AttrKey::Alpha, 0.2));
        set_float(n, "beta", at.get_float(AttrKey::Beta, 0.5));
        return;
      }
      case OpType::HardSwish: main_node(id, "HardSwish"); return;
      case OpType::LeakyRelu: set_float(main_node(id, "LeakyRelu"), "alpha", at.get_float(AttrKey::Alpha, 0.01)); return;
      case OpType::PRelu: main_node(id, "PRelu"); return;
      case OpType::Softplus: main_node(id, "Softplus"); return;
      case OpType::Mish: {
        // Mish(x) = x * tanh(softplus(x)); ONNX has no Mish before opset 18.
        std::string x = input_name(op.inputs[0]);
        std::string soft = unique(op.name + "/softplus", 0, 1), tanh = unique(op.name + "/tanh", 0, 1);
        node("Softplus", op.name + "/Softplus", {x}, soft);
        node("Tanh", op.name + "/Tanh", {soft}, tanh);
        node("Mul", op.name + "/Mul", {x, tanh}, names_[id][0]);
        return;
      }
      case OpType::Resize: {
        if (at.get_int(AttrKey::CoordinateMode, 0) == static_cast<int64_t>(ResizeCoordinateMode::TfHalfPixelForNearest)) {
          emit_resize_as_gathers(id);
          return;
        }
        onnx::NodeProto* n = main_node(id, "Resize");
        n->add_input("");  // roi
        n->add_input("");  // scales
        n->add_input(int_initializer(op.name + "/sizes", op.outputs[0].shape));
        set_string(n, "mode", resize_mode_name(static_cast<ResizeMode>(at.get_int(AttrKey::ResizeMode, 0))));
        set_string(n, "coordinate_transformation_mode",
                   resize_coordinate_mode_name(static_cast<ResizeCoordinateMode>(at.get_int(AttrKey::CoordinateMode, 0))));
        set_string(n, "nearest_mode",
                   resize_nearest_mode_name(static_cast<ResizeNearestMode>(at.get_int(AttrKey::NearestMode, 0))));
        return;
      }
      case OpType::ConvTranspose: {
        onnx::NodeProto* n = main_node(id, "ConvTranspose");
        set_window_attributes(n, op);
        set_ints(n, "output_padding", at.get_ints(AttrKey::OutputPadding, {0, 0}));
        return;
      }
      case OpType::ReduceMax:
      case OpType::ReduceMin: {
        onnx::NodeProto* n = main_node(id, op.type == OpType::ReduceMax ? "ReduceMax" : "ReduceMin");
        if (at.has(AttrKey::Axes)) set_ints(n, "axes", at.require_ints(AttrKey::Axes));
        set_int(n, "keepdims", at.get_int(AttrKey::KeepDims, 1));
        return;
      }
      case OpType::Max: main_node(id, "Max"); return;
      case OpType::Min: main_node(id, "Min"); return;
      case OpType::Mean: main_node(id, "Mean"); return;
      case OpType::Gather: set_int(main_node(id, "Gather"), "axis", at.get_int(AttrKey::Axis, 0)); return;
      case OpType::Tile: {
        onnx::NodeProto* n = main_node(id, "Tile");
        n->add_input(int_initializer(op.name + "/repeats", at.require_ints(AttrKey::Repeats)));
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
  const bool spell_;
  const int64_t regroup_channel_block_;
  ExportSpelling spelling_;
  int64_t regrouped_convs_ = 0;
  std::map<std::pair<TensorRef, int64_t>, std::string> regrouped_kernel_names_;
  std::vector<std::vector<std::string>> names_;
  std::set<std::string> used_;
  std::map<TensorRef, std::string> output_name_;
  std::vector<bool> constant_;
  std::vector<bool> needed_;
  std::vector<bool> written_;
  std::unordered_map<OpId, std::shared_ptr<const TensorData>> folded_;
  std::map<std::pair<int, Shape>, std::vector<std::pair<std::string, std::shared_ptr<const TensorData>>>>
      written_by_shape_;
};

}  // namespace

std::string export_onnx_bytes(const Graph& graph, const ExportOptions& options, ExportReport* report) {
  onnx::ModelProto model;
  model.set_ir_version(8);  // IR version of ONNX 1.12, which defines opset 17
  model.set_producer_name("graphworld");
  model.set_producer_version(options.producer_version);
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(kExportOpset);
  onnx::GraphProto* out = model.mutable_graph();
  out->set_name("graphworld");
  Exporter exporter(graph, out, options.spell_for_fusing_runtimes, options.regroup_channel_block);
  exporter.run();
  if (report) report->regrouped_convs = exporter.regrouped_convs();
  std::string bytes;
  if (!model.SerializeToString(&bytes))
    throw Error("serialising the ONNX model failed (it may exceed protobuf's 2 GiB limit)");
  return bytes;
}

void export_onnx_file(const Graph& graph, const std::string& path, const ExportOptions& options) {
  write_onnx_bytes(export_onnx_bytes(graph, options), path);
}

void write_onnx_bytes(const std::string& bytes, const std::string& path) { write_file_atomically(path, bytes); }

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
