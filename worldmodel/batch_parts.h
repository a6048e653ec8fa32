// How world-model training cuts its episodes into batches, and the batches
// into parts that fit in memory. Only indices into an EpisodeSource: the
// tensors are built from them (WorldModel::Impl::batch) when a part is
// reached.
//
// Batches group episodes of similar length: sorted by length (ties in
// source order), cut where a batch's padded size, its longest episode
// times its episode count, would pass the batch size, or (with
// max_padding below 1) where its padding would pass that share of its
// padded size; an episode longer than the batch size is a batch of its
// own. Episodes without steps are left out.
//
// Parts: when every batch's padded steps fit in `resident_steps`, one part
// holds them all, in the order above. Otherwise the batches are shuffled
// (seeded) and dealt out in that order into parts of at most
// `resident_steps` padded steps each (a batch larger than that alone), so
// every part is a random share of the data rather than a run of episodes
// of one length.
//
// Torch-free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "worldmodel/episode_source.h"

namespace graphworld {

using EpisodeIndices = std::vector<size_t>;

std::vector<EpisodeIndices> batch_indices_by_length(const EpisodeSource& source, int64_t batch_steps,
                                                     double max_padding = 1.0);

class BatchParts {
 public:
  BatchParts(const EpisodeSource& source, int64_t batch_steps, int64_t resident_steps, uint64_t seed,
             double max_padding = 1.0);

  const EpisodeSource& source() const { return source_; }
  size_t parts() const { return parts_.size(); }
  // Part p's batches, each the indices of its episodes.
  const std::vector<EpisodeIndices>& part(size_t p) const { return parts_.at(p); }
  size_t batches() const { return batches_; }
  int64_t steps() const { return steps_; }               // padding excluded
  int64_t padded_steps() const { return padded_steps_; }  // longest episode times episodes, summed over batches

 private:
  const EpisodeSource& source_;
  std::vector<std::vector<EpisodeIndices>> parts_;
  size_t batches_ = 0;
  int64_t steps_ = 0, padded_steps_ = 0;
};

}  // namespace graphworld
