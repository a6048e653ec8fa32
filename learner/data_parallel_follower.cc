#include "learner/data_parallel_follower.h"

#include <cstring>
#include <iostream>

#include "common/error.h"
#include "learner/compute_device.h"
#include "learner/compute_threads.h"
#include "learner/data_parallel.h"
#include "learner/ppo_learner.h"
#include "learner/wire_message.h"

namespace graphworld {
namespace {

// 'B', then per message an 8-byte length and its bytes; or 'S'.
constexpr char kBatch = 'B', kStop = 'S';

std::vector<std::string> decode_follower_batch(const std::string& payload) {
  std::vector<std::string> messages;
  size_t at = 1;
  while (at < payload.size()) {
    uint64_t n = 0;
    if (at + sizeof(n) > payload.size()) throw FormatError("data-parallel batch: a truncated length");
    std::memcpy(&n, payload.data() + at, sizeof(n));
    at += sizeof(n);
    if (n > payload.size() - at) throw FormatError("data-parallel batch: a message runs past the end");
    messages.emplace_back(payload.substr(at, n));
    at += n;
  }
  return messages;
}

}  // namespace

std::string encode_follower_batch(const std::vector<std::string>& messages) {
  std::string payload(1, kBatch);
  for (const std::string& m : messages) {
    const uint64_t n = m.size();
    payload.append(reinterpret_cast<const char*>(&n), sizeof(n));
    payload += m;
  }
  return payload;
}

std::string follower_stop() { return std::string(1, kStop); }

FollowerCounters follow_data_parallel(DataParallelGroup& group, const TrainingOptions& options, int32_t num_graphs) {
  ComputeThreads threads(options.threads);
  // Each rank on its own device: srun --gpus-per-task shows a rank one GPU.
  const ResolvedDevice device = resolve_compute_device(options.device, "train.device", group.rank());
  if (!device.note.empty()) std::cerr << "learner rank " << group.rank() << ": " << device.note << "\n";
  PpoLearner learner(options.network, options.ppo, device.device);
  std::string run_id, state;
  group.broadcast_bytes(run_id);
  group.broadcast_bytes(state);
  learner.restore_state(state, "rank 0's learner state");
  learner.set_data_parallel(&group);
  MessageExpectations expect;
  expect.run_id = run_id;
  expect.num_xfers = options.network.num_xfers;
  expect.num_graphs = num_graphs;
  expect.max_steps = int64_t{options.collector.num_envs} * options.collector.steps_per_env;
  FollowerCounters counters;
  while (true) {
    std::string payload;
    group.broadcast_bytes(payload);
    if (payload.empty()) throw FormatError("data-parallel learners: rank 0 sent an empty payload");
    if (payload[0] == kStop) break;
    if (payload[0] != kBatch) throw FormatError("data-parallel learners: rank 0 sent an unknown payload");
    std::vector<Rollout> rollouts;
    for (const std::string& bytes : decode_follower_batch(payload)) {
      DecodeResult r = decode_message(bytes, expect);
      // Rank 0 checked these already: a failure here is a bug or a mismatch
      // of configs between the ranks, and the ranks must not go on apart.
      if (!r.message || !std::holds_alternative<Rollout>(r.message->body))
        throw FormatError("data-parallel learners: a batch message from rank 0 does not decode here (" + r.error +
                          "); do all ranks run the same config and rule library?");
      Rollout rollout = std::get<Rollout>(std::move(r.message->body));
      rollout.policy_version = r.message->header.policy_version;
      rollouts.push_back(std::move(rollout));
    }
    std::vector<const Rollout*> batch;
    for (const Rollout& r : rollouts) batch.push_back(&r);
    counters.samples += learner.update(batch).samples;
    ++counters.updates;
  }
  return counters;
}

}  // namespace graphworld
