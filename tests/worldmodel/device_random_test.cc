// Draws that stay on the device (worldmodel/device_random.h): a masked entry
// is never drawn, the frequencies follow the probabilities, a seed repeats
// its draws, and the generator is not the process's default one.
#include "worldmodel/device_random.h"

#include <gtest/gtest.h>

#include <cmath>

namespace graphworld {
namespace {

TEST(DeviceRandom, ACategoricalDrawFollowsTheProbabilitiesAndNeverTakesAZero) {
  // Rows of 6: zeros at the start, in the middle and at the end, as masked
  // actions are; 200,000 draws per row.
  const torch::Tensor p = torch::tensor({0.0f, 0.1f, 0.0f, 0.6f, 0.3f, 0.0f}).repeat({200000, 1});
  torch::Generator generator = seeded_generator(torch::kCPU, 5);
  const torch::Tensor drawn = sample_categorical(p, generator);
  ASSERT_EQ(drawn.sizes(), torch::IntArrayRef({200000}));
  ASSERT_EQ(drawn.scalar_type(), torch::kInt64);
  const torch::Tensor counts = torch::bincount(drawn, {}, 6).to(torch::kDouble) / 200000.0;
  const std::vector<double> expected = {0.0, 0.1, 0.0, 0.6, 0.3, 0.0};
  for (int64_t i = 0; i < 6; ++i) {
    const double e = expected[static_cast<size_t>(i)], sd = std::sqrt(e * (1 - e) / 200000.0);
    if (e == 0.0)
      EXPECT_EQ(counts[i].item<double>(), 0.0) << "entry " << i << " has probability 0";
    else
      EXPECT_NEAR(counts[i].item<double>(), e, 5 * sd) << "entry " << i;
  }
}

TEST(DeviceRandom, RowsNeedNotSumToOneAndASeedRepeatsItsDraws) {
  const torch::Tensor p = torch::rand({1000, 9}, torch::TensorOptions().dtype(torch::kFloat));
  torch::Generator a = seeded_generator(torch::kCPU, 11), b = seeded_generator(torch::kCPU, 11);
  const torch::Tensor first = sample_categorical(p, a);
  // Three times the weights: the same uniforms give the same indices.
  EXPECT_TRUE(torch::equal(first, sample_categorical(p * 3.0f, b)));
  torch::Generator c = seeded_generator(torch::kCPU, 12);
  EXPECT_FALSE(torch::equal(first, sample_categorical(p, c))) << "another seed, other draws";
  // One positive entry, wherever it is, is always the one drawn.
  torch::Tensor only = torch::zeros({4, 5});
  for (int64_t r = 0; r < 4; ++r) only[r][r + 1] = 1e-30f;
  EXPECT_TRUE(torch::equal(sample_categorical(only, a), torch::arange(1, 5)));
}

TEST(DeviceRandom, TheSeededGeneratorIsNotTheDefaultOne) {
  torch::Generator a = seeded_generator(torch::kCPU, 3);
  const torch::Tensor first = torch::rand({8}, a);
  torch::Generator b = seeded_generator(torch::kCPU, 3);
  torch::rand({100});  // the default generator moves; b does not
  EXPECT_TRUE(torch::equal(first, torch::rand({8}, b)));
  // Seeded as a CPU generator of that seed is: a CPU dream's draws are those it always had.
  torch::Generator plain = at::detail::createCPUGenerator(3);
  EXPECT_TRUE(torch::equal(first, torch::rand({8}, plain)));
}

}  // namespace
}  // namespace graphworld
