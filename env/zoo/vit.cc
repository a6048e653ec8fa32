// ViT-B/16 (Dosovitskiy et al.; timm's vit_base_patch16_224): 16x16 patches
// of a 224x224 image, hidden 768, 12 pre-norm encoder layers with 12 heads
// and an MLP of 3072, classification from the class token.
#include <string>

#include "env/zoo/zoo_builders.h"
#include "env/zoo/zoo_layers.h"
#include "env/zoo/zoo_transformer.h"

namespace graphworld::zoo {
namespace {

struct VitConfig {
  int64_t image = 224;
  int64_t patch = 16;
  int64_t hidden = 768;
  int64_t heads = 12;
  int64_t mlp = 3072;
  int64_t layers = 12;
  int64_t classes = 1000;
};

}  // namespace

Graph build_vit_base(const ZooOptions& options) {
  const VitConfig c;
  const int64_t batch = options.batch;
  const int64_t grid = c.image / c.patch;
  const int64_t patches = grid * grid;  // 196
  const int64_t tokens = patches + 1;   // with the class token
  GraphBuilder builder(options.seed);
  TensorRef t = builder.input("input", {batch, 3, c.image, c.image});

  // Patch embedding: a strided conv, then [b, hidden, 14, 14] -> [b, 196, hidden].
  t = conv(builder, t, ConvSpec::square(c.hidden, c.patch, c.patch).with_bias(), "patch_embed");
  t = reshape(builder, t, {batch, c.hidden, patches}, "patch_embed.flatten");
  t = transpose(builder, t, {0, 2, 1}, "patch_embed.transpose");

  // The class token. The graph IR has no broadcast-to-batch op that Concat
  // could use, so the token is a [b, 1, hidden] weight (one token per batch
  // element, each seeded-random) rather than one [1, 1, hidden] token shared.
  TensorRef cls = builder.random_weight({batch, 1, c.hidden}, -0.1f, 0.1f, "cls_token");
  t = concat(builder, {cls, t}, 1, "cls_concat");  // [b, 197, hidden]
  TensorRef pos = builder.random_weight({1, tokens, c.hidden}, -0.1f, 0.1f, "pos_embed");
  t = binary(builder, OpType::Add, t, pos, "pos_embed.add");

  for (int64_t i = 0; i < c.layers; ++i) {
    const std::string name = "blocks." + std::to_string(i);
    TensorRef attn = self_attention(builder, layer_norm(builder, t, join(name, "norm1")), c.heads, join(name, "attn"));
    t = binary(builder, OpType::Add, t, attn, join(name, "attn.residual"));
    TensorRef mlp = feed_forward(builder, layer_norm(builder, t, join(name, "norm2")), c.mlp, join(name, "mlp"));
    t = binary(builder, OpType::Add, t, mlp, join(name, "mlp.residual"));
  }
  t = layer_norm(builder, t, "norm");

  // Classify from the class token: [b, 197, hidden] -> [b, 1, hidden] -> [b, hidden].
  t = builder.add1(OpType::Slice, {t},
                   {{AttrKey::Starts, Ints{0}}, {AttrKey::Ends, Ints{1}}, {AttrKey::Axes, Ints{1}}}, "cls_select");
  t = reshape(builder, t, {batch, c.hidden}, "cls_select.flatten");
  t = gemm_classifier(builder, t, c.classes, "head");
  builder.output(t, "output");
  return builder.finish();
}

}  // namespace graphworld::zoo
