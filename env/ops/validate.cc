#include "env/ops/validate.h"

#include "common/error.h"
#include "env/ops/op_schema.h"

namespace graphworld {

void validate_graph(const Graph& graph) {
  graph.check_structure();
  if (graph.outputs().empty()) throw GraphError("graph has no outputs");
  for (OpId id = 0; id < static_cast<OpId>(graph.num_ops()); ++id) {
    const Op& op = graph.op(id);
    if (op.is_leaf()) {
      if (!op.inputs.empty()) throw GraphError(describe_op(graph, id) + " is a leaf but has inputs");
      if (op.value && op.value->info() != op.outputs.at(0))
        throw GraphError(describe_op(graph, id) + " records shape " + shape_to_string(op.outputs[0].shape) +
                         " but its data has shape " + shape_to_string(op.value->shape()));
      continue;
    }
    std::vector<TensorInfo> inputs;
    for (const TensorRef& ref : op.inputs) inputs.push_back(graph.info(ref));
    std::vector<TensorInfo> expected = infer_outputs(op.type, op.attrs, inputs, op.name);
    if (expected != op.outputs) {
      std::string got, want;
      for (const auto& o : op.outputs) got += shape_to_string(o.shape) + dtype_name(o.dtype) + " ";
      for (const auto& o : expected) want += shape_to_string(o.shape) + dtype_name(o.dtype) + " ";
      throw GraphError("shape mismatch at " + describe_op(graph, id) + ": records outputs " + got +
                       "but its inputs give " + want);
    }
  }
}

}  // namespace graphworld
