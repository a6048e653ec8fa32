// Episodes for world models: grouping stored steps by actor slot (episodes
// interleave in a store), dropping steps whose history is missing, the
// vocabulary, and the held-out split.
#include "worldmodel/world_episode.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>

#include "common/error.h"
#include "env/cost/cost_model_factory.h"
#include "tests/learner/training_fixture.h"

namespace graphworld {
namespace {

StoredStep stored(uint32_t actor, int32_t slot, int32_t episode_step, int32_t xfer, bool done) {
  StoredStep s;
  s.actor_id = actor;
  s.env_slot = slot;
  s.episode_step = episode_step;
  s.xfer = xfer;
  s.reward = static_cast<float>(xfer);
  s.done = done ? 1 : 0;
  return s;
}

// A replay that rebuilds every step except those listed, with one allowed
// xfer (3) so the steps are recognisable.
ReplayFunction fake_replay(std::vector<size_t> missing) {
  return [missing](const std::vector<StoredStep>& steps, const std::function<void(size_t, const Observation&)>& visit) {
    Observation o;
    o.num_xfers = 5;
    o.max_locations = 4;
    o.xfer_mask = {0, 0, 0, 1, 0, 1};
    o.location_begin = {0, 0, 0, 0, 2, 2};
    o.graph.globals.assign(kGlobalFeatureDim, 0.5f);
    for (size_t i = 0; i < steps.size(); ++i)
      if (std::find(missing.begin(), missing.end(), i) == missing.end()) visit(i, o);
  };
}

TEST(WorldEpisode, StoredStepsAreGroupedPerActorSlotIntoEpisodes) {
  // Two slots interleaved: slot A plays 0,1,2(done) then 0; slot B 0,1(done).
  const std::vector<StoredStep> steps = {stored(1, 0, 0, 1, false), stored(2, 0, 0, 2, false),
                                         stored(1, 0, 1, 1, false), stored(2, 0, 1, 2, true),
                                         stored(1, 0, 2, 1, true),  stored(1, 0, 0, 4, false)};
  const std::vector<WorldEpisode> episodes = episodes_from_stored_steps(steps, fake_replay({}));
  ASSERT_EQ(episodes.size(), 3u);
  EXPECT_EQ(episodes[0].steps.size(), 2u);  // slot B finished first
  EXPECT_TRUE(episodes[0].complete());
  EXPECT_EQ(episodes[1].steps.size(), 3u);
  EXPECT_TRUE(episodes[1].complete());
  EXPECT_EQ(episodes[2].steps.size(), 1u);  // unfinished, kept
  EXPECT_FALSE(episodes[2].complete());
  EXPECT_EQ(episodes[1].steps[0].allowed, std::vector<int32_t>{3});
  EXPECT_EQ(episodes[1].steps[0].locations, std::vector<int32_t>{2});
  EXPECT_EQ(episodes[1].steps[0].summary.size(), static_cast<size_t>(kSummaryDim));
}

// A store read in slices gives the episodes it gives read whole, in the
// same order, wherever the slices are cut.
TEST(WorldEpisode, EpisodesAssembledFromSlicesAreThoseOfTheWholeStore) {
  const std::vector<StoredStep> steps = {stored(1, 0, 0, 1, false), stored(2, 0, 0, 2, false),
                                         stored(1, 0, 1, 1, false), stored(2, 0, 1, 2, true),
                                         stored(1, 1, 0, 3, false), stored(1, 0, 2, 1, true),
                                         stored(1, 0, 0, 4, false), stored(2, 0, 0, 2, true),
                                         stored(1, 1, 1, 3, true),  stored(1, 0, 1, 4, false)};
  const std::vector<WorldEpisode> whole = episodes_from_stored_steps(steps, fake_replay({}));
  ASSERT_EQ(whole.size(), 5u);
  for (size_t slice = 1; slice <= steps.size(); ++slice) {
    std::vector<WorldEpisode> got;
    const StoredEpisodeAssembler::Emit keep = [&](WorldEpisode&& e) { got.push_back(std::move(e)); };
    StoredEpisodeAssembler assembler;
    for (size_t at = 0; at < steps.size(); at += slice)
      assembler.add(std::vector<StoredStep>(steps.begin() + static_cast<std::ptrdiff_t>(at),
                                            steps.begin() + static_cast<std::ptrdiff_t>(std::min(steps.size(), at + slice))),
                    fake_replay({}), keep);
    EXPECT_EQ(assembler.open_steps(), 2);  // actor 1 slot 0's last episode
    assembler.finish(keep);
    EXPECT_EQ(assembler.open_steps(), 0);
    ASSERT_EQ(got.size(), whole.size()) << "slices of " << slice;
    for (size_t i = 0; i < whole.size(); ++i) {
      ASSERT_EQ(got[i].steps.size(), whole[i].steps.size()) << "slices of " << slice << ", episode " << i;
      EXPECT_EQ(got[i].complete(), whole[i].complete());
      for (size_t t = 0; t < whole[i].steps.size(); ++t) EXPECT_EQ(got[i].steps[t].xfer, whole[i].steps[t].xfer);
    }
  }
}

TEST(WorldEpisode, AStepWithoutItsHistoryStartsNoEpisode) {
  // The store begins mid-episode (steps 5, 6 of slot 0), and step 1 of the
  // next episode cannot be rebuilt: only the first step of it survives, and
  // its later steps wait for a new start.
  const std::vector<StoredStep> steps = {stored(1, 0, 5, 1, false), stored(1, 0, 6, 1, true),
                                         stored(1, 0, 0, 2, false), stored(1, 0, 1, 2, false),
                                         stored(1, 0, 2, 2, true)};
  const std::vector<WorldEpisode> episodes = episodes_from_stored_steps(steps, fake_replay({3}));
  ASSERT_EQ(episodes.size(), 1u);
  EXPECT_EQ(episodes[0].steps.size(), 1u);
  EXPECT_FALSE(episodes[0].complete());
}

TEST(WorldEpisode, VocabularyMapsSeenXfersAndNoOp) {
  WorldEpisode e;
  WorldStep a, b;
  a.allowed = {7, 3};
  b.allowed = {3, 11};
  e.steps = {a, b};
  const XferVocabulary v = XferVocabulary::from_episodes({e}, 20);
  EXPECT_EQ(v.xfers(), (std::vector<int32_t>{3, 7, 11}));
  EXPECT_EQ(v.index_of(7), 1);
  EXPECT_EQ(v.index_of(5), -1);
  EXPECT_EQ(v.index_of(20), 3) << "NO-OP is the last index";
  EXPECT_EQ(v.xfer(3), 20);
  EXPECT_THROW(v.xfer(4), UsageError);
  EXPECT_THROW(XferVocabulary({25}, 20), FormatError);
}

TEST(WorldEpisode, SplitHoldsOutAShareAndIsSeeded) {
  std::vector<WorldEpisode> all(10);
  for (int i = 0; i < 10; ++i) all[static_cast<size_t>(i)].graph_index = i;
  std::vector<WorldEpisode> train, held, train2, held2;
  split_episodes(all, 0.2, 4, train, held);
  EXPECT_EQ(held.size(), 2u);
  EXPECT_EQ(train.size(), 8u);
  split_episodes(all, 0.2, 4, train2, held2);
  ASSERT_EQ(held2.size(), 2u);
  EXPECT_EQ(held[0].graph_index, held2[0].graph_index);
  EXPECT_EQ(held[1].graph_index, held2[1].graph_index);
  split_episodes(std::vector<WorldEpisode>(2), 0.01, 1, train, held);
  EXPECT_EQ(held.size(), 1u) << "at least one held out";
  EXPECT_THROW(split_episodes(all, 1.0, 1, train, held), UsageError);
}

// Random episodes end with NO-OP after their rewrites, and a step counts
// every match of each allowed rule, not only the locations.
// The splits as flags agree with the splits of episode vectors.
TEST(WorldEpisode, SplitFlagsHoldOutWhatTheVectorSplitsDo) {
  std::vector<WorldEpisode> all(23);
  for (size_t i = 0; i < all.size(); ++i) {
    all[i].graph_index = static_cast<int32_t>(i);
    all[i].steps.resize(1 + i % 3);
    all[i].steps.back().done = i % 4 != 1;  // some unfinished
  }
  std::vector<bool> complete;
  for (const WorldEpisode& e : all) complete.push_back(e.complete());
  for (int arrival = 0; arrival < 2; ++arrival) {
    std::vector<WorldEpisode> train, held;
    std::vector<bool> flags;
    if (arrival) {
      split_episodes_by_arrival(all, 0.25, train, held);
      flags = held_out_by_arrival(complete, 0.25);
    } else {
      split_episodes(all, 0.25, 11, train, held);
      flags = held_out_by_shuffle(all.size(), 0.25, 11);
    }
    std::vector<int32_t> held_graphs, flagged;
    for (const WorldEpisode& e : held) held_graphs.push_back(e.graph_index);
    for (size_t i = 0; i < flags.size(); ++i)
      if (flags[i]) flagged.push_back(static_cast<int32_t>(i));
    EXPECT_EQ(flagged, held_graphs);
    EXPECT_FALSE(flagged.empty());
  }
  const std::vector<bool> by_arrival = held_out_by_arrival(complete, 0.25);
  for (size_t i = 0; i < all.size(); ++i) {
    if (!complete[i]) {
      EXPECT_FALSE(by_arrival[i]) << "an unfinished episode is never held out";
    }
  }
}

TEST(WorldEpisode, RandomEpisodesStopAfterTheirRewritesAndStepsCountEveryMatch) {
  const std::vector<TrainingGraph> graphs = testing::zoo_graphs({"resnet18"});
  const auto cost = testing::gpu_like_cost();
  GraphEnvOptions options;
  options.max_locations = 2;
  GraphEnv env(graphs[0].graph, testing::default_matcher(), *cost, options);
  const int32_t noop = env.noop();
  int32_t beyond = 0;
  for (const WorldEpisode& e : play_episodes(env, 0, 3, random_rule_chooser(0.0, 5), 1)) {
    ASSERT_EQ(e.steps.size(), 6u) << "5 rewrites, then NO-OP";
    EXPECT_TRUE(e.complete());
    for (size_t t = 0; t < e.steps.size(); ++t) {
      const WorldStep& s = e.steps[t];
      EXPECT_EQ(s.xfer == noop, t == 5) << "step " << t;
      ASSERT_EQ(s.locations.size(), s.allowed.size());
      for (int32_t count : s.locations) beyond += count > 2;
    }
  }
  EXPECT_GT(beyond, 0) << "counts go past max_locations";
}

// With random locations the random chooser draws a rule's place among all
// its matches the environment shows, not only the first. On ResNet-18 that
// reaches states the first-location walk never does in as many episodes:
// both convs of a downsampling pair folded before either is merged or
// fused, where merging them with their biases applies.
TEST(WorldEpisode, RandomLocationsReachStatesTheFirstLocationsDoNot) {
  const std::vector<TrainingGraph> graphs = testing::zoo_graphs({"resnet18"});
  const auto cost = testing::gpu_like_cost();
  const RuleMatcher& matcher = testing::default_matcher();
  const int32_t merge_with_biases = testing::default_rule_index("merge-parallel-convs-enlarge-bias");
  ASSERT_GE(merge_with_biases, 0);
  GraphEnv env(graphs[0].graph, matcher, *cost, GraphEnvOptions{});
  auto explore = [&](bool random_locations, int32_t& away_from_first) {
    const ActionChooser random = random_rule_chooser(0.0, 100, random_locations);
    const ActionChooser checked = [&](const GraphEnv& state, int32_t step, std::mt19937_64& rng) {
      const Observation& o = state.observation();
      const Action a = random(state, step, rng);
      if (a.xfer < o.num_xfers) {
        EXPECT_GE(a.location, 0);
        EXPECT_LT(a.location, o.location_count(a.xfer));
        away_from_first += a.location > 0;
      }
      return a;
    };
    bool reached = false;
    for (const WorldEpisode& e : play_episodes(env, 0, 8, checked, 1))
      for (const WorldStep& s : e.steps)
        reached = reached || std::count(s.allowed.begin(), s.allowed.end(), merge_with_biases) > 0;
    return reached;
  };
  int32_t first_moved = 0, random_moved = 0;
  EXPECT_FALSE(explore(false, first_moved));
  EXPECT_EQ(first_moved, 0) << "without location rewards every rule goes to its first match";
  EXPECT_TRUE(explore(true, random_moved));
  EXPECT_GT(random_moved, 0);
}

// By hand: xfer 0 has three locations (two paying 0.5), xfer 1 none, xfer 2
// two that both cost; 3 is NO-OP.
TEST(WorldEpisode, ChosenLocationIsTheFirstOrTheBestPaying) {
  Observation o;
  o.num_xfers = 3;
  o.location_begin = {0, 3, 3, 5};
  EXPECT_EQ(chosen_location(o, 0), 0) << "without location rewards: the first";
  o.location_reward = {0.1f, 0.5f, 0.5f, -1.0f, -2.0f};
  EXPECT_EQ(chosen_location(o, 0), 1) << "the best paying, the first of equals";
  EXPECT_EQ(chosen_location(o, 1), 0);
  EXPECT_EQ(chosen_location(o, 2), 0) << "the one that costs least";
  EXPECT_EQ(chosen_location(o, 3), 0) << "NO-OP";
}

// In a real environment that prices its locations, every rule the random
// chooser takes earns what its best location was priced at (the rule's
// xfer_reward), which on Inception-v3's many places of a rule is more than
// the first location earns.
TEST(WorldEpisode, RulesGoToTheirBestPayingLocationWhereTheEnvironmentPricesThem) {
  const std::vector<TrainingGraph> graphs = testing::zoo_graphs({"inceptionv3"});
  const auto cost = testing::gpu_like_cost();
  GraphEnvOptions options;
  options.location_rewards = true;
  GraphEnv env(graphs[0].graph, testing::default_matcher(), *cost, options);
  std::vector<float> priced;  // per step, the chosen rule's best location reward
  int32_t not_first = 0;
  const ActionChooser random = random_rule_chooser(0.0, 30);
  const ActionChooser recorded = [&](const GraphEnv& state, int32_t step, std::mt19937_64& rng) {
    const Observation& o = state.observation();
    const Action a = random(state, step, rng);
    priced.push_back(o.xfer_reward[static_cast<size_t>(a.xfer)]);
    not_first += a.location > 0;
    return a;
  };
  size_t t = 0;
  for (const WorldEpisode& e : play_episodes(env, 0, 2, recorded, 3)) {
    ASSERT_EQ(e.steps.size(), 31u) << "30 rewrites, then NO-OP";
    for (const WorldStep& s : e.steps) {
      ASSERT_LT(t, priced.size());
      EXPECT_NEAR(s.reward, priced[t], 1e-4) << "step " << t;
      ++t;
    }
  }
  EXPECT_EQ(t, priced.size());
  EXPECT_GT(not_first, 0) << "some rule paid most away from its first location";
}

// The gpu cost model for its default GPU (the H100, its measured table first).
std::unique_ptr<CostModel> h100_costs() {
  CostModelOptions options;
  options.kind = "gpu";
  return make_cost_model(options);
}

// ResNet-50-full under the H100's costs, from the graph greedy search ends
// on: every BatchNorm fold left costs now. The cheapest one has no Relu
// after its conv; a slightly dearer one does, and the fold lets the conv
// fuse it, which pays more than both folds cost. Two rewrites on, that fold
// is the better place, and look_ahead_location finds it.
TEST(WorldEpisode, LookAheadPlacesARuleWhereItPaysMostWithinTwoRewrites) {
  const std::vector<TrainingGraph> graphs = testing::zoo_graphs({"resnet50-full"});
  const std::unique_ptr<CostModel> cost = h100_costs();
  const RuleMatcher& matcher = testing::default_matcher();
  const int32_t fold = testing::default_rule_index("fold-conv-batchnorm");
  const int32_t fuse = testing::default_rule_index("fuse-conv-bias-relu");
  ASSERT_GE(fold, 0);
  ASSERT_GE(fuse, 0);
  GraphEnvOptions options;
  options.location_rewards = true;
  options.max_steps = 200;
  GraphEnv env(graphs[0].graph, matcher, *cost, options);
  // Greedy search: the rewrite that pays most, while one pays.
  const Observation* o = &env.reset(0);
  for (;;) {
    int32_t best = -1;
    for (int32_t x = 0; x < o->num_xfers; ++x)
      if (o->xfer_mask[static_cast<size_t>(x)] && o->xfer_reward[static_cast<size_t>(x)] > 0 &&
          (best < 0 || o->xfer_reward[static_cast<size_t>(x)] > o->xfer_reward[static_cast<size_t>(best)]))
        best = x;
    if (best < 0) break;
    o = env.step({best, chosen_location(*o, best)}).observation;
  }
  ASSERT_TRUE(o->xfer_mask[static_cast<size_t>(fold)]) << "BatchNorms are left to fold";
  ASSERT_LE(o->xfer_reward[static_cast<size_t>(fold)], 0.0f) << "none of them pays now";

  // What a location earns now, and within two rewrites, tried on copies.
  auto now = [&](int32_t location) {
    return o->location_reward[static_cast<size_t>(o->location_begin[static_cast<size_t>(fold)] + location)];
  };
  auto fused_after = [&](int32_t location) {
    std::unique_ptr<GraphEnv> copy = env.clone();
    return copy->step({fold, location}).observation->xfer_reward[static_cast<size_t>(fuse)];
  };
  const int32_t cheapest = chosen_location(*o, fold);
  const int32_t ahead = look_ahead_location(env, fold);
  EXPECT_NE(ahead, cheapest);
  EXPECT_LT(now(ahead), now(cheapest)) << "it costs more now";
  EXPECT_LE(fused_after(cheapest), 0.0f) << "no Relu to fuse after the cheapest fold";
  EXPECT_GT(now(ahead) + fused_after(ahead), 0.0f) << "fold and fusion together pay";
  for (int32_t location = 0; location < o->location_count(fold); ++location)
    EXPECT_LE(now(location) + std::max(0.0f, fused_after(location)), now(ahead) + fused_after(ahead) + 1e-6f)
        << "location " << location;
  EXPECT_EQ(place_rule(env, fold, false), cheapest);
  EXPECT_EQ(place_rule(env, fold, true), ahead);

  // It needs the locations priced.
  GraphEnv unpriced(graphs[0].graph, matcher, *cost, GraphEnvOptions{});
  unpriced.reset(0);
  EXPECT_THROW(look_ahead_location(unpriced, fold), UsageError);
}

// BERT under the H100's costs: merging a layer's q with k, or with v, saves
// the same now and within two rewrites, but only q with v lets their head
// transposes merge. The look-ahead takes the place that opens that rule;
// the first of the best-paying places (q with k) does not.
TEST(WorldEpisode, LookAheadPrefersThePlaceThatOpensARuleAmongEquals) {
  const std::vector<TrainingGraph> graphs = testing::zoo_graphs({"bert"});
  const std::unique_ptr<CostModel> cost = h100_costs();
  const RuleMatcher& matcher = testing::default_matcher();
  const int32_t merge = testing::default_rule_index("merge-parallel-matmuls-rank3");
  const int32_t heads = testing::default_rule_index("merge-parallel-head-transposes");
  ASSERT_GE(merge, 0);
  ASSERT_GE(heads, 0);
  GraphEnvOptions options;
  options.location_rewards = true;
  GraphEnv env(graphs[0].graph, matcher, *cost, options);
  const Observation& start = env.reset(0);
  ASSERT_FALSE(start.xfer_mask[static_cast<size_t>(heads)]);
  auto opens_heads = [&](int32_t location) {
    std::unique_ptr<GraphEnv> copy = env.clone();
    return copy->step({merge, location}).observation->xfer_mask[static_cast<size_t>(heads)] != 0;
  };
  const int32_t cheapest = chosen_location(start, merge);
  const int32_t ahead = look_ahead_location(env, merge);
  EXPECT_FALSE(opens_heads(cheapest));
  EXPECT_TRUE(opens_heads(ahead));
  auto now = [&](int32_t location) {
    return start.location_reward[static_cast<size_t>(start.location_begin[static_cast<size_t>(merge)] + location)];
  };
  EXPECT_NEAR(now(ahead), now(cheapest), 1e-5f) << "both places pay the same now";

  // With one layer's q and v merged the rule is allowed already; the next
  // layer's q and v still give it more places, and the look-ahead takes them.
  const Observation& merged = *env.step({merge, ahead}).observation;
  const int32_t next = look_ahead_location(env, merge);
  std::unique_ptr<GraphEnv> copy = env.clone();
  const Observation& after = *copy->step({merge, next}).observation;
  EXPECT_GT(after.match_count[static_cast<size_t>(heads)], merged.match_count[static_cast<size_t>(heads)]);
}

}  // namespace
}  // namespace graphworld
