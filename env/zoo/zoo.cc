#include "env/zoo/zoo.h"

#include "common/error.h"
#include "env/zoo/zoo_builders.h"

namespace graphworld {

const std::vector<ZooModel>& zoo_models() {
  static const std::vector<ZooModel> models = {
      {"bert", "TASO's BERT: 8 attention layers, seq 64, hidden 1024, 16 heads; no softmax, LayerNorm or residual",
       zoo::build_bert},
      {"bert-full", "BERT encoder: 8 post-norm layers, seq 64, hidden 1024, 16 heads, FFN 4096 with Gelu",
       zoo::build_bert_full},
      {"resnet18", "torchvision ResNet-18 with BatchNorm: 3x224x224 -> 1000 classes", zoo::build_resnet18},
      {"resnet50", "TASO's ResNet-50: 16 bottlenecks from a 64x56x56 input to 2048x7x7, fused Relu, no BatchNorm",
       zoo::build_resnet50},
      {"resnet50-full", "torchvision ResNet-50 with BatchNorm: 3x224x224 -> 1000 classes", zoo::build_resnet50_full},
      {"squeezenet1.1", "torchvision SqueezeNet 1.1: 3x224x224 -> 1000 classes", zoo::build_squeezenet1_1},
      {"inceptionv3", "torchvision Inception-v3 in TASO's form (fused Relu, no BatchNorm): 3x299x299 -> 1000 classes",
       zoo::build_inception_v3},
      {"resnext50", "ResNeXt-50 32x4d in TASO's form (fused Relu, no BatchNorm): 3x224x224 -> 1000 classes",
       zoo::build_resnext50},
      {"nasnet-a", "TASO's NASNet-A: 3 stages of 5 normal cells and a reduction cell, 3x224x224 -> 5120x7x7",
       zoo::build_nasnet_a},
      {"nasrnn", "TASO's NASRNN: the NAS recurrent cell unrolled over 5 steps, hidden 512", zoo::build_nasrnn},
      {"vit-base", "ViT-B/16: 12 pre-norm layers, hidden 768, 12 heads, 3x224x224 -> 1000 classes",
       zoo::build_vit_base},
  };
  return models;
}

Graph build_zoo_model(std::string_view name, const ZooOptions& options) {
  for (const ZooModel& model : zoo_models()) {
    if (model.name != name) continue;
    if (options.batch < 1)
      throw UsageError("zoo model '" + model.name + "': batch must be at least 1, got " +
                       std::to_string(options.batch));
    return model.build(options);
  }
  std::string known;
  for (const ZooModel& model : zoo_models()) known += (known.empty() ? "" : ", ") + model.name;
  throw UsageError("unknown zoo model '" + std::string(name) + "'; known models: " + known);
}

}  // namespace graphworld
