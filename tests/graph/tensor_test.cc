#include "env/graph/tensor.h"

#include <gtest/gtest.h>

#include "common/error.h"

namespace graphworld {
namespace {

TEST(TensorData, RandomFillIsDeterministicAndInRange) {
  std::vector<float> a(1000), b(1000), c(1000);
  fill_random({42, -0.5f, 0.5f}, a.data(), 1000);
  fill_random({42, -0.5f, 0.5f}, b.data(), 1000);
  fill_random({43, -0.5f, 0.5f}, c.data(), 1000);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  for (float v : a) {
    EXPECT_GE(v, -0.5f);
    EXPECT_LT(v, 0.5f);
  }
}

TEST(TensorData, HoldsValuesWithUniqueIds) {
  auto x = TensorData::from_floats({2, 2}, {1, 2, 3, 4});
  auto y = TensorData::from_floats({2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(x->floats()[3], 4.0f);
  EXPECT_EQ(x->nbytes(), 16u);
  EXPECT_NE(x->uid(), y->uid());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(x->raw()) % 64, 0u);
  EXPECT_THROW(TensorData::from_floats({3}, {1, 2}), GraphError);
  EXPECT_EQ(TensorData::from_ints({2}, {7, 9})->to_int_vector(), (std::vector<int64_t>{7, 9}));
}

TEST(TensorShape, FormatsAndCounts) {
  EXPECT_EQ(shape_to_string({1, 3, 224, 224}), "[1,3,224,224]");
  EXPECT_EQ(num_elements({2, 3, 4}), 24);
  EXPECT_EQ(num_elements({}), 1);
}

}  // namespace
}  // namespace graphworld
