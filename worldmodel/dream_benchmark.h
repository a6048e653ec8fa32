// Dream throughput: dream steps per second at a given batch, with the
// controller choosing every action (what a dream actor does per step:
// controller forward, mask, MDN-RNN step, sampling). Torch-free header.
#pragma once

#include <cstdint>
#include <string>

#include "worldmodel/world_model.h"

namespace graphworld {

struct DreamThroughput {
  int64_t batch = 0;
  int64_t steps = 0;  // dream steps timed (batch x batched steps)
  double seconds = 0;
  double steps_per_s = 0;
  // Matrix-product work of one dream step (the controller's forward pass
  // and the MDN-RNN's step: 2 FLOPs per matrix weight), and its rate.
  double gflop_per_step = 0;
  double gflops = 0;
};

// Runs for about `seconds` after a short warm-up, from the model's starts,
// on `device` ("cpu" or "cuda:N": the model is moved there, and the actions
// are drawn there too). With `cuda_graph`, a step (controller, draws and
// dream step) is captured once in a CUDA graph and replayed
// (dream_step_graph.h); its draws then come from the device's default
// generator, seeded with `seed`. UsageError if the model has no starts (it
// was never trained), or for `cuda_graph` off a GPU or without a CUDA
// LibTorch.
DreamThroughput measure_dream_throughput(WorldModel& model, int64_t batch, double seconds, double tau, uint64_t seed,
                                         const std::string& device = "cpu", bool cuda_graph = false);

}  // namespace graphworld
