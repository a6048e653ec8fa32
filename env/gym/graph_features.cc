// Feature layouts.
//
// Node (kNodeFeatureDim = 64):
//   [0, 52)  op type, one-hot (OpType order)
//   52       constant: folded from weights before the first run
//   53       graph output
//   54       log2(1 + elements of output 0) / 24
//   55, 56   kernel height, width / 8 (Conv, ConvTranspose: weight shape; pools: kernel_shape)
//   57       stride (first spatial) / 4
//   58       log2(group) / 10
//   59..61   fused activation: relu, sigmoid, tanh
//   62       the op's share of the graph's cost
//   63       fused piecewise-linear activation: hard sigmoid, hard swish, leaky relu
// Edge (kEdgeFeatureDim = 8):
//   0        rank / 8
//   1..4     the last four dims, right-aligned, log2(1 + d) / 16
//   5        log2(1 + elements) / 24
//   6        which output of the producer / 4
//   7        the producer is constant
// Globals (kGlobalFeatureDim = 6):
//   cost / initial cost, step / max steps, log2(1 + nodes) / 16,
//   log2(1 + edges) / 16, log2(1 + matches) / 16, allowed xfers / xfers
#include "env/gym/graph_features.h"

#include <cmath>

namespace graphworld {

namespace {

static_assert(kNumOpTypes + 12 == kNodeFeatureDim, "node feature layout out of date with the op types");

float log_scaled(double x, double scale) { return static_cast<float>(std::log2(1.0 + x) / scale); }

void node_features(const Graph& graph, const GraphIndex& index, const CostTracker& cost, OpId id, float* f) {
  const Op& op = graph.op(id);
  f[static_cast<int>(op.type)] = 1;
  float* x = f + kNumOpTypes;
  x[0] = index.constant(id) ? 1.0f : 0.0f;
  x[1] = index.is_graph_output(id) ? 1.0f : 0.0f;
  x[2] = log_scaled(static_cast<double>(op.outputs[0].numel()), 24);
  std::vector<int64_t> kernel;
  if ((op.type == OpType::Conv || op.type == OpType::ConvTranspose) && op.inputs.size() > 1) {
    const Shape& w = graph.info(op.inputs[1]).shape;
    if (w.size() == 4) kernel = {w[2], w[3]};
  } else if (op.type == OpType::MaxPool || op.type == OpType::AvgPool) {
    kernel = op.attrs.get_ints(AttrKey::KernelShape);
  }
  if (kernel.size() >= 2) {
    x[3] = static_cast<float>(kernel[0]) / 8;
    x[4] = static_cast<float>(kernel[1]) / 8;
  }
  const std::vector<int64_t> strides = op.attrs.get_ints(AttrKey::Strides);
  if (!strides.empty()) x[5] = static_cast<float>(strides[0]) / 4;
  x[6] = static_cast<float>(std::log2(static_cast<double>(std::max<int64_t>(1, op.attrs.get_int(AttrKey::Group, 1)))) / 10);
  const auto act = static_cast<Activation>(op.attrs.get_int(AttrKey::Activation, 0));
  if (act == Activation::Relu) x[7] = 1;
  if (act == Activation::Sigmoid) x[8] = 1;
  if (act == Activation::Tanh) x[9] = 1;
  if (cost.total_ms() > 0) x[10] = static_cast<float>(cost.op_ms(id) / cost.total_ms());
  if (act == Activation::HardSigmoid || act == Activation::HardSwish || act == Activation::LeakyRelu) x[11] = 1;
}

void edge_features(const Graph& graph, const GraphIndex& index, TensorRef ref, float* f) {
  const TensorInfo& info = graph.info(ref);
  const auto rank = static_cast<int>(info.shape.size());
  f[0] = static_cast<float>(rank) / 8;
  for (int k = 0; k < 4 && k < rank; ++k)
    f[4 - k] = log_scaled(static_cast<double>(info.shape[static_cast<size_t>(rank - 1 - k)]), 16);
  f[5] = log_scaled(static_cast<double>(info.numel()), 24);
  f[6] = static_cast<float>(ref.index) / 4;
  f[7] = index.constant(ref.op) ? 1.0f : 0.0f;
}

}  // namespace

void build_graph_tuple(const Graph& graph, const GraphIndex& index, const CostTracker& cost,
                       const GlobalInputs& globals, GraphTuple& tuple, std::vector<int32_t>& op_to_node) {
  const auto num_ops = static_cast<OpId>(graph.num_ops());
  op_to_node.assign(static_cast<size_t>(num_ops), -1);
  tuple.node_op.clear();
  for (OpId id = 0; id < num_ops; ++id)
    if (index.live(id)) {
      op_to_node[static_cast<size_t>(id)] = static_cast<int32_t>(tuple.node_op.size());
      tuple.node_op.push_back(id);
    }
  tuple.num_nodes = static_cast<int32_t>(tuple.node_op.size());
  tuple.node_features.assign(static_cast<size_t>(tuple.num_nodes) * kNodeFeatureDim, 0.0f);
  tuple.senders.clear();
  tuple.receivers.clear();
  tuple.edge_features.clear();
  for (int32_t n = 0; n < tuple.num_nodes; ++n) {
    const OpId id = tuple.node_op[static_cast<size_t>(n)];
    node_features(graph, index, cost, id, tuple.node_features.data() + static_cast<size_t>(n) * kNodeFeatureDim);
    for (const TensorRef& in : graph.op(id).inputs) {
      tuple.senders.push_back(op_to_node[static_cast<size_t>(in.op)]);
      tuple.receivers.push_back(n);
      tuple.edge_features.resize(tuple.edge_features.size() + kEdgeFeatureDim, 0.0f);
      edge_features(graph, index, in, tuple.edge_features.data() + tuple.edge_features.size() - kEdgeFeatureDim);
    }
  }
  tuple.num_edges = static_cast<int32_t>(tuple.senders.size());
  tuple.globals = {
      static_cast<float>(globals.initial_cost_ms > 0 ? globals.cost_ms / globals.initial_cost_ms : 1.0),
      static_cast<float>(globals.step) / static_cast<float>(std::max(1, globals.max_steps)),
      log_scaled(tuple.num_nodes, 16),
      log_scaled(tuple.num_edges, 16),
      log_scaled(static_cast<double>(globals.matches), 16),
      static_cast<float>(globals.allowed_xfers) / static_cast<float>(std::max<size_t>(1, globals.num_xfers)),
  };
}

}  // namespace graphworld
