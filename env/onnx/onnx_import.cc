#include "env/onnx/onnx_import.h"

#include <google/protobuf/io/coded_stream.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>

#include "common/error.h"
#include "env/onnx/import_context.h"
#include "env/onnx/import_gelu.h"
#include "env/onnx/tensor_proto.h"
#include "env/ops/validate.h"

namespace graphworld {
namespace {


onnx::ModelProto parse_model(const std::string& bytes, const std::string& source) {
  if (bytes.empty()) throw ImportError(source + ": the file is empty; expected an ONNX model");
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
    throw ImportError(source + ": larger than 2 GiB; protobuf cannot parse it (store weights as external data)");
  onnx::ModelProto model;
  google::protobuf::io::CodedInputStream stream(reinterpret_cast<const uint8_t*>(bytes.data()),
                                                static_cast<int>(bytes.size()));
  stream.SetTotalBytesLimit(std::numeric_limits<int>::max());
  if (!model.ParseFromCodedStream(&stream) || !stream.ConsumedEntireMessage())
    throw ImportError(source + ": not a valid ONNX model (the protobuf does not parse; the file may be truncated, "
                               "corrupt, or not ONNX at all)");
  if (!model.has_graph() || model.graph().node_size() == 0)
    throw ImportError(source + ": the model has no graph or no nodes (the file may be truncated, or not ONNX)");
  return model;
}

int64_t default_opset(const onnx::ModelProto& model, const std::string& source) {
  for (const auto& entry : model.opset_import())
    if (entry.domain().empty() || entry.domain() == "ai.onnx") return entry.version();
  throw ImportError(source + ": the model imports no default-domain opset");
}

// Every op type that cannot be imported, with the nodes that use it, reported at once.
void reject_unsupported(const onnx::GraphProto& graph, int64_t opset, const std::string& source) {
  const auto& converters = node_converters();
  std::map<std::string, std::vector<std::string>> unsupported;
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto& node = graph.node(i);
    bool custom_domain = !node.domain().empty() && node.domain() != "ai.onnx";
    if (custom_domain || !converters.count(node.op_type())) {
      std::string type = custom_domain ? node.domain() + "::" + node.op_type() : node.op_type();
      unsupported[type].push_back(node.name().empty() ? "#" + std::to_string(i) : node.name());
    }
  }
  if (unsupported.empty()) return;
  std::string message = source + ": " + std::to_string(unsupported.size()) + " unsupported op type" +
                        (unsupported.size() > 1 ? "s" : "") + " (opset " + std::to_string(opset) + "):";
  for (const auto& [type, nodes] : unsupported) {
    message += "\n  " + type + " (" + std::to_string(nodes.size()) + " node" + (nodes.size() > 1 ? "s" : "") + ": ";
    for (size_t k = 0; k < nodes.size() && k < 5; ++k) message += (k ? ", " : "") + nodes[k];
    if (nodes.size() > 5) message += ", ...";
    message += ")";
  }
  message += "\nNothing was imported. Supported op types: ";
  bool first = true;
  for (const auto& [type, converter] : converters) {
    message += (first ? "" : ", ") + type;
    first = false;
  }
  throw ImportError(message);
}

std::string shape_flag_example(const std::string& name, const onnx::TensorShapeProto& shape) {
  std::string example;
  for (int d = 0; d < shape.dim_size(); ++d) {
    const auto& dim = shape.dim(d);
    example += (d ? "x" : "") + (dim.has_dim_value() && dim.dim_value() > 0 ? std::to_string(dim.dim_value()) : std::string("N"));
  }
  return "--input-shape " + name + "=" + example;
}

TensorInfo graph_input_info(const onnx::ValueInfoProto& input, const std::string& source, const ImportOptions& options) {
  const std::string where = source + ": graph input '" + input.name() + "'";
  if (!input.type().has_tensor_type()) throw ImportError(where + " is not a tensor");
  const auto& tensor = input.type().tensor_type();
  TensorInfo info;
  if (tensor.elem_type() == onnx::TensorProto::FLOAT) info.dtype = DType::Float32;
  else if (tensor.elem_type() == onnx::TensorProto::INT64) info.dtype = DType::Int64;
  else
    throw ImportError(where + " has element type " +
                      onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(tensor.elem_type())) +
                      "; graph inputs must be float32 or int64");
  auto given = options.input_shapes.find(input.name());
  if (!tensor.has_shape()) {
    if (given == options.input_shapes.end())
      throw ImportError(where + " has no shape; give it one with --input-shape " + input.name() + "=DIMS (e.g. 1x3x224x224)");
    info.shape = given->second;
  } else {
    const auto& shape = tensor.shape();
    if (given != options.input_shapes.end() && static_cast<int>(given->second.size()) != shape.dim_size())
      throw ImportError(where + " has rank " + std::to_string(shape.dim_size()) + " but --input-shape gives " +
                        shape_to_string(given->second) + "; give one size per dimension (" +
                        shape_flag_example(input.name(), shape) + ")");
    for (int d = 0; d < shape.dim_size(); ++d) {
      const auto& dim = shape.dim(d);
      bool fixed = dim.has_dim_value() && dim.dim_value() > 0;
      if (given != options.input_shapes.end()) {
        int64_t wanted = given->second[static_cast<size_t>(d)];
        if (fixed && dim.dim_value() != wanted)
          throw ImportError(where + ": dimension " + std::to_string(d) + " is fixed at " + std::to_string(dim.dim_value()) +
                            " in the model, but --input-shape gives " + std::to_string(wanted) +
                            "; --input-shape can only set dimensions the model leaves symbolic");
        info.shape.push_back(wanted);
        continue;
      }
      if (!fixed)
        throw ImportError(where + ": dimension " + std::to_string(d) +
                          (dim.has_dim_param() && !dim.dim_param().empty() ? " ('" + dim.dim_param() + "')" : std::string()) +
                          " is symbolic; fix it with " + shape_flag_example(input.name(), shape) +
                          " (graphworld optimises graphs with static shapes)");
      info.shape.push_back(dim.dim_value());
    }
  }
  try {
    checked_num_elements(info.shape, where);
  } catch (const GraphError& e) {
    throw ImportError(e.what());
  }
  return info;
}

// Every --input-shape must name a graph input: a typo would otherwise be ignored.
void check_input_shape_names(const onnx::GraphProto& graph, const std::set<std::string>& initializers,
                             const ImportOptions& options, const std::string& source) {
  std::set<std::string> inputs;
  std::string listed;
  for (const auto& input : graph.input()) {
    if (initializers.count(input.name())) continue;
    inputs.insert(input.name());
    listed += (listed.empty() ? "" : ", ") + std::string("'") + input.name() + "'";
  }
  for (const auto& [name, shape] : options.input_shapes)
    if (!inputs.count(name))
      throw ImportError(source + ": --input-shape names '" + name + "', which is not a graph input; the inputs are " + listed);
}

}  // namespace

std::string read_file_bytes(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw ImportError(path + ": is a directory, not a model file");
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw ImportError(path + ": cannot open (" + std::strerror(errno) + ")");
  std::streamsize size = in.tellg();
  if (size < 0) throw ImportError(path + ": cannot read (is it a directory?)");
  std::string bytes(static_cast<size_t>(size), '\0');
  in.seekg(0);
  if (!in.read(bytes.data(), size)) throw ImportError(path + ": read failed");
  return bytes;
}

void add_input_shape_spec(ImportOptions& options, const std::string& spec) {
  auto fail = [&](const std::string& why) {
    throw UsageError("--input-shape '" + spec + "': " + why + "; write NAME=DIMS, e.g. --input-shape images=1x3x640x640");
  };
  size_t eq = spec.rfind('=');
  if (eq == std::string::npos || eq == 0) fail("no input name before '='");
  std::string name = spec.substr(0, eq), dims = spec.substr(eq + 1);
  if (dims.empty()) fail("no dimensions after '='");
  Shape shape;
  size_t start = 0;
  while (start <= dims.size()) {
    size_t end = dims.find_first_of("x,", start);
    std::string part = dims.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos || part.size() > 12)
      fail("'" + part + "' is not a positive dimension");
    int64_t value = std::stoll(part);
    if (value < 1) fail("dimensions must be at least 1, got " + part);
    shape.push_back(value);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  if (options.input_shapes.count(name)) fail("input '" + name + "' is given twice");
  options.input_shapes[name] = shape;
}

Graph import_onnx_file(const std::string& path, ImportInfo* info, const ImportOptions& options) {
  return import_onnx_bytes(read_file_bytes(path), path, info, options);
}

Graph import_onnx_bytes(const std::string& bytes, const std::string& source, ImportInfo* info,
                        const ImportOptions& options) {
  onnx::ModelProto model = parse_model(bytes, source);
  const onnx::GraphProto& graph = model.graph();
  int64_t opset = default_opset(model, source);
  if (opset < kMinImportOpset || opset > kMaxImportOpset)
    throw ImportError(source + ": opset " + std::to_string(opset) + " is not supported (graphworld imports opsets " +
                      std::to_string(kMinImportOpset) + " to " + std::to_string(kMaxImportOpset) +
                      "); convert it with onnx.version_converter.convert_version(model, 17)");
  reject_unsupported(graph, opset, source);

  ImportContext ctx(source, opset);
  std::set<std::string> initializer_names;
  for (const auto& init : graph.initializer()) {
    if (init.name().empty()) throw ImportError(source + ": an initializer has no name");
    ctx.values[init.name()] = ctx.constant_value(tensor_from_proto(init, source + ": initializer '" + init.name() + "'"),
                                                 init.name());
    initializer_names.insert(init.name());
  }
  check_input_shape_names(graph, initializer_names, options, source);
  for (const auto& input : graph.input()) {
    if (initializer_names.count(input.name())) continue;  // old exporters list weights as inputs too
    if (ctx.values.count(input.name())) throw ImportError(source + ": graph input '" + input.name() + "' is declared twice");
    Value v;
    v.name = input.name();
    TensorInfo info = graph_input_info(input, source, options);
    v.ref = ctx.builder.input(input.name(), info.shape, info.dtype);
    ctx.values[input.name()] = v;
  }
  const auto& converters = node_converters();
  const GeluSpellings gelus = find_gelu_spellings(graph);
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    if (gelus.inner_nodes.count(i)) continue;  // read as part of the Gelu its group computes
    try {
      if (auto gelu = gelus.result_node_input.find(i); gelu != gelus.result_node_input.end())
        ctx.set_output(node, 0,
                       ctx.emit(node, OpType::Gelu, {ctx.input(graph.node(gelu->second.node), gelu->second.input)}, {})
                           .at(0));
      else
        converters.at(node.op_type())(ctx, node);
    } catch (const GraphError& e) {
      throw ImportError(ctx.where(node) + ": " + e.what());
    }
    for (const std::string& out : node.output())
      if (!out.empty() && !ctx.values.count(out))
        throw ImportError(ctx.where(node) + ": output '" + out + "' was not produced");
  }
  if (graph.output_size() == 0) throw ImportError(source + ": the graph has no outputs");
  for (const auto& output : graph.output()) {
    auto it = ctx.values.find(output.name());
    if (it == ctx.values.end())
      throw ImportError(source + ": graph output '" + output.name() + "' is not produced by any node");
    if (!it->second.unsupported.empty()) throw ImportError(source + ": graph output " + it->second.unsupported);
    ctx.builder.output(ctx.tensor(it->second), output.name());
  }
  Graph result = ctx.builder.graph().pruned();
  try {
    validate_graph(result);
  } catch (const GraphError& e) {
    throw ImportError(source + ": imported graph is invalid: " + e.what());
  }
  if (info) {
    info->opset = opset;
    info->producer = model.producer_name() + (model.producer_version().empty() ? "" : " " + model.producer_version());
    info->folded_nodes = ctx.folded_nodes;
  }
  return result;
}

}  // namespace graphworld
