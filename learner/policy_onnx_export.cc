#include "learner/policy_onnx_export.h"

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include <cctype>
#include <limits>
#include <map>

#include "common/atomic_file.h"
#include "common/error.h"
#include "env/gym/observation.h"
#include "learner/policy_module.h"

namespace graphworld {
namespace {

// Builds the ONNX graph node by node; names are made unique by a counter.
class OnnxGraphBuilder {
 public:
  explicit OnnxGraphBuilder(onnx::GraphProto* graph) : graph_(graph) {}

  // Node with attributes; each returns the name of its (single) output.

  std::string op(const std::string& type, const std::vector<std::string>& inputs,
                 const std::map<std::string, int64_t>& int_attrs = {},
                 const std::map<std::string, float>& float_attrs = {},
                 const std::map<std::string, std::string>& string_attrs = {}) {
    onnx::NodeProto* node = graph_->add_node();
    node->set_op_type(type);
    const std::string name = type + "_" + std::to_string(counter_++);
    node->set_name(name);
    for (const std::string& input : inputs) node->add_input(input);
    node->add_output(name);
    auto attribute = [&](const std::string& key, onnx::AttributeProto::AttributeType type) {
      onnx::AttributeProto* a = node->add_attribute();
      a->set_name(key);
      a->set_type(type);
      return a;
    };
    for (const auto& [key, value] : int_attrs) attribute(key, onnx::AttributeProto::INT)->set_i(value);
    for (const auto& [key, value] : float_attrs) attribute(key, onnx::AttributeProto::FLOAT)->set_f(value);
    for (const auto& [key, value] : string_attrs) attribute(key, onnx::AttributeProto::STRING)->set_s(value);
    return name;
  }

  // A float initializer from a (contiguous) tensor.
  std::string weight(const std::string& name, const torch::Tensor& value) {
    const torch::Tensor t = value.detach().to(torch::kCPU, torch::kFloat32).contiguous();
    onnx::TensorProto* init = graph_->add_initializer();
    init->set_name(name);
    init->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : t.sizes()) init->add_dims(d);
    init->set_raw_data(std::string(reinterpret_cast<const char*>(t.data_ptr<float>()),
                                   static_cast<size_t>(t.numel()) * sizeof(float)));
    return name;
  }

  std::string int64s(const std::string& name, const std::vector<int64_t>& values) {
    onnx::TensorProto* init = graph_->add_initializer();
    init->set_name(name);
    init->set_data_type(onnx::TensorProto::INT64);
    init->add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) init->add_int64_data(v);
    return name;
  }

  std::string scalar(const std::string& name, float value) {
    onnx::TensorProto* init = graph_->add_initializer();
    init->set_name(name);
    init->set_data_type(onnx::TensorProto::FLOAT);
    init->add_float_data(value);
    return name;
  }

  void input(const std::string& name, int32_t type, const std::vector<std::string>& dims) {
    describe(graph_->add_input(), name, type, dims);
  }
  void output(const std::string& from, const std::string& name, int32_t type, const std::vector<std::string>& dims) {
    onnx::NodeProto* node = graph_->add_node();
    node->set_op_type("Identity");
    node->set_name(name + "_out");
    node->add_input(from);
    node->add_output(name);
    describe(graph_->add_output(), name, type, dims);
  }

 private:
  // A dimension that is a number is fixed; a word is a symbolic (dynamic) size.
  static void describe(onnx::ValueInfoProto* v, const std::string& name, int32_t type,
                       const std::vector<std::string>& dims) {
    v->set_name(name);
    onnx::TypeProto_Tensor* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(type);
    for (const std::string& d : dims) {
      onnx::TensorShapeProto_Dimension* dim = t->mutable_shape()->add_dim();
      if (!d.empty() && std::isdigit(static_cast<unsigned char>(d[0]))) dim->set_dim_value(std::stoll(d));
      else dim->set_dim_param(d);
    }
  }

  onnx::GraphProto* graph_;
  int counter_ = 0;
};

class PolicyGraph {
 public:
  PolicyGraph(OnnxGraphBuilder& b, const PolicyModule& m) : b_(b) {
    for (const auto& item : m->named_parameters()) params_[item.key()] = item.value();
  }

  std::string linear(const std::string& x, const std::string& prefix) {
    return b_.op("Gemm", {x, b_.weight(prefix + ".weight", param(prefix + ".weight")),
                          b_.weight(prefix + ".bias", param(prefix + ".bias"))},
                 {{"transB", 1}});
  }
  // mlp(): Linear, ReLU, Linear (a Sequential: children 0 and 2).
  std::string mlp(const std::string& x, const std::string& prefix) {
    return linear(b_.op("Relu", {linear(x, prefix + ".0")}), prefix + ".2");
  }
  // Rows of `values` summed by `index` into a tensor shaped like `like`.
  std::string segment_sum(const std::string& values, const std::string& index, const std::string& like) {
    const std::string zeros = b_.op("Mul", {like, zero_});
    const std::string idx = b_.op("Expand", {b_.op("Unsqueeze", {index, axis1_}), b_.op("Shape", {values})});
    return b_.op("ScatterElements", {zeros, idx, values}, {{"axis", 0}}, {}, {{"reduction", "add"}});
  }
  // Mean over rows as [1, H]; 0 for no rows (as the network's clamp_min(1)).
  std::string row_mean(const std::string& x) {
    const std::string sum = b_.op("ReduceSum", {x, axis0_}, {{"keepdims", 1}});
    const std::string rows = b_.op("Cast", {b_.op("Gather", {b_.op("Shape", {x}), axis0_}, {{"axis", 0}})},
                                   {{"to", onnx::TensorProto::FLOAT}});
    return b_.op("Div", {sum, b_.op("Max", {rows, one_})});
  }
  std::string rows_like(const std::string& row, const std::string& like) {
    // Expands a [1, W] row to as many rows as `like` has.
    const std::string rows = b_.op("Gather", {b_.op("Shape", {like}), axis0_}, {{"axis", 0}});
    const std::string width = b_.op("Gather", {b_.op("Shape", {row}), axis1_}, {{"axis", 0}});
    return b_.op("Expand", {row, b_.op("Concat", {rows, width}, {{"axis", 0}})});
  }

  void constants() {
    zero_ = b_.scalar("const_zero", 0.0f);
    one_ = b_.scalar("const_one", 1.0f);
    neg_inf_ = b_.scalar("const_neg_inf", -std::numeric_limits<float>::infinity());
    half_ = b_.scalar("const_half", 0.5f);
    axis0_ = b_.int64s("const_axis0", {0});
    axis1_ = b_.int64s("const_axis1", {1});
    flat_ = b_.int64s("const_flat", {-1});
  }

  const torch::Tensor& param(const std::string& name) const {
    auto it = params_.find(name);
    if (it == params_.end()) throw Error("policy ONNX export: the network has no parameter '" + name + "'");
    return it->second;
  }

  std::string zero_, one_, neg_inf_, half_, axis0_, axis1_, flat_;

 private:
  OnnxGraphBuilder& b_;
  std::map<std::string, torch::Tensor> params_;
};

}  // namespace

std::string export_policy_onnx_bytes(const PolicyNetwork& network) {
  const PolicyNetworkConfig& config = network.config();
  if (config.location_rewards)
    throw UsageError("this policy reads location rewards (network.location_rewards), which its ONNX form has no "
                     "inputs for; use the .gwpolicy file (graphworld optimize --policy, Python's load_policy)");
  const PolicyModule& module = network.impl().module;
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("graphworld");
  model.set_doc_string("graphworld policy network (learner/policy_onnx_export.h); observation features version " +
                       std::to_string(kObservationFeatureVersion));
  onnx::OperatorSetIdProto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(17);
  onnx::GraphProto* graph = model.mutable_graph();
  graph->set_name("graphworld_policy");
  OnnxGraphBuilder b(graph);
  PolicyGraph p(b, module);
  p.constants();
  const std::string width = std::to_string(config.num_xfers + 1);
  b.input("node_features", onnx::TensorProto::FLOAT, {"nodes", std::to_string(kNodeFeatureDim)});
  b.input("edge_features", onnx::TensorProto::FLOAT, {"edges", std::to_string(kEdgeFeatureDim)});
  b.input("globals", onnx::TensorProto::FLOAT, {"1", std::to_string(kGlobalFeatureDim)});
  b.input("senders", onnx::TensorProto::INT64, {"edges"});
  b.input("receivers", onnx::TensorProto::INT64, {"edges"});
  b.input("xfer_mask", onnx::TensorProto::FLOAT, {"1", width});
  b.input("xfer", onnx::TensorProto::INT64, {"1"});
  b.input("location_nodes", onnx::TensorProto::INT64, {"locations", "matched"});

  // Encoder (GraphEncoderImpl::forward, for one graph).
  std::string h = p.linear("node_features", "encoder.node_in");
  std::string e = p.linear("edge_features", "encoder.edge_in");
  std::string u = p.linear("globals", "encoder.global_in");
  for (int32_t r = 0; r < config.message_rounds; ++r) {
    const std::string round = std::to_string(r);
    const std::string edge_in =
        b.op("Concat", {e, b.op("Gather", {h, "senders"}, {{"axis", 0}}), b.op("Gather", {h, "receivers"}, {{"axis", 0}}),
                        p.rows_like(u, e)},
             {{"axis", 1}});
    e = b.op("Add", {e, p.mlp(edge_in, "encoder.edge_mlps." + round)});
    const std::string incoming = p.segment_sum(e, "receivers", h);
    const std::string outgoing = p.segment_sum(e, "senders", h);
    const std::string node_in = b.op("Concat", {h, incoming, outgoing, p.rows_like(u, h)}, {{"axis", 1}});
    h = b.op("LayerNormalization",
             {b.op("Add", {h, p.mlp(node_in, "encoder.node_mlps." + round)}),
              b.weight("encoder.node_norms." + round + ".weight", p.param("encoder.node_norms." + round + ".weight")),
              b.weight("encoder.node_norms." + round + ".bias", p.param("encoder.node_norms." + round + ".bias"))},
             {{"axis", -1}}, {{"epsilon", 1e-5f}});
    const std::string global_in = b.op("Concat", {u, p.row_mean(h), p.row_mean(e)}, {{"axis", 1}});
    u = b.op("Add", {u, p.mlp(global_in, "encoder.global_mlps." + round)});
  }
  const std::string graph_embedding = b.op("Concat", {u, p.row_mean(h)}, {{"axis", 1}});

  // xfer head: masked logits, log-softmax.
  const std::string logits = p.mlp(graph_embedding, "xfer_head");
  const std::string allowed = b.op("Greater", {"xfer_mask", p.half_});
  const std::string xfer_lp = b.op("LogSoftmax", {b.op("Where", {allowed, logits, p.neg_inf_})}, {{"axis", 1}});

  // Location head: each location is the mean of its matched nodes' embeddings.
  const std::string matched = b.op("Gather", {h, "location_nodes"}, {{"axis", 0}});  // [C, K, H]
  const std::string matched_count = b.op(
      "Cast", {b.op("Gather", {b.op("Shape", {"location_nodes"}), p.axis1_}, {{"axis", 0}})}, {{"to", onnx::TensorProto::FLOAT}});
  const std::string candidates =
      b.op("Div", {b.op("ReduceSum", {matched, p.axis1_}, {{"keepdims", 0}}), b.op("Max", {matched_count, p.one_})});
  const std::string xfer_row =
      b.op("Gather", {b.weight("xfer_embedding.weight", p.param("xfer_embedding.weight")), "xfer"}, {{"axis", 0}});
  const std::string location_in =
      b.op("Concat", {candidates, p.rows_like(xfer_row, candidates), p.rows_like(graph_embedding, candidates)},
           {{"axis", 1}});
  const std::string scores = b.op("Reshape", {p.mlp(location_in, "location_head"), p.flat_});
  const std::string location_lp = b.op("LogSoftmax", {scores}, {{"axis", 0}});
  const std::string value = p.mlp(graph_embedding, "value_head");

  b.output(xfer_lp, "xfer_log_probs", onnx::TensorProto::FLOAT, {"1", width});
  b.output(location_lp, "location_log_probs", onnx::TensorProto::FLOAT, {"locations"});
  b.output(value, "value", onnx::TensorProto::FLOAT, {"1", "1"});

  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    throw Error(std::string("policy ONNX export fails the ONNX checker (a graphworld bug): ") + e.what());
  }
  return model.SerializeAsString();
}

void export_policy_onnx_file(const PolicyNetwork& network, const std::string& path) {
  write_file_atomically(path, export_policy_onnx_bytes(network));
}

}  // namespace graphworld
