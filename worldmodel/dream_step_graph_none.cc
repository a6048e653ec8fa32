// DreamStepGraph where this build's LibTorch has no CUDA (Debian's): there
// is nothing to capture on, and the constructor says how to get a build
// that can (dream_step_graph_cuda.cc is the real one).
#include <string>

#include "common/error.h"
#include "learner/cuda_graph_work.h"
#include "worldmodel/dream_step_graph.h"

namespace graphworld {

namespace {
std::string no_cuda() { return "capturing the dream step: " + CudaGraphWork::unavailable_reason(); }
}  // namespace

struct DreamStepGraph::Impl {};

bool DreamStepGraph::available() { return false; }

DreamStepGraph::DreamStepGraph(DreamEnv&, const std::function<DreamStepResult()>&, int32_t) {
  throw UsageError(no_cuda());
}

DreamStepGraph::~DreamStepGraph() = default;

const DreamStepResult& DreamStepGraph::replay() { throw UsageError(no_cuda()); }

}  // namespace graphworld
