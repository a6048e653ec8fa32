// The parameters a model-based learner publishes: they come back exactly,
// and anything damaged or of another kind is refused naming its source.
#include <gtest/gtest.h>

#include "common/error.h"
#include "worldmodel/model_based_parameters.h"

namespace graphworld {
namespace {

ModelBasedParameters sample() {
  ModelBasedParameters p;
  p.generation = 3;
  p.round = 2;
  p.real_episodes = 5;
  p.greedy_episodes = 2;
  p.explore = 0.125;
  p.random_steps = 7;
  p.dream = true;
  p.world_model = std::string("model\0bytes\n\n", 13);
  p.controller = "controller";
  p.plans = {{18, 18, 1275}, {}, {4}};
  return p;
}

TEST(ModelBasedParameters, RoundTripExactly) {
  const ModelBasedParameters p = sample();
  const ModelBasedParameters q = decode_model_based_parameters(encode_model_based_parameters(p), "v");
  EXPECT_EQ(q.generation, 3);
  EXPECT_EQ(q.round, 2);
  EXPECT_EQ(q.real_episodes, 5);
  EXPECT_EQ(q.greedy_episodes, 2);
  EXPECT_EQ(q.explore, 0.125);
  EXPECT_EQ(q.random_steps, 7);
  EXPECT_TRUE(q.dream);
  EXPECT_EQ(q.world_model, p.world_model);
  EXPECT_EQ(q.controller, p.controller);
  EXPECT_EQ(q.plans, p.plans);
  ModelBasedParameters first;  // before any world model: no models at all
  first.real_episodes = 4;
  const ModelBasedParameters r = decode_model_based_parameters(encode_model_based_parameters(first), "v0");
  EXPECT_EQ(r.generation, 0);
  EXPECT_TRUE(r.world_model.empty());
}

TEST(ModelBasedParameters, DamagedOrForeignBlobsAreRefused) {
  const std::string good = encode_model_based_parameters(sample());
  auto refused = [](const std::string& blob, const std::string& needle) {
    try {
      decode_model_based_parameters(blob, "parameters of version 9");
    } catch (const FormatError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("parameters of version 9"), std::string::npos) << what;
      EXPECT_NE(what.find(needle), std::string::npos) << what;
      return;
    }
    ADD_FAILURE() << "accepted: " << needle;
  };
  refused("a policy network's bytes", "not a model-based run's parameters");
  refused(good.substr(0, good.size() - 1), "bytes of models");
  refused(good + "x", "bytes of models");
  std::string bad_header = good;
  bad_header.replace(bad_header.find('\n') + 1, 1, "-");
  refused(bad_header, "header");
  ModelBasedParameters mismatched = sample();
  mismatched.generation = 0;
  refused(encode_model_based_parameters(mismatched), "disagree");
}

}  // namespace
}  // namespace graphworld
