// The MDN-RNN's mixture maths against values worked by hand, temperature
// sampling at its limits, and a world model that learns a simple latent
// dynamics (so a broken loss or head wiring fails here).
#include "worldmodel/mixture_density.h"

#include <gtest/gtest.h>

#include <cmath>

#include "worldmodel/mdn_rnn.h"

namespace graphworld {
namespace {

GaussianMixture mixture(std::vector<float> logits, std::vector<float> means, std::vector<float> log_sigma, int64_t k,
                        int64_t d) {
  return {torch::tensor(logits).reshape({1, k}), torch::tensor(means).reshape({1, k, d}),
          torch::tensor(log_sigma).reshape({1, k, d})};
}

TEST(MixtureDensity, NegativeLogLikelihoodMatchesHandWorkedValues) {
  // Two unit Gaussians at 0 and 2, equal weights, x = 1: both densities are
  // e^-0.5 / sqrt(2 pi), so the NLL is 0.5 + 0.5 ln(2 pi).
  const GaussianMixture even = mixture({0, 0}, {0, 2}, {0, 0}, 2, 1);
  EXPECT_NEAR(mixture_nll(even, torch::tensor({1.0f}).reshape({1, 1})).item<double>(),
              0.5 + 0.5 * std::log(2 * M_PI), 1e-5);
  // Weights 3:1, N(0, 1) and N(3, 0.5^2), x = 0.5:
  // -ln(0.75 N(0.5 | 0, 1) + 0.25 N(0.5 | 3, 0.5)) = 1.33161779...
  const GaussianMixture uneven = mixture({std::log(3.0f), 0}, {0, 3}, {0, std::log(0.5f)}, 2, 1);
  EXPECT_NEAR(mixture_nll(uneven, torch::tensor({0.5f}).reshape({1, 1})).item<double>(), 1.3316177904262316, 1e-5);
  // Two dimensions (diagonal): logits 0.3, -0.4; component 0 N([0, 0.5],
  // diag[1, 2^2]), component 1 N([1, -1], diag[0.5^2, 1.5^2]); x = [0.2, -0.1].
  const GaussianMixture two_d = mixture({0.3f, -0.4f}, {0, 0.5f, 1, -1},
                                        {0, std::log(2.0f), std::log(0.5f), std::log(1.5f)}, 2, 2);
  EXPECT_NEAR(mixture_nll(two_d, torch::tensor({0.2f, -0.1f}).reshape({1, 2})).item<double>(), 2.7153952032333444,
              1e-5);
  // Far from every component the NLL is large but finite (log-sum-exp).
  const double far = mixture_nll(even, torch::tensor({1e3f}).reshape({1, 1})).item<double>();
  EXPECT_TRUE(std::isfinite(far));
  EXPECT_GT(far, 1e5);
}

TEST(MixtureDensity, ATemperatureNearZeroGivesTheMostLikelyComponentsMean) {
  const GaussianMixture m = mixture({0.2f, 1.0f, -0.5f}, {5, -1, 7, 7, -3, 2}, {0, 0, 0, 0, 0, 0}, 3, 2);
  torch::Generator generator = at::detail::createCPUGenerator(7);
  for (int i = 0; i < 20; ++i) {
    const torch::Tensor s = sample_mixture(m, 1e-9, generator);
    EXPECT_NEAR(s[0][0].item<double>(), 7.0, 1e-2);
    EXPECT_NEAR(s[0][1].item<double>(), 7.0, 1e-2);
  }
  // At tau = 1 every component is drawn, in about its weight.
  const GaussianMixture wide{m.logits.expand({4000, 3}), m.means.expand({4000, 3, 2}), m.log_sigma.expand({4000, 3, 2})};
  const torch::Tensor s = sample_mixture(wide, 1.0, generator);
  const double near_first = (s.select(1, 0) > 2.5).logical_and(s.select(1, 0) < 8).logical_and(s.select(1, 1) < 3).to(torch::kFloat).mean().item<double>();
  const torch::Tensor weights = torch::softmax(m.logits, -1);
  EXPECT_NEAR(near_first, weights[0][0].item<double>(), 0.05);
  // The same generator state gives the same samples.
  torch::Generator a = at::detail::createCPUGenerator(3), b = at::detail::createCPUGenerator(3);
  EXPECT_TRUE(torch::equal(sample_mixture(wide, 1.3, a), sample_mixture(wide, 1.3, b)));
}

// z_{t+1} = 0.5 z_t + a_t, reward = z_{t+1}[0], done when z_{t+1}[1] > 1:
// the model must learn it well beyond an untrained one.
TEST(MdnRnn, LearnsASimpleLatentDynamics) {
  torch::manual_seed(1);
  MdnRnnConfig config;
  config.latent_dim = 2;
  config.action_dim = 2;
  config.num_xfers = 3;
  config.hidden = 32;
  config.components = 2;
  MdnRnn model(config);
  const int64_t t = 12, b = 32;
  torch::Generator data = at::detail::createCPUGenerator(5);
  auto batch = [&] {
    torch::Tensor z = torch::zeros({t + 1, b, 2});
    const torch::Tensor a = at::normal(0.0, 0.5, {t, b, 2}, data);
    for (int64_t i = 0; i < t; ++i) z[i + 1] = 0.5 * z[i] + a[i];
    MdnRnnTargets y;
    y.next_z = z.slice(0, 1);
    y.reward = y.next_z.select(2, 0);
    y.done = (y.next_z.select(2, 1) > 1.0).to(torch::kFloat);
    // Mask: xfer x applies when z[0] > x - 1.5 (NO-OP always).
    const torch::Tensor thresholds = torch::tensor({-1.5f, -0.5f, 0.5f, -1e9f});
    y.next_mask = (y.next_z.select(2, 0).unsqueeze(-1) > thresholds).to(torch::kFloat);
    y.location_change = y.next_mask * 1.5;
    y.valid = torch::ones({t, b});
    return std::make_tuple(z.slice(0, 0, t), a, y);
  };
  auto [z0, a0, y0] = batch();
  const double before = model->losses(model->forward(z0, a0), y0).total(config.latent_dim).item<double>();
  torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(3e-3));
  for (int step = 0; step < 400; ++step) {
    auto [z, a, y] = batch();
    adam.zero_grad();
    model->losses(model->forward(z, a), y).total(config.latent_dim).backward();
    adam.step();
  }
  auto [z1, a1, y1] = batch();
  torch::NoGradGuard no_grad;
  const MdnRnnOutput out = model->forward(z1, a1);
  const MdnRnnLosses after = model->losses(out, y1);
  EXPECT_LT(after.total(config.latent_dim).item<double>(), before - 2.0) << "before " << before;
  EXPECT_LT(after.reward.item<double>(), 0.05);
  const double mask_accuracy = ((out.mask_logits > 0).to(torch::kFloat) == y1.next_mask).to(torch::kFloat).mean().item<double>();
  EXPECT_GT(mask_accuracy, 0.95);
  EXPECT_EQ(out.hidden.sizes(), (std::vector<int64_t>{t, b, 32}));
}

}  // namespace
}  // namespace graphworld
