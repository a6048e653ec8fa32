// Checked files: written whole or not at all, and every kind of damage
// refused with a message that says which check failed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/checkpoint_file.h"
#include "common/error.h"
#include "tests/support/test_env.h"

namespace graphworld {
namespace {

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void overwrite(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

std::string refusal(const std::string& path, const std::string& kind) {
  try {
    read_checked_file(path, kind);
  } catch (const FormatError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(CheckedFile, RoundTripsAndLeavesNoTemporaryFile) {
  const std::string path = testing::scratch_dir() + "/a.ckpt";
  std::string payload(100000, '\0');
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>(i * 7);
  write_checked_file(path, "checkpoint", payload);
  EXPECT_EQ(read_checked_file(path, "checkpoint"), payload);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  write_checked_file(path, "checkpoint", "second");
  EXPECT_EQ(read_checked_file(path, "checkpoint"), "second");
}

TEST(CheckedFile, CorruptTruncatedForeignAndMissingFilesAreRefused) {
  const std::string path = testing::scratch_dir() + "/b.ckpt";
  write_checked_file(path, "checkpoint", "the parameters");
  const std::string good = bytes_of(path);
  std::string flipped = good;
  flipped.back() ^= 1;
  overwrite(path, flipped);
  EXPECT_NE(refusal(path, "checkpoint").find("checksum mismatch"), std::string::npos);
  overwrite(path, good.substr(0, good.size() - 3));
  EXPECT_NE(refusal(path, "checkpoint").find("truncated"), std::string::npos);
  overwrite(path, good.substr(0, 10));
  EXPECT_NE(refusal(path, "checkpoint").find("shorter than"), std::string::npos);
  overwrite(path, good + "x");
  EXPECT_NE(refusal(path, "checkpoint").find("trailing bytes"), std::string::npos);
  overwrite(path, "not a checkpoint at all, just text of some length....");
  EXPECT_NE(refusal(path, "checkpoint").find("bad magic"), std::string::npos);
  overwrite(path, good);
  EXPECT_NE(refusal(path, "policy").find("a checkpoint file, not a policy file"), std::string::npos);
  EXPECT_NE(refusal(path + ".missing", "checkpoint").find("cannot open"), std::string::npos);
}

TEST(CheckedFile, NumberedFilesListInOrderAndPruneToTheNewest) {
  const std::string dir = testing::scratch_dir() + "/numbered";
  std::filesystem::create_directories(dir);
  for (int n : {3, 10, 1, 2}) write_checked_file(dir + "/ckpt-" + std::to_string(n) + ".ckpt", "checkpoint", "x");
  overwrite(dir + "/ckpt-x.ckpt", "ignored");
  overwrite(dir + "/other-5.ckpt", "ignored");
  const auto listed = list_numbered_files(dir, "ckpt");
  ASSERT_EQ(listed.size(), 4u);
  EXPECT_EQ(std::filesystem::path(listed.front()).filename(), "ckpt-1.ckpt");
  EXPECT_EQ(std::filesystem::path(listed.back()).filename(), "ckpt-10.ckpt");
  prune_numbered_files(dir, "ckpt", 2);
  const auto kept = list_numbered_files(dir, "ckpt");
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(std::filesystem::path(kept[0]).filename(), "ckpt-3.ckpt");
  EXPECT_TRUE(std::filesystem::exists(dir + "/other-5.ckpt"));
}

}  // namespace
}  // namespace graphworld
