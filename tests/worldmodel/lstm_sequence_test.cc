// The fused LSTM against torch::nn::LSTM's own forward pass: outputs, final
// states and every gradient, one LSTM and two side by side, with gradients
// returned to autograd or added in place (LstmGradientsInPlace). Shapes
// cover one row and many, one step and many, and widths that are and are
// not whole blocks of the step product's columns.
#include "worldmodel/lstm_sequence.h"

#include <gtest/gtest.h>

#include <string>

#include "learner/compute_threads.h"

namespace graphworld {
namespace {

struct Case {
  int64_t steps, rows, inputs, hidden;
};

// Relative difference of two tensors, by their largest entries.
double relative_difference(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>() / std::max(1e-12, b.abs().max().item<double>());
}

// A loss that reads every output differently, so each gradient path counts.
torch::Tensor loss_of(const torch::Tensor& out, const torch::Tensor& h_n, const torch::Tensor& c_n,
                      const torch::Tensor& weights_out, const torch::Tensor& weights_state) {
  return (out * weights_out).sum() + (h_n * weights_state).sum() - 0.5 * (c_n * weights_state).pow(2).sum();
}

struct Gradients {
  torch::Tensor out, h_n, c_n, input;
  std::vector<torch::Tensor> weights;
};

Gradients run(torch::nn::LSTM lstm, const torch::Tensor& input_data, const torch::Tensor& wo, const torch::Tensor& ws,
              bool fused) {
  for (auto& p : lstm->parameters()) p.mutable_grad() = torch::Tensor();
  torch::Tensor input = input_data.clone().set_requires_grad(true);
  Gradients g;
  if (fused) {
    const auto r = lstm_sequences({{input, lstm}});
    g.out = r[0].output, g.h_n = r[0].h_n, g.c_n = r[0].c_n;
  } else {
    auto [out, state] = lstm->forward(input);
    g.out = out, g.h_n = std::get<0>(state), g.c_n = std::get<1>(state);
  }
  loss_of(g.out, g.h_n, g.c_n, wo, ws).backward();
  g.input = input.grad().clone();
  for (auto& p : lstm->parameters()) g.weights.push_back(p.grad().clone());
  return g;
}

class LstmSequence : public ::testing::TestWithParam<Case> {};

TEST_P(LstmSequence, MatchesTorchLstmValuesAndGradients) {
  const Case c = GetParam();
  torch::manual_seed(7);
  torch::nn::LSTM lstm(torch::nn::LSTMOptions(c.inputs, c.hidden));
  const torch::Tensor input = torch::randn({c.steps, c.rows, c.inputs});
  const torch::Tensor wo = torch::randn({c.steps, c.rows, c.hidden});
  const torch::Tensor ws = torch::randn({1, c.rows, c.hidden});
  const Gradients fused = run(lstm, input, wo, ws, true), reference = run(lstm, input, wo, ws, false);
  EXPECT_LT(relative_difference(fused.out, reference.out), 1e-5);
  EXPECT_LT(relative_difference(fused.h_n, reference.h_n), 1e-5);
  EXPECT_LT(relative_difference(fused.c_n, reference.c_n), 1e-5);
  EXPECT_LT(relative_difference(fused.input, reference.input), 1e-4);
  ASSERT_EQ(fused.weights.size(), reference.weights.size());
  for (size_t k = 0; k < fused.weights.size(); ++k)
    EXPECT_LT(relative_difference(fused.weights[k], reference.weights[k]), 1e-4) << "parameter " << k;
}

INSTANTIATE_TEST_SUITE_P(Shapes, LstmSequence,
                         ::testing::Values(Case{1, 1, 3, 4}, Case{1, 7, 5, 8}, Case{6, 3, 5, 8}, Case{25, 2, 9, 16},
                                           Case{4, 33, 40, 64}, Case{7, 13, 6, 70}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           const Case& c = info.param;
                           return "T" + std::to_string(c.steps) + "_B" + std::to_string(c.rows) + "_I" +
                                  std::to_string(c.inputs) + "_H" + std::to_string(c.hidden);
                         });

// Two LSTMs in one call, side by side (two threads) and one after the
// other: each equals its own run alone, and the gradients reach both.
TEST(LstmSequences, TwoSideBySideEqualEachAloneOnOneAndTwoThreads) {
  torch::manual_seed(3);
  torch::nn::LSTM a(torch::nn::LSTMOptions(6, 8)), b(torch::nn::LSTMOptions(10, 8));
  const torch::Tensor xa = torch::randn({5, 4, 6}), xb = torch::randn({5, 4, 10});
  const torch::Tensor wa = torch::randn({5, 4, 8}), wb = torch::randn({5, 4, 8}), ws = torch::randn({1, 4, 8});
  const Gradients alone_a = run(a, xa, wa, ws, true), alone_b = run(b, xb, wb, ws, true);
  for (bool side_by_side : {false, true}) {
    const int threads = side_by_side ? 2 : 1;
    const ComputeThreads scope(side_by_side ? 1 : 2);
    const LstmSideBySide side(side_by_side);
    for (auto& p : a->parameters()) p.mutable_grad() = torch::Tensor();
    for (auto& p : b->parameters()) p.mutable_grad() = torch::Tensor();
    const auto r = lstm_sequences({{xa, a}, {xb, b}});
    (loss_of(r[0].output, r[0].h_n, r[0].c_n, wa, ws) + loss_of(r[1].output, r[1].h_n, r[1].c_n, wb, ws)).backward();
    EXPECT_TRUE(torch::equal(r[0].output, alone_a.out)) << threads << " threads";
    EXPECT_TRUE(torch::equal(r[1].output, alone_b.out)) << threads << " threads";
    for (size_t k = 0; k < alone_a.weights.size(); ++k) {
      EXPECT_TRUE(torch::allclose(a->parameters()[k].grad(), alone_a.weights[k], 1e-6, 1e-6)) << threads;
      EXPECT_TRUE(torch::allclose(b->parameters()[k].grad(), alone_b.weights[k], 1e-6, 1e-6)) << threads;
    }
  }
}

// In place: .backward() leaves in the parameters' existing gradients what
// autograd would have added there; outside, torch::autograd::grad returns
// the gradients and leaves .grad() as it was.
TEST(LstmSequences, InPlaceGradientsAddWhatAutogradWouldAndOnlyWhereAsked) {
  torch::manual_seed(5);
  torch::nn::LSTM lstm(torch::nn::LSTMOptions(6, 70));  // 4H = 280: blocks of 64 columns and a tail
  const torch::Tensor x = torch::randn({5, 3, 6}), wo = torch::randn({5, 3, 70}), ws = torch::randn({1, 3, 70});
  auto loss = [&] {
    const auto r = lstm_sequences({{x, lstm}});
    return loss_of(r[0].output, r[0].h_n, r[0].c_n, wo, ws);
  };
  std::vector<torch::Tensor> reference;
  for (auto& p : lstm->parameters()) p.mutable_grad() = torch::Tensor();
  loss().backward();
  for (auto& p : lstm->parameters()) reference.push_back(p.grad().clone());
  // Gradients already there (as a training loop's buffers are): doubled.
  {
    const LstmGradientsInPlace in_place;
    loss().backward();
  }
  const auto params = lstm->parameters();
  for (size_t k = 0; k < params.size(); ++k)
    EXPECT_LT(relative_difference(params[k].grad(), 2 * reference[k]), 1e-6) << "parameter " << k;
  // torch::autograd::grad outside the scope: returned, .grad() untouched.
  std::vector<torch::Tensor> before;
  for (auto& p : params) before.push_back(p.grad().clone());
  const std::vector<torch::Tensor> returned = torch::autograd::grad({loss()}, params);
  for (size_t k = 0; k < params.size(); ++k) {
    EXPECT_LT(relative_difference(returned[k], reference[k]), 1e-6) << "parameter " << k;
    EXPECT_TRUE(torch::equal(params[k].grad(), before[k])) << "parameter " << k;
  }
}

TEST(LstmSequences, OnlyOneLayerForwardLstmsOnFloatCpuSequencesApply) {
  torch::nn::LSTM plain(torch::nn::LSTMOptions(3, 4));
  torch::nn::LSTM two_layers(torch::nn::LSTMOptions(3, 4).num_layers(2));
  torch::nn::LSTM both_ways(torch::nn::LSTMOptions(3, 4).bidirectional(true));
  torch::nn::LSTM batch_first(torch::nn::LSTMOptions(3, 4).batch_first(true));
  const torch::Tensor x = torch::zeros({2, 1, 3});
  EXPECT_TRUE(lstm_sequence_applies(plain, x));
  EXPECT_FALSE(lstm_sequence_applies(two_layers, x));
  EXPECT_FALSE(lstm_sequence_applies(both_ways, x));
  EXPECT_FALSE(lstm_sequence_applies(batch_first, x));
  EXPECT_FALSE(lstm_sequence_applies(plain, x.to(torch::kDouble)));
  EXPECT_FALSE(lstm_sequence_applies(plain, torch::zeros({0, 1, 3})));
  EXPECT_THROW(lstm_sequences({{x, two_layers}}), c10::Error);
}

}  // namespace
}  // namespace graphworld
