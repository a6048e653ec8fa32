// The row operations message passing is made of, with their gradients:
// gathering rows by index (an edge reads its end nodes), summing rows into
// segments (a node sums its edges, a graph its nodes), and the sums of
// gathered rows that the first layer of an MLP over a concatenation becomes
// when each part is projected on its own rows. Internal to learner/ (it
// takes tensors).
//
// Why not ATen's index_select and index_add: on the CPU this LibTorch's
// index_add over rows runs one dispatched add per row, and a PPO minibatch's
// backward pass sums hundreds of thousands of rows of 32 floats; that loop
// was most of a minibatch's time outside matrix products. Here a row is a
// plain loop over floats, and gathers, sums, bias and ReLU share one pass.
// On other devices (and for other dtypes) ATen's operators run, whose
// kernels there are one launch per call.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <vector>

namespace graphworld {

// out[i] = values[index[i]]: [index.size(0), ...] from [rows, ...].
torch::Tensor gather_rows(const torch::Tensor& values, const torch::Tensor& index);

// out[s] = sum of values[i] over every i with index[i] == s: [segments, ...]
// from [index.size(0), ...]. index values must be in [0, segments).
torch::Tensor segment_sum(const torch::Tensor& values, const torch::Tensor& index, int64_t segments);

// One term of a gathered sum: columns [column, column + width) of
// values[value], row index[i] for output row i (row i itself when index is
// undefined).
struct GatherTerm {
  int32_t value = 0;
  int64_t column = 0;
  torch::Tensor index;
};

// out[i] = bias + the sum over `terms` of their rows: [rows, width] with
// width = bias.size(0); max(0, that) with `relu`. Values are 2-D float
// tensors; several terms may read column blocks of one value (a product of
// a node's embedding with the sender's and the receiver's weights at once).
torch::Tensor gathered_sum(const std::vector<torch::Tensor>& values, const std::vector<GatherTerm>& terms,
                           const torch::Tensor& bias, int64_t rows, bool relu = false);
// The common case: term k reads all of values[k] by indices[k].
torch::Tensor gathered_sum(const std::vector<torch::Tensor>& values, const std::vector<torch::Tensor>& indices,
                           const torch::Tensor& bias, int64_t rows, bool relu = false);

// [nodes, 3H]: each node's embedding, the sum of the edges it receives and
// the sum of the edges it sends (h [nodes, H], edges [E, H]): a node
// update's inputs side by side, for one matrix product.
torch::Tensor node_inputs(const torch::Tensor& nodes, const torch::Tensor& edges, const torch::Tensor& senders,
                          const torch::Tensor& receivers);

// While one of these lives on a thread, the operators above on that thread
// are ATen's (index_select, index_add, cat, adds), as the network computed
// before these kernels: the reference the benchmark and the gradient tests
// compare against.
class AtenRowOps {
 public:
  AtenRowOps();
  ~AtenRowOps();
  AtenRowOps(const AtenRowOps&) = delete;
  AtenRowOps& operator=(const AtenRowOps&) = delete;

  // Whether one lives on this thread.
  static bool active();

 private:
  bool previous_;
};

}  // namespace graphworld
