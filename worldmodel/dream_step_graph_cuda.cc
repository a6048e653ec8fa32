// DreamStepGraph with LibTorch's CUDA graphs (at::cuda::CUDAGraph). Built
// where LibTorch has CUDA; where only the CUDA toolkit exists it is still
// compiled, not linked, so that the code is checked (worldmodel/CMakeLists.txt).
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <exception>
#include <string>
#include <vector>

#include "common/error.h"
#include "learner/cuda_graph_capture.h"
#include "worldmodel/dream_step_graph.h"

namespace graphworld {

struct DreamStepGraph::Impl {
  DreamEnv* dream = nullptr;
  std::vector<torch::Tensor> inputs;  // the dream's state where the graph reads and writes it
  at::cuda::CUDAGraph graph;
  DreamStepResult result;  // the captured step's outputs, rewritten by each replay
};

bool DreamStepGraph::available() { return true; }

DreamStepGraph::DreamStepGraph(DreamEnv& dream, const std::function<DreamStepResult()>& step, int32_t warmup_steps) {
  if (!dream.device().is_cuda())
    throw UsageError("a dream step is captured in a CUDA graph only on a GPU; this dream runs on " +
                     dream.device().str());
  if (dream.options().check_each_step)
    throw UsageError("a dream step captured in a CUDA graph cannot read actions back to check them; set "
                     "DreamOptions::check_each_step to false and call check_actions() after replays");
  const c10::cuda::CUDAGuard on_device(dream.device().index());
  impl_ = std::make_unique<Impl>();  // (a CUDAGraph asks for the current stream: after the checks and the guard)
  impl_->dream = &dream;
  // Whatever the current stream queued comes first: the side stream below
  // does not wait for it otherwise.
  c10::cuda::device_synchronize();
  c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool(false, dream.device().index());
  {
    const c10::cuda::CUDAStreamGuard on_side(side);
    for (int32_t i = 0; i < warmup_steps; ++i) step();
    side.synchronize();
    // The graph reads its inputs where they are now; the captured step
    // ends by copying the new state there (a tensor a step changes in
    // place is its own input already).
    const std::vector<torch::Tensor>& inputs = impl_->inputs = dream.state();
    begin_thread_local_capture(impl_->graph);
    try {
      impl_->result = step();
      const std::vector<torch::Tensor> outputs = dream.state();
      for (size_t i = 0; i < inputs.size(); ++i)
        if (!inputs[i].is_same(outputs[i])) inputs[i].copy_(outputs[i]);
      impl_->graph.capture_end();
    } catch (const std::exception& e) {
      dream.set_state(inputs);
      try {
        impl_->graph.capture_end();
      } catch (const std::exception&) {
        // The capture was already invalid; the first error says why.
      }
      // After a failed capture LibTorch's default generator and graph
      // pool may be left in capture mode: this process cannot go on
      // drawing on that device, so the message says to start again.
      throw UsageError(std::string("the dream step could not be captured in a CUDA graph (it must only issue "
                                   "device work: no value read back, no data-dependent shape, draws from the "
                                   "device's default generator); run again without --cuda-graph: ") +
                       e.what());
    }
    // Capturing ran nothing: the dream stands where the warm-up left it,
    // on the graph's inputs.
    dream.set_state(inputs);
  }
  // Made on the side stream, used by replays on the caller's: the
  // allocator must not hand their memory to the side stream's later work.
  for (const torch::Tensor& t : impl_->inputs) t.record_stream(c10::cuda::getCurrentCUDAStream());
  c10::cuda::device_synchronize();
}

DreamStepGraph::~DreamStepGraph() = default;

const DreamStepResult& DreamStepGraph::replay() {
  // Eager steps since the last replay left the dream on tensors of their
  // own: their state goes into the graph's inputs, and the dream back onto them.
  const std::vector<torch::Tensor> now = impl_->dream->state();
  bool moved = false;
  for (size_t i = 0; i < now.size(); ++i)
    if (!now[i].is_same(impl_->inputs[i])) {
      impl_->inputs[i].copy_(now[i]);
      moved = true;
    }
  if (moved) impl_->dream->set_state(impl_->inputs);
  impl_->graph.replay();
  return impl_->result;
}

}  // namespace graphworld
