// A PPO minibatch laid out at fixed sizes, for a minibatch step captured in
// a CUDA graph (learner/padded_ppo_gradients.h): a graph replays kernels of
// the shapes it recorded, while a minibatch's disjoint union of graphs
// (learner/observation_batch.h) has as many nodes, edges and candidate
// locations as its samples happen to have. So each count is rounded up to a
// capacity, and what is left over is padding that changes nothing:
//
//   - sample slots 0 .. samples-1 hold the samples (unused ones are empty
//     graphs choosing NO-OP), and one more slot, `samples`, is the padding's
//     own graph, so no real graph's means or sums see a padded row;
//   - padded nodes belong to that graph; padded edges join its first node to
//     itself; padded candidate locations belong to it too, and its padded
//     member rows name its first node and first candidate;
//   - every slot but a sample's has weight 0 in the loss and allows exactly
//     NO-OP, so its terms are finite (0 * inf would poison the sums) and add
//     nothing to the loss or the gradients.
//
// Capacities climb a ladder of four steps per doubling (2^k times 1, 1.25,
// 1.5, 1.75), so a run needs few captures and pads at most a quarter.
//
// Everything is written into three flat host arrays (floats, int64s and the
// xfer masks' bytes), so that a minibatch goes to the device in three copies.
// No tensor library types: learner/padded_ppo_gradients.cc makes tensors.
#pragma once

#include <cstdint>
#include <vector>

#include "env/gym/graph_env.h"
#include "learner/observation_batch.h"

namespace graphworld {

struct MinibatchCapacity {
  int64_t samples = 0;  // sample slots (the padding's graph comes on top)
  int64_t nodes = 0, edges = 0, candidates = 0, members = 0;
  bool operator==(const MinibatchCapacity& o) const {
    return samples == o.samples && nodes == o.nodes && edges == o.edges && candidates == o.candidates &&
           members == o.members;
  }
  bool operator!=(const MinibatchCapacity& o) const { return !(*this == o); }
};

// The smallest step of the capacity ladder that is at least n (n >= 1).
int64_t capacity_step(int64_t n);

// The capacity for a minibatch of `samples` slots whose union has these
// counts: each count plus one padded row (the padding's graph always has a
// node, an edge, a candidate and a member), rounded up the ladder.
MinibatchCapacity capacity_for(int64_t samples, const ObservationBatch& batch, const LocationCandidates& candidates);

// Where each field lies in the three flat arrays of a padded minibatch.
// Counts per field: nodes [nodes x kNodeFeatureDim], edges [edges x
// kEdgeFeatureDim], slots = samples + 1 [slots x kGlobalFeatureDim], and so on.
struct PaddedLayout {
  MinibatchCapacity capacity;
  int32_t num_xfers = 0;
  int64_t slots = 0;  // capacity.samples + 1
  // Offsets into the float array.
  int64_t node_features = 0, edge_features = 0, globals = 0;
  int64_t weight = 0, old_log_prob = 0, advantage = 0, value_target = 0;  // [slots] each
  int64_t taken = 0;  // [candidates]: 1 where the candidate is the location the sample took
  int64_t floats = 0;  // the array's length
  // Offsets into the int64 array.
  int64_t senders = 0, receivers = 0, edge_graph = 0;  // [edges] each
  int64_t node_graph = 0;                              // [nodes]
  int64_t xfer = 0;                                    // [slots]: the xfer each slot took (NO-OP = num_xfers)
  int64_t candidate_graph = 0;                         // [candidates]
  int64_t member_node = 0, member_candidate = 0;       // [members] each
  int64_t ints = 0;
  // The byte array: [slots x (num_xfers + 1)] xfer masks.
  int64_t mask_bytes = 0;
};
PaddedLayout padded_layout(const MinibatchCapacity& capacity, int32_t num_xfers);

// What PPO's loss needs of each sample beside its observation and action,
// in the samples' order. `weight` is the sample's weight in the loss (the
// minibatch's mean: 1 / count, times any scale).
struct PaddedTargets {
  std::vector<float> weight, old_log_prob, advantage, value_target;
};

// Writes the minibatch into the three arrays (of layout.floats, layout.ints
// and layout.mask_bytes elements). `batch` and `candidates` are the
// samples' union and the candidates of their actions' xfers
// (observation_batch.h); `actions` their actions. Throws UsageError when
// they do not fit the layout or disagree in count.
void write_padded_minibatch(const ObservationBatch& batch, const LocationCandidates& candidates,
                            const std::vector<Action>& actions, const PaddedTargets& targets,
                            const PaddedLayout& layout, float* floats, int64_t* ints, uint8_t* mask);

}  // namespace graphworld
