// GAE against values worked out by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "common/error.h"
#include "learner/gae.h"

namespace graphworld {
namespace {

TEST(Gae, MatchesHandComputedValuesAcrossAnEpisodeBoundary) {
  // Three steps; the episode ends with step 1, step 2 starts a new one.
  // gamma 0.9, lambda 0.8, bootstrap V = 4.
  //   delta2 = 3 + 0.9*4 - 2    = 4.6          A2 = 4.6
  //   delta1 = 2 + 0 - 1        = 1            A1 = 1            (done: no future)
  //   delta0 = 1 + 0.9*1 - 0.5  = 1.4          A0 = 1.4 + 0.72*1 = 2.12
  const GaeResult r = compute_gae({1, 2, 3}, {0.5f, 1, 2}, {0, 1, 0}, 4, 0.9f, 0.8f);
  ASSERT_EQ(r.advantages.size(), 3u);
  EXPECT_NEAR(r.advantages[0], 2.12, 1e-6);
  EXPECT_NEAR(r.advantages[1], 1.0, 1e-6);
  EXPECT_NEAR(r.advantages[2], 4.6, 1e-6);
  EXPECT_NEAR(r.returns[0], 2.62, 1e-6);
  EXPECT_NEAR(r.returns[1], 2.0, 1e-6);
  EXPECT_NEAR(r.returns[2], 6.6, 1e-6);
}

TEST(Gae, LambdaOneIsTheDiscountedReturnAndZeroIsTheOneStepError) {
  // lambda = 1: A[t] + V[t] = sum of discounted rewards + discounted bootstrap.
  const GaeResult mc = compute_gae({1, 1, 1}, {0.3f, 0.2f, 0.1f}, {0, 0, 0}, 2, 0.5f, 1.0f);
  EXPECT_NEAR(mc.returns[0], 1 + 0.5 + 0.25 + 0.125 * 2, 1e-6);
  const GaeResult td = compute_gae({1, 1, 1}, {0.3f, 0.2f, 0.1f}, {0, 0, 0}, 2, 0.5f, 0.0f);
  EXPECT_NEAR(td.advantages[0], 1 + 0.5 * 0.2 - 0.3, 1e-6);
}

TEST(Gae, BadInputsAreClearErrors) {
  EXPECT_THROW(compute_gae({1, 2}, {1}, {0, 0}, 0, 0.9f, 0.9f), UsageError);
  EXPECT_THROW(compute_gae({1}, {1}, {0}, 0, 1.5f, 0.9f), UsageError);
}

TEST(Gae, NormalisedAdvantagesHaveZeroMeanAndUnitSpread) {
  std::vector<float> a = {1, 2, 3, 4};
  normalize_advantages(a);
  EXPECT_NEAR(a[0] + a[1] + a[2] + a[3], 0, 1e-5);
  EXPECT_NEAR(a[3], 1.5 / std::sqrt(1.25), 1e-5);
}

}  // namespace
}  // namespace graphworld
