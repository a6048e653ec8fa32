// Graphviz export, for looking at graphs: `graphworld import MODEL --dot out.dot`.
#include "common/json_writer.h"
#include "env/graph/graph.h"

namespace graphworld {

std::string Graph::to_dot() const {
  std::string out = "digraph graphworld {\n  rankdir=TB;\n  node [fontname=\"Helvetica\", fontsize=10];\n";
  std::vector<bool> live = live_ops();
  for (size_t i = 0; i < ops_.size(); ++i) {
    const Op& op = ops_[i];
    if (!live[i] && op.type != OpType::Input) continue;
    std::string label = std::string(op_type_name(op.type));
    if (!op.name.empty()) label += "\\n" + json_escape(op.name);
    std::string attrs = op.attrs.to_string();
    if (!attrs.empty()) label += "\\n" + json_escape(attrs);
    label += "\\n" + shape_to_string(op.outputs[0].shape);
    const char* style = "shape=box, style=rounded";
    if (op.type == OpType::Weight) style = "shape=box, fontsize=8, color=gray";
    if (op.type == OpType::Input) style = "shape=oval, style=bold";
    out += "  n" + std::to_string(i) + " [label=\"" + label + "\", " + style + "];\n";
  }
  for (size_t i = 0; i < ops_.size(); ++i) {
    if (!live[i]) continue;
    for (const TensorRef& ref : ops_[i].inputs) {
      out += "  n" + std::to_string(ref.op) + " -> n" + std::to_string(i);
      if (ops_[ref.op].outputs.size() > 1) out += " [label=\"" + std::to_string(ref.index) + "\"]";
      out += ";\n";
    }
  }
  for (size_t k = 0; k < outputs_.size(); ++k) {
    out += "  out" + std::to_string(k) + " [label=\"" + json_escape(outputs_[k].name) + "\", shape=oval, style=bold];\n";
    out += "  n" + std::to_string(outputs_[k].ref.op) + " -> out" + std::to_string(k) + ";\n";
  }
  return out + "}\n";
}

}  // namespace graphworld
