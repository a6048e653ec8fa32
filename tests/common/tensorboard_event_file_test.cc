// TensorBoard event files: the checksum against published values, every
// record's CRC, every scalar read back, damage found, and the records'
// fields checked by an independent decoder (protoc --decode_raw) against
// the field numbers of TensorFlow's event.proto and summary.proto.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "common/error.h"
#include "common/tensorboard/crc32c.h"
#include "common/tensorboard/event_file.h"
#include "tests/support/test_env.h"

namespace graphworld {
namespace {

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

uint64_t le(const std::string& b, size_t at, int width) {
  uint64_t v = 0;
  for (int i = width - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[at + static_cast<size_t>(i)]);
  return v;
}

std::vector<ScalarEvent> sample_events() {
  return {{64, 1700000000.25, {{"ppo/entropy", 1.5f}, {"reduction/best_pct/resnet18", 12.75f}}},
          {128, 1700000001.5, {{"ppo/entropy", 1.25f}, {"reduction/best_pct/resnet18", -3.0f}, {"progress/update", 2.0f}}},
          {192, 1700000002.0, {}}};
}

std::string fresh_file(const std::string& name) {
  const std::string path = testing::scratch_dir() + "/" + name;
  std::filesystem::remove(path);
  return path;
}

// RFC 3720 (iSCSI), appendix B.4: CRC-32C test vectors.
TEST(Crc32c, MatchesPublishedValues) {
  EXPECT_EQ(crc32c("123456789", 9), 0xe3069283u);
  const std::string zeros(32, '\0'), ones(32, '\xff');
  EXPECT_EQ(crc32c(zeros.data(), zeros.size()), 0x8a9136aau);
  EXPECT_EQ(crc32c(ones.data(), ones.size()), 0x62a8ab43u);
  std::string ascending;
  for (int i = 0; i < 32; ++i) ascending.push_back(static_cast<char>(i));
  EXPECT_EQ(crc32c(ascending.data(), ascending.size()), 0x46dd794eu);
  // The mask: rotate right by 15, add 0xa282ead8, by hand for 0xe3069283:
  // ror15 = (0xe3069283 >> 15) | (0xe3069283 << 17) = 0x0001c60d | 0x25060000.
  EXPECT_EQ(mask_crc32c(0xe3069283u), 0x2507c60du + 0xa282ead8u);
}

TEST(EventFile, EveryRecordChecksAndEveryScalarComesBack) {
  const std::string path = fresh_file("events.out.tfevents.roundtrip");
  for (const ScalarEvent& e : sample_events()) append_scalar_event(path, e);

  // Walk the records by hand: lengths, both CRCs, nothing left over.
  const std::string bytes = bytes_of(path);
  size_t at = 0;
  int records = 0;
  while (at < bytes.size()) {
    ASSERT_GE(bytes.size() - at, 16u);
    const uint64_t length = le(bytes, at, 8);
    EXPECT_EQ(le(bytes, at + 8, 4), mask_crc32c(crc32c(bytes.data() + at, 8))) << "record " << records;
    ASSERT_LE(at + 12 + length + 4, bytes.size());
    EXPECT_EQ(le(bytes, at + 12 + length, 4), mask_crc32c(crc32c(bytes.data() + at + 12, length))) << "record " << records;
    at += 12 + length + 4;
    ++records;
  }
  EXPECT_EQ(at, bytes.size());
  EXPECT_EQ(records, 4);  // the version record and three events

  const EventFileContents contents = read_event_file(path);
  EXPECT_EQ(contents.file_version, "brain.Event:2");
  EXPECT_EQ(contents.records, 4);
  const std::vector<ScalarEvent> expected = sample_events();
  ASSERT_EQ(contents.scalars.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(contents.scalars[i].step, expected[i].step);
    EXPECT_DOUBLE_EQ(contents.scalars[i].wall_time, expected[i].wall_time);
    EXPECT_EQ(contents.scalars[i].values, expected[i].values) << "event " << i;
  }
}

TEST(EventFile, DamageIsFoundWithItsOffset) {
  const std::string path = fresh_file("events.out.tfevents.damaged");
  for (const ScalarEvent& e : sample_events()) append_scalar_event(path, e);
  const std::string good = bytes_of(path);
  const uint64_t first = 12 + le(good, 0, 8) + 4;  // where the second record starts

  std::string flipped = good;
  flipped[first + 14] = static_cast<char>(flipped[first + 14] ^ 0x01);  // a data byte of record 2
  write_bytes(path, flipped);
  try {
    read_event_file(path);
    FAIL() << "a flipped data byte was not found";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("byte " + std::to_string(first)), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("CRC"), std::string::npos) << e.what();
  }

  std::string length_damaged = good;
  length_damaged[first + 2] = static_cast<char>(length_damaged[first + 2] ^ 0x10);
  write_bytes(path, length_damaged);
  EXPECT_THROW(read_event_file(path), FormatError);

  // A record cut short at the end: an error, or dropped when asked.
  write_bytes(path, good.substr(0, good.size() - 5));
  EXPECT_THROW(read_event_file(path), FormatError);
  EXPECT_EQ(read_event_file(path, /*drop_cut_tail=*/true).scalars.size(), 2u);

  write_bytes(path, "not an event file at all, but long enough to hold a header");
  EXPECT_THROW(read_event_file(path), FormatError);
}

TEST(EventFile, FilterKeepsTheChosenEventsAndDropsACutTail) {
  const std::string path = fresh_file("events.out.tfevents.filter");
  for (const ScalarEvent& e : sample_events()) append_scalar_event(path, e);
  const std::string bytes = bytes_of(path);
  write_bytes(path, bytes.substr(0, bytes.size() - 3));  // a crash mid-write
  filter_event_file(path, [](const ScalarEvent& e) { return e.step <= 128; });
  const EventFileContents kept = read_event_file(path);
  ASSERT_EQ(kept.scalars.size(), 2u);
  EXPECT_EQ(kept.scalars[1].step, 128);
  EXPECT_EQ(kept.scalars[1].values, sample_events()[1].values);
  append_scalar_event(path, sample_events()[2]);  // appending goes on after a rewrite
  EXPECT_EQ(read_event_file(path).scalars.size(), 3u);
}

// protoc's raw decoder knows nothing of graphworld's event.proto: what it
// prints is the wire format's field numbers and values, which must be
// TensorFlow's: Event.wall_time 1 (double), step 2, file_version 3,
// summary 5; Summary.value 1; Value.tag 1, simple_value 2 (float).
TEST(EventFile, FieldsAreTensorBoardsByAnIndependentDecoder) {
  std::string out;
  if (testing::run_command("command -v protoc", &out) != 0) GTEST_SKIP() << "protoc is not installed";
  const std::string path = fresh_file("events.out.tfevents.decode");
  append_scalar_event(path, {7, 1700000000.0, {{"ppo/entropy", 1.5f}, {"reduction/best_pct/bert", 0.0f}}});
  const std::string bytes = bytes_of(path);
  const uint64_t first_length = le(bytes, 0, 8);
  const std::string version = bytes.substr(12, first_length);
  const size_t second = 12 + first_length + 4;
  const std::string scalar = bytes.substr(second + 12, le(bytes, second, 8));
  const std::string version_file = path + ".version.bin", scalar_file = path + ".scalar.bin";
  write_bytes(version_file, version);
  write_bytes(scalar_file, scalar);

  ASSERT_EQ(testing::run_command("protoc --decode_raw < " + version_file, &out), 0) << out;
  EXPECT_NE(out.find("3: \"brain.Event:2\""), std::string::npos) << out;
  ASSERT_EQ(testing::run_command("protoc --decode_raw < " + scalar_file, &out), 0) << out;
  EXPECT_NE(out.find("1: 0x41d954fc40000000"), std::string::npos) << out;  // 1700000000.0 as a double
  EXPECT_NE(out.find("2: 7\n"), std::string::npos) << out;
  EXPECT_NE(out.find("5 {\n  1 {\n    1: \"ppo/entropy\"\n    2: 0x3fc00000\n  }\n"), std::string::npos) << out;
  // A zero is written too (simple_value is in a oneof, as in summary.proto):
  // a value without it is one TensorBoard drops.
  EXPECT_NE(out.find("  1 {\n    1: \"reduction/best_pct/bert\"\n    2: 0x00000000\n  }\n}"), std::string::npos) << out;
}

}  // namespace
}  // namespace graphworld
