// DreamStepGraph where this build's LibTorch has no CUDA (Debian's): there
// is nothing to capture on, and the constructor says how to get a build
// that can (dream_step_graph_cuda.cc is the real one).
#include "common/error.h"
#include "worldmodel/dream_step_graph.h"

namespace graphworld {

namespace {
const char* const kNoCuda =
    "capturing the dream in a CUDA graph needs a LibTorch built with CUDA, and this build's has none; build "
    "against a CUDA PyTorch's LibTorch (cmake -DCMAKE_PREFIX_PATH=$(python3 -c 'import torch; "
    "print(torch.utils.cmake_prefix_path)'), as tests/bench/gpu_learner_rows does) or leave out --cuda-graph";
}  // namespace

struct DreamStepGraph::Impl {};

bool DreamStepGraph::available() { return false; }

DreamStepGraph::DreamStepGraph(DreamEnv&, const std::function<DreamStepResult()>&, int32_t) {
  throw UsageError(kNoCuda);
}

DreamStepGraph::~DreamStepGraph() = default;

const DreamStepResult& DreamStepGraph::replay() { throw UsageError(kNoCuda); }

}  // namespace graphworld
