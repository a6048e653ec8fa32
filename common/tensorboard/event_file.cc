#include "common/tensorboard/event_file.h"

#include <chrono>
#include <filesystem>
#include <fstream>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/tensorboard/crc32c.h"
#include "event.pb.h"

namespace graphworld {
namespace {

void put_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xffu));
}

void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xffu));
}

uint64_t get_le(const std::string& bytes, size_t at, int width) {
  uint64_t v = 0;
  for (int i = width - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(bytes[at + static_cast<size_t>(i)]);
  return v;
}

// One record around `data`.
std::string frame_record(const std::string& data) {
  std::string out;
  out.reserve(data.size() + 16);
  put_u64(out, data.size());
  put_u32(out, mask_crc32c(crc32c(out.data(), 8)));
  out += data;
  put_u32(out, mask_crc32c(crc32c(data.data(), data.size())));
  return out;
}

std::string version_record(double wall_time) {
  tensorboard::Event event;
  event.set_wall_time(wall_time);
  event.set_file_version(kEventFileVersion);
  return frame_record(event.SerializeAsString());
}

std::string scalar_record(const ScalarEvent& scalars) {
  tensorboard::Event event;
  event.set_wall_time(scalars.wall_time);
  event.set_step(scalars.step);
  tensorboard::Summary* summary = event.mutable_summary();
  for (const auto& [tag, value] : scalars.values) {
    tensorboard::SummaryValue* v = summary->add_value();
    v->set_tag(tag);
    v->set_simple_value(value);
  }
  return frame_record(event.SerializeAsString());
}

// The records of `bytes` in order, each checked; parses them into `contents`
// and returns the byte length of the whole records read.
size_t parse_records(const std::string& path, const std::string& bytes, bool drop_cut_tail,
                     EventFileContents& contents) {
  size_t at = 0;
  while (at < bytes.size()) {
    const std::string where = path + ": record at byte " + std::to_string(at);
    if (bytes.size() - at < 12) {
      if (drop_cut_tail) break;
      throw FormatError(where + " is cut short (" + std::to_string(bytes.size() - at) +
                        " bytes, a header needs 12); the file was truncated");
    }
    const uint64_t length = get_le(bytes, at, 8);
    if (static_cast<uint32_t>(get_le(bytes, at + 8, 4)) != mask_crc32c(crc32c(bytes.data() + at, 8)))
      throw FormatError(where + ": the length's CRC does not match; the file is damaged");
    if (length > bytes.size() - at - 12 || bytes.size() - at - 12 - length < 4) {
      if (drop_cut_tail) break;
      throw FormatError(where + " is cut short (" + std::to_string(length) + " data bytes announced, " +
                        std::to_string(bytes.size() - at - 12) + " left); the file was truncated");
    }
    const char* data = bytes.data() + at + 12;
    if (static_cast<uint32_t>(get_le(bytes, at + 12 + length, 4)) != mask_crc32c(crc32c(data, length)))
      throw FormatError(where + ": the data's CRC does not match; the file is damaged");
    tensorboard::Event event;
    if (!event.ParseFromArray(data, static_cast<int>(length)))
      throw FormatError(where + ": the data is not a TensorBoard Event");
    if (contents.records == 0) {
      if (event.what_case() != tensorboard::Event::kFileVersion)
        throw FormatError(path + ": the first record is not the file version; not a TensorBoard event file");
      contents.file_version = event.file_version();
    } else if (event.what_case() == tensorboard::Event::kSummary) {
      ScalarEvent scalars;
      scalars.step = event.step();
      scalars.wall_time = event.wall_time();
      for (const tensorboard::SummaryValue& v : event.summary().value())
        scalars.values.emplace_back(v.tag(), v.simple_value());
      contents.scalars.push_back(std::move(scalars));
    }
    ++contents.records;
    at += 12 + length + 4;
  }
  return at;
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

std::string event_file_path(const std::string& run_dir) { return run_dir + "/events.out.tfevents.graphworld"; }

void append_scalar_event(const std::string& path, const ScalarEvent& event) {
  std::error_code ec;
  const bool fresh = !std::filesystem::exists(path) || std::filesystem::file_size(path, ec) == 0;
  std::ofstream out(path, std::ios::binary | std::ios::app);
  if (fresh) out << version_record(event.wall_time > 0 ? event.wall_time : now_s());
  out << scalar_record(event);
  if (!out.flush()) throw Error(path + ": write failed (disk full?)");
}

EventFileContents read_event_file(const std::string& path, bool drop_cut_tail) {
  if (!std::filesystem::exists(path)) throw Error(path + ": no such event file");
  const std::string bytes = read_file(path);
  EventFileContents contents;
  parse_records(path, bytes, drop_cut_tail, contents);
  if (contents.records == 0 && !drop_cut_tail) throw FormatError(path + ": empty; not a TensorBoard event file");
  return contents;
}

void filter_event_file(const std::string& path, const std::function<bool(const ScalarEvent&)>& keep) {
  if (!std::filesystem::exists(path)) return;
  const EventFileContents contents = read_event_file(path, /*drop_cut_tail=*/true);
  std::string out = version_record(now_s());
  for (const ScalarEvent& event : contents.scalars)
    if (keep(event)) out += scalar_record(event);
  write_file_atomically(path, out);
}

}  // namespace graphworld
