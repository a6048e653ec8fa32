// A model-based run through the launcher: a learner, one real actor and one
// dream actor as processes over loopback sockets. Its real reward must rise
// above the random episodes it started from, every real step must be in
// the store, and a world model trained offline from that store must score
// at least as well as the run's own one (within stated margins) on the same
// held-out episodes, trained on the same episodes.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>

#include "common/rollout_store.h"
#include "tests/launch/supervisor/distributed_test_support.h"

namespace graphworld::testing {
namespace {

namespace fs = std::filesystem;

// ResNet-18 under the built-in rates: random episodes make it slower (they
// apply rules that cost), so a rise is the controller's doing. With the
// controller's learning switched off (ppo.learning_rate=1e-8) its last
// greedy episode scored -7.1% against the random ones' -5.7%, and the first
// test fails. A third of the episodes are held out, so the held-out
// comparison has some 100 steps to score.
std::string model_based_command(const std::string& run, const std::string& extra = "") {
  return graphworld_binary() + " train " + source_dir() + "/configs/single_node.yaml --run " + run +
         " train.graphs=[resnet18] model_based.enabled=true distributed.actors=1 model_based.dream_actors=1"
         " model_based.rounds=3 model_based.random_episodes=8 model_based.episodes_per_round=2"
         " model_based.holdout=0.34 " + extra;
}

struct EpisodeRow {
  double mean_reduction = 0, round = 0, generation = 0;
  int64_t episodes = 0;
};

std::vector<EpisodeRow> rows_with_episodes(const std::string& run) {
  std::vector<EpisodeRow> rows;
  std::ifstream in(run + "/metrics.jsonl");
  std::string line;
  while (std::getline(in, line)) {
    const auto episodes = static_cast<int64_t>(number_after(line, "episodes_this_update"));
    if (episodes > 0)
      rows.push_back({number_after(line, "mean_episode_reduction_pct"), number_after(line, "round"),
                       number_after(line, "world_model_generation"), episodes});
  }
  return rows;
}

// `key` in the last metrics row (-1 if it has none).
double read_metrics_line_value(const std::string& run, const std::string& key) {
  std::ifstream in(run + "/metrics.jsonl");
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty() && line.back() == '}') last = line;
  return number_after(last, key);
}

const std::string& shared_run() {
  static const std::string run = [] {
    const std::string dir = fresh("model-based-run");
    std::string out;
    EXPECT_EQ(run_command(model_based_command(dir), &out), 0) << out;
    return dir;
  }();
  return run;
}

TEST(ModelBasedRun, RealRewardRisesAboveTheRandomEpisodes) {
  const std::string& run = shared_run();
  const std::vector<EpisodeRow> rows = rows_with_episodes(run);
  ASSERT_GE(rows.size(), 3u) << "expected the random episodes and at least two rounds of controller episodes";
  // The first row holds the random episodes, the last the final greedy one.
  const double random = rows.front().mean_reduction, controller = rows.back().mean_reduction;
  EXPECT_GT(controller, random + 2.0) << "random " << random << "%, trained controller " << controller << "%";
  EXPECT_GT(controller, 0.0);
  for (const char* file : {"/world_model.gwworld", "/controller.gwctl", "/rollouts.h5", "/config.yaml"})
    EXPECT_TRUE(fs::exists(run + file)) << file;
}

TEST(ModelBasedRun, TheFinalGreedyEpisodesWaitForAWorldModelThatLearnedFromTheFinalController) {
  const std::vector<EpisodeRow> rows = rows_with_episodes(shared_run());
  ASSERT_GE(rows.size(), 2u);
  const EpisodeRow &calibration = rows[rows.size() - 2], &greedy = rows.back();
  // One world model per round (3), then the calibration's: the greedy
  // episode (one graph) is played with the fourth, after the final
  // controller's sampled episodes (model_based.calibration_episodes, 4).
  EXPECT_EQ(greedy.generation, 4) << "the greedy episode was played without a calibrated world model";
  EXPECT_EQ(greedy.episodes, 1);
  EXPECT_EQ(calibration.generation, 3);
  EXPECT_GE(calibration.episodes, 4);
}

// Each round ends with the controller's greedy episodes; the run folder
// keeps the world model and controller of the round they measured best
// (the most on the way, then the highest end, then the later), as the
// in-process agent does, not the last round's.
TEST(ModelBasedRun, TheRunFolderKeepsTheRoundWhoseGreedyEpisodesReachedTheMost) {
  const std::string& run = shared_run();
  std::ifstream in(run + "/metrics.jsonl");
  std::string line, last;
  double trained_steps = -1, expected_steps = -1;
  double best = 0, end = 0;
  int measured = 0, expected_round = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line.back() != '}') continue;
    last = line;
    if (number_after(line, "world_model_trained_steps") >= 0) trained_steps = number_after(line, "world_model_trained_steps");
    const double b = number_after(line, "greedy_real_best_reduction_pct");
    if (b == -1) continue;
    const double e = number_after(line, "greedy_real_end_reduction_pct");
    ++measured;
    if (measured == 1 || b > best + 1e-9 || (b >= best - 1e-9 && e >= end - 1e-9)) {
      best = b;
      end = e;
      expected_round = static_cast<int>(number_after(line, "greedy_real_round"));
      expected_steps = trained_steps;
    }
  }
  ASSERT_EQ(measured, 3) << "one measured round per model_based.rounds";
  EXPECT_EQ(number_after(last, "kept_round"), expected_round) << last;
  EXPECT_DOUBLE_EQ(number_after(last, "kept_real_reduction_pct"), best) << last;
  EXPECT_DOUBLE_EQ(number_after(last, "kept_real_end_reduction_pct"), end) << last;
  // The folder's world model is the kept round's: it learned from as many
  // real steps as that round's model did.
  std::string out;
  ASSERT_EQ(run_command(graphworld_binary() + " worldmodel show " + run + "/world_model.gwworld", &out), 0) << out;
  const size_t at = out.find("trained on ");
  ASSERT_NE(at, std::string::npos) << out;
  EXPECT_EQ(std::stod(out.substr(at + 11)), expected_steps) << out;
}

TEST(ModelBasedRun, EveryRealStepIsStoredAndDreamsAreNot) {
  const std::string& run = shared_run();
  const std::vector<MetricsRow> metrics = read_metrics(run);
  ASSERT_FALSE(metrics.empty());
  const RolloutStoreReader store(run + "/rollouts.h5");
  EXPECT_EQ(store.steps(), metrics.back().env_steps);
  std::ifstream in(run + "/metrics.jsonl");
  std::string line, last;
  while (std::getline(in, line)) last = line;
  EXPECT_GT(number_after(last, "dream_steps"), 100000) << last;
  EXPECT_EQ(number_after(last, "refused_messages"), 0) << last;
}

TEST(ModelBasedRun, OfflineRetrainingFromTheStoreMatchesTheRunsOwnModel) {
  const std::string& run = shared_run();
  const std::string store = run + "/rollouts.h5", offline = scratch_dir() + "/model-based-offline.gwworld";
  std::string out;
  // The same data: the episodes the run's kept model learned from (it says
  // how many steps), split as the run split them.
  ASSERT_EQ(run_command(graphworld_binary() + " worldmodel show " + run + "/world_model.gwworld", &out), 0) << out;
  const size_t at = out.find("trained on ");
  ASSERT_NE(at, std::string::npos) << out;
  const std::string same_data = " --split arrival --holdout 0.34 --first-steps " +
                                std::to_string(std::stoll(out.substr(at + 11)));
  ASSERT_EQ(run_command(graphworld_binary() + " worldmodel train --from " + store + same_data + " -o " + offline +
                            " --threads 1",
                        &out),
            0)
      << out;
  // Both scored on the episodes the run held out while it learned.
  auto held_out_accuracy = [&](const std::string& model) {
    std::string json;
    EXPECT_EQ(run_command(graphworld_binary() + " worldmodel eval " + model + " --from " + store +
                              same_data + " --held-out --json --threads 1",
                          &json),
              0)
        << json;
    return json;
  };
  const std::string online = held_out_accuracy(run + "/world_model.gwworld"), retrained = held_out_accuracy(offline);
  // The stated tolerance: offline retraining reaches the run's own model's
  // held-out mask F1 to within 0.08, its done accuracy to within 0.05 and
  // its reward MAE to within 0.05 pp per step. It may do better: the run's
  // model learned in rounds, its encoder on the first round's random
  // episodes only, and the offline one learns everything at once. Offline
  // came out better in each measurement (F1 0.922 and 0.969, 0.927 and
  // 0.950, and with the last round's calibration episodes 0.895 and 0.988;
  // done 0.99 and 0.98; MAE 0.054 and 0.049). z NLL is not compared: two
  // encoders make two latent spaces.
  EXPECT_GT(number_after(online, "steps"), 50) << online;
  EXPECT_GE(number_after(retrained, "mask_f1"), number_after(online, "mask_f1") - 0.08) << online << "\n" << retrained;
  EXPECT_GE(number_after(retrained, "done_accuracy"), number_after(online, "done_accuracy") - 0.05)
      << online << "\n" << retrained;
  EXPECT_LE(number_after(retrained, "reward_mae"), number_after(online, "reward_mae") + 0.05) << online << "\n" << retrained;
  EXPECT_GE(number_after(retrained, "mask_f1"), 0.85) << retrained;
  EXPECT_GE(number_after(online, "mask_f1"), 0.85) << online;
}

TEST(ModelBasedRun, CtrlCStopsItAndAResumeFinishesTheSchedule) {
  const std::string run = fresh("model-based-resume");
  const std::string log = scratch_dir() + "/model-based-resume.log";
  const pid_t launcher = start_background(model_based_command(run), log);
  // Stop it once the first world model is trained (a row of round 1 after the random episodes).
  ASSERT_TRUE(wait_for(180, [&] {
    std::ifstream in(run + "/metrics.jsonl");
    std::string line;
    while (std::getline(in, line))
      if (number_after(line, "world_model_generation") >= 1) return true;
    return false;
  })) << read_file(log);
  ::kill(launcher, SIGINT);
  ASSERT_TRUE(launcher_ended(launcher, 15)) << read_file(log);
  std::string out;
  ASSERT_EQ(run_command(graphworld_binary() + " train --resume " + run, &out), 0) << out;
  EXPECT_NE(out.find("resumed in round"), std::string::npos) << out;
  const std::vector<EpisodeRow> rows = rows_with_episodes(run);
  ASSERT_FALSE(rows.empty()) << out;
  EXPECT_EQ(rows.back().round, 3) << out;
  // The kept round survives the restart: the last row still names one.
  EXPECT_GE(read_metrics_line_value(run, "kept_round"), 1) << out;
  const RolloutStoreReader store(run + "/rollouts.h5");
  EXPECT_EQ(store.steps(), read_metrics(run).back().env_steps);
}

TEST(ModelBasedRun, DreamActorsOnlyJoinModelBasedRunsAndBadKeysAreNamed) {
  const std::string dir = fresh("model-free-for-dream");
  std::string out;
  ASSERT_EQ(run_command(train_command(dir, 256), &out), 0) << out;
  EXPECT_EQ(run_command(graphworld_binary() + " actor --run " + dir + " --id 5 --dream --wait 1", &out), 2) << out;
  EXPECT_NE(out.find("model-free run"), std::string::npos) << out;
  EXPECT_EQ(run_command(model_based_command(fresh("model-based-bad"), "env.max_steps=1000"), &out), 2) << out;
  EXPECT_NE(out.find("env.max_steps"), std::string::npos) << out;
  EXPECT_EQ(run_command(model_based_command(fresh("model-based-inline"), "--inline"), &out), 2) << out;
  EXPECT_NE(out.find("model-based"), std::string::npos) << out;
}

}  // namespace
}  // namespace graphworld::testing
