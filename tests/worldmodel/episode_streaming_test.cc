// Training a world model on more episodes than memory holds: the episode
// file reads back what was written, batches are dealt into parts that fit
// the budget with every episode in exactly one, and training over parts
// learns, the same whether the episodes sit in memory or on disk.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "common/error.h"
#include "learner/compute_threads.h"
#include "worldmodel/batch_parts.h"
#include "worldmodel/episode_file.h"
#include "worldmodel/episode_source.h"
#include "worldmodel/world_model.h"

namespace graphworld {
namespace {

constexpr int32_t kRules = 12;

// Episodes of 1 to `longest` steps with varied summaries, rules and
// rewards; the last may be left unfinished.
std::vector<WorldEpisode> varied_episodes(size_t count, int32_t longest, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  std::vector<WorldEpisode> out(count);
  for (size_t e = 0; e < count; ++e) {
    WorldEpisode& episode = out[e];
    episode.graph_index = static_cast<int32_t>(e % 3);
    const int32_t length = 1 + static_cast<int32_t>(rng() % static_cast<uint64_t>(longest));
    for (int32_t t = 0; t < length; ++t) {
      WorldStep s;
      s.summary.resize(kSummaryDim);
      for (float& x : s.summary) x = unit(rng);
      for (int32_t x = 0; x < kRules; ++x)
        if (rng() % 3 == 0) {
          s.allowed.push_back(x);
          s.locations.push_back(1 + static_cast<int32_t>(rng() % 4));
        }
      s.xfer = s.allowed.empty() || t + 1 == length ? kRules : s.allowed[rng() % s.allowed.size()];
      s.location = static_cast<int32_t>(rng() % 2);
      s.reward = s.xfer == kRules ? 0.0f : 0.01f * static_cast<float>(s.xfer);
      s.done = t + 1 == length && !(e + 1 == count);  // the last one unfinished
      episode.steps.push_back(std::move(s));
    }
  }
  return out;
}

void expect_same(const WorldEpisode& a, const WorldEpisode& b) {
  ASSERT_EQ(a.graph_index, b.graph_index);
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (size_t t = 0; t < a.steps.size(); ++t) {
    const WorldStep &x = a.steps[t], &y = b.steps[t];
    EXPECT_EQ(x.summary, y.summary);
    EXPECT_EQ(x.allowed, y.allowed);
    EXPECT_EQ(x.locations, y.locations);
    EXPECT_EQ(x.xfer, y.xfer);
    EXPECT_EQ(x.location, y.location);
    EXPECT_EQ(x.reward, y.reward);
    EXPECT_EQ(x.done, y.done);
  }
}

std::string test_dir() { return ::testing::TempDir(); }

TEST(EpisodeFile, ReadsBackEveryEpisodeAsWrittenInAnyOrder) {
  const std::vector<WorldEpisode> episodes = varied_episodes(300, 9, 1);
  EpisodeFile file(test_dir());
  WorldEpisode scratch;
  for (size_t i = 0; i < episodes.size(); ++i) {
    file.append(episodes[i]);
    // Reading while still appending sees what was appended.
    if (i == 100) expect_same(file.episode(42, scratch), episodes[42]);
  }
  ASSERT_EQ(file.size(), episodes.size());
  EXPECT_GT(file.bytes(), 0);
  std::vector<size_t> order(episodes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), std::mt19937_64(2));
  for (size_t i : order) {
    EXPECT_EQ(file.steps(i), static_cast<int64_t>(episodes[i].steps.size()));
    EXPECT_EQ(file.complete(i), episodes[i].complete());
    EXPECT_EQ(file.graph_index(i), episodes[i].graph_index);
    expect_same(file.episode(i, scratch), episodes[i]);
  }
  EXPECT_FALSE(file.complete(episodes.size() - 1));
  EXPECT_EQ(file.total_steps(), count_steps(episodes));
  EXPECT_THROW(file.steps(episodes.size()), std::out_of_range);
}

TEST(EpisodeFile, AFolderWhereNoFileCanBeMadeIsNamed) {
  try {
    EpisodeFile file(test_dir() + "/no-such-folder/below");
    FAIL() << "made a file in a missing folder";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-folder/below"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--spill-dir"), std::string::npos) << e.what();
  }
}

TEST(EpisodeFile, AStepWithoutItsSummaryIsRefusedAndTheFileStaysWhole) {
  const std::vector<WorldEpisode> good = varied_episodes(3, 5, 11);
  EpisodeFile file(test_dir());
  file.append(good[0]);
  WorldEpisode bad = good[1];
  bad.steps.back().summary.clear();  // refused after its first steps were encoded
  EXPECT_THROW(file.append(bad), Error);
  file.append(good[2]);
  ASSERT_EQ(file.size(), 2u);
  WorldEpisode scratch;
  expect_same(file.episode(0, scratch), good[0]);
  expect_same(file.episode(1, scratch), good[2]);
}

TEST(BatchParts, DataThatFitsIsOnePartInLengthOrder) {
  const std::vector<WorldEpisode> episodes = varied_episodes(200, 7, 3);
  const EpisodesInMemory source(episodes);
  const BatchParts parts(source, 32, 1'000'000, 0);
  ASSERT_EQ(parts.parts(), 1u);
  EXPECT_EQ(parts.part(0), batch_indices_by_length(source, 32));
  EXPECT_EQ(parts.steps(), count_steps(episodes));
  EXPECT_GE(parts.padded_steps(), parts.steps());
}

TEST(BatchParts, MoreDataIsDealtIntoPartsWithinTheBudgetEachEpisodeOnce) {
  std::vector<WorldEpisode> episodes = varied_episodes(500, 7, 4);
  episodes.push_back(varied_episodes(1, 1, 5).front());
  episodes.back().steps.assign(90, episodes.back().steps.front());  // one batch larger than the budget
  episodes.emplace_back();                                           // no steps: left out
  const EpisodesInMemory source(episodes);
  const int64_t budget = 80;
  const BatchParts parts(source, 32, budget, 9);
  ASSERT_GT(parts.parts(), 10u);
  std::multiset<size_t> seen;
  size_t batches = 0;
  for (size_t p = 0; p < parts.parts(); ++p) {
    int64_t padded = 0;
    ASSERT_FALSE(parts.part(p).empty());
    for (const EpisodeIndices& batch : parts.part(p)) {
      int64_t longest = 0;
      for (size_t i : batch) {
        seen.insert(i);
        longest = std::max(longest, source.steps(i));
      }
      padded += longest * static_cast<int64_t>(batch.size());
      ++batches;
    }
    EXPECT_TRUE(padded <= budget || parts.part(p).size() == 1) << "part " << p << " holds " << padded << " steps";
  }
  EXPECT_EQ(batches, parts.batches());
  EXPECT_EQ(seen.size(), episodes.size() - 1);
  for (size_t i = 0; i + 1 < episodes.size(); ++i) EXPECT_EQ(seen.count(i), 1u) << "episode " << i;
  // Seeded: the same deal again, another with another seed.
  const BatchParts again(source, 32, budget, 9), other(source, 32, budget, 10);
  EXPECT_EQ(again.part(0), parts.part(0));
  EXPECT_NE(other.part(0), parts.part(0));
}

WorldModelConfig small_config() {
  WorldModelConfig config;
  config.latent_dim = 8;
  config.hidden = 32;
  config.components = 2;
  config.encoder_hidden = 32;
  return config;
}

WorldModelInfo small_info() {
  WorldModelInfo info;
  info.max_steps = 8;
  info.graphs = {"a", "b", "c"};
  return info;
}

WorldModelTrainOptions few_epochs(int64_t resident_steps) {
  WorldModelTrainOptions options;
  options.encoder_epochs = 2;
  options.epochs = 10;
  options.batch_steps = 64;
  options.min_batches = 4;
  options.resident_steps = resident_steps;
  options.seed = 5;
  return options;
}

TEST(WorldModelStreaming, TrainingInPartsLearnsTheSameFromDiskAsFromMemory) {
  const ComputeThreads one_thread(1);
  const std::vector<WorldEpisode> train = varied_episodes(400, 7, 6), held = varied_episodes(80, 7, 7);
  const EpisodesInMemory train_memory(train), held_memory(held);
  EpisodeFile train_file(test_dir()), held_file(test_dir());
  for (const WorldEpisode& e : train) train_file.append(e);
  for (const WorldEpisode& e : held) held_file.append(e);
  const XferVocabulary vocabulary = vocabulary_of(train_memory, kRules);
  EXPECT_EQ(vocabulary.xfers(), XferVocabulary::from_episodes(train, kRules).xfers());

  // 200 resident steps: about 8 parts of the ~1,600 training steps.
  ASSERT_GT(BatchParts(train_memory, 64, 200, 5).parts(), 4u);
  WorldModel from_memory(small_config(), vocabulary, small_info(), 3);
  const double before = from_memory.losses(held_memory).total(8);
  int64_t epochs = 0;
  WorldModelTrainOptions options = few_epochs(200);
  options.on_epoch = [&](const WorldModelEpochReport& r) {
    if (r.phase == "mdn-rnn") ++epochs;
    EXPECT_EQ(r.steps, count_steps(train)) << "every part, every epoch: " << r.phase << " epoch " << r.epoch;
  };
  from_memory.train(train_memory, held_memory, options);
  EXPECT_EQ(epochs, 10);
  const double after = from_memory.losses(held_memory).total(8);
  EXPECT_LT(after, 0.7 * before) << "held-out loss " << before << " -> " << after;

  WorldModel from_disk(small_config(), vocabulary, small_info(), 3);
  from_disk.train(train_file, held_file, few_epochs(200));
  EXPECT_EQ(from_disk.to_bytes(), from_memory.to_bytes()) << "the same parts, batches and order from disk";
  const WorldModelAccuracy a = from_memory.evaluate(held_memory), b = from_disk.evaluate(held_file);
  EXPECT_EQ(a.steps, b.steps);
  EXPECT_EQ(a.mask_f1, b.mask_f1);
}

TEST(WorldModelStreaming, DataThatFitsTrainsAsTheEpisodeVectorsDo) {
  const ComputeThreads one_thread(1);
  const std::vector<WorldEpisode> train = varied_episodes(200, 7, 8), held = varied_episodes(40, 7, 9);
  const XferVocabulary vocabulary = XferVocabulary::from_episodes(train, kRules);
  WorldModel from_vectors(small_config(), vocabulary, small_info(), 4);
  from_vectors.train(train, held, few_epochs(1'000'000));
  EpisodeFile train_file(test_dir()), held_file(test_dir());
  for (const WorldEpisode& e : train) train_file.append(e);
  for (const WorldEpisode& e : held) held_file.append(e);
  WorldModel from_disk(small_config(), vocabulary, small_info(), 4);
  from_disk.train(train_file, held_file, few_epochs(1'000'000));
  EXPECT_EQ(from_disk.to_bytes(), from_vectors.to_bytes());
}

}  // namespace
}  // namespace graphworld
