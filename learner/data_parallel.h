// Data-parallel learner ranks: several learner processes (across nodes,
// or one per GPU) that keep identical parameters by averaging gradients
// with LibTorch's c10d process groups: gloo, on CPUs and as the group's
// messenger everywhere; learners on GPUs sum their gradients with NCCL
// (learner/nccl_all_reduce.h) where the build has it.
//
// Rank 0 is the learner the actors know: it receives trajectories, keeps
// the store, checkpoints and publishes parameters. For each update it sends
// the batch to every rank (broadcast_bytes); every rank then evaluates its
// share of each minibatch, and the ranks sum their gradients, each scaled
// by its share of the minibatch, so the summed gradient is the one a single
// learner gets from the whole minibatch (learner/ppo_learner.h). Ranks meet
// at a rendezvous (c10d's TCPStore) that rank 0 serves at ADDRESS:PORT.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace graphworld {

struct DataParallelOptions {
  std::string host = "127.0.0.1";  // rank 0's node, where the rendezvous listens
  uint16_t port = 29500;
  int32_t rank = 0, size = 1;
  double connect_timeout_s = 300;  // for every rank to arrive
  // A collective waits this long for the other ranks (a follower waits for
  // rank 0's next batch, which takes as long as the actors do).
  double collective_timeout_s = 3600;
};

// "HOST:PORT" as DataParallelOptions (UsageError naming `flag` if malformed).
DataParallelOptions parse_rendezvous(const std::string& text, const std::string& flag);

class DataParallelGroup {
 public:
  // Joins the group; returns once every rank has (Error naming the
  // rendezvous after connect_timeout_s).
  explicit DataParallelGroup(const DataParallelOptions& options);
  ~DataParallelGroup();
  DataParallelGroup(const DataParallelGroup&) = delete;
  DataParallelGroup& operator=(const DataParallelGroup&) = delete;

  int32_t rank() const;
  int32_t size() const;
  // Rank 0's `bytes` reach every rank; other ranks' `bytes` are replaced.
  void broadcast_bytes(std::string& bytes);
  // Sums `values` element-wise over the ranks, in place.
  void all_reduce_sum(double* values, size_t count);
  // Collective: gradients go GPU to GPU with NCCL from now on when every
  // rank trains on a GPU (`cuda_device` >= 0) and was built with NCCL;
  // otherwise they keep going through host memory with gloo. Returns which.
  bool use_nccl_for_gradients(int cuda_device);
  bool gradients_by_nccl() const;

  struct Impl;  // the c10d process group, for learner/*.cc (data_parallel_ops.h)
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace graphworld
