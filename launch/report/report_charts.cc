#include "launch/report/report_charts.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/atomic_file.h"
#include "common/error.h"
#include "launch/process/command_output.h"

namespace graphworld {
namespace {

// A gnuplot single-quoted string: the only kind in which gnuplot neither
// expands backquotes (a shell command) nor interprets escapes; a quote is
// doubled. Titles come from run folders, configs and evaluation files.
std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') out += "''";
    else if (c == '\n' || c == '\r') out += ' ';
    else out += c;
  }
  return out + "'";
}

std::string number(double value) {
  if (!std::isfinite(value)) return "?";
  char text[32];
  std::snprintf(text, sizeof(text), "%.9g", value);
  return text;
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out.flush()) throw Error(path + ": write failed (disk full?)");
}

// The terminal, title and grid every chart shares.
std::string preamble(const std::string& dir, const std::string& name, int width, int height, const std::string& title) {
  std::ostringstream s;
  s << "cd " << quoted(dir) << "\n"
    << "set terminal svg size " << width << "," << height << " font 'Sans,11' background rgb 'white' noenhanced\n"
    << "set output " << quoted(name + ".svg") << "\n"
    << "set title " << quoted(title) << "\n"
    << "set datafile missing '?'\n";
  return s.str();
}

}  // namespace

GnuplotRenderer::GnuplotRenderer(std::string work_dir) : work_dir_(std::move(work_dir)) {
  if (!on_path("gnuplot"))
    throw Error("graphworld report draws its figures with gnuplot, which is not on PATH; run launch/install-deps "
                "(it installs gnuplot-nox) or 'apt-get install gnuplot-nox'");
  std::filesystem::create_directories(work_dir_);
  work_dir_ = std::filesystem::absolute(work_dir_).string();
}

std::string GnuplotRenderer::next_name() { return "chart" + std::to_string(++charts_); }

std::string GnuplotRenderer::run(const std::string& name, const std::string& script) {
  const std::string script_file = work_dir_ + "/" + name + ".gp";
  write_text(script_file, script);
  const CommandOutput result = command_output({"gnuplot", script_file});
  const std::string svg_file = work_dir_ + "/" + name + ".svg";
  if (result.exit_code != 0 || !std::filesystem::exists(svg_file))
    throw Error("gnuplot failed on " + script_file + ": " + (result.err.empty() ? "no message" : result.err));
  return read_file(svg_file);
}

std::string GnuplotRenderer::render(const LineChart& chart) {
  const std::string name = next_name();
  std::ostringstream s;
  s << preamble(work_dir_, name, 760, 420, chart.title) << "set xlabel " << quoted(chart.x_label) << "\n"
    << "set ylabel " << quoted(chart.y_label) << "\n"
    << "set grid\nset key below\n";
  if (chart.log_y) s << "set logscale y\n";
  std::vector<std::string> plots;
  for (size_t i = 0; i < chart.series.size(); ++i) {
    const ChartSeries& series = chart.series[i];
    std::string data;
    for (const auto& [x, y] : series.points)
      if (std::isfinite(x) && std::isfinite(y) && (!chart.log_y || y > 0)) data += number(x) + " " + number(y) + "\n";
    if (data.empty()) continue;
    const std::string file = name + "-s" + std::to_string(i) + ".dat";
    write_text(work_dir_ + "/" + file, data);
    // Markers only where they can be told apart (a long run's rows would
    // make a solid band, and a heavy file).
    const bool markers = series.points.size() <= 40;
    plots.push_back(quoted(file) + " using 1:2 with " + (markers ? "linespoints pt 7 ps 0.5" : "lines") + " lw 2 lc " +
                    std::to_string(i + 1) +
                    (series.dashed ? " dt 2" : "") + " title " + quoted(series.title));
  }
  // Reference lines in black and grey, dashed, so they never take a series' colour.
  for (size_t i = 0; i < chart.reference_lines.size(); ++i) {
    const auto& [title, y] = chart.reference_lines[i];
    if (!std::isfinite(y)) continue;
    plots.push_back(number(y) + " with lines lw 2 dt " + std::to_string(2 + i % 3) + " lc rgb " +
                    quoted(i % 2 ? "#777777" : "#000000") + " title " + quoted(title));
  }
  if (plots.empty()) {
    s << "set label 1 'no data' at graph 0.5, graph 0.5 center\nunset key\n";
    plots.push_back("[0:1][0:1] 1/0 notitle");
  }
  s << "plot ";
  for (size_t i = 0; i < plots.size(); ++i) s << (i ? ", \\\n     " : "") << plots[i];
  s << "\n";
  return run(name, s.str());
}

std::string GnuplotRenderer::render(const BarChart& chart) {
  const std::string name = next_name();
  const std::string file = name + ".dat";
  std::ostringstream data;
  data << quoted("group");
  for (const std::string& bar : chart.bar_names) data << " " << quoted(bar);
  data << "\n";
  for (size_t g = 0; g < chart.groups.size(); ++g) {
    data << quoted(chart.groups[g]);
    for (size_t b = 0; b < chart.bar_names.size(); ++b)
      data << " " << number(g < chart.values.size() && b < chart.values[g].size() ? chart.values[g][b] : NAN);
    data << "\n";
  }
  write_text(work_dir_ + "/" + file, data.str());
  const int width = std::max<int>(760, 160 + static_cast<int>(chart.groups.size() * (chart.bar_names.size() + 1)) * 22);
  std::ostringstream s;
  s << preamble(work_dir_, name, width, 420, chart.title) << "set ylabel " << quoted(chart.y_label) << "\n"
    << "set style data histograms\nset style histogram clustered gap 1\nset style fill solid 0.85 border -1\n"
    << "set boxwidth 0.9\nset grid ytics\nset yrange [0:*]\nset key outside right top\n"
    << "set xtics rotate by 30 right\n";
  bool any_value = false;
  for (const auto& row : chart.values)
    for (double v : row) any_value = any_value || std::isfinite(v);
  if (!any_value) {  // gnuplot refuses a plot without a single valid point
    s << "set label 1 'no data' at graph 0.5, graph 0.5 center\nunset key\nplot [0:1][0:1] 1/0 notitle\n";
  } else {
    s << "plot for [i=2:" << chart.bar_names.size() + 1 << "] " << quoted(file)
      << " using i:xtic(1) title columnheader(i)\n";
  }
  return run(name, s.str());
}

std::string GnuplotRenderer::render(const Heatmap& chart) {
  const std::string name = next_name();
  const std::string file = name + ".dat";
  double top = 0;
  std::ostringstream data;
  for (size_t r = 0; r < chart.rows.size(); ++r) {
    for (size_t c = 0; c < chart.columns.size(); ++c) {
      const double v = r < chart.values.size() && c < chart.values[r].size() ? chart.values[r][c] : 0;
      top = std::max(top, v);
      data << (c ? " " : "") << number(v);
    }
    data << "\n";
  }
  const int width = std::max<int>(760, 260 + static_cast<int>(chart.columns.size()) * 26);
  const int height = 320 + static_cast<int>(chart.rows.size()) * 26;
  std::ostringstream s;
  s << preamble(work_dir_, name, width, height, chart.title);
  if (chart.rows.empty() || chart.columns.empty()) {
    s << "set label 1 'no rules applied' at graph 0.5, graph 0.5 center\nunset key\nplot [0:1][0:1] 1/0 notitle\n";
    return run(name, s.str());
  }
  write_text(work_dir_ + "/" + file, data.str());
  // The first row on top: a y range from high to low.
  s << "set xrange [-0.5:" << chart.columns.size() - 0.5 << "]\nset yrange [" << chart.rows.size() - 0.5
    << ":-0.5]\nset bmargin 12\nset xtics rotate by 45 right (";
  for (size_t c = 0; c < chart.columns.size(); ++c) s << (c ? ", " : "") << quoted(chart.columns[c]) << " " << c;
  s << ")\nset ytics (";
  for (size_t r = 0; r < chart.rows.size(); ++r) s << (r ? ", " : "") << quoted(chart.rows[r]) << " " << r;
  s << ")\nset tics scale 0\nset cbrange [0:" << number(std::max(top, 1.0)) << "]\nset cblabel 'times applied'\n"
    << "set palette defined (0 '#ffffff', 1 '#c6dbef', 3 '#4292c6', 6 '#08306b')\n"
    << "plot " << quoted(file) << " matrix with image pixels notitle, \\\n     " << quoted(file)
    << " matrix using 1:2:($3 > 0 ? sprintf('%g', $3) : '') with labels font 'Sans,9' notitle\n";
  return run(name, s.str());
}

}  // namespace graphworld
