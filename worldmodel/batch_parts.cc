#include "worldmodel/batch_parts.h"

#include <algorithm>
#include <numeric>
#include <random>

#include "common/error.h"

namespace graphworld {

std::vector<EpisodeIndices> batch_indices_by_length(const EpisodeSource& source, int64_t batch_steps,
                                                     double max_padding) {
  EpisodeIndices order;
  for (size_t i = 0; i < source.size(); ++i)
    if (source.steps(i) > 0) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return source.steps(a) < source.steps(b); });
  std::vector<EpisodeIndices> out;
  int64_t in_batch = 0;  // the current batch's steps, padding excluded
  for (size_t i : order) {
    const int64_t length = source.steps(i);  // the longest so far: sorted
    const int64_t padded = length * static_cast<int64_t>(out.empty() ? 1 : out.back().size() + 1);
    const bool too_big = padded > batch_steps;
    const bool too_padded = static_cast<double>(padded - in_batch - length) > max_padding * static_cast<double>(padded);
    if (out.empty() || too_big || too_padded) {
      out.emplace_back();
      in_batch = 0;
    }
    out.back().push_back(i);
    in_batch += length;
  }
  return out;
}

BatchParts::BatchParts(const EpisodeSource& source, int64_t batch_steps, int64_t resident_steps, uint64_t seed,
                       double max_padding)
    : source_(source) {
  if (batch_steps < 1 || resident_steps < 1)
    throw UsageError("world-model batches need batch steps >= 1 and resident steps >= 1");
  std::vector<EpisodeIndices> batches = batch_indices_by_length(source, batch_steps, max_padding);
  batches_ = batches.size();
  std::vector<int64_t> padded(batches.size(), 0);
  for (size_t b = 0; b < batches.size(); ++b) {
    int64_t longest = 0;
    for (size_t i : batches[b]) {
      steps_ += source.steps(i);
      longest = std::max(longest, source.steps(i));
    }
    padded[b] = longest * static_cast<int64_t>(batches[b].size());
    padded_steps_ += padded[b];
  }
  if (batches.empty()) return;
  if (padded_steps_ <= resident_steps) {
    parts_.push_back(std::move(batches));
    return;
  }
  std::vector<size_t> dealt(batches.size());
  std::iota(dealt.begin(), dealt.end(), 0);
  std::mt19937_64 rng(seed);
  std::shuffle(dealt.begin(), dealt.end(), rng);
  int64_t in_part = 0;
  for (size_t b : dealt) {
    if (parts_.empty() || in_part + padded[b] > resident_steps) {
      parts_.emplace_back();
      in_part = 0;
    }
    parts_.back().push_back(std::move(batches[b]));
    in_part += padded[b];
  }
}

}  // namespace graphworld
