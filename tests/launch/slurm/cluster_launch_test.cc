// graphworld launch on a real Slurm: a one-node cluster on loopback that
// tests/slurm/cluster starts before these tests (a ctest fixture) and stops
// after them. The dry-run and config tests need no cluster.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/rollout_store.h"
#include "launch/slurm/cluster_config.h"
#include "tests/launch/slurm/cluster_test_support.h"

namespace graphworld::testing {
namespace {
namespace fs = std::filesystem;

std::string read_file_text(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

class ClusterLaunch : public ::testing::Test {
 protected:
  void SetUp() override { setenv("SLURM_CONF", GRAPHWORLD_SLURM_CONF, 1); }

  // A cluster file for a small, fast model-free run with both actors on the
  // one node.
  std::string cluster_file(const std::string& name, int64_t total_steps) {
    const std::string dir = fresh(name);
    fs::create_directories(dir);
    const std::string path = dir + "/cluster.yaml";
    std::ofstream(path) << "run:\n  name: " << name << "\n  output: " << dir << "/runs\n"
                        << "  training_config: " << source_dir() << "/configs/train.yaml\n"
                        << "  overrides: [env.num_envs=4, env.steps_per_env=32, env.max_steps=50, "
                           "ppo.minibatch_size=64, train.checkpoint_every=4, env.rates="
                        << source_dir() << "/configs/gpu_rates.yaml, train.total_env_steps=" << total_steps << "]\n"
                        << "slurm:\n  time_limit: \"20:00\"\n  warning_s: 60\n"
                        << "learner:\n  cpus_per_rank: 1\n"
                        << "actors:\n  nodes: 0\n  real_per_node: 2\n";
    return path;
  }

  static std::string run_of(const std::string& cluster) {
    return fs::path(cluster).parent_path().string() + "/runs/" + fs::path(cluster).parent_path().filename().string();
  }

  static std::string job_state(const std::string& run) { return cluster_job_state(run); }
  static std::string job_id_of(const std::string& run) { return cluster_job_id(run); }
  static std::string job_log_of(const std::string& run) { return cluster_job_log(run); }
  static std::string diagnosis(const std::string& run) { return cluster_run_diagnosis(run); }

  static bool active(const std::string& state) {
    return state == "PENDING" || state == "RUNNING" || state == "CONFIGURING" || state == "COMPLETING" ||
           state == "REQUEUED";
  }

  static std::string newest_checkpoint_of(const std::string& run) {
    std::string newest;
    int64_t best = -1;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(run + "/checkpoints", ec)) {
      const std::string name = e.path().stem().string();  // ckpt-N
      const int64_t n = std::stoll(name.substr(name.find('-') + 1));
      if (n > best) best = n, newest = e.path().string();
    }
    return newest;
  }

  static int64_t checkpoint_update(const std::string& path) {
    const std::string stem = fs::path(path).stem().string();
    return std::stoll(stem.substr(stem.find('-') + 1));
  }
};

// --dry-run for a multi-node layout: every #SBATCH line and every step
// line is what the YAML says, and nothing is written or submitted.
TEST_F(ClusterLaunch, DryRunSaysWhatTheYamlSays) {
  const std::string dir = fresh("dry-run");
  fs::create_directories(dir);
  const std::string path = dir + "/cluster.yaml";
  std::ofstream(path) << "run:\n  name: big-run\n  output: " << dir << "/runs\n"
                      << "  training_config: " << source_dir() << "/configs/single_node.yaml\n"
                      << "slurm:\n  partition: gpu\n  account: ml-team\n  qos: high\n  time_limit: 1-12:00:00\n"
                      << "  requeue: false\n  warning_s: 600\n  extra_options: [--constraint=a100]\n"
                      << "learner:\n  nodes: 1\n  gpus_per_node: 2\n  cpus_per_rank: 6\n  local_dir: /scratch\n"
                      << "actors:\n  nodes: 4\n  real_per_node: 3\n  cpus_per_actor: 2\n"
                      << "graphworld: /opt/gw/bin/graphworld\n";
  std::string out;
  ASSERT_EQ(gw("launch " + path + " --dry-run", &out), 0) << out;
  EXPECT_FALSE(fs::exists(dir + "/runs")) << "a dry run wrote files";
  const std::string run = dir + "/runs/big-run";
  const std::vector<std::string> lines = lines_of(out);
  const std::vector<std::string> sbatch = {
      "#SBATCH --job-name=big-run",       "#SBATCH --nodes=5",          "#SBATCH --exclusive",
      "#SBATCH --time=1-12:00:00",        "#SBATCH --partition=gpu",    "#SBATCH --account=ml-team",
      "#SBATCH --qos=high",               "#SBATCH --gpus-per-node=2",  "#SBATCH --no-requeue",
      "#SBATCH --signal=B:USR1@600",      "#SBATCH --open-mode=append", "#SBATCH --output=" + run + "/slurm/job-%j.out",
      "#SBATCH --constraint=a100"};
  std::vector<std::string> seen_sbatch;
  for (const std::string& line : lines)
    if (line.rfind("#SBATCH", 0) == 0) seen_sbatch.push_back(line);
  EXPECT_EQ(seen_sbatch, sbatch);
  EXPECT_NE(out.find("\nexec /opt/gw/bin/graphworld launch job " + run + "\n"), std::string::npos) << out;

  std::vector<std::string> steps;
  for (const std::string& line : lines)
    if (line.rfind("srun ", 0) == 0) steps.push_back(line);
  ASSERT_EQ(steps.size(), 1u + 4 * 3) << out;
  // One learner step: one node, a rank per GPU, a GPU per rank.
  EXPECT_EQ(steps[0],
            "srun --overlap --job-name=learner --nodes=1 --ntasks=2 --ntasks-per-node=2 --nodelist=learner-1 "
            "--cpus-per-task=6 --kill-on-bad-exit=1 --gpus-per-task=1 /opt/gw/bin/graphworld learner " +
                run + "/slurm/training.yaml --run " + run + " --bind 0.0.0.0 --store-dir /scratch/graphworld-" +
                std::to_string(getuid()) + "-big-run --data-parallel learner-1:29400");
  // Actors 0-2 on the first actor node, 3-5 on the second, ...
  for (int k = 0; k < 12; ++k)
    EXPECT_EQ(steps[static_cast<size_t>(1 + k)],
              "srun --overlap --job-name=actor-" + std::to_string(k) + " --nodes=1 --ntasks=1 --nodelist=actor-" +
                  std::to_string(k / 3 + 1) + " --cpus-per-task=2 /opt/gw/bin/graphworld actor --run " + run + " --id " +
                  std::to_string(k));
}

TEST_F(ClusterLaunch, BadClusterFilesAreRefusedNamingTheKey) {
  const std::string path = cluster_file("bad-files", 1000);
  struct Case {
    std::string override_text, expected;
  };
  const std::vector<Case> cases = {
      {"actors.nodse=2", "unknown key 'actors.nodse'; did you mean 'actors.nodes'?"},
      {"slurm.time_limit=4h", "'slurm.time_limit' must be a Slurm time"},
      {"slurm.time_limit=1", "'slurm.time_limit' is 1 but 'slurm.warning_s' (60 s)"},
      {"'run.output=/tmp/with space'", "'run.output' must not hold spaces"},
      {"actors.dream_per_node=1", "'actors.dream_per_node' is 1 but"},
      {"actors.real_per_node=0", "'actors.real_per_node' must be at least 1"},
      {"run.name=bad/name", "'run.name' must be 1 to 64 letters"},
      {"run.training_config=/nonexistent/train.yaml", "'run.training_config' names /nonexistent/train.yaml"},
      {"learner.ranks_per_node=3 learner.gpus_per_node=2", "'learner.ranks_per_node' is 3"},
      {"learner.local_dir=scratch", "'learner.local_dir' must be an absolute folder"},
      {"run.overrides=[ppo.clp=0.1]", "run.training_config: override 'ppo.clp=0.1': unknown key 'ppo.clp'; did you mean 'ppo.clip'?"},
  };
  for (const Case& c : cases) {
    std::string out;
    EXPECT_EQ(gw("launch " + path + " " + c.override_text + " --dry-run", &out), 2) << c.override_text << "\n" << out;
    EXPECT_NE(out.find(c.expected), std::string::npos) << c.override_text << "\n" << out;
  }
  std::string out;
  EXPECT_EQ(gw("launch status " + fresh("not-a-run"), &out), 2);
  EXPECT_NE(out.find("not a cluster run folder"), std::string::npos) << out;
}

// A small run to its end, with two data-parallel learner ranks (gloo): the
// job finishes, both ranks took part in every update, and the run folder
// holds checkpoints, the rollout store (copied from the learner's local
// disk) and the metrics.
TEST_F(ClusterLaunch, RunsToItsEndOnSlurm) {
  const std::string cluster = cluster_file("to-the-end", 2048);
  const std::string run = run_of(cluster);
  std::string out;
  ASSERT_EQ(gw("launch " + cluster + " learner.ranks_per_node=2", &out), 0) << out;
  EXPECT_NE(out.find("submitted job"), std::string::npos) << out;
  std::string state;
  EXPECT_TRUE(wait_for(300, [&] { return !active(state = job_state(run)); })) << state;
  const std::string log = job_log_of(run);  // read once the job has ended
  EXPECT_EQ(state, "COMPLETED") << log;
  const int64_t updates = read_metrics(run).back().update;
  EXPECT_NE(log.find("learner rank 1: rank 0 stopped after " + std::to_string(updates) + " updates"),
            std::string::npos)
      << log;
  EXPECT_NE(read_file_text(run + "/slurm/events.log").find("finished"), std::string::npos) << log;
  EXPECT_FALSE(newest_checkpoint_of(run).empty());
  const std::vector<MetricsRow> rows = read_metrics(run);
  ASSERT_FALSE(rows.empty());
  EXPECT_GE(rows.back().env_steps, 2048);
  EXPECT_EQ(rows.back().actors_alive, 2);
  const RolloutStoreReader store(run + "/rollouts.h5");
  EXPECT_GE(store.steps(), 2048u);
  // Actors reached the learner over TCP with CURVE (not loopback-only).
  EXPECT_TRUE(fs::exists(run + "/keys/learner.key"));
  EXPECT_NE(read_file_text(run + "/endpoints").find("tcp://"), std::string::npos);
  ASSERT_EQ(gw("launch status " + run, &out), 0) << out;
  EXPECT_NE(out.find("COMPLETED"), std::string::npos) << out;
}

// cancel stops a running job with a final checkpoint; submitting again
// resumes from it; the time-limit warning (SIGUSR1 to the batch shell)
// checkpoints and requeues the job, which resumes again.
TEST_F(ClusterLaunch, CancelResubmitAndRequeueResume) {
  const std::string cluster = cluster_file("cancel-resume", 10'000'000);
  const std::string run = run_of(cluster);
  std::string out;
  // Two learner ranks: srun passes the stop signals to both, and only
  // rank 0 may act on them.
  ASSERT_EQ(gw("launch " + cluster + " learner.ranks_per_node=2", &out), 0) << out;
  ASSERT_TRUE(wait_for(300, [&] { return read_metrics(run).size() >= 8; })) << diagnosis(run);
  ASSERT_EQ(gw("launch cancel " + run, &out), 0) << out;
  EXPECT_FALSE(active(job_state(run)));
  const std::string stopped_at = newest_checkpoint_of(run);
  ASSERT_FALSE(stopped_at.empty());
  const int64_t first_stop = checkpoint_update(stopped_at);
  // The final checkpoint is the learner's last update, not a periodic one.
  EXPECT_EQ(first_stop, read_metrics(run).back().update) << out;
  const uint64_t stored = RolloutStoreReader(run + "/rollouts.h5").steps();
  EXPECT_GT(stored, 0u);

  // Again, from the run folder's own copy of the cluster file.
  ASSERT_EQ(gw("launch " + run + "/slurm/cluster.yaml", &out), 0) << out;
  EXPECT_NE(out.find("resuming run"), std::string::npos) << out;
  ASSERT_TRUE(wait_for(300, [&] { return read_metrics(run).back().update > first_stop + 4; })) << diagnosis(run);
  EXPECT_NE(read_file_text(run + "/slurm/events.log").find("resuming from " + stopped_at), std::string::npos);
  // Updates go on from the checkpoint: no row is repeated or skipped.
  const std::vector<MetricsRow> rows = read_metrics(run);
  for (size_t i = 1; i < rows.size(); ++i) ASSERT_EQ(rows[i].update, rows[i - 1].update + 1) << "row " << i;

  // The time-limit warning.
  const std::string job = job_id_of(run);
  run_command("scancel --batch --signal=USR1 " + job, &out);
  ASSERT_TRUE(wait_for(120, [&] {
    return read_file_text(run + "/slurm/events.log").find("requeueing") != std::string::npos;
  })) << diagnosis(run);
  const int64_t requeued_at = checkpoint_update(newest_checkpoint_of(run));
  // Slurm holds a requeued job for two minutes; let it start sooner, but
  // not within the second of the requeue: slurmd compares a credential's
  // creation time with the old incarnation's revocation in whole seconds,
  // and refuses a start in the same second ("Job credential revoked"),
  // which fails the job.
  ASSERT_TRUE(wait_for(60, [&] { return job_state(run) == "PENDING"; })) << diagnosis(run);
  std::this_thread::sleep_for(std::chrono::seconds(3));
  run_command("scontrol update JobId=" + job + " StartTime=now", &out);
  ASSERT_TRUE(wait_for(300, [&] { return read_metrics(run).back().update > requeued_at + 4; })) << diagnosis(run);
  EXPECT_NE(read_file_text(run + "/slurm/events.log").find("(restart 1) started"), std::string::npos);
  EXPECT_NE(read_file_text(run + "/slurm/events.log").find("resuming from " + run + "/checkpoints/ckpt-" +
                                                           std::to_string(requeued_at)),
            std::string::npos)
      << read_file_text(run + "/slurm/events.log");
  ASSERT_EQ(gw("launch cancel " + run, &out), 0) << out;
  EXPECT_FALSE(active(job_state(run)));
}

// A learner that fails ends the job with a non-zero status: it does not
// hold its nodes.
TEST_F(ClusterLaunch, AFailedLearnerEndsTheJob) {
  const std::string dir = fresh("failing-learner-model");
  fs::create_directories(dir);
  // Valid to the launcher (a file), but not an ONNX model: the learner fails loading it.
  std::ofstream(dir + "/broken.onnx") << "not a model";
  const std::string cluster = cluster_file("failing-learner", 1000);
  std::string out;
  ASSERT_EQ(gw("launch " + cluster + " 'run.overrides=[\"train.graphs=[" + dir + "/broken.onnx]\"]'", &out), 0) << out;
  const std::string run = run_of(cluster);
  std::string state;
  EXPECT_TRUE(wait_for(120, [&] { return !active(state = job_state(run)); })) << state;
  EXPECT_EQ(state, "FAILED");
  EXPECT_NE(read_file_text(run + "/slurm/events.log").find("the learner failed"), std::string::npos)
      << read_file_text(run + "/slurm/events.log");
}

TEST(SlurmTime, EveryFormSlurmTakes) {
  EXPECT_EQ(slurm_time_seconds("90"), 90 * 60);
  EXPECT_EQ(slurm_time_seconds("10:30"), 10 * 60 + 30);
  EXPECT_EQ(slurm_time_seconds("2:00:05"), 2 * 3600 + 5);
  EXPECT_EQ(slurm_time_seconds("1-12"), 86400 + 12 * 3600);
  EXPECT_EQ(slurm_time_seconds("1-12:30"), 86400 + 12 * 3600 + 30 * 60);
  EXPECT_EQ(slurm_time_seconds("1-12:30:15"), 86400 + 12 * 3600 + 30 * 60 + 15);
  for (const char* bad : {"", "4h", "1-", "-5", "1:2:3:4", "01:00:00 ", "a"}) EXPECT_EQ(slurm_time_seconds(bad), -1) << bad;
}

}  // namespace
}  // namespace graphworld::testing
