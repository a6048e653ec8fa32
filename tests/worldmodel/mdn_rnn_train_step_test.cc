// MdnRnnImpl::train_step, the training step in two halves side by side,
// against forward(), losses() and total().backward() on one thread: the
// same losses and the same gradients to the bit, dropout included; no
// backward pass for a loss that is not finite; scoring in halves; and
// where it applies.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "common/worker_threads.h"
#include "learner/compute_threads.h"
#include "worldmodel/lstm_sequence.h"
#include "worldmodel/mdn_rnn.h"

namespace graphworld {
namespace {

constexpr int64_t kRules = 5, kLatent = 4, kSteps = 6, kRows = 7;

// The world model's layout (world_model.cc): the action input leads with
// the mask and the log location counts (the bookkeeping), then the one-hot
// over the N + 1 choices, then two more entries.
MdnRnnConfig two_lstm_config() {
  MdnRnnConfig c;
  c.latent_dim = kLatent;
  c.num_xfers = kRules;
  c.action_dim = 3 * kRules + 3;
  c.hidden = 24;
  c.components = 3;
  c.mask_leads_action = true;
  c.action_one_hot_at = 2 * kRules;
  c.mask_by_choice = true;
  c.dropout = 0.2;
  c.bookkeeping_inputs = 2 * kRules;
  return c;
}

struct Batch {
  torch::Tensor z, actions;
  MdnRnnTargets targets;
};

Batch random_batch() {
  torch::Generator data = at::detail::createCPUGenerator(11);
  const int64_t n = kRules + 1;
  Batch b;
  b.z = at::normal(0.0, 1.0, {kSteps, kRows, kLatent}, data);
  b.actions = (at::rand({kSteps, kRows, 3 * kRules + 3}, data) > 0.5).to(torch::kFloat);
  MdnRnnTargets& y = b.targets;
  y.next_z = at::normal(0.0, 1.0, {kSteps, kRows, kLatent}, data);
  y.reward = at::normal(0.0, 0.1, {kSteps, kRows}, data);
  y.done = (at::rand({kSteps, kRows}, data) > 0.8).to(torch::kFloat);
  y.next_mask = (at::rand({kSteps, kRows, n}, data) > 0.5).to(torch::kFloat);
  y.location_change = at::normal(0.0, 1.0, {kSteps, kRows, n}, data);
  // Rows of different lengths, padded after their ends.
  y.valid = (torch::arange(kSteps).unsqueeze(1) < torch::arange(1, kRows + 1).unsqueeze(0)).to(torch::kFloat);
  y.next_valid = y.valid * (at::rand({kSteps, kRows}, data) > 0.2).to(torch::kFloat);
  y.done_scored = y.valid * (at::rand({kSteps, kRows}, data) > 0.3).to(torch::kFloat);
  return b;
}

struct StepResult {
  std::vector<double> losses;
  std::vector<torch::Tensor> gradients;
};

// Gradients start as defined zeros, as a training loop's flat buffer's
// views are, so that the LSTMs add theirs in place on both paths.
void zero_gradients(MdnRnn& model) {
  for (torch::Tensor& p : model->parameters()) p.mutable_grad() = torch::zeros_like(p);
}

StepResult result_of(MdnRnn& model, const MdnRnnLosses& l) {
  StepResult r;
  for (const torch::Tensor& t : {l.z_nll, l.reward, l.done, l.mask, l.locations}) r.losses.push_back(t.item<double>());
  for (const torch::Tensor& p : model->parameters()) r.gradients.push_back(p.grad().clone());
  return r;
}

StepResult one_thread_step(MdnRnn& model, const Batch& b) {
  zero_gradients(model);
  torch::manual_seed(3);  // the dropout masks
  const MdnRnnLosses l = model->losses(model->forward(b.z, b.actions), b.targets);
  l.total(kLatent).backward();
  return result_of(model, l);
}

TEST(MdnRnnTrainStep, TwoHalvesGiveTheOneThreadStepsLossesAndGradientsToTheBit) {
  const ComputeThreads one_thread(1);
  const LstmGradientsInPlace in_place;
  torch::manual_seed(1);
  MdnRnn model(two_lstm_config());
  model->train();
  const Batch b = random_batch();
  const StepResult reference = one_thread_step(model, b);

  WorkerThreads threads(2);
  ASSERT_TRUE(model->train_step_applies(b.z, &threads));
  zero_gradients(model);
  torch::manual_seed(3);
  const std::optional<MdnRnnLosses> l = model->train_step(b.z, b.actions, b.targets, threads);
  ASSERT_TRUE(l.has_value());
  const StepResult halves = result_of(model, *l);

  EXPECT_EQ(halves.losses, reference.losses);
  const auto names = model->named_parameters();
  ASSERT_EQ(halves.gradients.size(), reference.gradients.size());
  for (size_t i = 0; i < reference.gradients.size(); ++i) {
    EXPECT_TRUE(torch::equal(halves.gradients[i], reference.gradients[i])) << names[i].key();
    EXPECT_GT(reference.gradients[i].abs().sum().item<double>(), 0.0) << names[i].key() << " took no gradient";
  }
  // Dropout was on: without it the gradients differ.
  zero_gradients(model);
  model->eval();
  model->losses(model->forward(b.z, b.actions), b.targets).total(kLatent).backward();
  for (size_t i = 0; i < reference.gradients.size(); ++i)
    if (names[i].key() == "mixture.weight") {
      EXPECT_FALSE(torch::equal(names[i].value().grad(), reference.gradients[i]));
    }
}

// Scoring (eval mode, no gradients): the halves give losses(forward())'s
// values to the bit, and record nothing for autograd on either thread.
TEST(MdnRnnTrainStep, ScoringInHalvesGivesTheOneThreadLosses) {
  const ComputeThreads one_thread(1);
  torch::manual_seed(1);
  MdnRnn model(two_lstm_config());
  model->eval();
  const Batch b = random_batch();
  torch::NoGradGuard no_grad;
  const MdnRnnLosses reference = model->losses(model->forward(b.z, b.actions), b.targets);
  WorkerThreads threads(2);
  ASSERT_TRUE(model->halves_apply(b.z, &threads));
  const MdnRnnLosses halves = model->losses_side_by_side(b.z, b.actions, b.targets, threads);
  for (auto [a, r] : {std::make_pair(halves.z_nll, reference.z_nll), std::make_pair(halves.reward, reference.reward),
                      std::make_pair(halves.done, reference.done), std::make_pair(halves.mask, reference.mask),
                      std::make_pair(halves.locations, reference.locations)}) {
    EXPECT_EQ(a.item<double>(), r.item<double>());
    EXPECT_FALSE(a.requires_grad());
  }
}

TEST(MdnRnnTrainStep, ALossThatIsNotFiniteIsReportedAndNothingIsBackpropagated) {
  const ComputeThreads one_thread(1);
  torch::manual_seed(1);
  MdnRnn model(two_lstm_config());
  model->train();
  WorkerThreads threads(2);
  // A NaN in each half's targets in turn: the reward (bookkeeping), the next z (controller).
  for (int half = 0; half < 2; ++half) {
    Batch b = random_batch();
    (half == 0 ? b.targets.next_z : b.targets.reward)[0][0] = std::numeric_limits<float>::quiet_NaN();
    zero_gradients(model);
    EXPECT_FALSE(model->train_step(b.z, b.actions, b.targets, threads).has_value()) << "half " << half;
    for (const torch::Tensor& p : model->parameters()) EXPECT_EQ(p.grad().abs().sum().item<double>(), 0.0);
  }
}

TEST(MdnRnnTrainStep, AppliesToTwoLstmsInTrainingOnTwoThreadsOrMore) {
  torch::manual_seed(1);
  MdnRnn model(two_lstm_config());
  const torch::Tensor z = torch::zeros({2, 3, kLatent});
  WorkerThreads one(1), two(2);
  model->train();
  EXPECT_TRUE(model->train_step_applies(z, &two));
  EXPECT_FALSE(model->train_step_applies(z, &one));
  EXPECT_FALSE(model->train_step_applies(z, nullptr));
  EXPECT_FALSE(model->train_step_applies(z.to(torch::kDouble), &two));
  model->eval();
  EXPECT_FALSE(model->train_step_applies(z, &two)) << "evaluation has no backward pass";
  MdnRnnConfig single = two_lstm_config();
  single.bookkeeping_inputs = 0;
  MdnRnn one_lstm(single);
  one_lstm->train();
  EXPECT_FALSE(one_lstm->train_step_applies(z, &two));
}

}  // namespace
}  // namespace graphworld
