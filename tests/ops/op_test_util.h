// Helpers for evaluating single ops in tests.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "env/ops/constant_eval.h"
#include "env/ops/op_schema.h"

namespace graphworld {

inline std::shared_ptr<const TensorData> floats(Shape shape, std::vector<float> values) {
  return TensorData::from_floats(std::move(shape), values);
}

// Infers the op's outputs and evaluates it with the ATen kernels.
inline std::vector<std::shared_ptr<TensorData>> eval(OpType type, std::vector<std::shared_ptr<const TensorData>> inputs,
                                                     Attributes attrs = {}) {
  Op op;
  op.type = type;
  op.name = "under_test";
  op.attrs = std::move(attrs);
  std::vector<TensorInfo> infos;
  for (const auto& in : inputs) infos.push_back(in->info());
  op.outputs = infer_outputs(type, op.attrs, infos, op.name);
  auto outs = evaluate_op(op, inputs);
  for (size_t k = 0; k < outs.size(); ++k) EXPECT_EQ(outs[k]->info(), op.outputs[k]) << "kernel disagrees with shape rule";
  return outs;
}

inline void expect_values(const TensorData& t, Shape shape, std::vector<float> values, float tol = 1e-5f) {
  ASSERT_EQ(t.shape(), shape);
  ASSERT_EQ(t.numel(), static_cast<int64_t>(values.size()));
  for (size_t i = 0; i < values.size(); ++i) EXPECT_NEAR(t.floats()[i], values[i], tol) << "element " << i;
}

}  // namespace graphworld
