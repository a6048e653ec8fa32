#include "env/cost/analytic_cost_model.h"

#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/error.h"
#include "env/ops/op_schema.h"

namespace graphworld {
namespace {

bool is_dense(OpType type) {
  return type == OpType::Conv || type == OpType::ConvTranspose || type == OpType::MatMul || type == OpType::Gemm;
}

double positive_rate(const YAML::Node& root, const char* key, const std::string& path) {
  YAML::Node node = root[key];
  if (!node) throw UsageError("analytic rates file " + path + " has no key '" + key + "'; rerun `graphworld calibrate`");
  double value = 0;
  try {
    value = node.as<double>();
  } catch (const YAML::Exception&) {
    throw UsageError("analytic rates file " + path + ": key '" + key + "' must be a number");
  }
  if (!(value > 0)) throw UsageError("analytic rates file " + path + ": key '" + key + "' must be > 0");
  return value;
}

}  // namespace

AnalyticRates load_analytic_rates(const std::string& path) {
  if (!std::filesystem::is_regular_file(path))
    throw UsageError("analytic rates file " + path + " does not exist; create it with `graphworld calibrate -o " + path + "`");
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    throw UsageError("analytic rates file " + path + " is not valid YAML: " + e.what());
  }
  if (!root.IsMap()) throw UsageError("analytic rates file " + path + " must be a YAML map of rates");
  AnalyticRates rates;
  rates.dense_gflops = positive_rate(root, "dense_gflops", path);
  rates.other_gflops = positive_rate(root, "other_gflops", path);
  rates.bandwidth_gbs = positive_rate(root, "bandwidth_gbs", path);
  rates.overhead_us = positive_rate(root, "overhead_us", path);
  rates.source = path;
  return rates;
}

void save_analytic_rates(const AnalyticRates& rates, const std::string& path, const std::string& comment) {
  std::ostringstream text;
  std::istringstream lines(comment);
  for (std::string line; std::getline(lines, line);) text << "# " << line << "\n";
  char buf[256];
  std::snprintf(buf, sizeof(buf),
                "dense_gflops: %.6g   # Conv, MatMul, Gemm\n"
                "other_gflops: %.6g   # every other op\n"
                "bandwidth_gbs: %.6g  # bytes read plus written\n"
                "overhead_us: %.6g    # per op\n",
                rates.dense_gflops, rates.other_gflops, rates.bandwidth_gbs, rates.overhead_us);
  text << buf;
  std::filesystem::path target(path);
  if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path());
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text.str();
    if (!out.flush()) throw UsageError("cannot write " + tmp);
  }
  std::filesystem::rename(tmp, path);
}

double analytic_cost_ms(const AnalyticRates& rates, const OpCostKey& key) {
  OpWork work = op_work(key.type, key.attrs, key.inputs, key.outputs);
  double flops_per_ms = (is_dense(key.type) ? rates.dense_gflops : rates.other_gflops) * 1e6;
  return rates.overhead_us * 1e-3 + work.flops / flops_per_ms + work.bytes / (rates.bandwidth_gbs * 1e6);
}

std::string AnalyticCostModel::description() const {
  char buf[256];
  std::snprintf(buf, sizeof(buf), "analytic: dense %.3g GFLOP/s, other %.3g GFLOP/s, %.3g GB/s, %.3g us/op (%s)",
                rates_.dense_gflops, rates_.other_gflops, rates_.bandwidth_gbs, rates_.overhead_us,
                rates_.source.c_str());
  return buf;
}

}  // namespace graphworld
