// torchvision's SqueezeNet 1.1 (squeezenet1_1): convs with biases and fused
// Relu, no BatchNorm (the model has none).
#include <string>

#include "env/zoo/zoo_builders.h"
#include "env/zoo/zoo_layers.h"

namespace graphworld::zoo {
namespace {

// A conv with bias and fused Relu, its weights scaled for the Relu (the
// network is a plain Relu chain; see ConvSpec::relu_gain).
TensorRef conv_relu(GraphBuilder& b, TensorRef x, ConvSpec spec, const std::string& name) {
  return conv(b, x, spec.with_bias().with_relu().with_relu_gain(), name);
}

// Fire module: a 1x1 squeeze, then 1x1 and 3x3 expands side by side.
TensorRef fire(GraphBuilder& b, TensorRef x, int64_t squeeze, int64_t expand1x1, int64_t expand3x3,
               const std::string& name) {
  TensorRef s = conv_relu(b, x, ConvSpec::square(squeeze, 1), join(name, "squeeze"));
  TensorRef e1 = conv_relu(b, s, ConvSpec::square(expand1x1, 1), join(name, "expand1x1"));
  TensorRef e3 = conv_relu(b, s, ConvSpec::square(expand3x3, 3, 1, 1), join(name, "expand3x3"));
  return concat(b, {e1, e3}, 1, join(name, "concat"));
}

TensorRef pool(GraphBuilder& b, TensorRef x, const std::string& name) {
  return max_pool(b, x, 3, 2, 0, /*ceil_mode=*/true, name);
}

}  // namespace

Graph build_squeezenet1_1(const ZooOptions& options) {
  GraphBuilder builder(options.seed);
  TensorRef t = builder.input("input", {options.batch, 3, 224, 224});
  // Named after torchvision's features.N / classifier.N indices.
  t = conv_relu(builder, t, ConvSpec::square(64, 3, 2), "features.0");  // [b, 64, 111, 111]
  t = pool(builder, t, "features.2");                                     // 55x55
  t = fire(builder, t, 16, 64, 64, "features.3");
  t = fire(builder, t, 16, 64, 64, "features.4");
  t = pool(builder, t, "features.5");  // 27x27
  t = fire(builder, t, 32, 128, 128, "features.6");
  t = fire(builder, t, 32, 128, 128, "features.7");
  t = pool(builder, t, "features.8");  // 13x13
  t = fire(builder, t, 48, 192, 192, "features.9");
  t = fire(builder, t, 48, 192, 192, "features.10");
  t = fire(builder, t, 64, 256, 256, "features.11");
  t = fire(builder, t, 64, 256, 256, "features.12");
  // Classifier (its Dropout is the identity at inference and is left out).
  t = conv_relu(builder, t, ConvSpec::square(1000, 1), "classifier.1");
  t = global_pool_flatten(builder, t, "classifier.3");
  builder.output(t, "output");
  return builder.finish();
}

}  // namespace graphworld::zoo
