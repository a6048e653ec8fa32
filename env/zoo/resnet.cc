// ResNets: torchvision's ResNet-18 and ResNet-50 with BatchNorm, and TASO's
// ResNet-50 and ResNeXt-50 forms.
//
// TASO's forms have no BatchNorm: at inference BN is an affine map that
// frameworks fold into the preceding conv, so TASO writes the already-folded
// graph, with the ReLUs fused into the convs as its Conv op allows.
#include <string>
#include <vector>

#include "env/zoo/zoo_builders.h"
#include "env/zoo/zoo_layers.h"

namespace graphworld::zoo {
namespace {

struct Stage {
  int blocks;
  int64_t planes;  // the block's inner width; the output is planes * expansion
  int64_t stride;  // of the stage's first block
};

// torchvision's stage layout, named layer1..layer4.
const std::vector<Stage> kResNet18Stages = {{2, 64, 1}, {2, 128, 2}, {2, 256, 2}, {2, 512, 2}};
const std::vector<Stage> kResNet50Stages = {{3, 64, 1}, {4, 128, 2}, {6, 256, 2}, {3, 512, 2}};

using BlockFn = TensorRef (*)(GraphBuilder& b, TensorRef x, int64_t planes, int64_t stride, const std::string& name);

TensorRef run_stages(GraphBuilder& b, TensorRef x, const std::vector<Stage>& stages, BlockFn block) {
  for (size_t s = 0; s < stages.size(); ++s)
    for (int i = 0; i < stages[s].blocks; ++i)
      x = block(b, x, stages[s].planes, i == 0 ? stages[s].stride : 1,
                "layer" + std::to_string(s + 1) + "." + std::to_string(i));
  return x;
}

// torchvision's stem: conv 7x7/2 (64) + BN + Relu, MaxPool 3x3/2.
TensorRef bn_stem(GraphBuilder& b, TensorRef x) {
  x = conv_bn(b, x, ConvSpec::square(64, 7, 2, 3), true, "conv1");
  return max_pool(b, x, 3, 2, 1, false, "maxpool");
}

// GlobalAvgPool, Flatten, Gemm to 1000 classes.
TensorRef classifier(GraphBuilder& b, TensorRef x) {
  return gemm_classifier(b, global_pool_flatten(b, x, "avgpool"), 1000, "fc");
}

TensorRef add_relu(GraphBuilder& b, TensorRef shortcut, TensorRef t, const std::string& name) {
  return unary(b, OpType::Relu, binary(b, OpType::Add, shortcut, t, join(name, "add")), join(name, "relu"));
}

// torchvision BasicBlock: two 3x3 conv+BN; 1x1 conv+BN downsample on a
// stride or width change.
TensorRef basic_block(GraphBuilder& b, TensorRef x, int64_t planes, int64_t stride, const std::string& name) {
  const int64_t in_channels = b.shape(x).at(1);
  TensorRef t = conv_bn(b, x, ConvSpec::square(planes, 3, stride, 1), true, join(name, "conv1"));
  t = conv_bn(b, t, ConvSpec::square(planes, 3, 1, 1), false, join(name, "conv2"));
  TensorRef shortcut = x;
  if (stride != 1 || in_channels != planes)
    shortcut = conv_bn(b, x, ConvSpec::square(planes, 1, stride), false, join(name, "downsample"));
  return add_relu(b, shortcut, t, name);
}

// torchvision Bottleneck (v1.5: the stride is on the 3x3 conv), expansion 4.
TensorRef bn_bottleneck(GraphBuilder& b, TensorRef x, int64_t planes, int64_t stride, const std::string& name) {
  const int64_t in_channels = b.shape(x).at(1);
  TensorRef t = conv_bn(b, x, ConvSpec::square(planes, 1), true, join(name, "conv1"));
  t = conv_bn(b, t, ConvSpec::square(planes, 3, stride, 1), true, join(name, "conv2"));
  t = conv_bn(b, t, ConvSpec::square(4 * planes, 1), false, join(name, "conv3"));
  TensorRef shortcut = x;
  if (stride != 1 || in_channels != 4 * planes)
    shortcut = conv_bn(b, x, ConvSpec::square(4 * planes, 1, stride), false, join(name, "downsample"));
  return add_relu(b, shortcut, t, name);
}

// TASO's bottleneck without BN: 1x1 -> 3x3 (strided) -> 1x1 (x4), Relu fused
// into all but the last conv; a projection shortcut, with fused Relu as TASO
// writes it, on a stride or width change; Relu(Add(shortcut, t)). `group` > 1
// makes the 3x3 conv grouped (ResNeXt), with `width` its channel count.
TensorRef taso_bottleneck(GraphBuilder& b, TensorRef x, int64_t width, int64_t out_channels, int64_t stride,
                          int64_t group, const std::string& name) {
  const int64_t in_channels = b.shape(x).at(1);
  TensorRef t = conv(b, x, ConvSpec::square(width, 1).with_relu(), join(name, "conv1"));
  t = conv(b, t, ConvSpec::square(width, 3, stride, 1).with_group(group).with_relu(), join(name, "conv2"));
  t = conv(b, t, ConvSpec::square(out_channels, 1), join(name, "conv3"));
  TensorRef shortcut = x;
  if (stride != 1 || in_channels != out_channels)
    shortcut = conv(b, x, ConvSpec::square(out_channels, 1, stride).with_relu(), join(name, "downsample"));
  return add_relu(b, shortcut, t, name);
}

TensorRef taso_resnet_block(GraphBuilder& b, TensorRef x, int64_t planes, int64_t stride, const std::string& name) {
  return taso_bottleneck(b, x, planes, 4 * planes, stride, 1, name);
}

// ResNeXt-50 32x4d: 32 groups of 4 channels per 64 planes, i.e. the grouped
// conv is 2 * planes wide (torchvision's resnext50_32x4d).
TensorRef resnext_block(GraphBuilder& b, TensorRef x, int64_t planes, int64_t stride, const std::string& name) {
  constexpr int64_t kGroups = 32, kWidthPerGroup = 4;
  const int64_t width = planes * kWidthPerGroup / 64 * kGroups;
  return taso_bottleneck(b, x, width, 4 * planes, stride, kGroups, name);
}

}  // namespace

Graph build_resnet18(const ZooOptions& options) {
  GraphBuilder builder(options.seed);
  TensorRef t = builder.input("input", {options.batch, 3, 224, 224});
  t = bn_stem(builder, t);
  t = run_stages(builder, t, kResNet18Stages, basic_block);
  builder.output(classifier(builder, t), "output");
  return builder.finish();
}

// TASO's ResNet-50 starts after the stem, at the 64x56x56 maxpool output, and
// ends at the last block (no pooling or classifier).
Graph build_resnet50(const ZooOptions& options) {
  GraphBuilder builder(options.seed);
  TensorRef t = builder.input("input", {options.batch, 64, 56, 56});
  t = run_stages(builder, t, kResNet50Stages, taso_resnet_block);
  builder.output(t, "output");
  return builder.finish();
}

Graph build_resnet50_full(const ZooOptions& options) {
  GraphBuilder builder(options.seed);
  TensorRef t = builder.input("input", {options.batch, 3, 224, 224});
  t = bn_stem(builder, t);
  t = run_stages(builder, t, kResNet50Stages, bn_bottleneck);
  builder.output(classifier(builder, t), "output");
  return builder.finish();
}

// TASO's ResNeXt-50 (no BN, fused Relu), with torchvision's pooling and
// classifier added so that it ends in class scores.
Graph build_resnext50(const ZooOptions& options) {
  GraphBuilder builder(options.seed);
  TensorRef t = builder.input("input", {options.batch, 3, 224, 224});
  t = conv(builder, t, ConvSpec::square(64, 7, 2, 3).with_relu(), "conv1");
  t = max_pool(builder, t, 3, 2, 1, false, "maxpool");
  t = run_stages(builder, t, kResNet50Stages, resnext_block);
  builder.output(classifier(builder, t), "output");
  return builder.finish();
}

}  // namespace graphworld::zoo
