// Batching observations: the disjoint union keeps each graph's nodes,
// edges, globals and masks, offsets its indices, and lists the candidate
// locations of a chosen xfer with the nodes each matched.
#include <gtest/gtest.h>

#include <algorithm>
#include <span>

#include "common/error.h"
#include "env/cost/analytic_cost_model.h"
#include "env/gym/graph_env.h"
#include "env/rules/rule_library.h"
#include "env/zoo/zoo.h"
#include "learner/observation_batch.h"
#include "learner/rollout.h"

namespace graphworld {
namespace {

const RuleMatcher& matcher() {
  static const RuleMatcher m(default_rule_library().rules);
  return m;
}

TEST(ObservationBatch, IsTheDisjointUnionOfItsGraphs) {
  AnalyticCostModel cost;
  GraphEnv a(build_zoo_model("squeezenet1.1", {}), matcher(), cost);
  GraphEnv b(build_zoo_model("nasrnn", {}), matcher(), cost);
  const Observation& oa = a.reset(1);
  const Observation& ob = b.reset(2);
  const ObservationBatch batch = batch_observations({&oa, &ob});
  ASSERT_EQ(batch.num_graphs, 2);
  EXPECT_EQ(batch.num_nodes, oa.graph.num_nodes + ob.graph.num_nodes);
  EXPECT_EQ(batch.num_edges, oa.graph.num_edges + ob.graph.num_edges);
  EXPECT_EQ(batch.node_offset, (std::vector<int64_t>{0, oa.graph.num_nodes, batch.num_nodes}));
  // The second graph's edges point at its own nodes, shifted by the first's count.
  const int64_t first_b_edge = oa.graph.num_edges;
  EXPECT_EQ(batch.senders[first_b_edge], ob.graph.senders[0] + oa.graph.num_nodes);
  EXPECT_EQ(batch.receivers[first_b_edge], ob.graph.receivers[0] + oa.graph.num_nodes);
  EXPECT_EQ(batch.edge_graph[first_b_edge], 1);
  EXPECT_EQ(batch.node_graph[oa.graph.num_nodes], 1);
  EXPECT_EQ(batch.node_features[static_cast<size_t>(oa.graph.num_nodes) * kNodeFeatureDim], ob.graph.node_features[0]);
  EXPECT_EQ(batch.globals.size(), 2u * kGlobalFeatureDim);
  EXPECT_EQ(batch.xfer_mask.size(), 2u * static_cast<size_t>(oa.num_xfers + 1));
  for (int64_t e = 0; e < batch.num_edges; ++e) {
    EXPECT_EQ(batch.node_graph[batch.senders[e]], batch.edge_graph[e]);
    EXPECT_EQ(batch.node_graph[batch.receivers[e]], batch.edge_graph[e]);
  }
}

TEST(ObservationBatch, CandidatesListTheMatchedNodesOfTheChosenXfer) {
  AnalyticCostModel cost;
  GraphEnv a(build_zoo_model("resnet18", {}), matcher(), cost);
  GraphEnv b(build_zoo_model("nasrnn", {}), matcher(), cost);
  const Observation& oa = a.reset(1);
  const Observation& ob = b.reset(2);
  int32_t xa = -1;
  for (int32_t x = 0; x < oa.num_xfers && xa < 0; ++x)
    if (oa.xfer_mask[x] && oa.location_count(x) > 1) xa = x;
  ASSERT_GE(xa, 0);
  const ObservationBatch batch = batch_observations({&oa, &ob});
  const LocationCandidates c = location_candidates({&oa, &ob}, batch, {xa, ob.num_xfers});
  EXPECT_EQ(c.num_candidates, oa.location_count(xa)) << "NO-OP adds no candidate";
  int64_t members = 0;
  for (int32_t loc = 0; loc < oa.location_count(xa); ++loc) {
    EXPECT_EQ(c.candidate_location[loc], loc);
    EXPECT_EQ(c.candidate_graph[loc], 0);
    for (int32_t node : oa.matched_nodes(xa, loc)) {
      EXPECT_EQ(c.member_node[members], node);
      EXPECT_EQ(c.member_candidate[members], loc);
      ++members;
    }
  }
  EXPECT_EQ(static_cast<size_t>(members), c.member_node.size());
  // The second observation's candidates point at its own nodes, past the first's.
  int32_t xb = -1;
  for (int32_t x = 0; x < ob.num_xfers && xb < 0; ++x)
    if (ob.xfer_mask[x]) xb = x;
  ASSERT_GE(xb, 0);
  const LocationCandidates both = location_candidates({&oa, &ob}, batch, {xa, xb});
  EXPECT_EQ(both.num_candidates, oa.location_count(xa) + ob.location_count(xb));
  const std::span<const int32_t> first_b = ob.matched_nodes(xb, 0);
  EXPECT_EQ(both.member_node[members], first_b[0] + batch.node_offset[1]);
  EXPECT_EQ(both.candidate_graph[oa.location_count(xa)], 1);
  // A masked xfer is refused.
  int32_t masked = -1;
  for (int32_t x = 0; x < ob.num_xfers && masked < 0; ++x)
    if (!ob.xfer_mask[x]) masked = x;
  ASSERT_GE(masked, 0);
  EXPECT_THROW(location_candidates({&oa, &ob}, batch, {xa, masked}), UsageError);
}

// Location rewards: the batch takes each observation's xfer rewards as they
// are, the candidates their locations' rewards, and compact copies keep
// both. A batch with one observation lacking them has none.
TEST(ObservationBatch, CarriesLocationRewardsWhenEveryObservationHasThem) {
  AnalyticCostModel cost;
  GraphEnvOptions with;
  with.location_rewards = true;
  GraphEnv a(build_zoo_model("resnet18", {}), matcher(), cost, with);
  GraphEnv b(build_zoo_model("squeezenet1.1", {}), matcher(), cost, with);
  GraphEnv plain(build_zoo_model("squeezenet1.1", {}), matcher(), cost);
  const Observation& oa = a.reset(1);
  const Observation& ob = b.reset(2);
  ASSERT_TRUE(has_location_rewards(oa) && has_location_rewards(ob));
  EXPECT_FALSE(has_location_rewards(plain.reset(2)));
  const auto width = static_cast<size_t>(oa.num_xfers + 1);
  int32_t xa = -1;
  for (int32_t x = 0; x < oa.num_xfers && xa < 0; ++x)
    if (oa.xfer_mask[x] && oa.location_count(x) > 1) xa = x;
  ASSERT_GE(xa, 0);
  // Each xfer's reward is its best location's, NO-OP's 0.
  float best = oa.location_reward[static_cast<size_t>(oa.location_begin[xa])];
  for (int32_t l = 1; l < oa.location_count(xa); ++l)
    best = std::max(best, oa.location_reward[static_cast<size_t>(oa.location_begin[xa] + l)]);
  EXPECT_EQ(oa.xfer_reward[static_cast<size_t>(xa)], best);
  EXPECT_EQ(oa.xfer_reward[width - 1], 0.0f);

  const ObservationBatch batch = batch_observations({&oa, &ob});
  ASSERT_EQ(batch.xfer_best_reward.size(), 2 * width);
  EXPECT_TRUE(std::equal(ob.xfer_reward.begin(), ob.xfer_reward.end(), batch.xfer_best_reward.begin() + width));
  const LocationCandidates c = location_candidates({&oa, &ob}, batch, {xa, ob.num_xfers});
  ASSERT_EQ(c.candidate_reward.size(), static_cast<size_t>(oa.location_count(xa)));
  for (int32_t l = 0; l < oa.location_count(xa); ++l)
    EXPECT_EQ(c.candidate_reward[static_cast<size_t>(l)], oa.location_reward[static_cast<size_t>(oa.location_begin[xa] + l)]);

  // Compact copies (what actors send) keep the taken xfer's rewards and every xfer reward.
  const Observation ca = compact_observation(oa, xa);
  ASSERT_TRUE(has_location_rewards(ca));
  const ObservationBatch compact = batch_observations({&ca});
  EXPECT_TRUE(std::equal(oa.xfer_reward.begin(), oa.xfer_reward.end(), compact.xfer_best_reward.begin()));
  EXPECT_EQ(location_candidates({&ca}, compact, {xa}).candidate_reward,
            location_candidates({&oa}, batch_observations({&oa}), {xa}).candidate_reward);

  const Observation& op = plain.reset(2);
  EXPECT_TRUE(batch_observations({&oa, &op}).xfer_best_reward.empty()) << "one observation without rewards";
}

TEST(ObservationBatch, TerminalObservationsAreRefused) {
  AnalyticCostModel cost;
  GraphEnv env(build_zoo_model("nasrnn", {}), matcher(), cost);
  env.reset(1);
  const StepResult r = env.step({env.noop(), 0});
  ASSERT_TRUE(r.done);
  EXPECT_THROW(batch_observations({r.observation}), UsageError);
}

}  // namespace
}  // namespace graphworld
