// What a world model learns from, on episodes written out by hand: which
// steps teach the done head, where the reward's per-rule term starts, and
// which episodes bound how often the dream may apply a rule.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"
#include "learner/torch_bytes.h"
#include "worldmodel/batch_parts.h"
#include "worldmodel/controller.h"
#include "worldmodel/device_random.h"
#include "worldmodel/dream_env.h"
#include "worldmodel/dream_step_graph.h"
#include "worldmodel/dream_trainer.h"
#include "worldmodel/mdn_rnn.h"
#include "worldmodel/world_model.h"
#include "worldmodel/world_model_modules.h"

namespace graphworld {
namespace {

constexpr int32_t kRules = 10;     // the library's size here: xfer 10 is NO-OP
constexpr int32_t kMaxSteps = 4;   // the horizon

WorldStep step(int32_t xfer, float reward, bool done) {
  WorldStep s;
  s.summary.assign(kSummaryDim, 0.0f);
  s.allowed = {2, 5};
  s.locations = {3, 1};
  s.xfer = xfer;
  s.reward = reward;
  s.done = done;
  return s;
}

WorldEpisode episode(std::vector<WorldStep> steps) {
  WorldEpisode e;
  e.steps = std::move(steps);
  return e;
}

// Training batches: every episode once, sorted by length, and no batch's
// padded size (longest episode times count) above the bound unless it is one
// episode longer than the bound.
TEST(WorldModelBatches, GroupEpisodesOfSimilarLengthUpToTheBound) {
  std::vector<WorldEpisode> episodes;
  for (int32_t length : {3, 1, 7, 1, 2, 3, 12, 1, 2, 5})
    episodes.push_back(episode(std::vector<WorldStep>(static_cast<size_t>(length), step(2, 0.1f, false))));
  std::vector<const WorldEpisode*> all;
  for (const WorldEpisode& e : episodes) all.push_back(&e);
  std::vector<std::vector<const WorldEpisode*>> batches;
  for (const EpisodeIndices& indices : batch_indices_by_length(EpisodesInMemory(episodes), 6)) {
    batches.emplace_back();
    for (size_t i : indices) batches.back().push_back(&episodes[i]);
  }
  std::vector<const WorldEpisode*> seen;
  size_t previous_length = 0;
  for (const auto& batch : batches) {
    ASSERT_FALSE(batch.empty());
    size_t longest = 0;
    for (const WorldEpisode* e : batch) {
      EXPECT_GE(e->steps.size(), previous_length) << "batches follow the sorted order";
      previous_length = e->steps.size();
      longest = std::max(longest, e->steps.size());
      seen.push_back(e);
    }
    if (batch.size() > 1) {
      EXPECT_LE(longest * batch.size(), 6u);
    }
  }
  std::sort(seen.begin(), seen.end());
  std::sort(all.begin(), all.end());
  EXPECT_EQ(seen, all);
  // Sorted lengths 1,1,1,2,2,3,3,5,7,12: a 2 after the three 1s pads to
  // 2 x 4 = 8 > 6, a 3 after the 2s to 3 x 3 = 9, so 1,1,1 | 2,2 | 3,3 | 5 |
  // 7 | 12.
  std::vector<size_t> sizes;
  for (const auto& batch : batches) sizes.push_back(batch.size());
  EXPECT_EQ(sizes, (std::vector<size_t>{3, 2, 2, 1, 1, 1}));
}

// Measuring batches also end where padding would pass a share of the
// batch. Lengths 1,1,1,2,2,3,3,5,7,12 under a bound of 40 steps: by size
// alone 1 .. 5 (5 x 8 = 40 padded steps for 18) | 7,12 (24 for 19). With
// at most a quarter padding: 1,1,1 (a 2 would pad 8 steps with 3) |
// 2,2,3,3 (12 with 2; a 5 would pad 25 with 10) | 5,7 (14 with 2; a 12
// would pad 36 with 12) | 12.
TEST(WorldModelBatches, ABoundOnPaddingCutsBatchesOfUnevenLengths) {
  std::vector<WorldEpisode> episodes;
  for (int32_t length : {3, 1, 7, 1, 2, 3, 12, 1, 2, 5})
    episodes.push_back(episode(std::vector<WorldStep>(static_cast<size_t>(length), step(2, 0.1f, false))));
  auto sizes_of = [&](double max_padding) {
    std::vector<size_t> sizes;
    size_t total = 0;
    for (const EpisodeIndices& indices : batch_indices_by_length(EpisodesInMemory(episodes), 40, max_padding)) {
      int64_t longest = 0, steps = 0;
      for (size_t i : indices) {
        longest = std::max<int64_t>(longest, static_cast<int64_t>(episodes[i].steps.size()));
        steps += static_cast<int64_t>(episodes[i].steps.size());
      }
      const int64_t padded = longest * static_cast<int64_t>(indices.size());
      EXPECT_LE(padded, 40);
      if (indices.size() > 1) {
        EXPECT_LE(static_cast<double>(padded - steps), max_padding * static_cast<double>(padded));
      }
      sizes.push_back(indices.size());
      total += indices.size();
    }
    EXPECT_EQ(total, episodes.size());
    return sizes;
  };
  EXPECT_EQ(sizes_of(1.0), (std::vector<size_t>{8, 2}));
  EXPECT_EQ(sizes_of(0.25), (std::vector<size_t>{3, 4, 2, 1}));
}

// Ends with NO-OP after two rewrites; ends because nothing applies; runs
// into the horizon applying rule 5 four times.
std::vector<WorldEpisode> episodes() {
  return {episode({step(2, 0.5f, false), step(5, -0.25f, false), step(kRules, 0.0f, true)}),
          episode({step(2, 1.5f, false), step(2, 0.0f, true)}),
          episode({step(5, 0.25f, false), step(5, 0.0f, false), step(5, 0.0f, false), step(5, -1.0f, true)})};
}

WorldModel model_of(const std::vector<WorldEpisode>& data, bool separate_controller_memory = false) {
  WorldModelConfig config;
  config.separate_controller_memory = separate_controller_memory;
  config.hidden = 16;
  config.latent_dim = 4;
  config.components = 2;
  WorldModelInfo info;
  info.max_steps = kMaxSteps;
  info.feature_version = kObservationFeatureVersion;
  return WorldModel(config, XferVocabulary::from_episodes(data, kRules), info, 1);
}

TEST(WorldModelTargets, TheDoneHeadLearnsOnlyWhereTheDreamDoesNotDecideByRule) {
  const std::vector<WorldEpisode> data = episodes();
  const WorldModel model = model_of(data);
  const WorldModel::Impl& m = model.impl();
  const EpisodeBatch batch = m.batch({&data[0], &data[1], &data[2]});
  const MdnRnnTargets y = m.targets(batch, torch::zeros({kMaxSteps, 3, model.config().latent_dim}));
  // Rows are steps, columns episodes; padding (valid 0) is never scored.
  const torch::Tensor expected = torch::tensor({1.0f, 1.0f, 1.0f,    //
                                                1.0f, 1.0f, 1.0f,    //
                                                0.0f, 0.0f, 1.0f,    // NO-OP; padding
                                                0.0f, 0.0f, 0.0f})  // padding; the horizon's step
                                     .reshape({kMaxSteps, 3});
  EXPECT_TRUE(torch::equal(y.done_scored, expected)) << y.done_scored;
}

TEST(WorldModelTargets, TheDoneLossCountsOnlyScoredSteps) {
  MdnRnnConfig config;
  config.latent_dim = 2;
  config.action_dim = 2;
  config.num_xfers = 1;
  config.hidden = 4;
  config.components = 1;
  MdnRnn rnn(config);
  MdnRnnOutput out = rnn->forward(torch::zeros({1, 2, 2}), torch::zeros({1, 2, 2}));
  out.done_logit = torch::full({1, 2}, 2.0);
  MdnRnnTargets y;
  y.next_z = torch::zeros({1, 2, 2});
  y.reward = torch::zeros({1, 2});
  y.done = torch::tensor({1.0f, 0.0f}).reshape({1, 2});
  y.next_mask = torch::zeros({1, 2, 2});
  y.location_change = torch::zeros({1, 2, 2});
  y.valid = torch::ones({1, 2});
  // Cross-entropy at logit 2: log(1 + e^-2) for done, log(1 + e^2) for not.
  const double for_done = std::log1p(std::exp(-2.0)), for_not = std::log1p(std::exp(2.0));
  EXPECT_NEAR(rnn->losses(out, y).done.item<double>(), (for_done + for_not) / 2, 1e-6);
  y.done_scored = torch::tensor({0.0f, 1.0f}).reshape({1, 2});
  EXPECT_NEAR(rnn->losses(out, y).done.item<double>(), for_not, 1e-6);
}

TEST(WorldModelTargets, TheRewardHasATermPerChosenAction) {
  MdnRnnConfig config;
  config.latent_dim = 2;
  config.num_xfers = 2;
  config.action_dim = 5;
  config.action_one_hot_at = 2;  // the one-hot over 2 rules and NO-OP fills entries 2, 3, 4
  config.hidden = 4;
  config.components = 1;
  MdnRnn rnn(config);
  {
    torch::NoGradGuard no_grad;
    for (auto& p : rnn->named_parameters())
      if (p.key().rfind("reward.", 0) == 0) p.value().zero_();  // the LSTM's part says 0
    rnn->reward_by_choice().copy_(torch::tensor({0.5f, -1.25f, 0.0f}));
  }
  // Three rows choose rule 0, rule 1 and NO-OP; entries 0 and 1 are noise.
  const torch::Tensor actions = torch::tensor({0.3f, -0.7f, 1.0f, 0.0f, 0.0f,  //
                                               0.9f, 0.1f, 0.0f, 1.0f, 0.0f,  //
                                               -0.2f, 0.4f, 0.0f, 0.0f, 1.0f})
                                    .reshape({1, 3, 5});
  const torch::Tensor reward = rnn->forward(torch::zeros({1, 3, 2}), actions).reward;
  EXPECT_TRUE(torch::allclose(reward, torch::tensor({0.5f, -1.25f, 0.0f}).reshape({1, 3}))) << reward;

  config.action_one_hot_at = 3;  // would reach past the action input
  EXPECT_THROW(MdnRnn{config}, UsageError);
}

// With a separate controller memory, the controller's h follows z and the
// actions alone: the dream's mask and counts, which drift from the real
// ones, reach the heads that predict them but never h.
TEST(WorldModelTargets, ASeparateControllerMemoryIgnoresTheBookkeepingAndCarriesBothStates) {
  MdnRnnConfig config;
  config.latent_dim = 2;
  config.num_xfers = 2;
  config.action_dim = 7;          // mask [2], log locations [2], one-hot [3]
  config.bookkeeping_inputs = 4;  // the mask and log locations
  config.mask_leads_action = true;
  config.hidden = 8;
  config.components = 1;
  torch::manual_seed(4);
  MdnRnn rnn(config);
  rnn->eval();
  ASSERT_EQ(rnn->state_width(), 16);
  const torch::Tensor z = torch::tensor({0.3f, -0.2f, 0.1f, 0.5f}).reshape({2, 1, 2});
  const torch::Tensor one_hot = torch::tensor({1.0f, 0.0f, 0.0f});
  auto actions = [&](const torch::Tensor& first, const torch::Tensor& second) {
    return torch::stack({torch::cat({first, one_hot}), torch::cat({second, one_hot})}).reshape({2, 1, 7});
  };
  const torch::Tensor real_bookkeeping = torch::tensor({1.0f, 1.0f, 0.17f, 0.0f});
  const MdnRnnOutput real = rnn->forward(z, actions(real_bookkeeping, real_bookkeeping));
  const MdnRnnOutput drifted = rnn->forward(z, actions(real_bookkeeping, torch::tensor({1.0f, 0.0f, 0.05f, 0.9f})));
  EXPECT_TRUE(torch::equal(real.hidden, drifted.hidden));
  EXPECT_TRUE(torch::equal(real.next_z.means, drifted.next_z.means));
  EXPECT_FALSE(torch::allclose(real.mask_logits[1], drifted.mask_logits[1]));
  EXPECT_FALSE(torch::allclose(real.location_change[1], drifted.location_change[1]));
  ASSERT_EQ(std::get<0>(real.state).size(-1), 16);
  // One step at a time, carrying the joined state, equals the sequence.
  const MdnRnnOutput first = rnn->forward(z.narrow(0, 0, 1), actions(real_bookkeeping, real_bookkeeping).narrow(0, 0, 1));
  const MdnRnnOutput second =
      rnn->forward(z.narrow(0, 1, 1), actions(real_bookkeeping, real_bookkeeping).narrow(0, 1, 1), first.state);
  EXPECT_TRUE(torch::allclose(second.hidden[0], real.hidden[1], 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(second.mask_logits[0], real.mask_logits[1], 1e-5, 1e-6));

  config.bookkeeping_inputs = 7;  // nothing left for the controller's LSTM
  EXPECT_THROW(MdnRnn{config}, UsageError);
}

TEST(WorldModelTargets, ASeparateControllerMemoryIsSavedWithTheModelAndDreamsRun) {
  const std::vector<WorldEpisode> data = episodes();
  WorldModel model = model_of(data, true);
  const WorldModel loaded = WorldModel::from_bytes(model.to_bytes(), "memory.gwworld");
  EXPECT_TRUE(loaded.config().separate_controller_memory);
  EXPECT_EQ(loaded.impl().rnn->state_width(), 2 * loaded.config().hidden);
  EXPECT_FALSE(WorldModel::from_bytes(model_of(data).to_bytes(), "plain.gwworld").config().separate_controller_memory);
  WorldModel::Impl& m = model.impl();
  std::vector<const WorldEpisode*> all;
  for (const WorldEpisode& e : data) all.push_back(&e);
  m.set_starts(all);
  DreamOptions options;
  options.batch = 3;
  options.max_steps = kMaxSteps;
  DreamEnv dream(model, m.starts, options);
  for (int i = 0; i < 6; ++i) {
    ASSERT_EQ(dream.hidden().size(1), model.config().hidden);
    const torch::Tensor noop = torch::full({3}, static_cast<int64_t>(m.vocabulary.size()), torch::kInt64);
    dream.step(noop);  // NO-OP is always allowed, and restarts every row
  }
}

// Two threads run a training step's halves side by side (mdn_rnn.h) and
// score the held-out episodes the same way; the trained weights are the
// one-thread weights to the bit, also when the controller's half is kept
// frozen and has nothing to backpropagate.
TEST(WorldModelTargets, TrainingOnTwoThreadsGivesTheOneThreadWeightsToTheBit) {
  // Either would put both trainings on the previous code.
  ASSERT_EQ(std::getenv("GRAPHWORLD_ONE_THREAD_STEP"), nullptr);
  ASSERT_EQ(std::getenv("GRAPHWORLD_ATEN_LSTM"), nullptr);
  const std::vector<WorldEpisode> data = episodes();
  const int previous_threads = at::get_num_threads();
  auto trained_on = [&](int threads) {
    at::set_num_threads(threads);
    WorldModel model = model_of(data, /*separate_controller_memory=*/true);
    WorldModelTrainOptions first;
    first.encoder_epochs = 2;
    first.epochs = 4;
    model.train(data, data, first);
    WorldModelTrainOptions kept;
    kept.encoder_epochs = 0;
    kept.epochs = 3;
    kept.seed = 2;
    kept.keep_controller_memory = true;
    model.train(data, data, kept);
    std::vector<torch::Tensor> weights;
    for (const torch::Tensor& p : model.impl().rnn->parameters()) weights.push_back(p.detach().clone());
    return weights;
  };
  const std::vector<torch::Tensor> one = trained_on(1), two = trained_on(2);
  at::set_num_threads(previous_threads);
  ASSERT_EQ(one.size(), two.size());
  for (size_t i = 0; i < one.size(); ++i) EXPECT_TRUE(torch::equal(one[i], two[i])) << "parameter " << i;
}

// Training with keep_controller_memory moves the bookkeeping LSTM and the
// reward, done, mask and count heads, and leaves the controller's LSTM and
// the next-z mixture exactly as they were (the h a trained controller reads
// stays the one it was trained on). Without the flag, or with one LSTM,
// all of them move.
TEST(WorldModelTargets, KeepingTheControllerMemoryTrainsOnlyTheBookkeeping) {
  const std::vector<WorldEpisode> data = episodes();
  // {keep, separate memory}: with one LSTM there is no controller's half
  // to keep, and everything moves.
  for (auto [keep, separate] : {std::pair{true, true}, std::pair{false, true}, std::pair{true, false}}) {
    SCOPED_TRACE(std::string(keep ? "kept" : "moved") + (separate ? ", separate memory" : ", one LSTM"));
    WorldModel model = model_of(data, separate);
    WorldModelTrainOptions first;
    first.encoder_epochs = 3;
    first.epochs = 3;
    model.train(data, {}, first);
    std::map<std::string, torch::Tensor> before;
    for (const auto& p : model.impl().rnn->named_parameters()) before[p.key()] = p.value().detach().clone();
    WorldModelTrainOptions again;
    again.encoder_epochs = 0;
    again.epochs = 5;
    again.seed = 2;
    again.keep_controller_memory = keep;
    model.train(data, {}, again);
    int moved_controllers = 0, moved_bookkeeping = 0;
    for (const auto& p : model.impl().rnn->named_parameters()) {
      const bool controllers = p.key().rfind("lstm.", 0) == 0 || p.key().rfind("mixture.", 0) == 0;
      const bool moved = !torch::equal(before.at(p.key()), p.value());
      (controllers ? moved_controllers : moved_bookkeeping) += moved ? 1 : 0;
      EXPECT_TRUE(p.value().requires_grad()) << p.key() << " left frozen after training";
    }
    EXPECT_GT(moved_bookkeeping, 0);
    if (keep && separate)
      EXPECT_EQ(moved_controllers, 0);
    else
      EXPECT_GT(moved_controllers, 0);
  }
}

// The dream's counts move by whole matches, as real ones do. The location
// head predicts a mean change; for a rule a step leaves alone that is a
// small fraction, which, added up step after step, would wear the count
// away and end the dream's run of that rule early. Here the head predicts
// -0.3 for rule 5, which the steps never apply (its one match stays, where
// fractions would take it away after two steps), and -1.2 for rule 2,
// which each step applies (three matches, gone after three steps).
TEST(WorldModelTargets, DreamCountsMoveByWholeMatches) {
  for (bool separate_controller_memory : {true, false}) {
    SCOPED_TRACE(separate_controller_memory ? "separate controller memory" : "one LSTM");
    const std::vector<WorldEpisode> data = episodes();
    WorldModel model = model_of(data, separate_controller_memory);
    WorldModel::Impl& m = model.impl();
    ASSERT_EQ(m.vocabulary.size(), 2);  // rules 2 and 5, then NO-OP
    std::vector<const WorldEpisode*> all;
    for (const WorldEpisode& e : data) all.push_back(&e);
    m.set_starts(all);
    {
      torch::NoGradGuard no_grad;
      for (auto& p : m.rnn->named_parameters()) {
        const std::string& name = p.key();
        if (name == "locations.weight" || name == "mask.weight" || name == "done.weight") p.value().zero_();
        if (name == "locations.bias") p.value().copy_(torch::tensor({-1.2f, -0.3f, 0.0f}));
        if (name == "mask.bias") p.value().fill_(20.0f);    // every rule offered while it has a match
        if (name == "done.bias") p.value().fill_(-20.0f);  // never done by the head
      }
    }
    DreamOptions options;
    options.batch = 1;
    options.max_steps = 10;
    DreamEnv dream(model, m.starts, options);
    ASSERT_TRUE(torch::equal(dream.counts(), torch::tensor({{3.0f, 1.0f}})));
    const torch::Tensor rule_2 = torch::zeros({1}, torch::kInt64);
    for (float left : {2.0f, 1.0f, 0.0f}) {
      const DreamStepResult r = dream.step(rule_2);
      ASSERT_FALSE(r.done[0].item<bool>());
      EXPECT_TRUE(torch::equal(dream.counts(), torch::tensor({{left, 1.0f}}))) << dream.counts();
    }
    EXPECT_FALSE(dream.mask()[0][0].item<bool>()) << "rule 2 has no match left";
    EXPECT_TRUE(dream.mask()[0][1].item<bool>()) << "rule 5 keeps its match";
  }
}

// A dream whose heads offer every rule that has a match and never end an
// episode by themselves, from three real starts: {rule 2: 3 matches, rule
// 5: 1}, {rule 5 only} and {2: 1, 5: 2}.
struct SteadyDream {
  WorldModel model = model_of(episodes());
  torch::Tensor starts;
  SteadyDream() {
    WorldModel::Impl& m = model.impl();
    torch::NoGradGuard no_grad;
    for (auto& p : m.rnn->named_parameters()) {
      const std::string& name = p.key();
      if (name == "locations.weight" || name == "mask.weight" || name == "done.weight") p.value().zero_();
      if (name == "locations.bias") p.value().zero_();
      if (name == "mask.bias") p.value().fill_(20.0f);
      if (name == "done.bias") p.value().fill_(-20.0f);
    }
    WorldStep only_5 = step(5, 0.0f, false), both = step(2, 0.0f, false);
    only_5.allowed = {5};
    only_5.locations = {1};
    both.locations = {1, 2};
    starts = m.encoder_inputs({step(2, 0.0f, false), only_5, both});
  }
};

// Rows that end restart from the next starts in row order, round robin,
// without the dream counting them on the host.
TEST(WorldModelTargets, DreamRowsRestartFromTheStartsRoundRobin) {
  SteadyDream d;
  DreamOptions options;
  options.batch = 5;
  options.max_steps = 10;
  DreamEnv dream(d.model, d.starts, options);
  EXPECT_TRUE(torch::equal(dream.start_index(), torch::tensor({0, 1, 2, 0, 1}, torch::kInt64)));
  // Rule 2 (index 0) where the start offers it, NO-OP (2) on rows 1 and 3.
  const DreamStepResult r = dream.step(torch::tensor({0, 2, 0, 2, 2}, torch::kInt64));
  EXPECT_TRUE(torch::equal(r.done, torch::tensor({false, true, false, true, true})));
  // Rows 1, 3 and 4 take starts 2, 0 and 1, with their counts; rows 0 and
  // 2 keep theirs (the location head predicts no change).
  EXPECT_TRUE(torch::equal(dream.start_index(), torch::tensor({0, 2, 2, 0, 1}, torch::kInt64)));
  EXPECT_TRUE(torch::equal(dream.counts(), torch::tensor({{3.0f, 1.0f}, {1.0f, 2.0f}, {1.0f, 2.0f}, {3.0f, 1.0f},
                                                           {0.0f, 1.0f}})))
      << dream.counts();
  dream.step(torch::full({5}, 2, torch::kInt64));
  EXPECT_TRUE(torch::equal(dream.start_index(), torch::tensor({2, 0, 1, 2, 0}, torch::kInt64)));
}

// A masked or out-of-range action is refused: at once by default, the
// dream unmoved; with the check per step off, when check_actions() is
// called, once.
TEST(WorldModelTargets, ADreamRefusesAMaskedActionAtOnceOrWhenAsked) {
  SteadyDream d;
  DreamOptions options;
  options.batch = 3;
  options.max_steps = 10;
  DreamEnv now(d.model, d.starts, options);  // row 1 starts with rule 5 only
  const torch::Tensor z = now.z().clone();
  try {
    now.step(torch::tensor({0, 0, 0}, torch::kInt64));
    ADD_FAILURE() << "a masked action was stepped";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "dream row 1: action 0 is masked by the predicted mask");
  }
  EXPECT_TRUE(torch::equal(now.z(), z)) << "the refused step changed the dream";
  EXPECT_NO_THROW(now.step(torch::tensor({0, 1, 0}, torch::kInt64))) << "allowed actions step after a refusal";

  options.check_each_step = false;
  DreamEnv later(d.model, d.starts, options);
  EXPECT_NO_THROW(later.step(torch::tensor({0, 1, 0}, torch::kInt64)));
  EXPECT_NO_THROW(later.check_actions());
  EXPECT_NO_THROW(later.step(torch::tensor({2, 7, 2}, torch::kInt64)));  // 7: past NO-OP (2)
  EXPECT_NO_THROW(later.step(torch::tensor({0, 0, 0}, torch::kInt64)));
  try {
    later.check_actions();
    ADD_FAILURE() << "the refused actions were not reported";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "dream row 1: action 7 is outside the vocabulary [0, 2]") << "the first is reported";
  }
  EXPECT_NO_THROW(later.check_actions()) << "reported once";
}

// The next mask's per-(action, rule) term: saved with the model where it is
// on; a model without it is written as files were before the term existed
// (five config fields), so those files load as they always did, and both
// load back predicting exactly what they predicted.
TEST(WorldModelTargets, TheMaskTermIsSavedWhereOnAndFilesWithoutItLoadAsBefore) {
  const std::vector<WorldEpisode> data = episodes();
  for (bool on : {false, true}) {
    SCOPED_TRACE(on ? "with the mask term" : "without it");
    WorldModelConfig config;
    config.hidden = 16;
    config.latent_dim = 4;
    config.components = 2;
    config.mask_by_choice = on;
    WorldModelInfo info;
    info.max_steps = kMaxSteps;
    info.feature_version = kObservationFeatureVersion;
    WorldModel model(config, XferVocabulary::from_episodes(data, kRules), info, 1);
    const auto names = model.impl().rnn->named_parameters();
    ASSERT_EQ(names.contains("mask_by_choice"), on);
    if (on) {
      torch::NoGradGuard no_grad;
      names["mask_by_choice"].copy_(torch::randn({3, 3}));  // 2 rules and NO-OP: something to keep
    }
    const std::string bytes = model.to_bytes();
    torch::serialize::InputArchive archive;
    archive_from_bytes(archive, bytes, "memory.gwworld");
    torch::Tensor fields;
    archive.read("config", fields);
    EXPECT_EQ(fields.numel(), on ? 6 : 5);
    WorldModel loaded = WorldModel::from_bytes(bytes, "memory.gwworld");
    EXPECT_EQ(loaded.config().mask_by_choice, on);
    WorldModel::Impl& m = model.impl();
    std::vector<const WorldEpisode*> all;
    for (const WorldEpisode& e : data) all.push_back(&e);
    m.set_starts(all);
    torch::NoGradGuard no_grad;
    const torch::Tensor z = torch::randn({1, 3, 4});
    const torch::Tensor condition = torch::rand({1, 3, m.action_dim()});
    EXPECT_TRUE(torch::equal(m.rnn->forward(z, condition).mask_logits,
                             loaded.impl().rnn->forward(z, condition).mask_logits));
  }
}

TEST(WorldModelTargets, RuleRewardsStartAtTheDataMeansOnce) {
  const std::vector<WorldEpisode> data = episodes();
  WorldModel model = model_of(data);
  WorldModel::Impl& m = model.impl();
  ASSERT_EQ(m.vocabulary.size(), 2);  // rules 2 and 5, then NO-OP
  ASSERT_TRUE(torch::equal(m.rnn->reward_by_choice(), torch::zeros({3})));
  m.start_rule_rewards(data);
  // Rule 2: 0.5, 1.5, 0 -> 2/3; rule 5: -0.25, 0.25, 0, 0, -1 -> -0.2; NO-OP 0.
  EXPECT_TRUE(torch::allclose(m.rnn->reward_by_choice(), torch::tensor({2.0f / 3.0f, -0.2f, 0.0f})))
      << m.rnn->reward_by_choice();
  // Once learned, it is the model's own: new data does not reset it.
  m.start_rule_rewards({episode({step(2, 9.0f, true)})});
  EXPECT_NEAR(m.rnn->reward_by_choice()[0].item<double>(), 2.0 / 3.0, 1e-6);
}

TEST(WorldModelTargets, EpisodesCutOffByTheHorizonRaiseTheApplicationClampOnlyUpToTheirBestStep) {
  std::vector<WorldEpisode> data = episodes();
  WorldModel model = model_of(data);
  WorldModel::Impl& m = model.impl();
  m.set_support({&data[0], &data[1], &data[2]});
  // Rule 2: twice in the second episode. Rule 5: once in the first; the
  // cut-off third episode is best after its first step (0.25, then 0.25,
  // 0.25, -0.75), so its later three applications do not count.
  EXPECT_TRUE(torch::equal(m.applications_max, torch::tensor({2.0f, 1.0f}))) << m.applications_max;
  // Rewards 0.25, 0, 0.25, -1: best after the third step, three of rule 5.
  WorldEpisode rising = data[2];
  rising.steps[2].reward = 0.25f;
  m.set_support({&data[0], &rising});
  EXPECT_TRUE(torch::equal(m.applications_max, torch::tensor({1.0f, 3.0f}))) << m.applications_max;
  // An episode that ends before the horizon counts whole, losses included.
  WorldEpisode ended = data[2];
  ended.steps.pop_back();
  ended.steps.back().done = true;
  m.set_support({&ended});
  EXPECT_TRUE(torch::equal(m.applications_max, torch::tensor({1.0f, 3.0f}))) << m.applications_max;
}

TEST(WorldModelTargets, ARewriteIsChargedWhatItFallsShortOfTheStepCost) {
  // Rewrites (actions 0, 1) earning 0.05, 0.004, 0 and -0.02 with a step
  // cost of 0.01: charged 0, 0.006, 0.01 and 0.01. NO-OP (2) is free.
  const torch::Tensor predicted = torch::tensor({0.05f, 0.004f, 0.0f, -0.02f, 0.0f});
  const torch::Tensor action = torch::tensor({0, 1, 0, 1, 2}, torch::kInt64);
  const torch::Tensor got = controller_rewards(predicted, action, 2, 0.01);
  const torch::Tensor want = torch::tensor({0.05f, -0.002f, -0.01f, -0.03f, 0.0f});
  EXPECT_TRUE(torch::allclose(got, want, 0.0, 1e-7)) << got;
  // Without a step cost nothing changes.
  EXPECT_TRUE(torch::equal(controller_rewards(predicted, action, 2, 0.0), predicted));
}

// A dream with every row's state from its starts, on `device`: the model
// untrained (seeded weights), which is all a step's arithmetic needs.
struct StartedDream {
  std::vector<WorldEpisode> data = episodes();
  WorldModel model = model_of(data, true);
  explicit StartedDream(const torch::Device& device = torch::kCPU) {
    std::vector<const WorldEpisode*> all;
    for (const WorldEpisode& e : data) all.push_back(&e);
    model.impl().set_starts(all);
    model.impl().to_device(device);
  }
  DreamOptions options(bool default_generator = false) const {
    DreamOptions o;
    o.batch = 6;
    o.max_steps = kMaxSteps;
    o.check_each_step = false;
    o.default_generator = default_generator;
    return o;
  }
};

// state() names every tensor a step moves; set_state() puts them back, and
// refuses tensors that do not fit.
TEST(DreamState, SetStatePutsBackWhatStateGaveAndRefusesWhatDoesNotFit) {
  StartedDream d;
  DreamEnv dream(d.model, d.model.impl().starts, d.options());
  const std::vector<torch::Tensor> before = dream.state();
  std::vector<torch::Tensor> saved;
  for (const torch::Tensor& t : before) saved.push_back(t.clone());
  dream.step(torch::zeros({6}, torch::kInt64));  // rule 2 where allowed
  EXPECT_FALSE(dream.state()[0].is_same(before[0])) << "a step replaces z";
  EXPECT_FALSE(dream.state()[5].is_same(before[5])) << "and the LSTM state";
  dream.set_state(saved);
  EXPECT_TRUE(dream.z().is_same(saved[0]));
  const std::vector<torch::Tensor> now = dream.state();
  for (size_t i = 0; i < saved.size(); ++i) EXPECT_TRUE(now[i].is_same(saved[i])) << "tensor " << i;
  std::vector<torch::Tensor> short_by_one(saved.begin(), saved.end() - 1);
  EXPECT_THROW(dream.set_state(short_by_one), UsageError);
  std::vector<torch::Tensor> wrong = saved;
  wrong[0] = torch::zeros({5, saved[0].size(1)});  // a row short
  EXPECT_THROW(dream.set_state(wrong), UsageError);
  wrong = saved;
  wrong[7] = saved[7].to(torch::kInt32);
  EXPECT_THROW(dream.set_state(wrong), UsageError);
}

// Paid at the end (model_based.dream_reward: final), a dream step pays
// nothing until its row's episode ends, and then that episode's predicted
// reduction: the sum of what the same steps pay incrementally. What is paid
// changes nothing the dream does.
TEST(DreamRewards, FinalPaysTheSumOfAnEpisodesIncrementalRewardsWhenItEnds) {
  torch::set_num_threads(1);
  StartedDream d;
  DreamController controller = make_controller(d.model, 5);
  auto collect = [&](RewardKind paid) {
    DreamEnv dream(d.model, d.model.impl().starts, d.options());
    torch::Generator generator = seeded_generator(torch::kCPU, 9);
    return collect_dream_batch(dream, controller, 3 * kMaxSteps, generator, paid);
  };
  const DreamBatch each = collect(RewardKind::Incremental), at_end = collect(RewardKind::Final);
  ASSERT_TRUE(torch::equal(each.action, at_end.action));
  ASSERT_TRUE(torch::equal(each.done, at_end.done));
  EXPECT_EQ(each.return_sum, at_end.return_sum);
  int64_t ended = 0;
  bool some_step_paid = false;
  for (int64_t j = 0; j < each.rows; ++j) {
    double sum = 0;
    for (int64_t t = 0; t < each.steps; ++t) {
      const int64_t i = t * each.rows + j;
      sum += each.reward[i].item<double>();
      some_step_paid = some_step_paid || each.reward[i].item<float>() != 0.0f;
      if (!each.done[i].item<bool>()) {
        EXPECT_EQ(at_end.reward[i].item<float>(), 0.0f) << "row " << j << " step " << t;
        continue;
      }
      EXPECT_NEAR(at_end.reward[i].item<double>(), sum, 1e-5) << "row " << j << " step " << t;
      sum = 0;
      ++ended;
    }
  }
  EXPECT_TRUE(some_step_paid) << "the untrained reward head predicts something";
  EXPECT_GE(ended, 2 * each.rows) << "each row ends at least every " << kMaxSteps << " steps";
  EXPECT_THROW(collect(RewardKind::Measured), UsageError);
}

// A CUDA graph needs a GPU (and a LibTorch with CUDA): on the CPU the
// capture is refused with a UsageError before anything is run.
TEST(DreamStepGraphTest, ADreamOnTheCpuIsRefused) {
  StartedDream d;
  DreamEnv dream(d.model, d.model.impl().starts, d.options());
  int steps = 0;
  EXPECT_THROW(DreamStepGraph(dream, [&] {
                 ++steps;
                 return dream.step(torch::zeros({6}, torch::kInt64));
               }),
               UsageError);
  EXPECT_EQ(steps, 0);
}

// Replays take the eager steps' path to the bit: the same dream state and
// the same default-generator seed give the same rewards, ends, returns and
// next z, step after step, restarts included, and an eager step between
// replays is taken up by the next one. Runs only where a GPU and a
// LibTorch with CUDA are (tests/bench/gpu_learner_rows builds one).
TEST(DreamStepGraphTest, ReplaysTakeTheEagerStepsToTheBit) {
  if (!DreamStepGraph::available() || !torch::cuda::is_available())
    GTEST_SKIP() << "needs a GPU and a LibTorch built with CUDA";
  const torch::Device gpu("cuda:0");
  StartedDream d(gpu);
  torch::InferenceMode inference;
  DreamEnv eager(d.model, d.model.impl().starts, d.options(true));
  DreamEnv captured(d.model, d.model.impl().starts, d.options(true));
  DreamController controller = make_controller(d.model, 0);
  controller->to(gpu);
  torch::Generator generator = at::globalContext().defaultGenerator(gpu);
  auto step_of = [&](DreamEnv& dream) {
    return dream.step(sample_actions(controller->forward(dream.z(), dream.hidden(), dream.mask()), generator));
  };
  DreamStepGraph graph(captured, [&] { return step_of(captured); });
  // Both from the eager dream's first state (the warm-up moved the other).
  const std::vector<torch::Tensor> from = eager.state();
  const std::vector<torch::Tensor> into = captured.state();
  for (size_t i = 0; i < from.size(); ++i) into[i].copy_(from[i]);
  auto reseed = [&] { seeded_default_generator(gpu, 1234); };
  constexpr int kSteps = 12;  // past the 4-step horizon: every row restarts
  std::vector<std::vector<torch::Tensor>> want;
  reseed();
  for (int i = 0; i < kSteps; ++i) {
    const DreamStepResult r = step_of(eager);
    want.push_back({r.reward.clone(), r.done.clone(), r.episode_return.clone(), eager.z().clone()});
  }
  reseed();
  for (int i = 0; i < kSteps; ++i) {
    // Step 5 eagerly on the captured dream: the next replay goes on from it.
    const DreamStepResult r = i == 5 ? step_of(captured) : graph.replay();
    const std::vector<torch::Tensor> got{r.reward, r.done, r.episode_return, captured.z()};
    for (size_t k = 0; k < got.size(); ++k)
      EXPECT_TRUE(torch::equal(got[k].cpu(), want[static_cast<size_t>(i)][k].cpu())) << "step " << i << ", field " << k;
  }
  EXPECT_NO_THROW(eager.check_actions());
  EXPECT_NO_THROW(captured.check_actions());
}

}  // namespace
}  // namespace graphworld
