// A dream step captured once in a CUDA graph and replayed: one graph launch
// per step in place of the few hundred kernels the controller, the draws
// and DreamEnv::step issue one after another from the host. At the batches
// a dream actor runs (a few thousand rows and less), a GPU spends most of
// an eager step waiting for those launches.
//
//   DreamOptions options;  // check_each_step = false, default_generator = true
//   DreamEnv dream(model, starts, options);   // the model on a CUDA device
//   DreamStepGraph graph(dream, [&] { return dream.step(sample_actions(...)); });
//   for (...) { const DreamStepResult& r = graph.replay(); ... }
//
// What a step does is the caller's `step`, which must only issue device
// work: no value read back (DreamOptions::check_each_step off), no shape
// that depends on data, draws only from the device's default generator
// (DreamOptions::default_generator, and the caller's own draws too).
// The constructor runs it `warmup_steps` times on a side stream (so that
// cuBLAS, cuDNN and the caching allocator make their handles and
// workspaces outside the capture), then captures one step. DreamEnv's
// state tensors (DreamEnv::state) are the graph's fixed inputs: the
// captured step ends by copying the new state into them, so each replay
// steps on from the last. The dream's own step() may still be called
// between replays: replay() first copies the state it left into the inputs.
//
// The graph holds the addresses of everything the step reads: the model's
// and controller's weights (updated in place, as an optimiser does, they
// stay valid; moved, reloaded or replaced, the graph must be made again)
// and the dream's starts and state. A capture that fails leaves LibTorch's
// default CUDA generator unusable in this process (UsageError says so).
//
// The warm-up steps advance the dream and the generator as steps do; the
// capture itself runs nothing (it records), so the dream stands where the
// warm-up left it, and the first replay takes the next step.
// Where this build's LibTorch has no CUDA, available() is false and the
// constructor throws UsageError.
//
// Included only by worldmodel/ .cc files and tests.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "worldmodel/dream_env.h"

namespace graphworld {

class DreamStepGraph {
 public:
  // Whether this build's LibTorch has CUDA (and so can capture at all).
  static bool available();

  // Captures `step` on `dream`'s device; UsageError if the dream is not on
  // a CUDA device, checks each step, or if the step cannot be captured.
  // `dream` must outlive the graph.
  DreamStepGraph(DreamEnv& dream, const std::function<DreamStepResult()>& step, int32_t warmup_steps = 3);
  ~DreamStepGraph();
  DreamStepGraph(const DreamStepGraph&) = delete;
  DreamStepGraph& operator=(const DreamStepGraph&) = delete;

  // One step: launches the graph on the current stream. The results are
  // the captured step's tensors, which the next replay overwrites.
  const DreamStepResult& replay();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace graphworld
