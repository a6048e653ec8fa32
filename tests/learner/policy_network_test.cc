// The policy network: masked actions have probability exactly 0 and are
// never sampled, the joint log-probability is the sum of the two heads',
// and encoding graphs together equals encoding each alone.
#include <gtest/gtest.h>

#include <cmath>

#include "common/error.h"
#include "env/cost/analytic_cost_model.h"
#include "env/gym/graph_env.h"
#include "env/rules/rule_library.h"
#include "env/zoo/zoo.h"
#include "learner/policy_module.h"
#include "learner/policy_network.h"
#include "learner/rollout.h"
#include "tests/learner/training_fixture.h"

namespace graphworld {
namespace {

const RuleMatcher& matcher() { return testing::default_matcher(); }

PolicyNetwork make_network(uint64_t seed = 3) { return testing::small_network(seed); }

struct TwoGraphs {
  AnalyticCostModel cost;
  GraphEnv a{build_zoo_model("resnet18", {}), matcher(), cost};
  GraphEnv b{build_zoo_model("nasrnn", {}), matcher(), cost};
  const Observation* oa = &a.reset(1);
  const Observation* ob = &b.reset(2);
};

TEST(PolicyNetwork, MaskedXfersHaveProbabilityZeroAndAreNeverSampled) {
  TwoGraphs t;
  PolicyNetwork net = make_network();
  torch::NoGradGuard no_grad;
  auto& m = net.impl().module;
  const ObservationBatch batch = batch_observations({t.oa, t.ob});
  const BatchTensors tensors = to_tensors(batch);
  const torch::Tensor p = m->xfer_log_probs(m->encode(tensors), tensors).exp();
  const int64_t width = t.oa->num_xfers + 1;
  for (int64_t g = 0; g < 2; ++g) {
    EXPECT_NEAR(p[g].sum().item<double>(), 1.0, 1e-5);
    for (int64_t x = 0; x < width; ++x)
      if (!batch.xfer_mask[g * width + x]) {
        ASSERT_EQ(p[g][x].item<float>(), 0.0f) << "graph " << g << " xfer " << x;
      }
  }
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200; ++i) {
    const std::vector<PolicyStep> steps = net.act({t.oa, t.ob}, rng);
    const Observation* obs[2] = {t.oa, t.ob};
    for (int g = 0; g < 2; ++g) {
      ASSERT_TRUE(obs[g]->xfer_mask[steps[g].action.xfer]) << "sampled a masked xfer";
      if (steps[g].action.xfer != obs[g]->num_xfers) {
        ASSERT_LT(steps[g].action.location, obs[g]->location_count(steps[g].action.xfer));
      }
      ASSERT_TRUE(std::isfinite(steps[g].log_prob));
    }
  }
}

TEST(PolicyNetwork, JointLogProbIsTheSumOfTheTwoHeads) {
  TwoGraphs t;
  PolicyNetwork net = make_network();
  std::mt19937_64 rng(11);
  const std::vector<PolicyStep> steps = net.act({t.oa, t.ob}, rng);
  torch::NoGradGuard no_grad;
  auto& m = net.impl().module;
  const std::vector<const Observation*> obs = {t.oa, t.ob};
  const ObservationBatch batch = batch_observations(obs);
  const BatchTensors tensors = to_tensors(batch);
  const Encoded e = m->encode(tensors);
  const torch::Tensor xfer_lp = m->xfer_log_probs(e, tensors);
  const std::vector<int32_t> xfers = {steps[0].action.xfer, steps[1].action.xfer};
  const LocationCandidates c = location_candidates(obs, batch, xfers);
  const torch::Tensor loc_lp = m->location_log_probs(e, c, xfers, 2);
  for (int g = 0; g < 2; ++g) {
    double expected = xfer_lp[g][xfers[g]].item<double>();
    double location_total = 0;
    for (int64_t k = 0; k < c.num_candidates; ++k) {
      if (c.candidate_graph[k] != g) continue;
      location_total += std::exp(loc_lp[k].item<double>());
      if (c.candidate_location[k] == steps[g].action.location) expected += loc_lp[k].item<double>();
    }
    if (xfers[g] != obs[g]->num_xfers) {
      EXPECT_NEAR(location_total, 1.0, 1e-5) << "location probabilities sum to 1";
    }
    EXPECT_NEAR(steps[g].log_prob, expected, 1e-5);
    EXPECT_NEAR(net.log_probs(obs, {steps[0].action, steps[1].action})[g], expected, 1e-5);
  }
  // NO-OP has no location term: its log-probability is the xfer head's alone.
  const Action noop{t.oa->num_xfers, 0};
  EXPECT_NEAR(net.log_probs({t.oa}, {noop})[0], xfer_lp[0][t.oa->num_xfers].item<double>(), 1e-5);
}

TEST(PolicyNetwork, EvaluatedActionsCarryGradientsAndMatchSampling) {
  TwoGraphs t;
  PolicyNetwork net = make_network();
  std::mt19937_64 rng(13);
  const auto steps = net.act({t.oa, t.ob}, rng);
  const ActionEvaluation eval = evaluate_actions(net.impl().module, {t.oa, t.ob}, {steps[0].action, steps[1].action});
  for (int g = 0; g < 2; ++g) {
    EXPECT_NEAR(eval.log_prob[g].item<double>(), steps[g].log_prob, 1e-5);
    EXPECT_NEAR(eval.value[g].item<double>(), steps[g].value, 1e-5);
    EXPECT_TRUE(std::isfinite(eval.entropy[g].item<double>()));
    EXPECT_GT(eval.entropy[g].item<double>(), 0.0);
  }
  (eval.log_prob.sum() + eval.value.sum() + eval.entropy.sum()).backward();
  double grad_norm = 0;
  for (const torch::Tensor& p : net.impl().module->parameters())
    if (p.grad().defined()) grad_norm += p.grad().pow(2).sum().item<double>();
  EXPECT_GT(grad_norm, 0.0);
  EXPECT_TRUE(std::isfinite(grad_norm));
}

// A network that reads location rewards: acting and the PPO update (on the
// compact copies actors send) give the same log-probabilities; the rewards
// move both heads' scores; observations without them are refused, naming
// the option.
TEST(PolicyNetwork, LocationRewardsReachBothHeadsTheSameWayWhenActingAndLearning) {
  AnalyticCostModel cost;
  GraphEnvOptions with;
  with.location_rewards = true;
  GraphEnv a(build_zoo_model("resnet18", {}), matcher(), cost, with);
  GraphEnv b(build_zoo_model("squeezenet1.1", {}), matcher(), cost, with);
  const Observation& oa = a.reset(1);
  const Observation& ob = b.reset(2);
  PolicyNetwork net = testing::small_network(4, /*location_rewards=*/true);
  std::mt19937_64 rng(13);
  const auto steps = net.act({&oa, &ob}, rng);
  const std::vector<Action> actions{steps[0].action, steps[1].action};
  const Observation ca = compact_observation(oa, actions[0].xfer), cb = compact_observation(ob, actions[1].xfer);
  const ActionEvaluation eval = evaluate_actions(net.impl().module, {&ca, &cb}, actions);
  for (int g = 0; g < 2; ++g) EXPECT_NEAR(eval.log_prob[g].item<double>(), steps[g].log_prob, 1e-5) << g;

  // Both heads read the rewards: change one xfer's reward, or one location's.
  int32_t x = -1;
  for (int32_t k = 0; k < oa.num_xfers && x < 0; ++k)
    if (oa.xfer_mask[k] && oa.location_count(k) > 1) x = k;
  ASSERT_GE(x, 0);
  const Action first{x, 0};
  const float before = net.log_probs({&oa}, {first})[0];
  Observation changed = oa;
  changed.xfer_reward[static_cast<size_t>(x)] += 3.0f;
  EXPECT_NE(net.log_probs({&changed}, {first})[0], before) << "xfer head";
  changed = oa;
  changed.location_reward[static_cast<size_t>(oa.location_begin[x])] += 3.0f;
  EXPECT_NE(net.log_probs({&changed}, {first})[0], before) << "location head";

  GraphEnv plain(build_zoo_model("squeezenet1.1", {}), matcher(), cost);
  const Observation& op = plain.reset(2);
  try {
    net.act({&op}, rng);
    FAIL() << "an observation without location rewards was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("network.location_rewards"), std::string::npos) << e.what();
  }
  // A network without them ignores them.
  PolicyNetwork without = make_network();
  Observation no_rewards = oa;
  no_rewards.location_reward.clear();
  no_rewards.xfer_reward.clear();
  EXPECT_EQ(without.log_probs({&oa}, {first})[0], without.log_probs({&no_rewards}, {first})[0]);
}

// The reward features, by hand: the raw reward, the reward over its group's
// largest magnitude (at least 0.01), and 1 for the group's best paying one.
TEST(PolicyNetwork, RewardFeaturesAreRawRelativeAndBest) {
  const torch::Tensor rewards = torch::tensor({0.5f, -2.0f, 0.1f, 0.0f, 0.003f, -0.001f});
  const torch::Tensor group = torch::tensor({0, 0, 0, 0, 1, 1}, torch::kInt64);
  const torch::Tensor f = reward_features(rewards, group, 2);
  const torch::Tensor expected = torch::tensor({{0.5f, 0.25f, 1.0f},
                                                {-2.0f, -1.0f, 0.0f},
                                                {0.1f, 0.05f, 0.0f},
                                                {0.0f, 0.0f, 0.0f},
                                                {0.003f, 0.3f, 1.0f},
                                                {-0.001f, -0.1f, 0.0f}});
  EXPECT_TRUE(torch::allclose(f, expected, 1e-6, 1e-7)) << f;
  // A group where nothing pays has no best.
  const torch::Tensor losing = reward_features(torch::tensor({-0.5f, -0.25f}), torch::tensor({0, 0}, torch::kInt64), 1);
  EXPECT_EQ(losing.select(1, 2).sum().item<float>(), 0.0f);
}

TEST(PolicyNetwork, BatchedEncodingEqualsEncodingEachAlone) {
  TwoGraphs t;
  PolicyNetwork net = make_network();
  const auto together = net.graph_embeddings({t.oa, t.ob});
  const auto a = net.graph_embeddings({t.oa});
  const auto b = net.graph_embeddings({t.ob});
  ASSERT_EQ(together.size(), 2u);
  ASSERT_EQ(together[0].size(), 32u);
  for (size_t k = 0; k < a[0].size(); ++k) EXPECT_NEAR(together[0][k], a[0][k], 1e-5);
  for (size_t k = 0; k < b[0].size(); ++k) EXPECT_NEAR(together[1][k], b[0][k], 1e-5);
  // The same for the log-probability of an action.
  std::mt19937_64 rng(5);
  const auto steps = net.act({t.oa, t.ob}, rng);
  EXPECT_NEAR(net.log_probs({t.oa, t.ob}, {steps[0].action, steps[1].action})[1],
              net.log_probs({t.ob}, {steps[1].action})[0], 1e-5);
}

TEST(PolicyNetwork, SameSeedSameParametersAndGreedyIsDeterministic) {
  TwoGraphs t;
  PolicyNetwork first = make_network(9), second = make_network(9);
  EXPECT_GT(first.num_parameters(), 1000);
  std::mt19937_64 r1(1), r2(2);
  const auto g1 = first.act({t.oa, t.ob}, r1, /*greedy=*/true);
  const auto g2 = second.act({t.oa, t.ob}, r2, /*greedy=*/true);
  for (int g = 0; g < 2; ++g) {
    EXPECT_EQ(g1[g].action, g2[g].action);
    EXPECT_EQ(g1[g].log_prob, g2[g].log_prob);
  }
}

TEST(PolicyNetwork, SegmentLogSoftmaxIsLogSoftmaxWithinEachSegment) {
  const torch::Tensor logits = torch::tensor({1.0f, 2.0f, 3.0f, -1.0f, 500.0f});
  const torch::Tensor index = torch::tensor({0, 0, 0, 2, 2}, torch::kInt64);
  const torch::Tensor got = segment_log_softmax(logits, index, 3);  // segment 1 is empty
  EXPECT_TRUE(torch::allclose(got.slice(0, 0, 3), torch::log_softmax(logits.slice(0, 0, 3), 0)));
  EXPECT_TRUE(torch::allclose(got.slice(0, 3, 5), torch::log_softmax(logits.slice(0, 3, 5), 0)));
  EXPECT_TRUE(torch::isfinite(got).all().item<bool>()) << "a large logit must not overflow";
}

TEST(PolicyNetwork, XferEntropyIsTheMaskedCategoricalsAndSamplingIsSeeded) {
  TwoGraphs t;
  PolicyNetwork net = make_network();
  const Action noop_a{t.oa->num_xfers, 0}, noop_b{t.ob->num_xfers, 0};
  // With NO-OP taken there is no location term: the entropy is the xfer head's alone.
  const ActionEvaluation e = evaluate_actions(net.impl().module, {t.oa, t.ob}, {noop_a, noop_b});
  torch::NoGradGuard no_grad;
  auto& m = net.impl().module;
  const BatchTensors tensors = to_tensors(batch_observations({t.oa, t.ob}));
  const torch::Tensor lp = m->xfer_log_probs(m->encode(tensors), tensors);
  for (int g = 0; g < 2; ++g) {
    double h = 0;
    for (int64_t x = 0; x < lp.size(1); ++x) {
      const double l = lp[g][x].item<double>();
      if (std::isfinite(l)) h -= std::exp(l) * l;
    }
    EXPECT_NEAR(e.entropy[g].item<double>(), h, 1e-4);
  }
  // The same seed samples the same actions.
  std::mt19937_64 r1(21), r2(21);
  for (int i = 0; i < 5; ++i) {
    const auto s1 = net.act({t.oa, t.ob}, r1), s2 = net.act({t.oa, t.ob}, r2);
    EXPECT_EQ(s1[0].action, s2[0].action);
    EXPECT_EQ(s1[1].action, s2[1].action);
  }
}

TEST(PolicyNetwork, BadSettingsAndForeignObservationsAreRefused) {
  PolicyNetworkConfig config;
  config.num_xfers = 0;
  EXPECT_THROW(PolicyNetwork{config}, UsageError);
  config.num_xfers = 5;
  config.hidden = 2;
  EXPECT_THROW(PolicyNetwork{config}, UsageError);
  config.hidden = 16;
  PolicyNetwork small(config);
  TwoGraphs t;
  std::mt19937_64 rng(1);
  EXPECT_THROW(small.act({t.oa}, rng), UsageError);
  // A location beyond the xfer's count is refused, not scored as the xfer alone.
  PolicyNetwork net = make_network();
  int32_t x = 0;
  while (!t.oa->xfer_mask[x]) ++x;
  EXPECT_THROW(net.log_probs({t.oa}, {Action{x, t.oa->location_count(x)}}), UsageError);
  // Building a network leaves torch's global random stream where it was.
  torch::manual_seed(42);
  const double expected = torch::rand({1}).item<double>();
  torch::manual_seed(42);
  make_network(99);
  EXPECT_EQ(torch::rand({1}).item<double>(), expected);
}

}  // namespace
}  // namespace graphworld
