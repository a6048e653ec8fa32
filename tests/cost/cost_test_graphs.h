// Small graphs and rewrites shared by the cost-model tests.
#pragma once

#include <random>

#include "env/graph/graph.h"
#include "env/ops/graph_builder.h"

namespace graphworld::testing {

// x[1,8,16,16] -> Conv3x3(w) -> Relu -> output; `w` is produced from a weight
// by a weight-only Transpose when `folded_weight` is set.
inline Graph small_conv_graph(bool folded_weight = false) {
  GraphBuilder b(7);
  TensorRef x = b.input("x", {1, 8, 16, 16});
  TensorRef w;
  if (folded_weight) {
    TensorRef raw = b.random_weight({8, 16, 3, 3}, -1, 1, "w_raw");
    w = b.add1(OpType::Transpose, {raw}, {{AttrKey::Perm, std::vector<int64_t>{1, 0, 2, 3}}}, "w_t");
  } else {
    w = b.random_weight({16, 8, 3, 3}, -1, 1, "w");
  }
  TensorRef y = b.add1(OpType::Conv, {x, w}, {{AttrKey::Pads, std::vector<int64_t>{1, 1, 1, 1}}}, "conv");
  y = b.add1(OpType::Relu, {y}, {}, "relu");
  b.output(y, "y");
  return b.finish();
}

struct TestRewrite {
  std::vector<OpId> removed;
  std::vector<OpId> changed;
};

inline Attributes without_activation(const Attributes& attrs) {
  Attributes out;
  for (const auto& [key, value] : attrs.items())
    if (key != AttrKey::Activation) out.set(key, value);
  return out;
}

// One random equivalence-keeping rewrite somewhere in `g`, of one of these kinds:
// split a fused activation off a Conv/MatMul; fuse a Relu into the Conv that
// only it reads; put a transpose pair (which moves data) after an op; replace
// an op by a fresh copy of itself. Returns false when the chosen kind found no site.
inline bool random_rewrite(Graph& g, std::mt19937_64& rng, TestRewrite& out) {
  std::vector<bool> live = g.live_ops();
  std::vector<OpId> candidates;
  for (size_t i = 0; i < g.num_ops(); ++i)
    if (live[i] && !g.op(static_cast<OpId>(i)).is_leaf()) candidates.push_back(static_cast<OpId>(i));
  if (candidates.empty()) return false;
  OpId id = candidates[rng() % candidates.size()];
  Op copy = g.op(id);
  int kind = static_cast<int>(rng() % 4);
  out = {};
  if (kind == 0 && (copy.type == OpType::Conv || copy.type == OpType::MatMul) &&
      copy.attrs.get_int(AttrKey::Activation, 0) == 1 && copy.outputs.size() == 1) {
    OpId plain = g.add_op(copy.type, copy.name + "_plain", without_activation(copy.attrs), copy.inputs, copy.outputs);
    OpId relu = g.add_op(OpType::Relu, copy.name + "_relu", {}, {{plain, 0}}, copy.outputs);
    out.changed = g.replace_uses({id, 0}, {relu, 0});
    out.removed = {id};
    out.changed.push_back(plain);
    out.changed.push_back(relu);
    return true;
  }
  if (kind == 1 && copy.type == OpType::Relu) {
    OpId conv = copy.inputs[0].op;
    const Op& producer = g.op(conv);
    if (producer.type != OpType::Conv || producer.attrs.get_int(AttrKey::Activation, 0) != 0) return false;
    int readers = 0;
    for (size_t i = 0; i < g.num_ops(); ++i)
      if (live[i])
        for (const TensorRef& ref : g.op(static_cast<OpId>(i)).inputs) readers += ref.op == conv;
    for (const GraphOutput& o : g.outputs()) readers += o.ref.op == conv;
    if (readers != 1) return false;
    Attributes attrs = producer.attrs;
    attrs.set(AttrKey::Activation, int64_t{1});
    Op conv_copy = producer;
    OpId fused = g.add_op(OpType::Conv, conv_copy.name + "_relu", attrs, conv_copy.inputs, copy.outputs);
    out.changed = g.replace_uses({id, 0}, {fused, 0});
    out.removed = {conv, id};
    out.changed.push_back(fused);
    return true;
  }
  if (kind == 2 && copy.outputs.size() == 1 && copy.outputs[0].rank() >= 2 && copy.outputs[0].dtype == DType::Float32) {
    // y -> Transpose(swap last two) -> Transpose(swap back): moves data twice.
    int64_t rank = copy.outputs[0].rank();
    std::vector<int64_t> perm(static_cast<size_t>(rank));
    for (int64_t d = 0; d < rank; ++d) perm[static_cast<size_t>(d)] = d;
    std::swap(perm[static_cast<size_t>(rank - 1)], perm[static_cast<size_t>(rank - 2)]);
    TensorInfo swapped = copy.outputs[0];
    std::swap(swapped.shape[static_cast<size_t>(rank - 1)], swapped.shape[static_cast<size_t>(rank - 2)]);
    Attributes attrs{{AttrKey::Perm, perm}};
    OpId t1 = g.add_op(OpType::Transpose, copy.name + "_t1", attrs, {{id, 0}}, {swapped});
    OpId t2 = g.add_op(OpType::Transpose, copy.name + "_t2", attrs, {{t1, 0}}, copy.outputs);
    out.changed = g.replace_uses({id, 0}, {t2, 0});
    // replace_uses also rewired t1's input; point it back at the original op.
    g.mutable_op(t1).inputs[0] = {id, 0};
    out.changed.push_back(t1);
    out.changed.push_back(t2);
    return true;
  }
  if (kind == 3) {
    OpId fresh = g.add_op(copy.type, copy.name + "_copy", copy.attrs, copy.inputs, copy.outputs);
    for (size_t k = 0; k < copy.outputs.size(); ++k) {
      std::vector<OpId> rewired = g.replace_uses({id, static_cast<int32_t>(k)}, {fresh, static_cast<int32_t>(k)});
      out.changed.insert(out.changed.end(), rewired.begin(), rewired.end());
    }
    out.removed = {id};
    out.changed.push_back(fresh);
    return true;
  }
  return false;
}

}  // namespace graphworld::testing
