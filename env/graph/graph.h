// The computation-graph IR.
//
// A Graph is a DAG of Ops. Each op has a type, typed parameters (Attributes),
// ordered input tensor references and one or more typed outputs whose shapes
// are always known. Graph inputs and weights are ops too (OpType::Input and
// OpType::Weight), so every tensor is "output k of op i" (a TensorRef).
//
// Ops are stored in a vector and identified by their index (OpId). The Graph
// itself does no shape inference: builders in env/ops compute output shapes
// and env/ops/validate.h checks them. The Graph checks structure only.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "env/graph/attributes.h"
#include "env/graph/op_type.h"
#include "env/graph/tensor.h"

namespace graphworld {

using OpId = int32_t;

struct TensorRef {
  OpId op = -1;
  int32_t index = 0;  // which output of `op`
  bool operator==(const TensorRef& other) const = default;
  auto operator<=>(const TensorRef& other) const = default;
};

struct Op {
  OpType type = OpType::Identity;
  std::string name;
  Attributes attrs;
  std::vector<TensorRef> inputs;
  std::vector<TensorInfo> outputs;
  // Weight ops only: concrete values, or a seeded-random initialiser.
  std::shared_ptr<const TensorData> value;
  std::optional<RandomInit> random;

  bool is_leaf() const { return type == OpType::Input || type == OpType::Weight; }
};

struct GraphOutput {
  TensorRef ref;
  std::string name;
};

// One use of a tensor: input slot `slot` of op `op`.
struct TensorUse {
  OpId op;
  int32_t slot;
};

class Graph {
 public:
  OpId add_input(std::string name, TensorInfo info);
  OpId add_weight(std::string name, std::shared_ptr<const TensorData> value);
  OpId add_random_weight(std::string name, TensorInfo info, RandomInit init);
  // Appends an op whose output infos are already known. Inputs must refer to
  // existing ops; this is checked.
  OpId add_op(OpType type, std::string name, Attributes attrs, std::vector<TensorRef> inputs,
              std::vector<TensorInfo> outputs);
  void add_output(TensorRef ref, std::string name);
  // Points every use of `from` (op inputs and graph outputs) at `to` and
  // returns the ops whose inputs changed, in id order. The ops that produced
  // `from` stay in the graph, dead if nothing else reads them.
  std::vector<OpId> replace_uses(TensorRef from, TensorRef to);

  size_t num_ops() const { return ops_.size(); }
  const Op& op(OpId id) const { return ops_.at(static_cast<size_t>(id)); }
  Op& mutable_op(OpId id) { return ops_.at(static_cast<size_t>(id)); }
  const std::vector<Op>& ops() const { return ops_; }
  const TensorInfo& info(TensorRef ref) const;

  const std::vector<OpId>& input_ops() const { return input_ops_; }
  const std::vector<GraphOutput>& outputs() const { return outputs_; }

  // Ops in an order where every op follows its inputs. Throws GraphError that
  // names the ops on a cycle if there is one.
  std::vector<OpId> topological_order() const;
  // Throws GraphError on a dangling input reference, an output index an op
  // does not have, a cycle, or a graph output that does not exist.
  void check_structure() const;
  // consumers()[op][k] lists the uses of output k of op.
  std::vector<std::vector<std::vector<TensorUse>>> consumers() const;
  // Ops that some graph output depends on.
  std::vector<bool> live_ops() const;
  // A copy with ops no output depends on removed (ids are renumbered; graph
  // inputs are always kept so the signature does not change).
  Graph pruned() const;

  // Structural identity: same op types, parameters, wiring, shapes and weights
  // (weights compare by identity of their data or by their random initialiser).
  // Op names do not count. The hash is consistent with equality.
  uint64_t structural_hash() const;
  bool structurally_equal(const Graph& other) const;

  // Graphviz text; weights are drawn as small boxes.
  std::string to_dot() const;

  int64_t num_params() const;  // total elements in float Weight ops

 private:
  std::vector<Op> ops_;
  std::vector<OpId> input_ops_;
  std::vector<GraphOutput> outputs_;
};

std::string describe_op(const Graph& graph, OpId id);  // "Conv 'conv1' (#12)"

}  // namespace graphworld
