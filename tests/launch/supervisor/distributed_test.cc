// The distributed system as a user runs it: `graphworld train` starts a
// learner and two actor processes on loopback. Training learns; every
// step is in the HDF5 store; an actor killed with SIGKILL is
// restarted and rejoins; a learner killed with SIGKILL is restarted from
// its checkpoint, goes on with the run's counters, and the actors find it
// again; Ctrl-C stops everything
// within 10 s; garbage sent to the learner's sockets is counted and
// dropped. Tests end only the processes they started.
#include <gtest/gtest.h>
#include <signal.h>

#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <set>
#include <thread>

#include "common/config.h"
#include "common/rollout_store.h"
#include "common/stopwatch.h"
#include "common/transport.h"
#include "env/cost/cost_table.h"
#include "env/rules/rule_library.h"
#include "launch/runs/training_setup.h"
#include "learner/observation_replay.h"
#include "learner/training_checkpoint.h"
#include "learner/training_config.h"
#include "learner/wire_message.h"
#include "tests/launch/supervisor/distributed_test_support.h"

namespace graphworld {
namespace {

using namespace testing;

// Entries of `dir` (names only).
std::set<std::string> entries_of(const std::string& dir) {
  std::set<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) names.insert(e.path().filename().string());
  return names;
}

TEST(Distributed, ALearnerWithTwoActorsLearnsAndKeepsEveryStep) {
  const std::string run = fresh("dist-learn");
  std::string out;
  ASSERT_EQ(testing::run_command(train_command(run, 6144), &out), 0) << out;
  // Sockets are TCP on loopback: a run leaves nothing named after it in
  // /dev/shm or /tmp.
  std::string run_id = read_file(run + "/run_id");
  run_id = run_id.substr(0, run_id.find('\n'));
  ASSERT_FALSE(run_id.empty());
  for (const char* dir : {"/dev/shm", "/tmp"})
    for (const std::string& name : entries_of(dir)) EXPECT_EQ(name.find(run_id), std::string::npos) << dir << "/" << name;
  EXPECT_NE(out.find("finished after"), std::string::npos) << out;
  const std::vector<MetricsRow> rows = read_metrics(run);
  ASSERT_GE(rows.size(), 40u) << out;
  EXPECT_EQ(rows.back().env_steps, 6144);
  EXPECT_EQ(rows.back().actors_alive, 2) << out;
  EXPECT_LE(rows.back().lag, 2.0) << "actors should act with nearly current parameters";
  // Where the time went: the learner's parts add up to no more than its
  // wall time, and the actors (with their heartbeats) report theirs.
  const MetricsRow& end = rows.back();
  EXPECT_GT(end.time_update_s, 0);
  EXPECT_GT(end.time_ingest_s, 0);
  EXPECT_GE(end.time_store_s, 0);
  EXPECT_GT(end.time_broadcast_s, 0);
  EXPECT_LE(end.time_ingest_s + end.time_store_s + end.time_update_s + end.time_broadcast_s, end.wall_s * 1.05);
  EXPECT_GT(end.actors_collect_s, 0) << "the actors' times reach the metrics rows";
  EXPECT_GE(end.actors_wait_s, 0);
  EXPECT_GT(end.actors_send_s, 0);
  EXPECT_GT(end.actors_steps_sent, 0);
  // The first updates act with an untrained policy; the last ones must do
  // clearly better.
  double first = 0, last = 0;
  for (size_t i = 0; i < 4; ++i) first += rows[i].mean_reduction / 4;
  for (size_t i = rows.size() - 8; i < rows.size(); ++i) last += rows[i].mean_reduction / 8;
  EXPECT_GT(last, first + 2.0) << "mean episode reduction went from " << first << "% to " << last << "%";
  // Every step is in the store, readable, with valid fields.
  RolloutStoreReader store(run + "/rollouts.h5");
  EXPECT_EQ(store.steps(), 6144 + static_cast<int64_t>(rows.back().stale)) << "stale steps are stored too";
  EXPECT_EQ(store.info().graphs, std::vector<std::string>{"squeezenet1.1"});
  const std::vector<StoredStep> steps = store.read(0, store.steps());
  for (const StoredStep& s : steps) {
    ASSERT_LE(s.actor_id, 1u);
    ASSERT_EQ(s.graph_index, 0);
    ASSERT_GE(s.xfer, 0);
    ASSERT_LE(s.log_prob, 0.0f);
  }
  // `rollouts inspect` summarises the store.
  std::string summary;
  ASSERT_EQ(run_command(graphworld_binary() + " rollouts inspect " + run + "/rollouts.h5", &summary), 0) << summary;
  EXPECT_NE(summary.find("steps            " + std::to_string(store.steps()) + " "), std::string::npos) << summary;
  EXPECT_NE(summary.find("actors           2"), std::string::npos) << summary;
  EXPECT_NE(summary.find("squeezenet1.1"), std::string::npos) << summary;
  // Nothing is left running.
  EXPECT_EQ(find_process("actor --run " + run), 0);
  EXPECT_EQ(find_process("learner .*--run " + run), 0);
}

// Under the gpu cost model each actor counts the configurations it priced
// from the GPU's measured table and by the model, and the learner's metrics
// rows sum them over the actors.
TEST(Distributed, ARunOnTheGpuCostModelCountsTableHitsAcrossActors) {
  const std::string run = fresh("dist-gpu");
  std::string out;
  ASSERT_EQ(run_command(train_command(run, 1024, "env.cost_model=gpu"), &out), 0) << out;
  const std::vector<MetricsRow> rows = read_metrics(run);
  ASSERT_FALSE(rows.empty()) << out;
  EXPECT_GT(rows.back().cost_table_hits, 0) << "SqueezeNet's configurations are in the shipped H100 table";
  EXPECT_GE(rows.back().cost_model_fallbacks, 0) << "the row has no cost_model_fallbacks";
  EXPECT_TRUE(std::filesystem::exists(run + "/gpu_table")) << out;
}

// Measured costs differ by machine and by run; a distributed run prices from
// one table (RUN/cost_table), and what it lacks the learner settles once.
// Replaying every stored step against the final table gives back exactly the
// cost each actor recorded.
TEST(Distributed, ARunOnMeasuredCostsPricesEveryStepFromTheRunsOneTable) {
  const std::string run = fresh("dist-measured");
  const std::string cache = fresh("dist-measured-cache");
  std::string out;
  ASSERT_EQ(run_command("GRAPHWORLD_CACHE_DIR=" + cache + " " + train_command(run, 1024, "env.cost_model=measured"), &out), 0)
      << out;
  ASSERT_TRUE(std::filesystem::exists(run + "/cost_table")) << out;
  const std::vector<MetricsRow> rows = read_metrics(run);
  ASSERT_FALSE(rows.empty());
  EXPECT_GT(rows.back().costs_settled, 0)
      << "rewrites make configurations the training graph does not have; the learner settles them";

  const Config config = load_config(training_config_schema(), run + "/config.yaml", {});
  const TrainingOptions options = training_options_from(config);
  const std::vector<TrainingGraph> graphs = load_training_graphs(options.graphs);
  CostTableModel table("measured", read_cost_table(run + "/cost_table"), true, [](const OpCostKey& key) -> double {
    throw Error("the run's table lacks " + key.canonical());
  });
  const RuleMatcher matcher(default_rule_library().rules);
  ObservationReplay replay(graphs, matcher, table, options.collector.env);
  RolloutStoreReader store(run + "/rollouts.h5");
  const ReplayReport report = replay.replay(store.read(0, store.steps()), [](size_t, const Observation&) {});
  EXPECT_EQ(report.missed, 0);
  EXPECT_EQ(report.rebuilt, store.steps());
  EXPECT_EQ(report.cost_mismatches, 0) << "an actor priced a step otherwise than the run's table";
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
  // The store reads while the learner writes it.
  std::string summary;
  EXPECT_EQ(run_command(graphworld_binary() + " rollouts inspect --json " + run + "/rollouts.h5", &summary), 0) << summary;
  EXPECT_NE(summary.find("\"run_id\""), std::string::npos) << summary;
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
  // The counts the resumed learner must go on from: its checkpoint's row.
  const std::vector<MetricsRow> before_kill = read_metrics(run);
  const std::string checkpoint = std::filesystem::path(newest_checkpoint(run)).stem().string();  // ckpt-N
  const int64_t checkpointed = std::stoll(checkpoint.substr(checkpoint.find('-') + 1));
  ASSERT_GE(static_cast<int64_t>(before_kill.size()), checkpointed);
  const MetricsRow counted = before_kill[static_cast<size_t>(checkpointed - 1)];
  ASSERT_EQ(counted.update, checkpointed);
  ASSERT_GE(counted.joins, 1);
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
  // The run's counters went on from the checkpoint: the two actors'
  // reconnections add to the joins counted before it (a learner that
  // started its counts at 0 would show 2).
  const MetricsRow resumed = read_metrics(run).back();
  EXPECT_GE(resumed.joins, counted.joins + 2) << read_file(run + "/metrics.jsonl");
  // No actor held a rollout for a receipt the new learner never sends
  // (tests/actors/actor_restart_test.cc makes that race happen every time).
  EXPECT_EQ(read_file(log).find("no receipt for the last rollout"), std::string::npos) << read_file(log);
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
  int sent = 0;
  {
    ActorTransport intruder(endpoints, "intruder", {});
    // Control sends never wait: until the connection is up they fail.
    std::this_thread::sleep_for(std::chrono::seconds(1));
    std::mt19937_64 rng(3);
    for (int i = 0; i < 40; ++i) {
      std::string noise(8 * (1 + rng() % 512), '\0');
      for (char& c : noise) c = static_cast<char>(rng());
      Stopwatch clock;
      sent += intruder.send_trajectory(noise, [&] { return clock.elapsed_s() > 15; }) ? 1 : 0;
      sent += intruder.send_control(noise) ? 1 : 0;
    }
    // Well-formed but wrong: another schema version, another run, a
    // truncation, a chunk whose data does not match its checksum, and an
    // oversized blob; each to both sockets.
    std::string run_id = read_file(run + "/run_id");
    while (!run_id.empty() && std::isspace(static_cast<unsigned char>(run_id.back()))) run_id.pop_back();
    MessageHeader header;
    header.run_id = run_id;
    header.sender_id = 9;
    header.incarnation = 99;
    MessageHeader old_schema = header, other_run = header;
    old_schema.schema_version = kMessageSchemaVersion + 1;
    other_run.run_id = "another-run";
    std::string truncated = encode_message(Message{header, HelloMessage{"actor", "intruder", 1}});
    truncated.resize(truncated.size() / 2);
    ParameterChunkMessage chunk;
    chunk.chunk_count = 1;
    chunk.data = std::string(4096, 'p');
    chunk.total_bytes = chunk.data.size();
    std::string bad_checksum = encode_message(Message{header, chunk});
    bad_checksum[bad_checksum.size() - 100] ^= 0x5a;  // inside the data
    const std::vector<std::string> wrong = {
        encode_message(Message{old_schema, HeartbeatMessage{}}), encode_message(Message{other_run, HeartbeatMessage{}}),
        truncated, bad_checksum, std::string(size_t{4} << 20, '\x7f')};
    for (const std::string& bytes : wrong) {
      Stopwatch clock;
      sent += intruder.send_trajectory(bytes, [&] { return clock.elapsed_s() > 15; }) ? 1 : 0;
      sent += intruder.send_control(bytes) ? 1 : 0;
    }
    // The intruder stays connected until the learner has read them all (a
    // closing socket drops what it has not delivered). The learner reads
    // about one of them per update (queues of one message per sender).
    EXPECT_TRUE(wait_for(90, [&] {
      const std::vector<MetricsRow> rows = read_metrics(run);
      return !rows.empty() && rows.back().refused >= sent;
    })) << "sent " << sent << " bad messages\n" << read_file(log);
  }
  EXPECT_GE(sent, 85) << "of 90";
  const size_t rows_then = read_metrics(run).size();
  EXPECT_TRUE(wait_for(30, [&] { return read_metrics(run).size() >= rows_then + 2; })) << "training stopped";
  ::kill(launcher, SIGINT);
  EXPECT_TRUE(launcher_ended(launcher, 15)) << read_file(log);
}

}  // namespace
}  // namespace graphworld
