// graphworld import MODEL [-o OUT.onnx] [--json] [--dot FILE]
#include <cstdio>
#include <fstream>

#include "common/error.h"
#include "common/json_writer.h"
#include "common/stopwatch.h"
#include "env/onnx/onnx_export.h"
#include "launch/commands.h"
#include "launch/pipeline/graph_summary.h"
#include "launch/pipeline/model_source.h"

namespace graphworld {
namespace {

int run_import(const CliArgs& args) {
  const std::string& spec = args.positional(0, "a MODEL (an .onnx file or a zoo name)");
  args.expect_at_most(1);
  Stopwatch watch;
  LoadedModel model = load_model(spec, args.int_value("--batch", 1), import_options_from(args));
  double import_ms = watch.elapsed_ms();
  GraphSummary summary = summarize(model.graph);
  double export_ms = 0;
  std::string out_path = args.value_or("--output", "");
  if (!out_path.empty()) {
    watch.restart();
    export_onnx_file(model.graph, out_path);
    export_ms = watch.elapsed_ms();
  }
  if (auto dot = args.value("--dot")) {
    std::ofstream file(*dot);
    if (!file) throw Error(*dot + ": cannot open for writing");
    file << model.graph.to_dot();
  }
  if (args.flag("--json")) {
    JsonWriter json;
    json.begin_object();
    json.key("model").value(model.source);
    write_summary_json(summary, json);
    if (!model.from_zoo) {
      json.key("opset").value(model.import_info.opset);
      json.key("folded_nodes").value(model.import_info.folded_nodes);
    }
    json.key("import_ms").value(import_ms);
    if (!out_path.empty()) {
      json.key("exported").value(out_path);
      json.key("export_ms").value(export_ms);
    }
    json.end_object();
    std::printf("%s\n", json.str().c_str());
    return 0;
  }
  std::printf("model: %s", model.source.c_str());
  if (!model.from_zoo)
    std::printf("   (opset %lld, producer '%s', %lld shape/constant nodes folded)",
                static_cast<long long>(model.import_info.opset), model.import_info.producer.c_str(),
                static_cast<long long>(model.import_info.folded_nodes));
  std::printf("\n%s", format_summary(summary).c_str());
  std::printf("loaded in %.1f ms\n", import_ms);
  if (!out_path.empty()) std::printf("exported to %s in %.1f ms\n", out_path.c_str(), export_ms);
  return 0;
}

}  // namespace

Subcommand import_command() {
  return {{"import",
           "MODEL",
           "Import an ONNX model (or build a zoo model), print its summary, and optionally write it back out.",
           "MODEL is a path to an .onnx file or a zoo model name (see 'graphworld zoo --list').\n"
           "JSON keys: model, ops, op_types, inputs, outputs, params, flops, import_ms [, opset, folded_nodes, "
           "exported, export_ms].",
           {{"--output", "-o", "OUT.onnx", "write the imported graph as ONNX (opset 17): the round trip"},
            {"--dot", "", "FILE", "write the graph in Graphviz format"},
            {"--batch", "", "N", "batch size for zoo models (default 1)"},
            input_shape_option(),
            {"--json", "", "", "print one JSON object instead of text"}}},
          run_import};
}

}  // namespace graphworld
