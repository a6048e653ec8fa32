// Numerical comparison of two sets of model outputs.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "env/graph/tensor.h"

namespace graphworld {

struct OutputDifference {
  double max_abs_err = 0;
  // max over outputs of max|a - b| / max(max|a|, 1e-6): error relative to the
  // output's scale, so near-zero elements do not inflate it.
  double max_rel_err = 0;
  // Elements of `expected` that are NaN or infinite: a comparison against
  // them proves nothing.
  int64_t nonfinite_expected = 0;
};

// An error figure as messages print it: three significant digits.
std::string error_text(double value);

// Throws UsageError if the counts, shapes or types differ.
OutputDifference compare_outputs(const std::vector<std::shared_ptr<TensorData>>& expected,
                                 const std::vector<std::shared_ptr<TensorData>>& actual);

}  // namespace graphworld
