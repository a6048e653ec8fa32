#include "launch/pipeline/output_compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/error.h"

namespace graphworld {

OutputDifference compare_outputs(const std::vector<std::shared_ptr<TensorData>>& expected,
                                 const std::vector<std::shared_ptr<TensorData>>& actual) {
  if (expected.size() != actual.size())
    throw UsageError("the models have different numbers of outputs: " + std::to_string(expected.size()) + " and " +
                     std::to_string(actual.size()));
  OutputDifference diff;
  for (size_t k = 0; k < expected.size(); ++k) {
    const TensorData& a = *expected[k];
    const TensorData& b = *actual[k];
    if (a.info() != b.info())
      throw UsageError("output " + std::to_string(k) + " differs in shape or type: " + dtype_name(a.dtype()) + " " +
                       shape_to_string(a.shape()) + " vs " + dtype_name(b.dtype()) + " " + shape_to_string(b.shape()));
    double max_abs = 0, scale = 0;
    for (int64_t i = 0; i < a.numel(); ++i) {
      double x = a.dtype() == DType::Float32 ? a.floats()[i] : static_cast<double>(a.ints()[i]);
      double y = b.dtype() == DType::Float32 ? b.floats()[i] : static_cast<double>(b.ints()[i]);
      if (!std::isfinite(x)) ++diff.nonfinite_expected;
      double d = std::fabs(x - y);
      if (std::isnan(d)) d = std::isnan(x) && std::isnan(y) ? 0 : INFINITY;
      max_abs = std::max(max_abs, d);
      scale = std::max(scale, std::fabs(x));
    }
    diff.max_abs_err = std::max(diff.max_abs_err, max_abs);
    diff.max_rel_err = std::max(diff.max_rel_err, max_abs / std::max(scale, 1e-6));
  }
  return diff;
}

std::string error_text(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3g", value);
  return text;
}

}  // namespace graphworld
