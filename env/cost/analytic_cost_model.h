// The analytic cost model: deterministic, needs no measurement.
//
//   ms = overhead + dense FLOPs / dense rate + other FLOPs / other rate
//        + bytes moved / bandwidth
//
// "Dense" FLOPs are those of Conv, MatMul and Gemm (they run in tuned BLAS or
// oneDNN kernels); everything else runs at the slower elementwise rate. The
// rates live in a YAML file (configs/analytic_cost.yaml holds the built-in
// defaults); `graphworld calibrate` fits them to this machine.
#pragma once

#include <string>

#include "env/cost/cost_model.h"

namespace graphworld {

struct AnalyticRates {
  // Defaults: configs/analytic_cost.yaml (kept equal by a test).
  double dense_gflops = 150.0;  // GFLOP/s for Conv, MatMul, Gemm
  double other_gflops = 40.0;   // GFLOP/s for all other ops
  double bandwidth_gbs = 60.0;  // GB/s of bytes read plus written
  double overhead_us = 0.8;     // fixed cost of launching one op
  std::string source = "built-in defaults";

  bool operator==(const AnalyticRates& other) const {
    return dense_gflops == other.dense_gflops && other_gflops == other.other_gflops &&
           bandwidth_gbs == other.bandwidth_gbs && overhead_us == other.overhead_us;
  }
};

// Reads rates from YAML. Throws UsageError naming the file and key when the
// file is missing, unparsable, lacks a key or holds a non-positive rate.
AnalyticRates load_analytic_rates(const std::string& path);
// Writes rates as YAML (atomically), with `comment` lines at the top.
void save_analytic_rates(const AnalyticRates& rates, const std::string& path, const std::string& comment);

// The predicted cost of one configuration under `rates`.
double analytic_cost_ms(const AnalyticRates& rates, const OpCostKey& key);

class AnalyticCostModel : public CostModel {
 public:
  explicit AnalyticCostModel(AnalyticRates rates = {}) : rates_(std::move(rates)) {}
  std::string name() const override { return "analytic"; }
  std::string description() const override;
  const AnalyticRates& rates() const { return rates_; }

 protected:
  double compute_ms(const OpCostKey& key) override { return analytic_cost_ms(rates_, key); }

 private:
  AnalyticRates rates_;
};

}  // namespace graphworld
