// TASO's NASNet-A benchmark (nasnet_a.py): a conv stem, then three stages of
// five normal cells followed by a reduction cell that halves the spatial size
// and doubles the channels. Convs have no BatchNorm (folded, as in TASO's
// other forms); separable convs are a depthwise conv then a 1x1 conv, with no
// activation.
#include <string>
#include <vector>

#include "common/error.h"
#include "env/zoo/zoo_builders.h"
#include "env/zoo/zoo_layers.h"

namespace graphworld::zoo {
namespace {

// 1x1 conv to `channels`, fused Relu.
TensorRef squeeze(GraphBuilder& b, TensorRef x, int64_t channels, const std::string& name) {
  return conv(b, x, ConvSpec::square(channels, 1).with_relu(), name);
}

// Brings `input` to the shape of `current`: a 1x1 squeeze at the same spatial
// size, otherwise a 3x3 stride-2 conv (fused Relu).
TensorRef fit(GraphBuilder& b, TensorRef current, TensorRef input, const std::string& name) {
  const Shape cur = b.shape(current);
  const Shape in = b.shape(input);
  if (in[2] == cur[2]) return squeeze(b, input, cur[1], name);
  return conv(b, input, ConvSpec::square(cur[1], 3, 2, 1).with_relu(), name);
}

// Grouped k x k conv (weight [c, C_in/c, k, k], group c; depthwise when
// C_in == c) then a 1x1 conv to c.
TensorRef separable(GraphBuilder& b, TensorRef x, int64_t channels, int64_t k, int64_t stride,
                    const std::string& name) {
  const int64_t in_channels = b.shape(x).at(1);
  if (in_channels % channels != 0)
    throw GraphError("nasnet separable conv '" + name + "': " + std::to_string(in_channels) +
                     " input channels are not a multiple of " + std::to_string(channels));
  TensorRef t = conv(b, x, ConvSpec::square(channels, k, stride, k / 2).with_group(channels), join(name, "depthwise"));
  return conv(b, t, ConvSpec::square(channels, 1), join(name, "pointwise"));
}

TensorRef avg3x3(GraphBuilder& b, TensorRef x, int64_t stride, const std::string& name) {
  return avg_pool(b, x, 3, stride, 1, /*count_include_pad=*/false, name);
}

TensorRef max3x3(GraphBuilder& b, TensorRef x, int64_t stride, const std::string& name) {
  return max_pool(b, x, 3, stride, 1, false, name);
}

TensorRef add(GraphBuilder& b, TensorRef x, TensorRef y, const std::string& name) {
  return binary(b, OpType::Add, x, y, name);
}

// Five pairwise sums of ten branches, concatenated: 5 * c channels.
TensorRef normal_cell(GraphBuilder& b, TensorRef prev, TensorRef cur, int64_t c, const std::string& name) {
  cur = squeeze(b, cur, c, join(name, "squeeze"));
  prev = fit(b, cur, prev, join(name, "fit"));
  auto sep = [&](TensorRef x, int i) { return separable(b, x, c, 3, 1, join(name, "sep" + std::to_string(i))); };
  auto pool = [&](TensorRef x, int i) { return avg3x3(b, x, 1, join(name, "pool" + std::to_string(i))); };
  // Built in TASO's order, so that the weights come in the same sequence.
  std::vector<TensorRef> ts;
  ts.push_back(sep(cur, 0));
  ts.push_back(cur);
  ts.push_back(sep(prev, 2));
  ts.push_back(sep(cur, 3));
  ts.push_back(pool(cur, 4));
  ts.push_back(prev);
  ts.push_back(pool(prev, 6));
  ts.push_back(pool(prev, 7));
  ts.push_back(sep(prev, 8));
  ts.push_back(sep(prev, 9));
  std::vector<TensorRef> outputs;
  for (int i = 0; i < 5; ++i)
    outputs.push_back(add(b, ts[2 * i], ts[2 * i + 1], join(name, "add" + std::to_string(i))));
  return concat(b, std::move(outputs), 1, join(name, "concat"));
}

// Halves the spatial size; 5 * c channels.
TensorRef reduction_cell(GraphBuilder& b, TensorRef prev, TensorRef cur, int64_t c, const std::string& name) {
  cur = squeeze(b, cur, c, join(name, "squeeze"));
  prev = fit(b, cur, prev, join(name, "fit"));
  auto part = [&](const char* what) { return join(name, what); };
  TensorRef s0 = separable(b, prev, c, 7, 2, part("sep0"));
  TensorRef s1 = separable(b, cur, c, 5, 2, part("sep1"));
  TensorRef o0 = add(b, s0, s1, part("add0"));
  TensorRef p2 = max3x3(b, cur, 2, part("pool2"));
  TensorRef s3 = separable(b, prev, c, 7, 2, part("sep3"));
  TensorRef o1 = add(b, p2, s3, part("add1"));
  TensorRef p4 = avg3x3(b, cur, 2, part("pool4"));
  TensorRef s5 = separable(b, prev, c, 5, 2, part("sep5"));
  TensorRef o2 = add(b, p4, s5, part("add2"));
  TensorRef p6 = max3x3(b, cur, 2, part("pool6"));
  TensorRef s7 = separable(b, o0, c, 3, 1, part("sep7"));
  TensorRef o3 = add(b, p6, s7, part("add3"));
  TensorRef p8 = avg3x3(b, o0, 1, part("pool8"));
  TensorRef o4 = add(b, p8, o1, part("add4"));
  return concat(b, {o0, o1, o2, o3, o4}, 1, part("concat"));
}

}  // namespace

Graph build_nasnet_a(const ZooOptions& options) {
  GraphBuilder builder(options.seed);
  TensorRef t = builder.input("input", {options.batch, 3, 224, 224});
  t = conv(builder, t, ConvSpec::square(64, 7, 2, 3).with_relu(), "stem.conv");  // [b, 64, 112, 112]
  t = max_pool(builder, t, 3, 2, 1, false, "stem.pool");                           // 56x56
  int64_t channels = 128;
  for (int stage = 1; stage <= 3; ++stage) {
    const std::string stage_name = "stage" + std::to_string(stage);
    TensorRef prev = t, cur = t;
    for (int i = 0; i < 5; ++i) {
      TensorRef next = normal_cell(builder, prev, cur, channels, stage_name + ".normal" + std::to_string(i));
      prev = cur;
      cur = next;
    }
    channels *= 2;
    t = reduction_cell(builder, prev, cur, channels, stage_name + ".reduction");
  }
  builder.output(t, "output");  // [b, 5120, 7, 7]
  return builder.finish();
}

}  // namespace graphworld::zoo
