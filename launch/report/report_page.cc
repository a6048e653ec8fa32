#include "launch/report/report_page.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

namespace graphworld {
namespace {

std::string escape_html(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string base64(const std::string& bytes) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t chunk = static_cast<unsigned char>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) chunk |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size()) chunk |= static_cast<unsigned char>(bytes[i + 2]);
    out += kAlphabet[(chunk >> 18) & 63];
    out += kAlphabet[(chunk >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(chunk >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kAlphabet[chunk & 63] : '=';
  }
  return out;
}

std::string fixed(double value, int digits = 2) {
  if (!std::isfinite(value)) return "-";
  char text[48];
  std::snprintf(text, sizeof(text), "%.*f", digits, value);
  return text;
}

std::string mean_sd(const std::vector<double>& values, int digits = 2) {
  if (values.empty()) return "-";
  double mean = 0;
  for (double v : values) mean += v;
  mean /= static_cast<double>(values.size());
  if (values.size() == 1) return fixed(mean, digits);
  double var = 0;
  for (double v : values) var += (v - mean) * (v - mean);
  return fixed(mean, digits) + " &plusmn; " + fixed(std::sqrt(var / static_cast<double>(values.size() - 1)), digits);
}

class PageWriter {
 public:
  explicit PageWriter(GnuplotRenderer& renderer) : renderer_(renderer) {}

  void heading(const std::string& text) { out_ << "<h2>" << escape_html(text) << "</h2>\n"; }
  void paragraph(const std::string& text) { out_ << "<p>" << escape_html(text) << "</p>\n"; }
  void raw(const std::string& html) { out_ << html; }

  template <typename Chart>
  void figure(const Chart& chart, const std::string& caption) {
    const std::string svg = renderer_.render(chart);
    ++figures_;
    out_ << "<figure><img class=\"figure\" alt=\"" << escape_html(chart.title) << "\" src=\"data:image/svg+xml;base64,"
         << base64(svg) << "\"><figcaption>" << escape_html(caption) << "</figcaption></figure>\n";
  }

  void table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
    out_ << "<table><tr>";
    for (const std::string& h : header) out_ << "<th>" << escape_html(h) << "</th>";
    out_ << "</tr>\n";
    for (const auto& row : rows) {
      out_ << "<tr>";
      // Cells are trusted HTML made here (numbers, &plusmn;); names are escaped by the caller.
      for (const std::string& cell : row) out_ << "<td>" << cell << "</td>";
      out_ << "</tr>\n";
    }
    out_ << "</table>\n";
  }

  std::string str() const { return out_.str(); }
  int figures() const { return figures_; }

 private:
  GnuplotRenderer& renderer_;
  std::ostringstream out_;
  int figures_ = 0;
};

std::string run_label(const RunData& run) { return run.name + " (" + run.kind() + ")"; }

// Every graph any run reports a best reduction for, in first-seen order.
std::vector<std::string> training_graphs(const std::vector<RunData>& runs) {
  std::vector<std::string> graphs;
  for (const RunData& run : runs)
    for (const MetricsRow& row : run.rows)
      for (const auto& [graph, pct] : row.best_reduction_pct)
        if (std::find(graphs.begin(), graphs.end(), graph) == graphs.end()) graphs.push_back(graph);
  return graphs;
}

void runs_section(PageWriter& page, const std::vector<RunData>& runs) {
  page.heading("Runs");
  std::vector<std::vector<std::string>> rows;
  for (const RunData& run : runs) {
    const MetricsRow last = run.rows.empty() ? MetricsRow{} : run.rows.back();
    std::string best;
    for (const auto& [graph, pct] : last.best_reduction_pct)
      best += (best.empty() ? "" : ", ") + escape_html(graph) + " " + fixed(pct) + "%";
    std::string graphs;
    for (const std::string& g : run.graphs) graphs += (graphs.empty() ? "" : ", ") + escape_html(g);
    rows.push_back({escape_html(run.name), run.kind(), graphs,
                    escape_html(run.cost_model + (run.cost_model == "analytic" && !run.rates.empty() ? ", rates " + run.rates
                                                 : run.cost_model == "gpu" && !run.gpu.empty() ? ", " + run.gpu
                                                                                             : "")),
                    std::to_string(run.seed), run.model_based ? fixed(run.tau) : "-",
                    fixed(last.get("env_steps"), 0), fixed(last.get("wall_s"), 1), best.empty() ? "-" : best,
                    escape_html(run.dir)});
  }
  page.table({"run", "kind", "graphs", "cost model", "seed", "tau", "real env steps", "wall s",
              "best real reduction", "folder"},
             rows);
}

// TASO's and greedy search's reductions on `graph` from any evaluation.
std::vector<std::pair<std::string, double>> search_references(const std::vector<EvaluationData>& evaluations,
                                                              const std::string& graph) {
  for (const EvaluationData& e : evaluations)
    for (const EvaluatedModel& m : e.models) {
      if (m.short_name() != graph) continue;
      std::vector<std::pair<std::string, double>> lines;
      for (const char* method : {"taso", "greedy"})
        if (auto it = m.methods.find(method); it != m.methods.end())
          lines.emplace_back(std::string(method) == "taso" ? "TASO search" : "greedy search", it->second.reduction_pct);
      return lines;
    }
  return {};
}

void reduction_section(PageWriter& page, const std::vector<RunData>& runs,
                       const std::vector<EvaluationData>& evaluations) {
  page.heading("Real reduction during training");
  page.paragraph("The best cost reduction the training episodes reached in the real environment, per training graph, "
                 "against real env steps and against training wall time. Model-based runs are dashed. Horizontal "
                 "lines: the searches' reductions on the same graph, where an evaluation file covers it.");
  const std::vector<std::string> graphs = training_graphs(runs);
  if (graphs.empty()) page.paragraph("No run has a metrics row yet.");
  for (const std::string& graph : graphs) {
    for (const bool by_wall : {false, true}) {
      LineChart chart;
      chart.title = graph + ": best real reduction";
      chart.x_label = by_wall ? "training wall time (s)" : "real env steps";
      chart.y_label = "cost reduction (%)";
      chart.reference_lines = search_references(evaluations, graph);
      for (const RunData& run : runs) {
        ChartSeries series;
        series.title = run_label(run);
        series.dashed = run.model_based;
        for (const MetricsRow& row : run.rows)
          if (auto it = row.best_reduction_pct.find(graph); it != row.best_reduction_pct.end())
            series.points.emplace_back(row.get(by_wall ? "wall_s" : "env_steps"), it->second);
        if (!series.points.empty()) chart.series.push_back(std::move(series));
      }
      page.figure(chart, graph + (by_wall ? ", against wall time" : ", against real env steps"));
    }
  }
}

void world_model_section(PageWriter& page, const std::vector<RunData>& runs) {
  page.heading("World model");
  bool any = false;
  for (const RunData& run : runs) {
    if (!run.model_based) continue;
    any = true;
    LineChart losses;
    losses.title = run.name + ": world-model loss per head";
    losses.x_label = "round";
    losses.y_label = "loss (kept model)";
    // Linear: the z head's NLL is often negative.
    for (const char* head : {"z_nll", "reward", "done", "mask", "locations"})
      for (const char* split : {"train", "held_out"}) {
        ChartSeries series;
        series.title = std::string(head) + (std::string(split) == "train" ? ", train" : ", held out");
        series.dashed = std::string(split) == "held_out";
        const std::string key = std::string("wm_") + split + "_loss_" + head;
        for (const MetricsRow& row : run.rows)
          if (row.has(key)) series.points.emplace_back(row.get("round"), row.get(key));
        losses.series.push_back(std::move(series));
      }
    page.figure(losses, run.name + ": the loss of each MDN-RNN head after each round's training, on the episodes it "
                                   "learned from (solid) and on held-out episodes (dashed)");
    LineChart dream;
    dream.title = run.name + ": dream-predicted against real reduction";
    dream.x_label = "round";
    dream.y_label = "cost reduction (%)";
    ChartSeries predicted{"dream's prediction (greedy controller)", {}, true},
        real{"real: the controller's episodes after it (greedy and sampled)", {}, false};
    for (const DreamRound& r : dream_rounds(run)) {
      predicted.points.emplace_back(r.round, r.predicted_pct);
      if (r.real_episodes > 0) real.points.emplace_back(r.round, r.real_pct);
    }
    dream.series = {predicted, real};
    page.figure(dream, run.name + ": what the dream predicted the controller would reach, and what its real "
                                  "episodes reached after that round");
  }
  if (!any) page.paragraph("No model-based run is in this report.");
}

// The methods of the bars, in order: original, the searches, each policy.
struct BarColumn {
  std::string name;
  const EvaluationData* evaluation;  // the policy's; null for the rest
  std::string method;                // "original", "greedy", "taso" or "policy"
};

void policies_section(PageWriter& page, const std::vector<EvaluationData>& evaluations) {
  page.heading("Final policies against the searches");
  if (evaluations.empty()) {
    page.paragraph("No evaluation file was given (graphworld report --evaluation FILE, where FILE is the output of "
                   "'graphworld evaluate POLICY MODELS... --json').");
    return;
  }
  // Rules applied per graph by each policy.
  Heatmap heat;
  heat.title = "Rules applied by the final policies";
  std::set<std::string> rules;
  for (const EvaluationData& e : evaluations)
    for (const EvaluatedModel& m : e.models)
      if (auto it = m.methods.find("policy"); it != m.methods.end())
        for (const auto& [rule, n] : it->second.applied) rules.insert(rule);
  heat.columns.assign(rules.begin(), rules.end());
  for (const EvaluationData& e : evaluations)
    for (const EvaluatedModel& m : e.models) {
      auto it = m.methods.find("policy");
      if (it == m.methods.end()) continue;
      heat.rows.push_back(m.short_name() + " (" + e.label + ")");
      std::vector<double> counts;
      for (const std::string& rule : heat.columns) {
        auto n = it->second.applied.find(rule);
        counts.push_back(n == it->second.applied.end() ? 0.0 : static_cast<double>(n->second));
      }
      heat.values.push_back(counts);
    }
  page.figure(heat, "How often each final policy applied each rule, per graph (rules no policy applied are left out)");

  // The searches come from the first evaluation that has the graph.
  std::vector<std::string> graphs;
  for (const EvaluationData& e : evaluations)
    for (const EvaluatedModel& m : e.models)
      if (std::find(graphs.begin(), graphs.end(), m.short_name()) == graphs.end()) graphs.push_back(m.short_name());
  std::vector<BarColumn> columns = {{"original", nullptr, "original"},
                                    {"greedy search", nullptr, "greedy"},
                                    {"TASO search", nullptr, "taso"}};
  for (const EvaluationData& e : evaluations) columns.push_back({"policy " + e.label, &e, "policy"});
  auto find_model = [&](const EvaluationData& e, const std::string& graph) -> const EvaluatedModel* {
    for (const EvaluatedModel& m : e.models)
      if (m.short_name() == graph) return &m;
    return nullptr;
  };
  // value(model, method row) for one of the bar charts; NaN when unknown.
  auto chart_of = [&](const std::string& title, const std::string& y_label, auto value) {
    BarChart chart;
    chart.title = title;
    chart.y_label = y_label;
    chart.groups = graphs;
    for (const BarColumn& c : columns) chart.bar_names.push_back(c.name);
    for (const std::string& graph : graphs) {
      std::vector<double> row;
      for (const BarColumn& c : columns) {
        const EvaluatedModel* m = nullptr;
        if (c.evaluation) {
          m = find_model(*c.evaluation, graph);
        } else {
          for (const EvaluationData& e : evaluations)
            if ((m = find_model(e, graph))) break;
        }
        row.push_back(m ? value(*m, c.method) : NAN);
      }
      chart.values.push_back(row);
    }
    return chart;
  };
  auto method_of = [](const EvaluatedModel& m, const std::string& method) -> const EvaluatedMethod* {
    auto it = m.methods.find(method == "original" ? "policy" : method);
    return it == m.methods.end() ? nullptr : &it->second;
  };
  page.figure(chart_of("Cost per graph (" + evaluations.front().cost_model + " cost model)", "cost (ms)",
                       [&](const EvaluatedModel& m, const std::string& method) -> double {
                         if (method == "original") return m.original_cost_ms;
                         const EvaluatedMethod* e = method_of(m, method);
                         return e ? e->optimized_cost_ms : NAN;
                       }),
              "The cost model's price of the original graph and of each method's result");
  for (const bool opt_on : {true, false}) {
    page.figure(
        chart_of(std::string("onnxruntime latency per graph, its graph optimisations ") + (opt_on ? "on" : "off"),
                 "latency (ms)",
                 [&](const EvaluatedModel& m, const std::string& method) -> double {
                   const EvaluatedMethod* e = method_of(m, method);
                   if (!e) return NAN;
                   const std::optional<double>& v = method == "original"
                                                        ? (opt_on ? e->opt_on_original_ms : e->opt_off_original_ms)
                                                        : (opt_on ? e->opt_on_optimized_ms : e->opt_off_optimized_ms);
                   return v ? *v : NAN;
                 }),
        std::string("Median latency in onnxruntime (graph optimisations ") + (opt_on ? "on" : "off") +
            "), timed in alternating rounds against the original");
  }
  std::vector<std::vector<std::string>> rows;
  for (const EvaluationData& e : evaluations)
    for (const EvaluatedModel& m : e.models)
      for (const auto& [method, r] : m.methods) {
        std::string applied;
        int64_t total = 0;
        for (const auto& [rule, n] : r.applied) total += n;
        rows.push_back({escape_html(m.short_name()), escape_html(method == "policy" ? "policy " + e.label : method),
                        fixed(m.original_cost_ms, 4), fixed(r.optimized_cost_ms, 4),
                        fixed(r.reduction_pct) + "%" +
                            (r.agent_alone_pct ? " (alone " + fixed(*r.agent_alone_pct) + "%, then greedy)" : ""),
                        std::to_string(total),
                        r.opt_on_original_ms && r.opt_on_optimized_ms
                            ? fixed(*r.opt_on_original_ms, 3) + " &rarr; " + fixed(*r.opt_on_optimized_ms, 3)
                            : "-"});
      }
  page.table({"graph", "method", "original cost ms", "optimised cost ms", "reduction", "rewrites",
              "onnxruntime ms (opt on)"},
             rows);
}

void temperature_section(PageWriter& page, const std::vector<RunData>& runs) {
  page.heading("Temperature sweep");
  std::map<double, std::vector<const RunData*>> by_tau;
  for (const RunData& run : runs)
    if (run.model_based) by_tau[run.tau].push_back(&run);
  if (by_tau.empty()) {
    page.paragraph("No model-based run is in this report.");
    return;
  }
  page.paragraph("Model-based runs grouped by the dream's temperature tau: the last round's dream prediction and the "
                 "real reduction of the controller's episodes after it, and the best real reduction over the run "
                 "(mean over its graphs); mean and standard deviation over the runs (seeds).");
  std::vector<std::vector<std::string>> rows;
  for (const auto& [tau, group] : by_tau) {
    std::vector<double> predicted, real, best;
    std::string names;
    for (const RunData* run : group) {
      names += (names.empty() ? "" : ", ") + escape_html(run->name);
      const std::vector<DreamRound> rounds = dream_rounds(*run);
      if (!rounds.empty()) {
        predicted.push_back(rounds.back().predicted_pct);
        if (rounds.back().real_episodes > 0) real.push_back(rounds.back().real_pct);
      }
      if (!run->rows.empty() && !run->rows.back().best_reduction_pct.empty()) {
        double sum = 0;
        for (const auto& [graph, pct] : run->rows.back().best_reduction_pct) sum += pct;
        best.push_back(sum / static_cast<double>(run->rows.back().best_reduction_pct.size()));
      }
    }
    rows.push_back({fixed(tau), std::to_string(group.size()), mean_sd(predicted) + "%", mean_sd(real) + "%",
                    mean_sd(best) + "%", names});
  }
  page.table({"tau", "runs", "dream prediction (last round)", "real, controller (last round)",
              "best real reduction", "runs"},
             rows);
}

const char* kStyle =
    "body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}"
    "table{border-collapse:collapse;margin:1em 0;font-size:90%}"
    "td,th{border:1px solid #bbb;padding:3px 8px;text-align:left}th{background:#eee}"
    "figure{margin:1.5em 0}img.figure{max-width:100%;border:1px solid #ddd}"
    "figcaption{color:#555;font-size:90%}";

// Marks the body with how many figures loaded: what a browser test reads.
const char* kLoadCheck =
    "<script>window.addEventListener('load',function(){var f=document.querySelectorAll('img.figure'),ok=0;"
    "for(var i=0;i<f.length;i++)if(f[i].complete&&f[i].naturalWidth>0)ok++;"
    "document.body.setAttribute('data-figures',f.length);document.body.setAttribute('data-figures-loaded',ok);});"
    "</script>\n";

}  // namespace

std::vector<DreamRound> dream_rounds(const RunData& run) {
  std::vector<DreamRound> rounds;
  bool collecting = false;
  double weighted = 0;
  for (const MetricsRow& row : run.rows) {
    if (row.has("dream_greedy_reduction_pct")) {
      DreamRound r;
      r.round = row.get("round");
      r.predicted_pct = row.get("dream_greedy_reduction_pct");
      rounds.push_back(r);
      collecting = true;
      weighted = 0;
      continue;
    }
    // The real phase after a dream ends when the next world model is trained.
    if (row.has("world_model_s")) collecting = false;
    if (!collecting) continue;
    const auto episodes = static_cast<int64_t>(row.get("episodes_this_update"));
    if (episodes <= 0) continue;
    weighted += row.get("mean_episode_reduction_pct") * static_cast<double>(episodes);
    rounds.back().real_episodes += episodes;
    rounds.back().real_pct = weighted / static_cast<double>(rounds.back().real_episodes);
  }
  return rounds;
}

ReportPage build_report_page(const std::vector<RunData>& runs, const std::vector<EvaluationData>& evaluations,
                             GnuplotRenderer& renderer) {
  PageWriter page(renderer);
  runs_section(page, runs);
  reduction_section(page, runs, evaluations);
  world_model_section(page, runs);
  policies_section(page, evaluations);
  temperature_section(page, runs);
  ReportPage result;
  result.figures = page.figures();
  result.html = std::string("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>graphworld report"
                            "</title><style>") +
                kStyle + "</style></head>\n<body>\n<h1>graphworld report</h1>\n" + page.str() + kLoadCheck +
                "</body></html>\n";
  return result;
}

}  // namespace graphworld
