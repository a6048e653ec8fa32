// The charts of `graphworld report`, drawn by gnuplot (a well-kept plotting
// tool Debian ships as gnuplot-nox) as SVG. Each chart is a plain struct; a
// GnuplotRenderer writes its data and script into a work folder, runs
// gnuplot and returns the SVG text.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace graphworld {

struct ChartSeries {
  std::string title;
  std::vector<std::pair<double, double>> points;  // x, y
  bool dashed = false;
};

struct LineChart {
  std::string title, x_label, y_label;
  std::vector<ChartSeries> series;
  std::vector<std::pair<std::string, double>> reference_lines;  // horizontal: title, y
  bool log_y = false;
};

// Clustered bars: one cluster per group, one bar per name; NaN: no bar.
struct BarChart {
  std::string title, y_label;
  std::vector<std::string> groups, bar_names;
  std::vector<std::vector<double>> values;  // [group][bar]
};

// A matrix of counts, rows by columns; zero cells stay white.
struct Heatmap {
  std::string title;
  std::vector<std::string> rows, columns;
  std::vector<std::vector<double>> values;  // [row][column]
};

class GnuplotRenderer {
 public:
  // `work_dir` is created if missing and holds each chart's data and script.
  // Error saying what to install when gnuplot is not on PATH.
  explicit GnuplotRenderer(std::string work_dir);

  std::string render(const LineChart& chart);
  std::string render(const BarChart& chart);
  std::string render(const Heatmap& chart);

 private:
  // Runs gnuplot on `script` (written as NAME.gp) and returns NAME.svg's text;
  // Error with gnuplot's message when it fails.
  std::string run(const std::string& name, const std::string& script);
  std::string next_name();

  std::string work_dir_;
  int charts_ = 0;
};

}  // namespace graphworld
