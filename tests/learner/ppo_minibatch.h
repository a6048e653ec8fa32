// A PPO minibatch to compute gradients on, and the comparison of two
// networks' gradients, for the tests of the learner's minibatch paths
// (ppo_gradients_test.cc, padded_ppo_gradients_test.cc).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "env/cost/analytic_cost_model.h"
#include "env/gym/graph_env.h"
#include "env/zoo/zoo.h"
#include "learner/policy_module.h"
#include "learner/ppo_epochs.h"
#include "tests/learner/training_fixture.h"

namespace graphworld::testing {

// Observations along random walks on two different graphs, with the
// actions a policy samples there and made-up advantages and returns.
struct Minibatch {
  AnalyticCostModel cost;
  std::vector<Observation> observations;
  std::vector<Action> actions;
  PpoSamples samples;

  Minibatch(PolicyNetwork& net, int32_t count) {
    std::mt19937_64 rng(11);
    for (const char* model : {"resnet18", "nasrnn"}) {
      GraphEnv env(build_zoo_model(model, {}), testing::default_matcher(), cost);
      const Observation* obs = &env.reset(3);
      for (int32_t k = 0; k < count / 2; ++k) {
        observations.push_back(*obs);
        StepResult r = env.step(random_allowed_action(*obs, rng));
        obs = r.done ? &env.reset(4 + static_cast<uint64_t>(k)) : r.observation;
      }
    }
    std::vector<const Observation*> all;
    for (const Observation& o : observations) all.push_back(&o);
    std::normal_distribution<float> normal;
    for (const PolicyStep& s : net.act(all, rng)) {
      actions.push_back(s.action);
      // Off the acting log-probability, so the clipped ratio takes both branches.
      samples.old_log_prob.push_back(s.log_prob + 0.3f * normal(rng));
      samples.advantages.push_back(normal(rng));
      samples.returns.push_back(normal(rng));
    }
  }
};

// `now` equals `before`: as a whole (relative to its norm), and per
// parameter (relative to its own gradient, or, where that is zero in exact
// arithmetic and only rounding is left, such as the location head's last
// bias, which shifts every score of a softmax alike, to a hundredth of the
// largest).
inline void expect_same_gradient(const std::vector<torch::Tensor>& before, const std::vector<torch::Tensor>& now,
                          const std::vector<std::string>& names, const std::string& label) {
  double largest = 0;
  std::vector<torch::Tensor> flat_before, flat_now;
  for (size_t k = 0; k < before.size(); ++k) {
    largest = std::max(largest, before[k].abs().max().item<double>());
    flat_before.push_back(before[k].flatten());
    flat_now.push_back(now[k].flatten());
  }
  const torch::Tensor all_before = torch::cat(flat_before), all_now = torch::cat(flat_now);
  EXPECT_GT(all_before.norm().item<double>(), 0) << label << ": no gradient at all";
  EXPECT_LT((all_now - all_before).norm().item<double>() / all_before.norm().item<double>(), 1e-4) << label;
  for (size_t k = 0; k < before.size(); ++k) {
    const double scale = std::max(before[k].abs().max().item<double>(), 1e-2 * largest);
    const double diff = (now[k] - before[k]).abs().max().item<double>();
    EXPECT_LT(diff / scale, 1e-4) << label << ": " << names[k] << " differs";
  }
}

}  // namespace graphworld::testing
