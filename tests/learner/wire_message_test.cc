// Messages between actors and the learner: a real rollout survives encoding
// exactly and carries what a replay needs to rebuild each observation; every
// malformed input (random bytes, truncations, bit flips, wrong version or
// run, broken invariants, bad checksums) is refused with a reason and never
// crashes; parameters split into chunks assemble back only when whole and
// consistent.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>

#include "learner/wire_message.h"
#include "tests/learner/training_fixture.h"

namespace graphworld {
namespace {

using testing::default_matcher;
using testing::expect_same_observation;

constexpr const char* kRun = "run-7f3a";

MessageExpectations expectations() {
  MessageExpectations e;
  e.run_id = kRun;
  e.num_xfers = static_cast<int32_t>(default_matcher().num_rules());
  e.num_graphs = 1;
  return e;
}

struct Collected {
  std::vector<TrainingGraph> graphs = testing::zoo_graphs({"squeezenet1.1"});
  std::unique_ptr<AnalyticCostModel> cost = testing::gpu_like_cost();
  RolloutCollectorOptions options;
  Rollout rollout;
  explicit Collected(bool location_rewards = false) {
    options.num_envs = 3;
    options.steps_per_env = 12;
    options.env.max_steps = 6;  // episodes end inside the segments
    options.env.location_rewards = location_rewards;
    options.seed = 4;
    RolloutCollector collector(graphs, default_matcher(), *cost, options);
    PolicyNetwork net = testing::small_network(2, location_rewards);
    rollout = *collector.collect(net, 0, nullptr);
  }
};

const Collected& collected() {
  static const Collected c;
  return c;
}

// Made by a policy that reads location rewards: its observations carry them.
const Collected& collected_with_rewards() {
  static const Collected c(true);
  return c;
}

Message trajectory_message(Rollout rollout) {
  MessageHeader header;
  header.run_id = kRun;
  header.sender_id = 3;
  header.incarnation = 0x1234;
  header.policy_version = 17;
  header.sent_unix_ns = 99;
  return Message{header, std::move(rollout)};
}

DecodeResult decode(const std::string& bytes, const MessageExpectations& e = expectations()) {
  return decode_message(bytes, e);
}

TEST(WireMessage, ARealRolloutSurvivesEncodingExactly) {
  const Rollout& sent = collected().rollout;
  ASSERT_FALSE(sent.episodes.empty()) << "the rollout should end episodes inside its segments";
  const DecodeResult got = decode(encode_message(trajectory_message(sent)));
  ASSERT_TRUE(got.message) << got.error;
  EXPECT_EQ(got.message->header.sender_id, 3u);
  EXPECT_EQ(got.message->header.incarnation, 0x1234u);
  EXPECT_EQ(got.message->header.policy_version, 17);
  EXPECT_EQ(got.message->header.sent_unix_ns, 99);
  const Rollout& r = std::get<Rollout>(got.message->body);
  ASSERT_EQ(r.segments.size(), sent.segments.size());
  for (size_t s = 0; s < r.segments.size(); ++s) {
    EXPECT_EQ(r.segments[s].bootstrap_value, sent.segments[s].bootstrap_value);
    ASSERT_EQ(r.segments[s].steps.size(), sent.segments[s].steps.size());
    for (size_t k = 0; k < r.segments[s].steps.size(); ++k) {
      const RolloutStep &a = r.segments[s].steps[k], &b = sent.segments[s].steps[k];
      const std::string where = "segment " + std::to_string(s) + " step " + std::to_string(k);
      EXPECT_EQ(a.action, b.action) << where;
      EXPECT_EQ(a.log_prob, b.log_prob) << where;
      EXPECT_EQ(a.value, b.value) << where;
      EXPECT_EQ(a.reward, b.reward) << where;
      EXPECT_EQ(a.done, b.done) << where;
      EXPECT_EQ(a.graph_index, b.graph_index) << where;
      EXPECT_EQ(a.episode_seed, b.episode_seed) << where;
      EXPECT_EQ(a.episode_step, b.episode_step) << where;
      EXPECT_EQ(a.cost_ms, b.cost_ms) << where;
      expect_same_observation(a.observation, b.observation, where);
    }
  }
  ASSERT_EQ(r.episodes.size(), sent.episodes.size());
  for (size_t e = 0; e < r.episodes.size(); ++e) {
    EXPECT_EQ(r.episodes[e].graph, sent.episodes[e].graph);
    EXPECT_EQ(r.episodes[e].reduction_pct, sent.episodes[e].reduction_pct);
    EXPECT_EQ(r.episodes[e].best_reduction_pct, sent.episodes[e].best_reduction_pct);
    EXPECT_EQ(r.episodes[e].steps, sent.episodes[e].steps);
    EXPECT_FALSE(r.episodes[e].greedy);
  }
  // A model-based controller's greedy episodes say so: the learner keeps
  // the round they measure best.
  Rollout greedy = sent;
  greedy.episodes.back().greedy = true;
  const DecodeResult got_greedy = decode(encode_message(trajectory_message(greedy)));
  ASSERT_TRUE(got_greedy.message) << got_greedy.error;
  const Rollout& g = std::get<Rollout>(got_greedy.message->body);
  ASSERT_EQ(g.episodes.size(), greedy.episodes.size());
  EXPECT_TRUE(g.episodes.back().greedy);
  for (size_t e = 0; e + 1 < g.episodes.size(); ++e) EXPECT_FALSE(g.episodes[e].greedy);
  // The gpu cost model's counts travel with the rollout.
  Rollout counted = sent;
  counted.cost_table_hits = 41;
  counted.cost_model_fallbacks = 3;
  const DecodeResult got_counts = decode(encode_message(trajectory_message(counted)));
  ASSERT_TRUE(got_counts.message) << got_counts.error;
  EXPECT_EQ(std::get<Rollout>(got_counts.message->body).cost_table_hits, 41);
  EXPECT_EQ(std::get<Rollout>(got_counts.message->body).cost_model_fallbacks, 3);
}

TEST(WireMessage, LocationRewardsSurviveEncodingExactly) {
  const Rollout& sent = collected_with_rewards().rollout;
  const DecodeResult got = decode(encode_message(trajectory_message(sent)));
  ASSERT_TRUE(got.message) << got.error;
  const Rollout& r = std::get<Rollout>(got.message->body);
  ASSERT_EQ(r.segments.size(), sent.segments.size());
  size_t with_locations = 0;
  for (size_t s = 0; s < r.segments.size(); ++s)
    for (size_t k = 0; k < r.segments[s].steps.size(); ++k) {
      const Observation& o = r.segments[s].steps[k].observation;
      ASSERT_EQ(o.xfer_reward.size(), static_cast<size_t>(o.num_xfers) + 1);
      with_locations += o.location_reward.empty() ? 0 : 1;
      expect_same_observation(o, sent.segments[s].steps[k].observation,
                              "segment " + std::to_string(s) + " step " + std::to_string(k));
    }
  EXPECT_GT(with_locations, 0u);
  // A reward that is not finite, or rewards that do not fit the locations, are refused.
  for (int spoil = 0; spoil < 2; ++spoil) {
    Rollout broken = sent;
    RolloutStep* target = nullptr;
    for (RolloutSegment& s : broken.segments)
      for (RolloutStep& step : s.steps)
        if (!target && !step.observation.location_reward.empty()) target = &step;
    ASSERT_NE(target, nullptr);
    if (spoil == 0) target->observation.location_reward[0] = std::nanf("");
    else target->observation.location_reward.push_back(1.0f);
    const DecodeResult bad = decode(encode_message(trajectory_message(std::move(broken))));
    EXPECT_FALSE(bad.message) << spoil;
    EXPECT_NE(bad.error.find(spoil == 0 ? "not finite" : "locationReward"), std::string::npos) << bad.error;
  }
}

TEST(WireMessage, EachStepNamesTheEpisodeThatRebuildsItsObservation) {
  const Collected& c = collected();
  GraphEnv prototype(c.graphs[0].graph, default_matcher(), *c.cost, c.options.env);
  int checked = 0;
  for (const RolloutSegment& segment : c.rollout.segments)
    for (const RolloutStep& step : segment.steps) {
      // Replay the episode up to this step: the actions are those of the
      // earlier steps of the same episode in this segment (the first
      // episode of a segment may have begun in an earlier rollout; skip it).
      std::vector<Action> before;
      for (const RolloutStep& s : segment.steps) {
        if (&s == &step) break;
        if (s.episode_seed == step.episode_seed && s.graph_index == step.graph_index) before.push_back(s.action);
      }
      if (static_cast<int32_t>(before.size()) != step.episode_step) continue;
      auto env = prototype.clone();
      env->reset(step.episode_seed);
      for (const Action& a : before) env->step(a);
      expect_same_observation(compact_observation(env->observation(), step.action.xfer), step.observation,
                              "step " + std::to_string(checked));
      ++checked;
    }
  EXPECT_GT(checked, 20);
}

TEST(WireMessage, ControlMessagesRoundTrip) {
  MessageHeader header;
  header.run_id = kRun;
  header.sender_id = kLearnerSenderId;
  const std::vector<MessageBody> bodies = {
      HelloMessage{"actor", "node-3", 4242}, HeartbeatMessage{1000, 1u << 30}, StopMessage{"the run ended"},
      ParameterRequestMessage{-1}, MetricsMessage{{"env_steps_per_s", "rss_mib"}, {512.5, 300}},
      ReceiptMessage{7}, CostEntryMessage{"Conv(group=1) f32[1,64,56,56] c:f32[64,64,3,3]", 0.125},
      CostEntryMessage{"Relu f32[1,64]", kUnknownCost}};
  for (const MessageBody& body : bodies) {
    const DecodeResult got = decode(encode_message(Message{header, body}));
    ASSERT_TRUE(got.message) << message_kind(body) << ": " << got.error;
    EXPECT_EQ(got.message->body.index(), body.index());
    EXPECT_STREQ(message_kind(got.message->body), message_kind(body));
  }
  const DecodeResult hello = decode(encode_message(Message{header, HelloMessage{"actor", "node-3", 4242}}));
  EXPECT_EQ(std::get<HelloMessage>(hello.message->body).hostname, "node-3");
  EXPECT_EQ(std::get<HelloMessage>(hello.message->body).pid, 4242u);
  const DecodeResult metrics = decode(encode_message(Message{header, MetricsMessage{{"a", "b"}, {1.5, 2}}}));
  EXPECT_EQ(std::get<MetricsMessage>(metrics.message->body).values, (std::vector<double>{1.5, 2}));
  const DecodeResult receipt = decode(encode_message(Message{header, ReceiptMessage{1ull << 40}}));
  EXPECT_EQ(std::get<ReceiptMessage>(receipt.message->body).trajectories_taken, 1ull << 40);
  const DecodeResult cost = decode(encode_message(Message{header, CostEntryMessage{"Relu f32[8]", 0.5}}));
  EXPECT_EQ(std::get<CostEntryMessage>(cost.message->body).key, "Relu f32[8]");
  EXPECT_EQ(std::get<CostEntryMessage>(cost.message->body).ms, 0.5);
  // Prices that are neither a number of ms nor "unknown", and empty keys.
  for (const CostEntryMessage& bad : {CostEntryMessage{"", 1.0}, CostEntryMessage{"Relu f32[8]", -0.5},
                                      CostEntryMessage{"Relu f32[8]", std::nan("")}, CostEntryMessage{"Relu f32[8]", 1e300}}) {
    const DecodeResult got = decode(encode_message(Message{header, bad}));
    EXPECT_FALSE(got.message) << "key '" << bad.key << "', " << bad.ms << " ms";
    EXPECT_NE(got.error.find("cost entry"), std::string::npos) << got.error;
  }
}

TEST(WireMessage, AMessageAtAnOddAddressIsCopiedAndReadTheSame) {
  MessageHeader header;
  header.run_id = kRun;
  const std::string bytes = encode_message(Message{header, HelloMessage{"actor", "node-9", 77}});
  std::string shifted(bytes.size() + 1, '\0');
  std::memcpy(shifted.data() + 1, bytes.data(), bytes.size());
  const DecodeResult got = decode_message(std::span(reinterpret_cast<const uint8_t*>(shifted.data()) + 1, bytes.size()),
                                          expectations());
  ASSERT_TRUE(got.message) << got.error;
  EXPECT_EQ(std::get<HelloMessage>(got.message->body).hostname, "node-9");
}

TEST(WireMessage, RandomBytesTruncationsAndBitFlipsAreRefusedOrValidNeverACrash) {
  const std::string valid = encode_message(trajectory_message(collected().rollout));
  std::mt19937_64 rng(12);
  int refused = 0;
  for (int i = 0; i < 300; ++i) {
    std::string noise(8 * std::uniform_int_distribution<size_t>(0, 4096)(rng), '\0');
    for (char& c : noise) c = static_cast<char>(rng());
    const DecodeResult got = decode(noise);
    EXPECT_FALSE(got.message) << "random bytes decoded";
    EXPECT_FALSE(got.error.empty());
    refused += got.message ? 0 : 1;
  }
  for (size_t cut = 0; cut < valid.size(); cut += std::max<size_t>(1, valid.size() / 211)) {
    const DecodeResult got = decode(valid.substr(0, cut));
    EXPECT_FALSE(got.message) << "a message cut to " << cut << " of " << valid.size() << " bytes decoded";
  }
  for (int i = 0; i < 2000; ++i) {
    std::string flipped = valid;
    const size_t at = std::uniform_int_distribution<size_t>(0, flipped.size() - 1)(rng);
    flipped[at] = static_cast<char>(flipped[at] ^ (1 << (rng() % 8)));
    const DecodeResult got = decode(flipped);
    EXPECT_NE(got.message.has_value(), !got.error.empty());  // exactly one of the two
  }
  EXPECT_EQ(refused, 300);
}

TEST(WireMessage, HeaderChecksNameWhatIsWrong) {
  Message m = trajectory_message(collected().rollout);
  m.header.schema_version = kMessageSchemaVersion + 1;
  EXPECT_NE(decode(encode_message(m)).error.find("schema version"), std::string::npos);
  m = trajectory_message(collected().rollout);
  m.header.run_id = "another-run";
  EXPECT_NE(decode(encode_message(m)).error.find("another-run"), std::string::npos);
  m = trajectory_message(collected().rollout);
  MessageExpectations small = expectations();
  small.max_message_bytes = 1024;
  EXPECT_NE(decode(encode_message(m), small).error.find("more than the limit"), std::string::npos);
  MessageExpectations other_rules = expectations();
  other_rules.num_xfers += 1;
  EXPECT_NE(decode(encode_message(m), other_rules).error.find("rule library"), std::string::npos);
  MessageExpectations short_rollouts = expectations();
  short_rollouts.max_steps = 5;
  EXPECT_NE(decode(encode_message(m), short_rollouts).error.find("more than 5 steps"), std::string::npos);
  MessageExpectations other_learner = expectations();
  other_learner.parameters_from = 77;
  EXPECT_NE(decode(encode_message(m), other_learner).error.find("another learner"), std::string::npos);
  EXPECT_NE(decode("").error.find("empty"), std::string::npos);
  EXPECT_NE(decode("12345").error.find("8-byte words"), std::string::npos);
}

// One broken invariant per case, each on a copy of the real rollout.
TEST(WireMessage, BrokenInvariantsAreRefused) {
  struct Case {
    const char* name;
    std::function<void(RolloutStep&)> spoil;
    const char* expected;
  };
  const std::vector<Case> cases = {
      {"graph index", [](RolloutStep& s) { s.graph_index = 1; }, "graph index"},
      {"reward", [](RolloutStep& s) { s.reward = std::nanf(""); }, "out of range"},
      {"huge reward", [](RolloutStep& s) { s.reward = 1e30f; }, "out of range"},
      {"log-prob", [](RolloutStep& s) { s.log_prob = 0.5f; }, "out of range"},
      {"no NO-OP", [](RolloutStep& s) { s.observation.xfer_mask.back() = 0; }, "NO-OP"},
      {"feature", [](RolloutStep& s) { s.observation.graph.node_features[3] = INFINITY; }, "not finite"},
      {"sender", [](RolloutStep& s) { s.observation.graph.senders[0] = s.observation.graph.num_nodes; }, "outside"},
      {"edge count", [](RolloutStep& s) { s.observation.graph.num_edges += 1; }, "edgeFeatures"},
      {"mask bit", [](RolloutStep& s) { s.observation.xfer_mask[0] = 7; }, "0 and 1"},
      {"masked action",
       [](RolloutStep& s) {
         s.observation.xfer_mask[static_cast<size_t>(s.action.xfer)] = 0;
       },
       "not allowed"},
      {"location", [](RolloutStep& s) { s.action.location = 100000; }, "location"},
      {"matched node", [](RolloutStep& s) { s.observation.match_nodes.assign(s.observation.match_nodes.size(), -1); },
       "outside the graph"},
  };
  for (const Case& c : cases) {
    Rollout rollout = collected().rollout;
    // A step that took a rewrite (so it lists locations) for every case.
    RolloutStep* target = nullptr;
    for (RolloutSegment& s : rollout.segments)
      for (RolloutStep& step : s.steps)
        if (!target && step.action.xfer < step.observation.num_xfers && !step.observation.match_nodes.empty())
          target = &step;
    ASSERT_NE(target, nullptr);
    c.spoil(*target);
    const DecodeResult got = decode(encode_message(trajectory_message(std::move(rollout))));
    EXPECT_FALSE(got.message) << c.name;
    EXPECT_NE(got.error.find(c.expected), std::string::npos) << c.name << ": " << got.error;
  }
}

TEST(WireMessage, AChunkWhoseDataWasAlteredIsRefused) {
  std::string blob(3000, 'x');
  const auto chunks = split_parameters(5, blob, 1024);
  MessageHeader header;
  header.run_id = kRun;
  std::string bytes = encode_message(Message{header, chunks[1]});
  const size_t at = bytes.find(std::string(64, 'x'));
  ASSERT_NE(at, std::string::npos);
  bytes[at] = 'y';
  EXPECT_NE(decode(bytes).error.find("checksum"), std::string::npos);
}

std::string random_blob(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string blob(n, '\0');
  for (char& c : blob) c = static_cast<char>(rng());
  return blob;
}

TEST(ParameterAssembler, ChunksInAnyOrderWithDuplicatesGiveTheBlob) {
  const std::string blob = random_blob(2'500'000, 1);
  std::vector<ParameterChunkMessage> chunks = split_parameters(3, blob, 1 << 20);
  ASSERT_EQ(chunks.size(), 3u);
  for (const auto& c : chunks) EXPECT_LE(c.data.size(), size_t{1} << 20);
  ParameterAssembler assembler;
  std::string why;
  EXPECT_EQ(assembler.add(chunks[2], &why), ParameterAssembler::Outcome::kPartial);
  EXPECT_EQ(assembler.add(chunks[0], &why), ParameterAssembler::Outcome::kPartial);
  EXPECT_EQ(assembler.add(chunks[0], &why), ParameterAssembler::Outcome::kPartial);
  EXPECT_EQ(assembler.add(chunks[1], &why), ParameterAssembler::Outcome::kComplete) << why;
  EXPECT_EQ(assembler.version(), 3);
  EXPECT_EQ(assembler.take(), blob);
  EXPECT_EQ(assembler.add(chunks[1], &why), ParameterAssembler::Outcome::kStale);
  // An empty blob is one empty chunk.
  ParameterAssembler empty;
  const auto none = split_parameters(0, "", 1024);
  ASSERT_EQ(none.size(), 1u);
  EXPECT_EQ(empty.add(none[0], &why), ParameterAssembler::Outcome::kComplete) << why;
  EXPECT_EQ(empty.take(), "");
}

TEST(ParameterAssembler, ANewerVersionReplacesAndInconsistentChunksAreRefused) {
  const std::string v1 = random_blob(5000, 2), v2 = random_blob(7000, 3);
  const auto c1 = split_parameters(1, v1, 2048), c2 = split_parameters(2, v2, 2048);
  ParameterAssembler assembler;
  std::string why;
  EXPECT_EQ(assembler.add(c1[0], &why), ParameterAssembler::Outcome::kPartial);
  EXPECT_EQ(assembler.add(c2[1], &why), ParameterAssembler::Outcome::kPartial);  // version 2 takes over
  EXPECT_EQ(assembler.add(c1[1], &why), ParameterAssembler::Outcome::kStale);
  ParameterChunkMessage wrong_size = c2[0];
  wrong_size.data.pop_back();
  EXPECT_EQ(assembler.add(wrong_size, &why), ParameterAssembler::Outcome::kRefused);
  EXPECT_NE(why.find("bytes where"), std::string::npos) << why;
  ParameterChunkMessage other_blob = c2[0];
  other_blob.blob_checksum ^= 1;
  EXPECT_EQ(assembler.add(other_blob, &why), ParameterAssembler::Outcome::kRefused);
  for (const auto& c : c2) {
    if (c.chunk_index == 1) continue;
    EXPECT_NE(assembler.add(c, &why), ParameterAssembler::Outcome::kRefused) << why;
  }
  EXPECT_EQ(assembler.version(), 2);
  EXPECT_EQ(assembler.take(), v2);
}

TEST(ParameterAssembler, ABlobThatDoesNotMatchItsChecksumIsRefusedAndCanBeResent) {
  const std::string blob = random_blob(4000, 4);
  auto chunks = split_parameters(9, blob, 1500);
  auto spoiled = chunks;
  spoiled[1].data[7] ^= 1;  // chunk checksums are the receiver's decode's job; the blob's is the assembler's
  ParameterAssembler assembler;
  std::string why;
  for (size_t i = 0; i + 1 < spoiled.size(); ++i) assembler.add(spoiled[i], &why);
  EXPECT_EQ(assembler.add(spoiled.back(), &why), ParameterAssembler::Outcome::kRefused);
  EXPECT_NE(why.find("checksum"), std::string::npos);
  for (const auto& c : chunks) assembler.add(c, &why);
  EXPECT_EQ(assembler.take(), blob);
  ParameterAssembler limited(1000);
  EXPECT_EQ(limited.add(chunks[0], &why), ParameterAssembler::Outcome::kRefused);
}

}  // namespace
}  // namespace graphworld

namespace graphworld {
namespace {

// A small dream trajectory: 3 rows x 2 steps, z of 4, h of 5, 3 actions
// (two rules and NO-OP); row 1 cannot use rule 1.
DreamTrajectoryMessage small_dream() {
  DreamTrajectoryMessage m;
  m.world_model = 2;
  m.rows = 3;
  m.steps = 2;
  m.latent_dim = 4;
  m.hidden_dim = 5;
  m.actions = 3;
  const size_t n = 6;
  for (size_t i = 0; i < n * 4; ++i) m.z.push_back(0.25f * static_cast<float>(i));
  for (size_t i = 0; i < n * 5; ++i) m.h.push_back(-0.1f * static_cast<float>(i));
  for (size_t i = 0; i < n; ++i) {
    const bool row1 = i % 3 == 1;
    m.mask.insert(m.mask.end(), {1, static_cast<uint8_t>(row1 ? 0 : 1), 1});
    m.action.push_back(row1 ? 2 : static_cast<int32_t>(i % 2));
    m.log_prob.push_back(-0.5f - static_cast<float>(i));
    m.value.push_back(0.1f * static_cast<float>(i));
    m.reward.push_back(i == 4 ? 1.5f : 0.0f);
    m.done.push_back(i == 4 ? 1 : 0);
  }
  m.bootstrap = {0.5f, -0.5f, 0.0f};
  m.episodes = 1;
  m.return_sum = 1.5;
  m.parameters_from = 0x1234;
  return m;
}

// The trajectory test's header (this run, a sender, a version), with a dream body.
Message dream_message(DreamTrajectoryMessage dream) {
  return Message{trajectory_message(Rollout{}).header, std::move(dream)};
}

TEST(WireMessage, ADreamTrajectorySurvivesEncodingExactly) {
  const DreamTrajectoryMessage sent = small_dream();
  const DecodeResult got = decode(encode_message(dream_message(sent)));
  ASSERT_TRUE(got.message) << got.error;
  EXPECT_STREQ(message_kind(got.message->body), "dream trajectory");
  const auto& d = std::get<DreamTrajectoryMessage>(got.message->body);
  EXPECT_EQ(d.world_model, 2);
  EXPECT_EQ(d.dream_steps(), 6);
  EXPECT_EQ(d.z, sent.z);
  EXPECT_EQ(d.h, sent.h);
  EXPECT_EQ(d.mask, sent.mask);
  EXPECT_EQ(d.action, sent.action);
  EXPECT_EQ(d.log_prob, sent.log_prob);
  EXPECT_EQ(d.value, sent.value);
  EXPECT_EQ(d.reward, sent.reward);
  EXPECT_EQ(d.done, sent.done);
  EXPECT_EQ(d.bootstrap, sent.bootstrap);
  EXPECT_EQ(d.episodes, 1u);
  EXPECT_EQ(d.return_sum, 1.5);
  EXPECT_EQ(d.parameters_from, 0x1234u);
}

TEST(WireMessage, ABrokenDreamTrajectoryIsRefusedSayingWhy) {
  struct Case {
    const char* what;
    std::function<void(DreamTrajectoryMessage&)> ruin;
    const char* error;
  };
  const std::vector<Case> cases = {
      {"a masked action", [](DreamTrajectoryMessage& m) { m.action[1] = 1; }, "does not allow"},
      {"an action out of range", [](DreamTrajectoryMessage& m) { m.action[0] = 3; }, "does not allow"},
      {"a short z column", [](DreamTrajectoryMessage& m) { m.z.pop_back(); }, "dream.z"},
      {"a NaN value", [](DreamTrajectoryMessage& m) { m.value[2] = std::nanf(""); }, "finite"},
      {"a positive log-probability", [](DreamTrajectoryMessage& m) { m.log_prob[0] = 0.5f; }, "log-probability"},
      {"a vanishing probability", [](DreamTrajectoryMessage& m) { m.log_prob[3] = -5000.0f; }, "log-probability"},
      {"no rows", [](DreamTrajectoryMessage& m) { m.rows = 0; }, "rows"},
      {"another learner's parameters", [](DreamTrajectoryMessage& m) { m.parameters_from = 7; }, "another learner"},
  };
  MessageExpectations e = expectations();
  e.parameters_from = 0x1234;
  for (const Case& c : cases) {
    DreamTrajectoryMessage m = small_dream();
    c.ruin(m);
    const DecodeResult got = decode(encode_message(dream_message(m)), e);
    EXPECT_FALSE(got.message) << c.what;
    EXPECT_NE(got.error.find(c.error), std::string::npos) << c.what << ": " << got.error;
  }
  MessageExpectations small = expectations();
  small.max_dream_steps = 5;
  EXPECT_FALSE(decode(encode_message(dream_message(small_dream())), small).message);
}

}  // namespace
}  // namespace graphworld
