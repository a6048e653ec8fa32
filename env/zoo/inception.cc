// torchvision's Inception-v3 (no aux logits), in TASO's form: every
// BasicConv2d is a Conv without bias with fused Relu and no BatchNorm (BN
// folded into the conv, as at inference).
#include <string>

#include "env/zoo/zoo_builders.h"
#include "env/zoo/zoo_layers.h"

namespace graphworld::zoo {
namespace {

// BasicConv2d: conv + fused Relu. Weights are scaled for the Relu because the
// network is a deep plain Relu chain (see ConvSpec::relu_gain).
TensorRef basic_conv(GraphBuilder& b, TensorRef x, ConvSpec spec, const std::string& name) {
  return conv(b, x, spec.with_relu().with_relu_gain(), name);
}

TensorRef conv1x1(GraphBuilder& b, TensorRef x, int64_t out, const std::string& name) {
  return basic_conv(b, x, ConvSpec::square(out, 1), name);
}

// kh x kw, stride 1, size-preserving padding (1x7: [0,3,0,3], 3x1: [1,0,1,0]...).
TensorRef conv_same(GraphBuilder& b, TensorRef x, int64_t out, int64_t kh, int64_t kw, const std::string& name) {
  return basic_conv(b, x, ConvSpec::same(out, kh, kw), name);
}

// 3x3 stride 2, no padding: the grid reductions.
TensorRef conv3x3_s2(GraphBuilder& b, TensorRef x, int64_t out, const std::string& name) {
  return basic_conv(b, x, ConvSpec::square(out, 3, 2), name);
}

// The avg pool of branch_pool: 3x3, stride 1, pad 1, padding counted (as
// F.avg_pool2d's default).
TensorRef branch_avg_pool(GraphBuilder& b, TensorRef x, const std::string& name) {
  return avg_pool(b, x, 3, 1, 1, /*count_include_pad=*/true, join(name, "pool"));
}

TensorRef inception_a(GraphBuilder& b, TensorRef x, int64_t pool_features, const std::string& name) {
  TensorRef b1 = conv1x1(b, x, 64, join(name, "branch1x1"));
  TensorRef b5 = conv1x1(b, x, 48, join(name, "branch5x5_1"));
  b5 = conv_same(b, b5, 64, 5, 5, join(name, "branch5x5_2"));
  TensorRef b3 = conv1x1(b, x, 64, join(name, "branch3x3dbl_1"));
  b3 = conv_same(b, b3, 96, 3, 3, join(name, "branch3x3dbl_2"));
  b3 = conv_same(b, b3, 96, 3, 3, join(name, "branch3x3dbl_3"));
  TensorRef bp = conv1x1(b, branch_avg_pool(b, x, name), pool_features, join(name, "branch_pool"));
  return concat(b, {b1, b5, b3, bp}, 1, join(name, "concat"));
}

TensorRef inception_b(GraphBuilder& b, TensorRef x, const std::string& name) {
  TensorRef b3 = conv3x3_s2(b, x, 384, join(name, "branch3x3"));
  TensorRef bd = conv1x1(b, x, 64, join(name, "branch3x3dbl_1"));
  bd = conv_same(b, bd, 96, 3, 3, join(name, "branch3x3dbl_2"));
  bd = conv3x3_s2(b, bd, 96, join(name, "branch3x3dbl_3"));
  TensorRef bp = max_pool(b, x, 3, 2, 0, false, join(name, "pool"));
  return concat(b, {b3, bd, bp}, 1, join(name, "concat"));
}

TensorRef inception_c(GraphBuilder& b, TensorRef x, int64_t c7, const std::string& name) {
  TensorRef b1 = conv1x1(b, x, 192, join(name, "branch1x1"));
  TensorRef b7 = conv1x1(b, x, c7, join(name, "branch7x7_1"));
  b7 = conv_same(b, b7, c7, 1, 7, join(name, "branch7x7_2"));
  b7 = conv_same(b, b7, 192, 7, 1, join(name, "branch7x7_3"));
  TensorRef bd = conv1x1(b, x, c7, join(name, "branch7x7dbl_1"));
  bd = conv_same(b, bd, c7, 7, 1, join(name, "branch7x7dbl_2"));
  bd = conv_same(b, bd, c7, 1, 7, join(name, "branch7x7dbl_3"));
  bd = conv_same(b, bd, c7, 7, 1, join(name, "branch7x7dbl_4"));
  bd = conv_same(b, bd, 192, 1, 7, join(name, "branch7x7dbl_5"));
  TensorRef bp = conv1x1(b, branch_avg_pool(b, x, name), 192, join(name, "branch_pool"));
  return concat(b, {b1, b7, bd, bp}, 1, join(name, "concat"));
}

TensorRef inception_d(GraphBuilder& b, TensorRef x, const std::string& name) {
  TensorRef b3 = conv1x1(b, x, 192, join(name, "branch3x3_1"));
  b3 = conv3x3_s2(b, b3, 320, join(name, "branch3x3_2"));
  TensorRef b7 = conv1x1(b, x, 192, join(name, "branch7x7x3_1"));
  b7 = conv_same(b, b7, 192, 1, 7, join(name, "branch7x7x3_2"));
  b7 = conv_same(b, b7, 192, 7, 1, join(name, "branch7x7x3_3"));
  b7 = conv3x3_s2(b, b7, 192, join(name, "branch7x7x3_4"));
  TensorRef bp = max_pool(b, x, 3, 2, 0, false, join(name, "pool"));
  return concat(b, {b3, b7, bp}, 1, join(name, "concat"));
}

TensorRef inception_e(GraphBuilder& b, TensorRef x, const std::string& name) {
  TensorRef b1 = conv1x1(b, x, 320, join(name, "branch1x1"));
  TensorRef b3 = conv1x1(b, x, 384, join(name, "branch3x3_1"));
  b3 = concat(b,
              {conv_same(b, b3, 384, 1, 3, join(name, "branch3x3_2a")),
               conv_same(b, b3, 384, 3, 1, join(name, "branch3x3_2b"))},
              1, join(name, "branch3x3.concat"));
  TensorRef bd = conv1x1(b, x, 448, join(name, "branch3x3dbl_1"));
  bd = conv_same(b, bd, 384, 3, 3, join(name, "branch3x3dbl_2"));
  bd = concat(b,
              {conv_same(b, bd, 384, 1, 3, join(name, "branch3x3dbl_3a")),
               conv_same(b, bd, 384, 3, 1, join(name, "branch3x3dbl_3b"))},
              1, join(name, "branch3x3dbl.concat"));
  TensorRef bp = conv1x1(b, branch_avg_pool(b, x, name), 192, join(name, "branch_pool"));
  return concat(b, {b1, b3, bd, bp}, 1, join(name, "concat"));
}

}  // namespace

Graph build_inception_v3(const ZooOptions& options) {
  GraphBuilder builder(options.seed);
  TensorRef t = builder.input("input", {options.batch, 3, 299, 299});
  t = conv3x3_s2(builder, t, 32, "Conv2d_1a_3x3");                                   // 149x149
  t = basic_conv(builder, t, ConvSpec::square(32, 3), "Conv2d_2a_3x3");              // 147x147
  t = basic_conv(builder, t, ConvSpec::square(64, 3, 1, 1), "Conv2d_2b_3x3");        // 147x147
  t = max_pool(builder, t, 3, 2, 0, false, "maxpool1");                              // 73x73
  t = conv1x1(builder, t, 80, "Conv2d_3b_1x1");                                      // 73x73
  t = basic_conv(builder, t, ConvSpec::square(192, 3), "Conv2d_4a_3x3");             // 71x71
  t = max_pool(builder, t, 3, 2, 0, false, "maxpool2");                              // 35x35
  t = inception_a(builder, t, 32, "Mixed_5b");  // 256 channels
  t = inception_a(builder, t, 64, "Mixed_5c");  // 288
  t = inception_a(builder, t, 64, "Mixed_5d");  // 288
  t = inception_b(builder, t, "Mixed_6a");      // 768, 17x17
  t = inception_c(builder, t, 128, "Mixed_6b");
  t = inception_c(builder, t, 160, "Mixed_6c");
  t = inception_c(builder, t, 160, "Mixed_6d");
  t = inception_c(builder, t, 192, "Mixed_6e");
  t = inception_d(builder, t, "Mixed_7a");  // 1280, 8x8
  t = inception_e(builder, t, "Mixed_7b");  // 2048
  t = inception_e(builder, t, "Mixed_7c");
  // avgpool, then Dropout (the identity at inference, left out), then fc.
  t = gemm_classifier(builder, global_pool_flatten(builder, t, "avgpool"), 1000, "fc");
  builder.output(t, "output");
  return builder.finish();
}

}  // namespace graphworld::zoo
