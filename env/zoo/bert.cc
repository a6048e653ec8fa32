// BERT encoders with BERT-large's width (hidden 1024, 16 heads) and 8 layers
// over 64 tokens: TASO's reduced form ("bert") and a complete encoder
// ("bert-full").
#include <string>

#include "env/zoo/zoo_builders.h"
#include "env/zoo/zoo_layers.h"
#include "env/zoo/zoo_transformer.h"

namespace graphworld::zoo {
namespace {

struct BertConfig {
  int64_t seq = 64;
  int64_t hidden = 1024;
  int64_t heads = 16;
  int64_t layers = 8;
  int64_t ffn = 4096;  // bert-full only
};

std::string layer_name(int64_t i) { return "layer" + std::to_string(i); }

// TASO's attention layer: q, k, v and output projections without biases and
// without score scaling, plus a softmax over the scores that TASO's graph
// lacks. Without it the layer is a cubic polynomial of its input, and eight
// of them raise it to the power 3^8: outputs are 0 or infinite for any
// weights, which would make every equivalence check vacuous. Softmax costs
// little next to the MatMuls and leaves every substitution TASO finds in
// place. q's weights take the 1/sqrt(head_dim) a real layer puts on scores.
TensorRef taso_attention(GraphBuilder& b, TensorRef x, const BertConfig& c, int64_t batch, const std::string& name) {
  const int64_t head_dim = c.hidden / c.heads;
  auto project = [&](const char* part, int64_t fan_in, Ints perm) {
    const std::string proj = join(name, part);
    TensorRef w = b.random_weight_for_fan_in({c.hidden, c.hidden}, fan_in, join(proj, "weight"));
    TensorRef t = b.add1(OpType::MatMul, {x, w}, {}, proj);
    t = reshape(b, t, {batch, c.seq, c.heads, head_dim}, join(proj, "split"));
    return transpose(b, t, std::move(perm), join(proj, "heads"));
  };
  TensorRef q = project("q", c.hidden * head_dim, {0, 2, 1, 3});  // [batch, heads, seq, head_dim]
  TensorRef k = project("k", c.hidden, {0, 2, 3, 1});             // [batch, heads, head_dim, seq]
  TensorRef v = project("v", c.hidden, {0, 2, 1, 3});             // [batch, heads, seq, head_dim]
  TensorRef logits = b.add1(OpType::MatMul, {q, k}, {}, join(name, "logits"));
  TensorRef probs = b.add1(OpType::Softmax, {logits}, {{AttrKey::Axis, int64_t{-1}}}, join(name, "softmax"));
  TensorRef out = b.add1(OpType::MatMul, {probs, v}, {}, join(name, "context"));
  out = transpose(b, out, {0, 2, 1, 3}, join(name, "context.heads"));
  out = reshape(b, out, {batch, c.seq, c.hidden}, join(name, "context.merge"));
  // TASO's script multiplies the layer *input* here, which leaves the whole
  // attention dead; we use its evident intent, the attention output.
  return linear(b, out, c.hidden, false, join(name, "out"));
}

}  // namespace

// TASO's BERT benchmark: Relu on the input, then 8 attention-only layers (no
// LayerNorm, residual or FFN; softmax added, see taso_attention). Batch is a leading dimension TASO
// does not have.
Graph build_bert(const ZooOptions& options) {
  const BertConfig c;
  GraphBuilder builder(options.seed);
  TensorRef t = builder.input("input", {options.batch, c.seq, c.hidden});
  t = unary(builder, OpType::Relu, t, "input.relu");
  for (int64_t i = 0; i < c.layers; ++i) t = taso_attention(builder, t, c, options.batch, layer_name(i));
  builder.output(t, "output");
  return builder.finish();
}

// A complete post-norm BERT encoder layer stack: attention with biases, scaled
// scores and softmax, residual and LayerNorm, then the Gelu FFN, residual and
// LayerNorm.
Graph build_bert_full(const ZooOptions& options) {
  const BertConfig c;
  GraphBuilder builder(options.seed);
  TensorRef t = builder.input("input", {options.batch, c.seq, c.hidden});
  for (int64_t i = 0; i < c.layers; ++i) {
    const std::string name = layer_name(i);
    TensorRef attn = self_attention(builder, t, c.heads, join(name, "attn"));
    t = binary(builder, OpType::Add, t, attn, join(name, "attn.residual"));
    t = layer_norm(builder, t, join(name, "attn.norm"));
    TensorRef ffn = feed_forward(builder, t, c.ffn, join(name, "ffn"));
    t = binary(builder, OpType::Add, t, ffn, join(name, "ffn.residual"));
    t = layer_norm(builder, t, join(name, "ffn.norm"));
  }
  builder.output(t, "output");
  return builder.finish();
}

}  // namespace graphworld::zoo
