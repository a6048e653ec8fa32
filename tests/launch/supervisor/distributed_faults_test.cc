// The distributed system under stress, as processes on loopback: samples
// past the lag limit are dropped and counted; a paused learner blocks its
// actors without their memory growing; actors killed at random every 10 s
// for 2 minutes do not stop training; CURVE admits the run's key only; and
// every process stops within 10 s even while its peer is gone. Tests end
// only the processes they started.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <sstream>

#include "common/curve_keys.h"
#include "common/rollout_store.h"
#include "tests/launch/supervisor/distributed_test_support.h"

namespace graphworld {
namespace {

using namespace testing;

// Resident memory (MiB) and CPU seconds used so far, from /proc/PID.
struct ProcessUse {
  double rss_mib = 0, cpu_s = 0;
};
ProcessUse process_use(pid_t pid) {
  ProcessUse use;
  std::istringstream status(read_file("/proc/" + std::to_string(pid) + "/status"));
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) use.rss_mib = std::stod(line.substr(6)) / 1024.0;
  const std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  // Fields after the command name (which may hold spaces) start after ')'.
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::string field;
  std::vector<std::string> f;
  while (fields >> field) f.push_back(field);
  if (f.size() > 12) use.cpu_s = (std::stod(f[11]) + std::stod(f[12])) / static_cast<double>(sysconf(_SC_CLK_TCK));
  return use;
}

std::vector<pid_t> actor_pids(const std::string& run) {
  std::string out;
  std::vector<pid_t> pids;
  if (run_command("pgrep -f -- '[a]ctor --run " + run + " '", &out) != 0) return pids;
  std::istringstream in(out);
  pid_t pid = 0;
  while (in >> pid) pids.push_back(pid);
  return pids;
}

TEST(DistributedFaults, SamplesPastTheLagLimitAreDroppedCountedAndStillStored) {
  const std::string run = fresh("dist-stale");
  std::string out;
  // A limit of 0: a rollout acted while the learner updated arrives one
  // version old and is dropped.
  ASSERT_EQ(run_command(train_command(run, 2048, "distributed.max_policy_lag=0"), &out), 0) << out;
  const std::vector<MetricsRow> rows = read_metrics(run);
  ASSERT_FALSE(rows.empty()) << out;
  EXPECT_EQ(rows.back().env_steps, 2048);
  EXPECT_GT(rows.back().stale, 0) << out;
  EXPECT_EQ(rows.back().lag, 0) << "only samples of the current version are learned from";
  RolloutStoreReader store(run + "/rollouts.h5");
  EXPECT_EQ(store.steps(), 2048 + static_cast<int64_t>(rows.back().stale));
}

TEST(DistributedFaults, APausedLearnerBlocksItsActorsAndNoMemoryGrows) {
  const std::string run = fresh("dist-pause");
  const std::string log = scratch_dir() + "/dist-pause.log";
  const pid_t launcher = start_background(train_command(run, 200000), log);
  ASSERT_TRUE(wait_for(120, [&] { return read_metrics(run).size() >= 3; })) << read_file(log);
  const pid_t learner = find_process("learner .*--run " + run);
  const std::vector<pid_t> actors = actor_pids(run);
  ASSERT_GT(learner, 0);
  ASSERT_EQ(actors.size(), 2u) << read_file(log);
  ::kill(learner, SIGSTOP);
  // Each actor finishes the rollout it was making, sends it, and waits for
  // a receipt that does not come: within seconds it goes quiet (2 s windows
  // using under a tenth of a core), and stays so with no memory growth.
  auto quiet = [&] {
    std::vector<ProcessUse> start;
    for (pid_t a : actors) start.push_back(process_use(a));
    std::this_thread::sleep_for(std::chrono::seconds(2));
    for (size_t i = 0; i < actors.size(); ++i)
      if (process_use(actors[i]).cpu_s - start[i].cpu_s > 0.2) return false;
    return true;
  };
  EXPECT_TRUE(wait_for(20, quiet)) << "actors kept working while the learner was paused";
  std::vector<ProcessUse> before;
  for (pid_t a : actors) before.push_back(process_use(a));
  std::this_thread::sleep_for(std::chrono::seconds(8));
  for (size_t i = 0; i < actors.size(); ++i) {
    const ProcessUse after = process_use(actors[i]);
    EXPECT_LT(after.cpu_s - before[i].cpu_s, 0.8) << "actor " << i << " kept working while the learner was paused";
    EXPECT_LT(after.rss_mib - before[i].rss_mib, 8.0) << "actor " << i << " memory grew while blocked";
  }
  ::kill(learner, SIGCONT);
  const size_t rows_then = read_metrics(run).size();
  // Generous: beside other tests' processes (a model-based run's learner and
  // busy dream actor) an update of this run has taken 10 s.
  EXPECT_TRUE(wait_for(120, [&] { return read_metrics(run).size() >= rows_then + 3; }))
      << "training did not go on after the pause\n" << read_file(log);
  ::kill(launcher, SIGINT);
  EXPECT_TRUE(launcher_ended(launcher, 15)) << read_file(log);
}

TEST(DistributedFaults, ChaosKillingARandomActorEvery10sFor2Minutes) {
  const std::string run = fresh("dist-chaos");
  const std::string log = scratch_dir() + "/dist-chaos.log";
  const pid_t launcher = start_background(train_command(run, 10'000'000), log);
  ASSERT_TRUE(wait_for(120, [&] { return read_metrics(run).size() >= 3; })) << read_file(log);
  const double learner_rss_start = read_metrics(run).back().learner_rss_mib;
  std::mt19937 rng(7);
  int kills = 0;
  Stopwatch chaos;
  // A kill at 10 s, 20 s, ... 120 s; between kills the count must recover
  // (within 10 s of the kill) and the learner must have updated again.
  for (int k = 1; k <= 12; ++k) {
    std::this_thread::sleep_for(std::chrono::duration<double>(std::max(0.0, 10.0 * k - chaos.elapsed_s())));
    std::vector<pid_t> actors = actor_pids(run);
    ASSERT_FALSE(actors.empty()) << read_file(log);
    const pid_t victim = actors[rng() % actors.size()];
    const int64_t update_before = read_metrics(run).back().update;
    ::kill(victim, SIGKILL);
    ++kills;
    EXPECT_TRUE(wait_for(9.5, [&] {
      const std::vector<pid_t> now = actor_pids(run);
      return now.size() == 2 && std::find(now.begin(), now.end(), victim) == now.end();
    })) << "kill " << kills << ": the actor count did not recover\n" << read_file(log);
    const double until_next = 10.0 * (k + 1) - chaos.elapsed_s() - 0.5;
    EXPECT_TRUE(wait_for(std::max(until_next, 1.0), [&] { return read_metrics(run).back().update > update_before; }))
        << "kill " << kills << ": training stalled";
  }
  EXPECT_EQ(kills, 12);
  EXPECT_TRUE(wait_for(20, [&] { return read_metrics(run).back().actors_alive == 2; })) << read_file(log);
  const double learner_rss_end = read_metrics(run).back().learner_rss_mib;
  EXPECT_LT(learner_rss_end - learner_rss_start, 64.0)
      << "learner RSS went from " << learner_rss_start << " to " << learner_rss_end << " MiB";
  ::kill(launcher, SIGINT);
  EXPECT_TRUE(launcher_ended(launcher, 15)) << read_file(log);
  EXPECT_TRUE(actor_pids(run).empty());
}

TEST(DistributedFaults, CurveAdmitsAnActorWithTheRunsKeyAndRefusesAnother) {
  const std::string run = fresh("dist-curve");
  const std::string log = scratch_dir() + "/dist-curve";
  const std::string config = source_dir() + "/configs/train.yaml env.num_envs=4 env.steps_per_env=32 env.max_steps=50"
                             " ppo.minibatch_size=64 train.total_env_steps=200000 distributed.actors=1";
  const pid_t learner = start_background(graphworld_binary() + " learner " + config + " --run " + run + " --curve",
                                         log + "-learner.log");
  ASSERT_TRUE(wait_for(60, [&] { return std::filesystem::exists(run + "/learner.ready"); })) << read_file(log + "-learner.log");
  for (const char* key : {"/keys/learner.key", "/keys/actor.key"})
    EXPECT_EQ(std::filesystem::status(run + key).permissions() & std::filesystem::perms::all,
              std::filesystem::perms::owner_read | std::filesystem::perms::owner_write) << key;
  // A stranger: the run's files and the learner's public key, but its own
  // actor key pair.
  const std::string stranger = fresh("dist-curve-stranger");
  std::filesystem::create_directories(stranger + "/keys");
  for (const char* file : {"/config.yaml", "/endpoints", "/run_id"})
    std::filesystem::copy_file(run + file, stranger + file);
  CurveKeyPair learner_public = read_curve_keys(run + "/keys/learner.key");
  learner_public.secret_key = generate_curve_keys().secret_key;
  write_curve_keys(stranger + "/keys/learner.key", learner_public);
  write_curve_keys(stranger + "/keys/actor.key", generate_curve_keys());
  const pid_t intruder = start_background(graphworld_binary() + " actor --run " + stranger + " --id 1", log + "-stranger.log");
  const pid_t actor = start_background(graphworld_binary() + " actor --run " + run + " --id 0", log + "-actor.log");
  EXPECT_TRUE(wait_for(90, [&] { return read_metrics(run).size() >= 4; }))
      << "the actor with the run's key did not train\n" << read_file(log + "-actor.log") << read_file(log + "-learner.log");
  const std::vector<MetricsRow> rows = read_metrics(run);
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows.back().joins, 1) << "only the actor with the run's key may join";
  EXPECT_EQ(rows.back().actors_alive, 1);
  EXPECT_FALSE(exited(intruder)) << read_file(log + "-stranger.log");
  for (pid_t p : {intruder, actor, learner}) ::kill(p, SIGINT);
  EXPECT_TRUE(wait_for(10, [&] { return exited(intruder) && exited(actor) && exited(learner); }));
  EXPECT_NE(read_file(log + "-stranger.log").find("after 0 rollouts, 0 steps, 0 parameter versions"), std::string::npos)
      << read_file(log + "-stranger.log");
}

TEST(DistributedFaults, EveryProcessStopsWithinTenSecondsWhileItsPeerIsGone) {
  const std::string config = source_dir() + "/configs/train.yaml env.num_envs=4 env.steps_per_env=32 env.max_steps=50"
                             " train.total_env_steps=200000 distributed.actors=1";
  // An actor whose learner never came: it waits for the endpoints.
  {
    const std::string run = fresh("dist-stop-nolearner");
    std::filesystem::create_directories(run);
    const pid_t actor = start_background(graphworld_binary() + " actor --run " + run + " --id 0", run + ".log");
    // A background process ignores SIGINT until it installs its handler:
    // wait until it says it is waiting (on a loaded machine, starting takes
    // seconds).
    ASSERT_TRUE(wait_for(60, [&] { return read_file(run + ".log").find("waiting") != std::string::npos; }))
        << read_file(run + ".log");
    Stopwatch clock;
    ::kill(actor, SIGINT);
    EXPECT_TRUE(wait_for(10, [&] { return exited(actor); })) << read_file(run + ".log");
  }
  // A learner whose actors never came.
  {
    const std::string run = fresh("dist-stop-noactors");
    const pid_t learner = start_background(graphworld_binary() + " learner " + config + " --run " + run, run + ".log");
    ASSERT_TRUE(wait_for(60, [&] { return std::filesystem::exists(run + "/learner.ready"); })) << read_file(run + ".log");
    ::kill(learner, SIGINT);
    EXPECT_TRUE(wait_for(10, [&] { return exited(learner); })) << read_file(run + ".log");
    EXPECT_NE(read_file(run + ".log").find("stopped after 0 updates"), std::string::npos) << read_file(run + ".log");
  }
  // An actor mid-run whose learner was killed.
  {
    const std::string run = fresh("dist-stop-learnergone");
    const pid_t learner = start_background(graphworld_binary() + " learner " + config + " --run " + run, run + "-learner.log");
    const pid_t actor = start_background(graphworld_binary() + " actor --run " + run + " --id 0", run + "-actor.log");
    ASSERT_TRUE(wait_for(90, [&] { return read_metrics(run).size() >= 2; })) << read_file(run + "-learner.log");
    ::kill(learner, SIGKILL);
    std::this_thread::sleep_for(std::chrono::seconds(2));
    ::kill(actor, SIGINT);
    EXPECT_TRUE(wait_for(10, [&] { return exited(actor); })) << read_file(run + "-actor.log");
  }
}

}  // namespace
}  // namespace graphworld
