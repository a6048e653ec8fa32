// The messages of the actor–learner system (common/schema/messages.capnp),
// as C++ values, and their encoding.
//
// decode_message() is the only way bytes from a socket become a value, and
// it trusts nothing: the Cap'n Proto structure is read under a traversal
// limit, the header must name this schema version and this run, and every
// field is checked against the invariants its user relies on (column
// lengths, index ranges, finite floats, the mask allowing the taken
// action, chunk checksums). A message failing any check comes back as an
// error string for the receiver to count and drop; it never throws and
// never hands out a half-checked value.
//
// Parameters travel as chunks (split_parameters) and are put back together
// by a ParameterAssembler, which keeps at most one version in progress.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "learner/rollout.h"

namespace graphworld {

// Bump when messages.capnp changes meaning; peers on another version are
// refused, never half-understood.
inline constexpr uint32_t kMessageSchemaVersion = 3;
inline constexpr uint32_t kLearnerSenderId = 0xffffffffu;
// Parameter chunks stay far below Cap'n Proto's 64 MiB default traversal limit.
inline constexpr size_t kParameterChunkBytes = size_t{1} << 20;

struct MessageHeader {
  uint32_t schema_version = kMessageSchemaVersion;
  std::string run_id;
  uint32_t sender_id = 0;
  uint64_t incarnation = 0;
  int64_t policy_version = 0;
  int64_t sent_unix_ns = 0;
};

struct HelloMessage {
  std::string role;  // "actor"
  std::string hostname;
  uint32_t pid = 0;
};
struct HeartbeatMessage {
  uint64_t steps_sent = 0;
  uint64_t rss_bytes = 0;
};
struct StopMessage {
  std::string reason;
};
struct ParameterRequestMessage {
  int64_t have_version = -1;  // -1: none yet
};
struct ParameterChunkMessage {
  int64_t version = 0;
  uint32_t chunk_index = 0, chunk_count = 0;
  uint64_t total_bytes = 0;
  uint64_t blob_checksum = 0;  // word_checksum_64 of the whole blob
  std::string data;            // its checksum is verified by decode_message()
};
// The learner's count of trajectory messages it has taken from the receiving
// actor's current incarnation (see Receipt in messages.capnp).
struct ReceiptMessage {
  uint64_t trajectories_taken = 0;
};
// One op configuration's price (see CostEntry in messages.capnp).
// kUnknownCost from an actor asks for the run's price; from the learner it
// says there is none yet.
inline constexpr double kUnknownCost = -1.0;
struct CostEntryMessage {
  std::string key;  // OpCostKey::canonical()
  double ms = 0;
};
struct MetricsMessage {
  std::vector<std::string> names;
  std::vector<double> values;
};

// A dream actor's rollout in a model-based run (DreamTrajectory in
// messages.capnp): `steps` steps of `rows` dream environments, step-major
// (entry t * rows + j is row j's step t).
struct DreamTrajectoryMessage {
  int64_t world_model = 0;  // the world model's generation
  int32_t rows = 0, steps = 0;
  int32_t latent_dim = 0, hidden_dim = 0, actions = 0;  // actions: the model's rules + NO-OP
  std::vector<float> z, h;          // [steps * rows * latent_dim], [steps * rows * hidden_dim]
  std::vector<uint8_t> mask;        // [steps * rows * actions]
  std::vector<int32_t> action;      // [steps * rows]
  std::vector<float> log_prob, value, reward;
  std::vector<uint8_t> done;
  std::vector<float> bootstrap;     // [rows]
  uint64_t episodes = 0;            // dream episodes ended in it
  double return_sum = 0;            // their predicted reductions, summed (percent)
  uint64_t parameters_from = 0;     // the learner incarnation whose parameters acted
  int64_t dream_steps() const { return int64_t{rows} * steps; }
};

using MessageBody = std::variant<HelloMessage, HeartbeatMessage, StopMessage, Rollout, ParameterChunkMessage,
                                 ParameterRequestMessage, MetricsMessage, ReceiptMessage, CostEntryMessage,
                                 DreamTrajectoryMessage>;

struct Message {
  MessageHeader header;
  MessageBody body;
};

// A name for the body's kind ("hello", "trajectory", ...), for logs and counters.
const char* message_kind(const MessageBody& body);

// The bytes of one message: a Cap'n Proto flat array (a whole number of
// 8-byte words).
std::string encode_message(const Message& message);

// What a receiver knows, to check a message against.
struct MessageExpectations {
  std::string run_id;
  int32_t num_xfers = 0;      // observations must come from this rule library
  int32_t num_graphs = 0;     // graph indices in trajectories must be below this
  int64_t max_steps = int64_t{1} << 20;  // steps in one trajectory message
  int64_t max_dream_steps = int64_t{1} << 20;  // rows x steps in one dream trajectory
  uint64_t parameters_from = 0;  // this learner's incarnation: trajectories made with another's are refused (0: any)
  size_t max_message_bytes = size_t{512} << 20;
  uint64_t max_parameter_bytes = uint64_t{1} << 30;
};

struct DecodeResult {
  std::optional<Message> message;  // set if and only if error is empty
  std::string error;               // what was wrong and where, for the log
};

// Never throws for any input bytes.
DecodeResult decode_message(std::span<const uint8_t> bytes, const MessageExpectations& expect);
// The same, for a message as the transport delivers it.
inline DecodeResult decode_message(const std::string& bytes, const MessageExpectations& expect) {
  return decode_message(std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), expect);
}

// An observation's internal consistency (sizes, index ranges, finite
// features, the location tables); empty if it holds. Used on every
// received observation.
std::string observation_problem(const Observation& observation, int32_t expected_num_xfers);
// (It also requires NO-OP to be allowed and features within +-1e7.)

// The chunks of one parameter version, each at most chunk_bytes of `blob`.
std::vector<ParameterChunkMessage> split_parameters(int64_t version, const std::string& blob,
                                                    size_t chunk_bytes = kParameterChunkBytes);

// Puts chunks back together. Chunks of a newer version than the one in
// progress replace it; older or inconsistent ones are refused. Memory is one
// version's blob.
class ParameterAssembler {
 public:
  explicit ParameterAssembler(uint64_t max_bytes = uint64_t{1} << 30) : max_bytes_(max_bytes) {}

  enum class Outcome {
    kPartial,   // stored; more chunks to come
    kComplete,  // the version is whole: take() returns it
    kStale,     // of a version already assembled or older: ignored
    kRefused,   // inconsistent: *why says how
  };
  Outcome add(const ParameterChunkMessage& chunk, std::string* why);
  // The completed blob (moves it out); only after add() said kComplete.
  std::string take() { return std::move(blob_); }
  int64_t version() const { return version_; }

 private:
  uint64_t max_bytes_;
  int64_t version_ = -1;
  uint32_t chunk_count_ = 0;
  uint64_t total_bytes_ = 0, blob_checksum_ = 0;
  uint32_t received_ = 0;
  std::vector<uint8_t> have_;
  std::string blob_;
  bool complete_ = false;
};

}  // namespace graphworld
