// PPO's clipped loss against values worked out by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "learner/ppo_loss.h"

namespace graphworld {
namespace {

TEST(PpoLoss, MatchesHandComputedValues) {
  // Ratios 1.5 and 0.5 with advantages +1 and -1, clip 0.2:
  //   unclipped 1.5, -0.5; clipped 1.2, -0.8; min 1.2, -0.8 -> policy -0.2
  //   value 0.5 * mean(1, 0) = 0.25; entropy mean(0.3, 0.5) = 0.4
  //   total -0.2 + 0.5 * 0.25 - 0.01 * 0.4 = -0.079
  //   approx_kl mean(0.5 - ln 1.5, -0.5 - ln 0.5) = 0.143841; both ratios clipped
  const torch::Tensor new_lp = torch::tensor({std::log(1.5), std::log(0.5)});
  const torch::Tensor old_lp = torch::zeros({2});
  const PpoLoss loss = ppo_loss(new_lp, old_lp, torch::tensor({1.0, -1.0}), torch::tensor({1.0, 2.0}),
                                torch::tensor({2.0, 2.0}), torch::tensor({0.3, 0.5}), PpoCoefficients{});
  EXPECT_NEAR(loss.policy, -0.2, 1e-6);
  EXPECT_NEAR(loss.value, 0.25, 1e-6);
  EXPECT_NEAR(loss.entropy, 0.4, 1e-6);
  EXPECT_NEAR(loss.total.item<double>(), -0.079, 1e-6);
  EXPECT_NEAR(loss.approx_kl, 0.143841, 1e-5);
  EXPECT_NEAR(loss.clip_fraction, 1.0, 1e-9);
}

TEST(PpoLoss, ClippedSamplesGiveNoPolicyGradient) {
  // A ratio beyond 1 + clip with a positive advantage is clipped: no gradient
  // pushes it further. One inside the range gets the plain gradient A * r.
  const torch::Tensor new_lp = torch::tensor({std::log(1.5), std::log(1.1)}).requires_grad_(true);
  const PpoLoss loss = ppo_loss(new_lp, torch::zeros({2}), torch::tensor({1.0, 1.0}), torch::zeros({2}),
                                torch::zeros({2}), torch::zeros({2}), PpoCoefficients{});
  loss.total.backward();
  const torch::Tensor grad = new_lp.grad();
  EXPECT_NEAR(grad[0].item<double>(), 0.0, 1e-9);
  EXPECT_NEAR(grad[1].item<double>(), -0.5 * 1.1, 1e-6);  // d(-mean(r*A))/dlogp = -r*A/2
  EXPECT_NEAR(loss.clip_fraction, 0.5, 1e-9);
}

// The pessimistic min: where the unclipped term is the smaller one it is
// used (r = 0.5 with A = +1 gives 0.5, not the clipped 0.8; r = 1.5 with
// A = -1 gives -1.5, not -1.2), and its gradient flows.
TEST(PpoLoss, TakesTheSmallerOfTheClippedAndUnclippedTerms) {
  const torch::Tensor new_lp = torch::tensor({std::log(0.5), std::log(1.5)}).requires_grad_(true);
  const PpoLoss loss = ppo_loss(new_lp, torch::zeros({2}), torch::tensor({1.0, -1.0}), torch::zeros({2}),
                                torch::zeros({2}), torch::zeros({2}), PpoCoefficients{});
  EXPECT_NEAR(loss.policy, -(0.5 - 1.5) / 2, 1e-6);
  loss.total.backward();
  EXPECT_NEAR(new_lp.grad()[0].item<double>(), -0.5 * 1.0 / 2, 1e-6);
  EXPECT_NEAR(new_lp.grad()[1].item<double>(), -1.5 * -1.0 / 2, 1e-6);
}

TEST(PpoLoss, MismatchedShapesAreRefused) {
  EXPECT_THROW(ppo_loss(torch::zeros({4}), torch::zeros({4}), torch::zeros({4, 1}), torch::zeros({4}), torch::zeros({4}),
                        torch::zeros({4}), PpoCoefficients{}),
               c10::Error);
}

}  // namespace
}  // namespace graphworld
