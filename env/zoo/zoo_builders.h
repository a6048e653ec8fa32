// The zoo's model builders, one per model; zoo.cc lists them with their
// names. Builders expect checked options (batch >= 1): build_zoo_model checks.
#pragma once

#include "env/graph/graph.h"
#include "env/zoo/zoo.h"

namespace graphworld::zoo {

Graph build_bert(const ZooOptions& options);           // bert.cc
Graph build_bert_full(const ZooOptions& options);      // bert.cc
Graph build_resnet18(const ZooOptions& options);       // resnet.cc
Graph build_resnet50(const ZooOptions& options);       // resnet.cc
Graph build_resnet50_full(const ZooOptions& options);  // resnet.cc
Graph build_resnext50(const ZooOptions& options);      // resnet.cc
Graph build_squeezenet1_1(const ZooOptions& options);  // squeezenet.cc
Graph build_inception_v3(const ZooOptions& options);   // inception.cc
Graph build_nasnet_a(const ZooOptions& options);       // nasnet.cc
Graph build_nasrnn(const ZooOptions& options);         // nasrnn.cc
Graph build_vit_base(const ZooOptions& options);       // vit.cc

}  // namespace graphworld::zoo
