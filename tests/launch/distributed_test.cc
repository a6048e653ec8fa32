// The distributed system as a user runs it: `graphworld train` starts a
// learner and two actor processes on loopback. Training learns; every
// accepted step is in the HDF5 store; an actor killed with SIGKILL is
// restarted and rejoins; a learner killed with SIGKILL is restarted from
// its checkpoint and the actors find it again; Ctrl-C stops everything
// within 10 s; garbage sent to the learner's sockets is counted and
// dropped. Tests end only the processes they started.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <thread>

#include "common/rollout_store.h"
#include "common/stopwatch.h"
#include "common/transport.h"
#include "tests/launch/cli_test_support.h"

namespace graphworld {
namespace {

std::string fresh(const std::string& name) {
  const std::string dir = testing::scratch_dir() + "/" + name;
  std::filesystem::remove_all(dir);
  return dir;
}

// A small, fast run: squeezenet under GPU-like rates, where rewrites pay off.
std::string train_command(const std::string& run, int64_t steps, const std::string& extra = "") {
  return testing::graphworld_binary() + " train " + testing::source_dir() + "/configs/train.yaml --run " + run +
         " env.num_envs=4 env.steps_per_env=32 env.max_steps=50 ppo.minibatch_size=64 train.checkpoint_every=4"
         " env.rates=" + testing::source_dir() + "/configs/gpu_rates.yaml train.total_env_steps=" +
         std::to_string(steps) + " " + extra;
}

struct MetricsRow {
  int64_t update = 0, env_steps = 0;
  double mean_reduction = 0, actors_alive = 0, joins = 0, refused = 0, lag = 0;
};

double number_after(const std::string& line, const std::string& key) {
  const size_t at = line.find("\"" + key + "\":");
  return at == std::string::npos ? -1 : std::stod(line.substr(at + key.size() + 3));
}

std::vector<MetricsRow> read_metrics(const std::string& run) {
  std::vector<MetricsRow> rows;
  std::ifstream in(run + "/metrics.jsonl");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line.back() != '}') continue;
    MetricsRow r;
    r.update = static_cast<int64_t>(number_after(line, "update"));
    r.env_steps = static_cast<int64_t>(number_after(line, "env_steps"));
    r.mean_reduction = number_after(line, "mean_episode_reduction_pct");
    r.actors_alive = number_after(line, "actors_alive");
    r.joins = number_after(line, "actor_joins");
    r.refused = number_after(line, "refused_messages");
    r.lag = number_after(line, "mean_policy_lag");
    rows.push_back(r);
  }
  return rows;
}

// Runs `command` in the background with its output in `log`; returns its pid.
pid_t start_background(const std::string& command, const std::string& log) {
  std::string out;
  const std::string script = "( " + command + " > " + log + " 2>&1 & echo $! )";
  testing::run_command(script, &out);
  return static_cast<pid_t>(std::stol(out));
}

// The pid of the process whose command line matches `pattern` (pgrep -f), or 0.
pid_t find_process(const std::string& pattern) {
  // "[a]ctor" matches "actor" but not the shell running this pgrep, whose
  // command line holds the pattern itself.
  const std::string guarded = "[" + pattern.substr(0, 1) + "]" + pattern.substr(1);
  std::string out;
  if (testing::run_command("pgrep -n -f -- '" + guarded + "'", &out) != 0 || out.empty()) return 0;
  return static_cast<pid_t>(std::stol(out));
}

bool wait_for(double seconds, const std::function<bool()>& condition) {
  Stopwatch clock;
  while (clock.elapsed_s() < seconds) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return condition();
}

bool exited(pid_t pid) { return ::kill(pid, 0) != 0; }

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Waits for the launcher to end (it is not our child: the shell started it).
bool launcher_ended(pid_t pid, double seconds) { return wait_for(seconds, [&] { return exited(pid); }); }

TEST(Distributed, ALearnerWithTwoActorsLearnsAndKeepsEveryStep) {
  const std::string run = fresh("dist-learn");
  std::string out;
  ASSERT_EQ(testing::run_command(train_command(run, 6144), &out), 0) << out;
  EXPECT_NE(out.find("finished after"), std::string::npos) << out;
  const std::vector<MetricsRow> rows = read_metrics(run);
  ASSERT_GE(rows.size(), 40u) << out;
  EXPECT_EQ(rows.back().env_steps, 6144);
  EXPECT_EQ(rows.back().actors_alive, 2) << out;
  EXPECT_LE(rows.back().lag, 2.5) << "actors should act with nearly current parameters";
  // The first updates act with an untrained policy; the last ones must do
  // clearly better.
  double first = 0, last = 0;
  for (size_t i = 0; i < 4; ++i) first += rows[i].mean_reduction / 4;
  for (size_t i = rows.size() - 8; i < rows.size(); ++i) last += rows[i].mean_reduction / 8;
  EXPECT_GT(last, first + 2.0) << "mean episode reduction went from " << first << "% to " << last << "%";
  // Every accepted step is in the store, readable, with valid fields.
  RolloutStoreReader store(run + "/rollouts.h5");
  EXPECT_EQ(store.steps(), 6144);
  EXPECT_EQ(store.info().graphs, std::vector<std::string>{"squeezenet1.1"});
  const std::vector<StoredStep> steps = store.read(0, store.steps());
  for (const StoredStep& s : steps) {
    ASSERT_LE(s.actor_id, 1u);
    ASSERT_EQ(s.graph_index, 0);
    ASSERT_GE(s.xfer, 0);
    ASSERT_LE(s.log_prob, 0.0f);
  }
  // Nothing is left running.
  EXPECT_EQ(find_process("actor --run " + run), 0);
  EXPECT_EQ(find_process("learner .*--run " + run), 0);
}

TEST(Distributed, AnActorKilledMidRunIsRestartedAndRejoins) {
  const std::string run = fresh("dist-kill-actor");
  const std::string log = testing::scratch_dir() + "/dist-kill-actor.log";
  const pid_t launcher = start_background(train_command(run, 200000), log);
  ASSERT_TRUE(wait_for(120, [&] { return read_metrics(run).size() >= 3; })) << read_file(log);
  const pid_t victim = find_process("actor --run " + run + " --id 0");
  ASSERT_GT(victim, 0) << read_file(log);
  ::kill(victim, SIGKILL);
  Stopwatch since_kill;
  // The launcher restarts it within 10 s and it joins the learner again.
  EXPECT_TRUE(wait_for(10, [&] {
    const pid_t again = find_process("actor --run " + run + " --id 0");
    return again > 0 && again != victim;
  })) << read_file(log);
  EXPECT_TRUE(wait_for(20, [&] {
    const std::vector<MetricsRow> rows = read_metrics(run);
    return !rows.empty() && rows.back().joins >= 3 && rows.back().actors_alive == 2;
  })) << read_file(log);
  const size_t rows_then = read_metrics(run).size();
  EXPECT_TRUE(wait_for(30, [&] { return read_metrics(run).size() >= rows_then + 3; })) << "training stalled";
  ::kill(launcher, SIGINT);
  EXPECT_TRUE(launcher_ended(launcher, 15)) << read_file(log);
  const std::string text = read_file(log);
  EXPECT_NE(text.find("actor 0 ended (killed by signal 9); restarting it"), std::string::npos) << text;
  EXPECT_EQ(find_process("actor --run " + run), 0);
}

TEST(Distributed, ALearnerKilledMidRunResumesAndActorsReconnect) {
  const std::string run = fresh("dist-kill-learner");
  const std::string log = testing::scratch_dir() + "/dist-kill-learner.log";
  const pid_t launcher = start_background(train_command(run, 200000), log);
  ASSERT_TRUE(wait_for(120, [&] { return read_metrics(run).size() >= 6; })) << read_file(log);
  const pid_t learner = find_process("learner .*--run " + run);
  ASSERT_GT(learner, 0);
  ::kill(learner, SIGKILL);
  // A new learner resumes from its checkpoint; updates continue past it.
  EXPECT_TRUE(wait_for(60, [&] {
    const pid_t again = find_process("learner --resume " + run);
    return again > 0 && again != learner;
  })) << read_file(log);
  const int64_t before = read_metrics(run).empty() ? 0 : read_metrics(run).back().update;
  EXPECT_TRUE(wait_for(60, [&] {
    const std::vector<MetricsRow> rows = read_metrics(run);
    return !rows.empty() && rows.back().update >= before + 3 && rows.back().actors_alive == 2;
  })) << read_file(log);
  ::kill(launcher, SIGINT);
  EXPECT_TRUE(launcher_ended(launcher, 15)) << read_file(log);
  // The store survived the kill: it opens, and holds every step of the
  // updates before the last checkpoint at least.
  RolloutStoreReader store(run + "/rollouts.h5");
  EXPECT_GT(store.steps(), 0);
  const std::vector<StoredStep> steps = store.read(0, store.steps());
  for (const StoredStep& s : steps) ASSERT_EQ(s.graph_index, 0);
  EXPECT_EQ(find_process("actor --run " + run), 0);
}

TEST(Distributed, CtrlCStopsEverythingWithinTenSeconds) {
  const std::string run = fresh("dist-ctrl-c");
  const std::string log = testing::scratch_dir() + "/dist-ctrl-c.log";
  const pid_t launcher = start_background(train_command(run, 200000), log);
  ASSERT_TRUE(wait_for(120, [&] { return read_metrics(run).size() >= 2; })) << read_file(log);
  Stopwatch clock;
  ::kill(launcher, SIGINT);
  ASSERT_TRUE(launcher_ended(launcher, 12)) << read_file(log);
  EXPECT_LT(clock.elapsed_s(), 10.0);
  EXPECT_EQ(find_process("actor --run " + run), 0);
  EXPECT_EQ(find_process("learner .*--run " + run), 0);
  const std::string text = read_file(log);
  EXPECT_NE(text.find("stopped after"), std::string::npos) << text;
  EXPECT_NE(text.find("continue with: graphworld train --resume " + run), std::string::npos) << text;
  // The final checkpoint is the last update's.
  const std::vector<MetricsRow> rows = read_metrics(run);
  ASSERT_FALSE(rows.empty());
  EXPECT_TRUE(std::filesystem::exists(run + "/checkpoints/ckpt-" + std::to_string(rows.back().update) + ".ckpt"))
      << text;
}

TEST(Distributed, GarbageSentToTheLearnerIsCountedAndDropped) {
  const std::string run = fresh("dist-fuzz");
  const std::string log = testing::scratch_dir() + "/dist-fuzz.log";
  const pid_t launcher = start_background(train_command(run, 200000), log);
  ASSERT_TRUE(wait_for(120, [&] { return read_metrics(run).size() >= 2; })) << read_file(log);
  const LearnerEndpoints endpoints = endpoints_from_text(read_file(run + "/endpoints"), "endpoints");
  {
    ActorTransport intruder(endpoints, "intruder", {});
    std::mt19937_64 rng(3);
    for (int i = 0; i < 40; ++i) {
      std::string noise(8 * (1 + rng() % 512), '\0');
      for (char& c : noise) c = static_cast<char>(rng());
      Stopwatch clock;
      intruder.send_trajectory(noise, [&] { return clock.elapsed_s() > 2; });
      intruder.send_control(noise);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  EXPECT_TRUE(wait_for(30, [&] {
    const std::vector<MetricsRow> rows = read_metrics(run);
    return !rows.empty() && rows.back().refused >= 40;
  })) << read_file(log);
  const size_t rows_then = read_metrics(run).size();
  EXPECT_TRUE(wait_for(30, [&] { return read_metrics(run).size() >= rows_then + 2; })) << "training stopped";
  ::kill(launcher, SIGINT);
  EXPECT_TRUE(launcher_ended(launcher, 15)) << read_file(log);
}

}  // namespace
}  // namespace graphworld
