#include "env/zoo/zoo_transformer.h"

#include <cmath>

#include "common/error.h"
#include "env/zoo/zoo_layers.h"

namespace graphworld::zoo {

TensorRef self_attention(GraphBuilder& b, TensorRef x, int64_t heads, const std::string& name) {
  const Shape shape = b.shape(x);  // a copy: adding ops may move the graph's storage
  if (shape.size() != 3 || heads < 1 || shape[2] % heads != 0)
    throw GraphError("self_attention '" + name + "': input " + shape_to_string(shape) + " cannot be split into " +
                     std::to_string(heads) + " heads");
  const int64_t batch = shape[0], seq = shape[1], hidden = shape[2], head_dim = hidden / heads;

  // [batch, seq, hidden] -> [batch, seq, heads, head_dim] -> permuted.
  auto project = [&](const char* part, Ints perm) {
    const std::string proj = join(name, part);
    TensorRef t = linear(b, x, hidden, true, proj);
    t = reshape(b, t, {batch, seq, heads, head_dim}, join(proj, "split"));
    return transpose(b, t, std::move(perm), join(proj, "heads"));
  };
  TensorRef q = project("q", {0, 2, 1, 3});  // [batch, heads, seq, head_dim]
  TensorRef k = project("k", {0, 2, 3, 1});  // [batch, heads, head_dim, seq]
  TensorRef v = project("v", {0, 2, 1, 3});  // [batch, heads, seq, head_dim]

  TensorRef scores = b.add1(OpType::MatMul, {q, k}, {}, join(name, "scores"));  // [batch, heads, seq, seq]
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  scores = binary(b, OpType::Mul, scores, scalar_constant(b, scale, join(name, "scale_factor")), join(name, "scale"));
  TensorRef probs = b.add1(OpType::Softmax, {scores}, {{AttrKey::Axis, int64_t{-1}}}, join(name, "softmax"));
  TensorRef context = b.add1(OpType::MatMul, {probs, v}, {}, join(name, "context"));  // [batch, heads, seq, head_dim]
  context = transpose(b, context, {0, 2, 1, 3}, join(name, "context.heads"));
  context = reshape(b, context, {batch, seq, hidden}, join(name, "context.merge"));
  return linear(b, context, hidden, true, join(name, "out"));
}

TensorRef feed_forward(GraphBuilder& b, TensorRef x, int64_t inner, const std::string& name) {
  const int64_t hidden = b.shape(x).back();
  TensorRef t = linear(b, x, inner, true, join(name, "in"));
  t = unary(b, OpType::Gelu, t, join(name, "gelu"));
  return linear(b, t, hidden, true, join(name, "out"));
}

}  // namespace graphworld::zoo
