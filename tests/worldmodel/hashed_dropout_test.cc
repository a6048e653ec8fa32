// The MDN-RNN's dropout (worldmodel/hashed_dropout.h): it drops at its rate,
// scales what it keeps, is decided by torch::manual_seed, passes gradients
// through its mask, and does nothing outside training.
#include "worldmodel/hashed_dropout.h"

#include <gtest/gtest.h>

#include <cmath>

namespace graphworld {
namespace {

TEST(HashedDropout, DropsAtItsRateAndScalesWhatItKeeps) {
  for (double p : {0.2, 0.5}) {
    torch::manual_seed(3);
    const torch::Tensor x = torch::ones({400, 257});  // an odd count: the last element has a draw of its own
    const torch::Tensor y = hashed_dropout(x, p, /*training=*/true);
    const double n = static_cast<double>(x.numel());
    const double dropped = (y == 0).sum().item<double>() / n;
    EXPECT_NEAR(dropped, p, 5 * std::sqrt(p * (1 - p) / n)) << "p " << p;
    const torch::Tensor kept = y.masked_select(y != 0);
    EXPECT_TRUE(torch::allclose(kept, torch::full_like(kept, 1.0 / (1.0 - p)))) << "p " << p;
    // Neighbours are not tied: both halves of a draw drop at the rate alone.
    const torch::Tensor even = y.flatten().slice(0, 0, x.numel() - 1, 2) == 0;
    const torch::Tensor odd = y.flatten().slice(0, 1, x.numel(), 2) == 0;
    const double both = (even & odd).to(torch::kDouble).mean().item<double>();
    EXPECT_NEAR(both, p * p, 5 * std::sqrt(p * p * (1 - p * p) / (n / 2))) << "p " << p;
  }
}

TEST(HashedDropout, TheSeedDecidesTheMaskAndEachCallDrawsANewOne) {
  const torch::Tensor x = torch::rand({64, 256});
  torch::manual_seed(7);
  const torch::Tensor a = hashed_dropout(x, 0.2, true), b = hashed_dropout(x, 0.2, true);
  torch::manual_seed(7);
  EXPECT_TRUE(torch::equal(a, hashed_dropout(x, 0.2, true)));
  EXPECT_FALSE(torch::equal(a, b)) << "a second call must draw another mask";
}

TEST(HashedDropout, GradientsPassThroughTheMaskAndEvaluationIsTheIdentity) {
  torch::manual_seed(1);
  const torch::Tensor x = torch::rand({32, 100}).requires_grad_(true);
  const torch::Tensor y = hashed_dropout(x, 0.3, true);
  y.sum().backward();
  // d y / d x is the mask: 0 where dropped, 1 / (1 - p) where kept.
  EXPECT_TRUE(torch::allclose(x.grad(), y.detach() / x.detach()));
  EXPECT_TRUE(hashed_dropout(x, 0.3, /*training=*/false).is_same(x));
  EXPECT_TRUE(hashed_dropout(x, 0.0, true).is_same(x));
}

}  // namespace
}  // namespace graphworld
