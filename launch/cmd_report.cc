// graphworld report RUN [RUN...] -o DIR [--evaluation [LABEL=]FILE]...
//
// One self-contained HTML page (DIR/index.html) of training runs and
// evaluations, figures drawn by gnuplot: see launch/report/report_page.h.
#include <stdlib.h>

#include <cstdio>
#include <filesystem>

#include "common/atomic_file.h"
#include "common/error.h"
#include "launch/commands.h"
#include "launch/report/report_page.h"

namespace graphworld {
namespace {

int run_report(const CliArgs& args) {
  const std::string out_dir = args.value_or("--output", "");
  if (out_dir.empty()) throw UsageError("report needs -o DIR: the folder to write index.html into");
  std::vector<std::string> run_dirs;
  for (size_t i = 0; i < args.positional_count(); ++i) run_dirs.push_back(args.positional(i, "a RUN folder"));
  const std::vector<std::string> evaluation_specs = args.values("--evaluation");
  if (run_dirs.empty() && evaluation_specs.empty())
    throw UsageError("report needs at least one RUN folder (made by 'graphworld train') or an --evaluation FILE");
  const bool quiet = args.flag("--quiet");

  // Everything is read first: a bad folder or file fails before any drawing.
  std::vector<RunData> runs;
  for (const std::string& dir : run_dirs) runs.push_back(read_run(dir));
  std::vector<EvaluationData> evaluations;
  for (const std::string& spec : evaluation_specs) evaluations.push_back(read_evaluation(spec));
  for (const EvaluationData& e : evaluations)
    if (e.cost_model != evaluations.front().cost_model)
      throw UsageError("the evaluations priced graphs with different cost models (" + evaluations.front().file + ": " +
                       evaluations.front().cost_model + ", " + e.file + ": " + e.cost_model +
                       "); their bars cannot share an axis: evaluate with one --cost");

  std::filesystem::create_directories(out_dir);
  const bool keep = args.flag("--keep-figures");
  const std::string kept_dir = out_dir + "/figures";
  if (keep && std::filesystem::exists(kept_dir))
    throw UsageError(kept_dir + " exists; --keep-figures will not write over it: remove it or pick another -o DIR");
  // The charts are drawn in a folder of this run's own, never one the user has.
  std::string work_dir = out_dir + "/.report-XXXXXX";
  if (!::mkdtemp(work_dir.data())) throw Error("cannot make a work folder in " + out_dir);
  struct RemoveWorkDir {
    const std::string& dir;
    ~RemoveWorkDir() {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
  } remove_work_dir{work_dir};
  GnuplotRenderer renderer(work_dir);
  if (!quiet)
    std::fprintf(stderr, "report: %zu runs, %zu evaluations; drawing figures with gnuplot in %s\n", runs.size(),
                 evaluations.size(), work_dir.c_str());
  const ReportPage page = build_report_page(runs, evaluations, renderer);
  const std::string index = out_dir + "/index.html";
  write_file_atomically(index, page.html);
  if (keep) std::filesystem::rename(work_dir, kept_dir);
  std::printf("report: wrote %s (%d figures, self-contained: open it in a browser, no network needed)\n",
              index.c_str(), page.figures);
  return 0;
}

}  // namespace

Subcommand report_command() {
  return {{"report",
           "RUN...",
           "Write one self-contained HTML page of training runs and evaluations, with figures.",
           "Reads each RUN folder's config.yaml and metrics.jsonl (as 'graphworld train' writes them) and each\n"
           "--evaluation file, and writes DIR/index.html: the runs; the best real reduction against real env steps\n"
           "and against wall time per graph (model-free and model-based runs on one plot, with the searches'\n"
           "reductions as reference lines); world-model losses per head and the dream's predicted against the real\n"
           "reduction per model-based run; the rules the final policies applied per graph; cost and onnxruntime\n"
           "latency (optimisations on and off) per graph for the original, greedy search, TASO search and each\n"
           "evaluated policy; and the temperature sweep over the model-based runs. Figures are SVG drawn by gnuplot\n"
           "(launch/install-deps installs gnuplot-nox) and inlined into the page.\n"
           "Example:\n"
           "  graphworld evaluate mf.gwpolicy resnet18 squeezenet1.1 --json > mf.json\n"
           "  graphworld report runs/mf runs/mb -o report --evaluation model-free=mf.json",
           {
               {"--output", "-o", "DIR", "the folder to write index.html into (required; made if missing)"},
               {"--evaluation", "", "[LABEL=]FILE", "the output of 'graphworld evaluate --json' (repeatable); LABEL names\n"
                                                     "its policy in the figures (default: the policy file's name)"},
               {"--keep-figures", "", "", "keep the gnuplot scripts, data and SVG files in DIR/figures (which must not exist)"},
               {"--quiet", "-q", "", "no progress on stderr"},
           }},
          run_report};
}

}  // namespace graphworld
