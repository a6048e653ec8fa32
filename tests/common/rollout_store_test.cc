// The HDF5 rollout store: what is written reads back exactly; a reader in
// another process sees flushed steps while the writer is still appending,
// and never an unflushed one; a writer killed with SIGKILL leaves a file
// whose flushed steps are intact and which resume() continues; wrong files
// and runs are refused with their errors.
#include "common/rollout_store.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "common/error.h"
#include "tests/support/test_env.h"

namespace graphworld {
namespace {

std::string fresh_path(const std::string& name) {
  const std::string dir = testing::scratch_dir() + "/rollout_store";
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/" + name + ".h5";
  std::filesystem::remove(path);
  return path;
}

RolloutStoreInfo sample_info() {
  RolloutStoreInfo info;
  info.run_id = "run-42";
  info.graphs = {"squeezenet1.1", "/data/models/resnet50_bn.onnx"};
  info.num_xfers = 1275;
  info.config_text = "train:\n  seed: 3\n";
  return info;
}

// Steps with every field varied, so a column mix-up shows.
std::vector<StoredStep> sample_steps(int64_t begin, int64_t count) {
  std::vector<StoredStep> steps;
  for (int64_t i = begin; i < begin + count; ++i) {
    StoredStep s;
    s.actor_id = static_cast<uint32_t>(i % 7);
    s.env_slot = static_cast<int32_t>(i % 5);
    s.policy_version = i / 3;
    s.graph_index = static_cast<int32_t>(i % 2);
    s.episode_seed = 0x9e3779b97f4a7c15ull * static_cast<uint64_t>(i + 1);
    s.episode_step = static_cast<int32_t>(i % 50);
    s.xfer = static_cast<int32_t>((i * 31) % 1276);
    s.location = static_cast<int32_t>(i % 13);
    s.reward = 0.25f * static_cast<float>(i % 9) - 1.0f;
    s.done = static_cast<uint8_t>(i % 50 == 49);
    s.cost_ms = 60.0 - 0.001 * static_cast<double>(i);
    s.log_prob = -0.01f * static_cast<float>(i % 100);
    s.value = 0.5f * static_cast<float>(i % 11);
    steps.push_back(s);
  }
  return steps;
}

TEST(RolloutStore, WhatIsWrittenReadsBackExactly) {
  const std::string path = fresh_path("roundtrip");
  {
    auto writer = RolloutStoreWriter::create(path, sample_info(), {.chunk_steps = 100, .flush_every_s = 1e9});
    const auto a = sample_steps(0, 250), b = sample_steps(250, 1);
    writer->append(a);
    writer->append(b);
    writer->append(std::span<const StoredStep>());
    EXPECT_EQ(writer->steps(), 251);
  }  // the destructor flushes and closes
  RolloutStoreReader reader(path);
  EXPECT_EQ(reader.steps(), 251);
  EXPECT_EQ(reader.read(0, 251), sample_steps(0, 251));
  EXPECT_EQ(reader.read(200, 10), sample_steps(200, 10));
  EXPECT_EQ(reader.info().run_id, "run-42");
  EXPECT_EQ(reader.info().graphs, sample_info().graphs);
  EXPECT_EQ(reader.info().num_xfers, 1275);
  EXPECT_EQ(reader.info().config_text, sample_info().config_text);
  EXPECT_THROW(reader.read(250, 2), UsageError);
  EXPECT_THROW(RolloutStoreWriter::create(path, sample_info()), Error) << "an existing store must not be overwritten";
}

// Runs `body` in a child process; returns its pid. The child never returns.
template <typename F>
pid_t in_child(F body) {
  const pid_t pid = fork();
  if (pid == 0) {
    try {
      body();
    } catch (...) {
      _exit(3);
    }
    _exit(0);
  }
  return pid;
}

int wait_for(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

// One byte through a pipe: a step of the protocol between two processes.
void signal_pipe(int fd) {
  const char c = 1;
  ASSERT_EQ(write(fd, &c, 1), 1);
}
void await_pipe(int fd) {
  char c = 0;
  ASSERT_EQ(read(fd, &c, 1), 1);
}

TEST(RolloutStore, AnotherProcessReadsFlushedStepsWhileTheWriterAppends) {
  const std::string path = fresh_path("swmr");
  int to_reader[2], to_writer[2];
  ASSERT_EQ(pipe(to_reader), 0);
  ASSERT_EQ(pipe(to_writer), 0);
  const pid_t writer = in_child([&] {
    auto store = RolloutStoreWriter::create(path, sample_info(), {.chunk_steps = 64, .flush_every_s = 1e9});
    store->append(sample_steps(0, 1000));
    store->flush();
    signal_pipe(to_reader[1]);  // 1000 flushed
    await_pipe(to_writer[0]);
    store->append(sample_steps(1000, 500));  // not flushed yet
    signal_pipe(to_reader[1]);
    await_pipe(to_writer[0]);
    store->flush();
    signal_pipe(to_reader[1]);  // 1500 flushed
    await_pipe(to_writer[0]);
    store->close();
  });
  await_pipe(to_reader[0]);
  RolloutStoreReader reader(path);
  EXPECT_EQ(reader.steps(), 1000);
  EXPECT_EQ(reader.read(0, 1000), sample_steps(0, 1000));
  signal_pipe(to_writer[1]);
  await_pipe(to_reader[0]);
  reader.refresh();
  EXPECT_EQ(reader.steps(), 1000) << "unflushed steps must not be visible";
  signal_pipe(to_writer[1]);
  await_pipe(to_reader[0]);
  reader.refresh();
  EXPECT_EQ(reader.steps(), 1500);
  EXPECT_EQ(reader.read(900, 600), sample_steps(900, 600));
  signal_pipe(to_writer[1]);
  EXPECT_EQ(wait_for(writer), 0);
}

TEST(RolloutStore, AWriterKilledMidRunLeavesItsFlushedStepsAndResumeContinues) {
  const std::string path = fresh_path("crash");
  int flushed[2];
  ASSERT_EQ(pipe(flushed), 0);
  const pid_t writer = in_child([&] {
    auto store = RolloutStoreWriter::create(path, sample_info(), {.chunk_steps = 128, .flush_every_s = 1e9});
    store->append(sample_steps(0, 3000));
    store->flush();
    store->append(sample_steps(3000, 777));  // lost with the process
    signal_pipe(flushed[1]);
    pause();  // killed here, with the file open for writing
  });
  await_pipe(flushed[0]);
  kill(writer, SIGKILL);
  const int status = wait_for(writer);
  ASSERT_TRUE(WIFSIGNALED(status));

  {
    RolloutStoreReader reader(path);  // SWMR readers open a file still marked open
    EXPECT_EQ(reader.steps(), 3000);
    EXPECT_EQ(reader.read(0, 3000), sample_steps(0, 3000));
  }
  EXPECT_THROW(RolloutStoreWriter::resume(path, "another-run"), FormatError);
  {
    auto store = RolloutStoreWriter::resume(path, "run-42", {.chunk_steps = 128, .flush_every_s = 1e9});
    EXPECT_EQ(store->steps(), 3000) << "the unflushed tail is dropped";
    store->append(sample_steps(3000, 400));
    store->close();
  }
  RolloutStoreReader reader(path);
  EXPECT_EQ(reader.steps(), 3400);
  EXPECT_EQ(reader.read(0, 3400), sample_steps(0, 3400));
}

TEST(RolloutStore, FilesThatAreNotStoresAreRefusedNamingTheFile) {
  const std::string text = fresh_path("not_hdf5");
  std::ofstream(text) << "hello";
  try {
    RolloutStoreReader reader(text);
    FAIL() << "a text file was read as a store";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
  EXPECT_THROW(RolloutStoreReader(fresh_path("missing")), FormatError);
  EXPECT_THROW(RolloutStoreWriter::resume(fresh_path("missing2"), "run-42"), Error);
}

}  // namespace
}  // namespace graphworld
