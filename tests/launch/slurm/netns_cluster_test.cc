// graphworld launch across nodes: a three-node Slurm cluster built on this
// machine out of network namespaces (tests/slurm/netns_cluster: each node
// its own hostname, address on a bridge, munged and slurmd). The learner
// runs on one node and an actor on each of the other two, reaching it over
// the bridge with CURVE; every graphworld process on one actor node is
// SIGKILLed mid-run (its slurmd left running), and the run must go on, the
// actor must come back, and the run's store and checkpoints must be whole.
// Needs root and namespaces: skips, saying why, where they are missing.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/rollout_store.h"
#include "learner/training_checkpoint.h"
#include "tests/launch/slurm/cluster_test_support.h"

namespace graphworld::testing {
namespace {
namespace fs = std::filesystem;

std::string cluster_script() { return source_dir() + "/tests/slurm/netns_cluster"; }

// The graphworld processes inside a node's network namespace (its
// slurmstepd and shells are not graphworld's).
std::vector<pid_t> graphworld_pids_on(const std::string& node) {
  std::string out;
  std::vector<pid_t> pids;
  if (run_command("ip netns pids " + node, &out) != 0) return pids;
  std::istringstream in(out);
  pid_t pid = 0;
  while (in >> pid) {
    std::ifstream cmdline("/proc/" + std::to_string(pid) + "/cmdline");
    std::string first;
    std::getline(cmdline, first, '\0');
    if (fs::path(first).filename() == "graphworld") pids.push_back(pid);
  }
  return pids;
}

class NetnsCluster : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string why;
    const int check = run_command(cluster_script() + " check", &why);
    if (check != 0) {
      skip_reason_ = why.empty() ? "tests/slurm/netns_cluster check failed" : why;
      return;
    }
    std::string out;
    started_ = run_command(cluster_script() + " start " + GRAPHWORLD_NETNS_SLURM_DIR, &out) == 0;
    start_output_ = out;
  }
  static void TearDownTestSuite() {
    if (skip_reason_.empty()) {
      std::string out;
      run_command(cluster_script() + " stop " + GRAPHWORLD_NETNS_SLURM_DIR, &out);
    }
  }
  void SetUp() override {
    if (!skip_reason_.empty()) GTEST_SKIP() << "no three-node cluster on this machine: " << skip_reason_;
    ASSERT_TRUE(started_) << "the three-node cluster did not start:\n" << start_output_;
    setenv("SLURM_CONF", (std::string(GRAPHWORLD_NETNS_SLURM_DIR) + "/slurm.conf").c_str(), 1);
  }

  static inline std::string skip_reason_, start_output_;
  static inline bool started_ = false;
};

TEST_F(NetnsCluster, ARunGoesOnWhenAnActorNodesProcessesAreKilled) {
  const std::string dir = fresh("netns-run");
  fs::create_directories(dir);
  const std::string cluster = dir + "/cluster.yaml";
  std::ofstream(cluster) << "run:\n  name: across-nodes\n  output: " << dir << "/runs\n"
                         << "  training_config: " << source_dir() << "/configs/train.yaml\n"
                         << "  overrides: [env.num_envs=4, env.steps_per_env=32, env.max_steps=50, "
                            "ppo.minibatch_size=64, train.checkpoint_every=2, env.rates="
                         << source_dir() << "/configs/gpu_rates.yaml, train.total_env_steps=10000000]\n"
                         << "slurm:\n  time_limit: \"20:00\"\n  warning_s: 60\n"
                         << "learner:\n  nodes: 1\n  cpus_per_rank: 1\n"
                         << "actors:\n  nodes: 2\n  real_per_node: 1\n  cpus_per_actor: 1\n";
  const std::string run = dir + "/runs/across-nodes";
  std::string out;
  ASSERT_EQ(gw("launch " + cluster, &out), 0) << out;
  ASSERT_TRUE(wait_for(300, [&] {
    const std::vector<MetricsRow> rows = read_metrics(run);
    return rows.size() >= 4 && rows.back().actors_alive == 2;
  })) << cluster_run_diagnosis(run);

  // Where everything runs: the learner on the first node, an actor on each
  // of the others, and the actors reach the learner over the bridge (a
  // node's loopback is its own) with the run's CURVE keys.
  EXPECT_FALSE(graphworld_pids_on("gwnode1").empty()) << cluster_run_diagnosis(run);
  ASSERT_EQ(graphworld_pids_on("gwnode2").size(), 1u) << cluster_run_diagnosis(run);
  const std::vector<pid_t> victims = graphworld_pids_on("gwnode3");
  ASSERT_EQ(victims.size(), 1u) << cluster_run_diagnosis(run);
  const std::string endpoints = read_file(run + "/endpoints");
  EXPECT_NE(endpoints.find("tcp://"), std::string::npos) << endpoints;
  EXPECT_EQ(endpoints.find("127.0.0.1"), std::string::npos) << endpoints;
  EXPECT_TRUE(fs::exists(run + "/keys/learner.key"));

  // Kill every graphworld process on gwnode3 (actor 1: one actor per node,
  // in node order); its slurmd stays.
  constexpr uint32_t kVictimActor = 1;
  const MetricsRow at_kill = read_metrics(run).back();
  for (pid_t pid : victims) ::kill(pid, SIGKILL);
  // The actor comes back on its node (a new process), and the learner hears
  // from the new incarnation (a join).
  EXPECT_TRUE(wait_for(120, [&] {
    const std::vector<pid_t> now = graphworld_pids_on("gwnode3");
    return now.size() == 1 && now[0] != victims[0];
  })) << cluster_run_diagnosis(run);
  ASSERT_TRUE(wait_for(180, [&] { return read_metrics(run).back().joins > at_kill.joins; }))
      << "the restarted actor never reached the learner\n" << cluster_run_diagnosis(run);
  const int64_t update_at_rejoin = read_metrics(run).back().update;
  EXPECT_TRUE(wait_for(180, [&] {
    const std::vector<MetricsRow> rows = read_metrics(run);
    return rows.back().update >= update_at_rejoin + 4 && rows.back().actors_alive == 2;
  })) << "the run did not go on with both actors after the kill\n" << cluster_run_diagnosis(run);
  // Updates went on one after another through the kill.
  const std::vector<MetricsRow> rows = read_metrics(run);
  for (size_t i = 1; i < rows.size(); ++i) ASSERT_EQ(rows[i].update, rows[i - 1].update + 1) << "row " << i;

  ASSERT_EQ(gw("launch cancel " + run, &out), 0) << out;
  EXPECT_NE(cluster_job_state(run), "RUNNING");

  // Whole: the newest checkpoint reads back at the learner's last update,
  // and every step of the store (copied from the learner node's disk)
  // reads back, at least as many as the checkpoint counts.
  const std::string newest = newest_checkpoint(run);
  ASSERT_FALSE(newest.empty()) << cluster_run_diagnosis(run);
  const CheckpointContents saved = read_checkpoint(newest);
  EXPECT_EQ(saved.updates, read_metrics(run).back().update);
  const RolloutStoreReader store(run + "/rollouts.h5");
  ASSERT_GT(store.steps(), 0);
  EXPECT_GE(store.steps(), saved.env_steps);
  const std::vector<StoredStep> steps = store.read(0, store.steps());
  EXPECT_EQ(static_cast<int64_t>(steps.size()), store.steps());
  // The restarted actor's steps are there: acted with parameters published
  // after its first incarnation died.
  const int64_t after_kill = std::count_if(steps.begin(), steps.end(), [&](const StoredStep& s) {
    return s.actor_id == kVictimActor && s.policy_version > at_kill.update + 1;
  });
  EXPECT_GT(after_kill, 0) << "no step of the restarted actor in the store";
  EXPECT_NE(read_file(run + "/slurm/events.log").find("stopped by 'graphworld launch cancel'"), std::string::npos)
      << read_file(run + "/slurm/events.log");
}

}  // namespace
}  // namespace graphworld::testing
