#include "learner/data_parallel.h"

#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <set>
#include <vector>

#include "common/error.h"
#include "learner/data_parallel_ops.h"
#include "learner/nccl_all_reduce.h"

namespace graphworld {

struct DataParallelGroup::Impl {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> group;
  std::unique_ptr<NcclAllReduce> nccl;  // GPU learners' gradients (use_nccl_for_gradients)
  int32_t rank = 0, size = 1;
  double collective_timeout_s = 3600;

  void wait(c10::intrusive_ptr<c10d::Work> work, const char* what) {
    try {
      work->wait();
    } catch (const std::exception& e) {
      throw Error(std::string("data-parallel learners: ") + what + " failed (" + e.what() +
                  "); did another learner rank end?");
    }
  }
};

DataParallelOptions parse_rendezvous(const std::string& text, const std::string& flag) {
  const size_t colon = text.rfind(':');
  DataParallelOptions o;
  try {
    if (colon == std::string::npos || colon == 0) throw std::invalid_argument("no port");
    const unsigned long port = std::stoul(text.substr(colon + 1));
    if (port == 0 || port > 65535) throw std::out_of_range("port");
    o.host = text.substr(0, colon);
    o.port = static_cast<uint16_t>(port);
  } catch (const std::exception&) {
    throw UsageError(flag + " takes HOST:PORT (rank 0's node and a free port), got '" + text + "'");
  }
  return o;
}

DataParallelGroup::DataParallelGroup(const DataParallelOptions& options) : impl_(std::make_unique<Impl>()) {
  if (options.size < 1 || options.rank < 0 || options.rank >= options.size)
    throw UsageError("data-parallel learners: rank " + std::to_string(options.rank) + " of " +
                     std::to_string(options.size) + " is not a rank of the group");
  impl_->rank = options.rank;
  impl_->size = options.size;
  impl_->collective_timeout_s = options.collective_timeout_s;
  const std::string where = options.host + ":" + std::to_string(options.port);
  try {
    c10d::TCPStoreOptions store;
    store.port = options.port;
    store.isServer = options.rank == 0;
    store.numWorkers = static_cast<size_t>(options.size);
    store.waitWorkers = true;
    store.timeout = std::chrono::milliseconds(static_cast<int64_t>(options.connect_timeout_s * 1000));
    impl_->store = c10::make_intrusive<c10d::TCPStore>(options.host, store);
    auto gloo = c10d::ProcessGroupGloo::Options::create(
        std::chrono::milliseconds(static_cast<int64_t>(options.collective_timeout_s * 1000)));
    // GLOO_SOCKET_IFNAME picks the network interface, as in PyTorch.
    const char* interface = std::getenv("GLOO_SOCKET_IFNAME");
    gloo->devices.push_back(interface && *interface ? c10d::ProcessGroupGloo::createDeviceForInterface(interface)
                                                    : c10d::ProcessGroupGloo::createDefaultDevice());
    impl_->group = c10::make_intrusive<c10d::ProcessGroupGloo>(impl_->store, options.rank, options.size, gloo);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error("data-parallel learners: rank " + std::to_string(options.rank) + " could not join the group at " +
                where + " (" + e.what() + "); is rank 0 running there, and the port free?");
  }
}

DataParallelGroup::~DataParallelGroup() = default;

int32_t DataParallelGroup::rank() const { return impl_->rank; }
int32_t DataParallelGroup::size() const { return impl_->size; }

void DataParallelGroup::broadcast_bytes(std::string& bytes) {
  std::vector<at::Tensor> size = {torch::tensor({static_cast<int64_t>(bytes.size())}, torch::kInt64)};
  impl_->wait(impl_->group->broadcast(size), "broadcasting a batch's size");
  const int64_t n = size[0].item<int64_t>();
  std::vector<at::Tensor> payload = {torch::empty({n}, torch::kUInt8)};
  if (impl_->rank == 0 && n > 0) std::memcpy(payload[0].data_ptr<uint8_t>(), bytes.data(), static_cast<size_t>(n));
  if (n > 0) impl_->wait(impl_->group->broadcast(payload), "broadcasting a batch");
  if (impl_->rank != 0) bytes.assign(reinterpret_cast<const char*>(payload[0].data_ptr<uint8_t>()), static_cast<size_t>(n));
}

void DataParallelGroup::all_reduce_sum(double* values, size_t count) {
  std::vector<at::Tensor> t = {torch::from_blob(values, {static_cast<int64_t>(count)}, torch::kFloat64).clone()};
  impl_->wait(impl_->group->allreduce(t), "summing statistics");
  std::memcpy(values, t[0].data_ptr<double>(), count * sizeof(double));
}

bool DataParallelGroup::use_nccl_for_gradients(int cuda_device) {
  // Every rank must agree: one rank on the CPU (a node without a GPU, a
  // build without NCCL) keeps the whole group on gloo.
  // NCCL also wants a GPU of its own per rank: each rank puts (host, GPU)
  // in its slot, and a pair seen twice (two ranks on one GPU) keeps gloo.
  std::vector<double> slots(static_cast<size_t>(impl_->size) + 1, 0.0);
  slots[0] = cuda_device >= 0 && nccl_compiled() ? 1.0 : 0.0;
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  const double host_key = static_cast<double>(std::hash<std::string>{}(host) % 1000003);
  slots[static_cast<size_t>(impl_->rank) + 1] = host_key * 1024.0 + static_cast<double>(std::max(cuda_device, 0)) + 1.0;
  all_reduce_sum(slots.data(), slots.size());
  const std::set<double> distinct(slots.begin() + 1, slots.end());
  if (slots[0] < static_cast<double>(impl_->size) - 0.5) return false;
  if (distinct.size() != static_cast<size_t>(impl_->size)) {
    if (impl_->rank == 0)
      std::fprintf(stderr, "data-parallel learners: two ranks share a GPU, which NCCL refuses; gradients are "
                           "summed with gloo through host memory\n");
    return false;
  }
  std::string id = impl_->rank == 0 ? nccl_unique_id() : std::string();
  broadcast_bytes(id);
  impl_->nccl = std::make_unique<NcclAllReduce>(id, impl_->rank, impl_->size, cuda_device, impl_->collective_timeout_s);
  if (impl_->rank == 0) std::fprintf(stderr, "data-parallel learners: gradients are summed with NCCL on the GPUs\n");
  return true;
}

bool DataParallelGroup::gradients_by_nccl() const { return impl_->nccl != nullptr; }

namespace {

// One buffer on `device`: every gradient flattened, then one flag per
// parameter that counts the ranks holding a gradient for it. A parameter no
// rank's share reached keeps no gradient, as with one learner (Adam skips it).
torch::Tensor flatten_gradients(const std::vector<torch::Tensor>& parameters, const torch::Device& device) {
  std::vector<torch::Tensor> flat;
  std::vector<float> held;
  const auto on_device = torch::TensorOptions().dtype(torch::kFloat32).device(device);
  for (const torch::Tensor& p : parameters) {
    const torch::Tensor g = p.grad();
    flat.push_back(g.defined() ? g.reshape({-1}).to(device, torch::kFloat32) : torch::zeros({p.numel()}, on_device));
    held.push_back(g.defined() ? 1.0f : 0.0f);
  }
  flat.push_back(torch::tensor(held, torch::kFloat32).to(device));
  return torch::cat(flat).contiguous();
}

// The summed buffer back into the parameters' gradients, on their device.
void scatter_gradients(const torch::Tensor& buffer, const std::vector<torch::Tensor>& parameters) {
  const int64_t total = buffer.numel() - static_cast<int64_t>(parameters.size());
  const torch::Tensor holders = buffer.narrow(0, total, static_cast<int64_t>(parameters.size())).to(torch::kCPU);
  int64_t offset = 0;
  for (size_t i = 0; i < parameters.size(); ++i) {
    torch::Tensor p = parameters[i];
    const int64_t n = p.numel();
    if (holders[static_cast<int64_t>(i)].item<float>() == 0.0f) {
      p.mutable_grad() = torch::Tensor();
    } else {
      const torch::Tensor summed = buffer.narrow(0, offset, n).view(p.sizes()).to(p.device(), p.scalar_type());
      if (p.grad().defined())
        p.mutable_grad().copy_(summed);
      else
        p.mutable_grad() = summed.clone();
    }
    offset += n;
  }
}

}  // namespace

void all_reduce_gradients(DataParallelGroup& group, const std::vector<torch::Tensor>& parameters) {
  if (parameters.empty()) return;
  if (group.impl().nccl && parameters.front().is_cuda()) {
    // GPU to GPU, by NCCL.
    torch::Tensor buffer = flatten_gradients(parameters, parameters.front().device());
    group.impl().nccl->sum_in_place(buffer.data_ptr<float>(), static_cast<size_t>(buffer.numel()));
    scatter_gradients(buffer, parameters);
    return;
  }
  // Through host memory: gloo sums CPU tensors (a GPU learner's too).
  std::vector<at::Tensor> buffer = {flatten_gradients(parameters, torch::kCPU)};
  group.impl().wait(group.impl().group->allreduce(buffer), "summing gradients");
  scatter_gradients(buffer[0], parameters);
}

}  // namespace graphworld
