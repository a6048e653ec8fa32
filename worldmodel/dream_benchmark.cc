#include "worldmodel/dream_benchmark.h"

#include <chrono>
#include <memory>

#include "common/error.h"
#include "worldmodel/controller.h"
#include "worldmodel/device_random.h"
#include "worldmodel/dream_env.h"
#include "learner/cuda_graph_work.h"
#include "worldmodel/dream_step_graph.h"
#include "worldmodel/world_model_modules.h"

namespace graphworld {

DreamThroughput measure_dream_throughput(WorldModel& model, int64_t batch, double seconds, double tau, uint64_t seed,
                                         const std::string& device, bool cuda_graph) {
  if (!model.impl().starts.defined() || model.impl().starts.size(0) == 0)
    throw UsageError("the world model has no real initial states to dream from (train it first)");
  const torch::Device on(device);
  if (cuda_graph && !DreamStepGraph::available())
    throw UsageError("--cuda-graph: " + CudaGraphWork::unavailable_reason());
  if (cuda_graph && !on.is_cuda())
    throw UsageError("--cuda-graph captures the dream on a GPU; add --device cuda");
  model.impl().to_device(on);
  const torch::Tensor& starts = model.impl().starts;
  torch::InferenceMode inference;
  DreamOptions options;
  options.batch = batch;
  options.tau = tau;
  options.max_steps = std::max(1, model.info().max_steps);
  options.seed = seed;
  options.check_each_step = false;  // the actions come from the mask; checked at the end
  // A graph advances only the device's default generator between replays:
  // the dream and the actions both draw from it then.
  options.default_generator = cuda_graph;
  DreamEnv dream(model, starts, options);
  DreamController controller = make_controller(model, seed);
  controller->to(on);
  torch::Generator generator = cuda_graph ? at::globalContext().defaultGenerator(on) : seeded_generator(on, seed + 1);
  auto eager_step = [&] {
    return dream.step(sample_actions(controller->forward(dream.z(), dream.hidden(), dream.mask()), generator));
  };
  std::unique_ptr<DreamStepGraph> graph;
  if (cuda_graph) graph = std::make_unique<DreamStepGraph>(dream, eager_step, /*warmup_steps=*/5);
  auto one_step = [&] {
    if (graph)
      graph->replay();
    else
      eager_step();
  };
  for (int i = 0; i < 5; ++i) one_step();
  dream.check_actions();  // reads from the device: the warm-up has finished there
  DreamThroughput result;
  result.batch = batch;
  const auto start = std::chrono::steady_clock::now();
  int64_t batched = 0;
  do {
    one_step();
    ++batched;
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  } while (result.seconds < seconds);
  dream.check_actions();  // also waits for the device's last step...
  // ...which a GPU may have had queued: the time runs to its end.
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.steps = batched * batch;
  result.steps_per_s = static_cast<double>(result.steps) / result.seconds;
  result.gflop_per_step = 2.0 * static_cast<double>(matrix_weights(*controller) + matrix_weights(*model.impl().rnn)) / 1e9;
  result.gflops = result.gflop_per_step * result.steps_per_s;
  return result;
}

}  // namespace graphworld
