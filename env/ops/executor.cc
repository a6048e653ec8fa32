#include "env/ops/executor.h"

#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <thread>

#include "common/stopwatch.h"

#include "common/error.h"
#include "env/ops/aten_kernels.h"
#include "env/ops/onednn_kernels.h"

namespace graphworld {

int set_compute_threads(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // Only on a change: ATen rebuilds its thread pools on every call, which
  // cost a third of ResNet-50's latency when done per run.
  if (at::get_num_threads() != threads) at::set_num_threads(threads);
  // OpenBLAS keeps its own pthread pool, which spins against ATen's OpenMP
  // threads for the same cores (a transformer ran 4x slower on 2 cores).
  // ATen parallelises around BLAS calls, so OpenBLAS runs single-threaded.
  using SetThreads = void (*)(int);
  if (auto set_blas = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) set_blas(1);
  return threads;
}

struct Executor::Plan {
  struct Step {
    OpId id;
    const Op* op;
    PreparedOp prepared;  // oneDNN-packed weights, for convolutions
    std::vector<int> input_slots;
    std::vector<int> output_slots;
    std::vector<int> release_after;  // slots whose last use is this step
    bool first_input_dies = false;   // input 0 is released after this step and read nowhere else in it
  };
  Graph graph;  // own copy: the plan points into its ops
  int threads = 1;
  std::vector<at::Tensor> slots;         // each value in the layout its producer left it in
  std::vector<at::Tensor> other_layout;  // per slot: its conversion to the other layout, once a reader made one
  std::vector<uint8_t> blocked_output;   // per OpId: the last run left output 0 blocked
  std::vector<int> input_slots;     // per graph input
  std::vector<int> output_slots;    // per graph output
  std::vector<bool> persistent;     // weights and folded constants stay across runs
  std::vector<Step> steps;
  std::vector<std::shared_ptr<const TensorData>> last_inputs;
  bool profiling = false;
  std::array<Executor::OpTypeTime, kNumOpTypes> op_time{};
};

Executor::Executor(const Graph& graph, ExecutorOptions options) : plan_(std::make_unique<Plan>()) {
  Plan& p = *plan_;
  p.graph = graph;
  p.threads = set_compute_threads(options.threads);
  const Graph& g = p.graph;
  std::vector<OpId> order = g.topological_order();
  std::vector<bool> live = g.live_ops();

  // Slot per (op, output).
  std::vector<int> first_slot(g.num_ops(), 0);
  int count = 0;
  for (size_t i = 0; i < g.num_ops(); ++i) {
    first_slot[i] = count;
    count += static_cast<int>(g.op(static_cast<OpId>(i)).outputs.size());
  }
  p.slots.resize(count);
  p.other_layout.resize(count);
  p.blocked_output.assign(g.num_ops(), 0);
  p.persistent.assign(count, false);
  auto slot_of = [&](TensorRef ref) { return first_slot[ref.op] + ref.index; };

  c10::InferenceMode guard;
  // An op is constant when it is a weight or all its inputs are constant;
  // those are evaluated now, once, and never during run().
  std::vector<bool> constant(g.num_ops(), false);
  std::vector<Plan::Step> steps;
  for (OpId id : order) {
    const Op& op = g.op(id);
    if (!live[id]) continue;
    if (op.type == OpType::Input) continue;
    if (op.type == OpType::Weight) {
      constant[id] = true;
      p.slots[slot_of({id, 0})] = weight_tensor(op);
      p.persistent[slot_of({id, 0})] = true;
      continue;
    }
    bool all_constant = true;
    for (const TensorRef& ref : op.inputs) all_constant = all_constant && constant[ref.op];
    Plan::Step step{id, &op, {}, {}, {}, {}};
    for (const TensorRef& ref : op.inputs) step.input_slots.push_back(slot_of(ref));
    for (size_t k = 0; k < op.outputs.size(); ++k) step.output_slots.push_back(first_slot[id] + static_cast<int>(k));
    if (all_constant) {
      constant[id] = true;
      std::vector<at::Tensor> args;
      for (int s : step.input_slots) args.push_back(p.slots[s]);
      std::vector<at::Tensor> outs;
      try {
        outs = run_aten_op(op, args);
      } catch (const c10::Error& e) {
        throw GraphError("folding the weight-only " + describe_op(g, id) + " failed: " + e.what_without_backtrace());
      }
      for (size_t k = 0; k < outs.size(); ++k) {
        p.slots[step.output_slots[k]] = outs[k].contiguous();
        p.persistent[step.output_slots[k]] = true;
      }
      continue;
    }
    std::vector<at::Tensor> constant_args;
    for (const TensorRef& ref : op.inputs) constant_args.push_back(constant[ref.op] ? p.slots[slot_of(ref)] : at::Tensor());
    step.prepared = prepare_onednn(op, constant_args);
    steps.push_back(std::move(step));
  }
  for (OpId id : g.input_ops()) p.input_slots.push_back(slot_of({id, 0}));
  for (const GraphOutput& out : g.outputs()) p.output_slots.push_back(slot_of(out.ref));

  // Release each non-persistent slot after its last reader (graph outputs are kept).
  std::vector<int> last_reader(count, -1);
  for (size_t s = 0; s < steps.size(); ++s)
    for (int slot : steps[s].input_slots) last_reader[slot] = static_cast<int>(s);
  std::vector<bool> is_output(count, false);
  for (int s : p.output_slots) is_output[s] = true;
  for (int slot = 0; slot < count; ++slot)
    if (last_reader[slot] >= 0 && !p.persistent[slot] && !is_output[slot])
      steps[last_reader[slot]].release_after.push_back(slot);
  for (Plan::Step& step : steps) {
    if (step.input_slots.empty()) continue;
    int first = step.input_slots[0];
    bool released = std::find(step.release_after.begin(), step.release_after.end(), first) != step.release_after.end();
    bool read_twice = std::count(step.input_slots.begin(), step.input_slots.end(), first) > 1;
    step.first_input_dies = released && !read_twice;
  }
  p.steps = std::move(steps);
  // Constants that no compute step reads and no output needs can go now.
  for (int slot = 0; slot < count; ++slot)
    if (p.persistent[slot] && last_reader[slot] < 0 && !is_output[slot]) p.slots[slot] = at::Tensor();
}

Executor::~Executor() = default;

int Executor::threads() const { return plan_->threads; }

const std::vector<uint8_t>& Executor::blocked_outputs() const { return plan_->blocked_output; }

void Executor::set_profiling(bool on) {
  plan_->profiling = on;
  plan_->op_time.fill({});
}

std::vector<std::pair<std::string, Executor::OpTypeTime>> Executor::profile() const {
  std::vector<std::pair<std::string, OpTypeTime>> rows;
  for (int t = 0; t < kNumOpTypes; ++t)
    if (plan_->op_time[t].calls) rows.emplace_back(std::string(op_type_name(static_cast<OpType>(t))), plan_->op_time[t]);
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.total_ms > b.second.total_ms; });
  return rows;
}

std::vector<std::shared_ptr<TensorData>> Executor::run(const std::vector<std::shared_ptr<const TensorData>>& inputs) {
  Plan& p = *plan_;
  const Graph& g = p.graph;
  if (inputs.size() != p.input_slots.size())
    throw UsageError("the graph takes " + std::to_string(p.input_slots.size()) + " inputs, " +
                     std::to_string(inputs.size()) + " were given");
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Op& in = g.op(g.input_ops()[k]);
    if (!inputs[k] || inputs[k]->info() != in.outputs[0])
      throw UsageError("input '" + in.name + "' must be " + dtype_name(in.outputs[0].dtype) + " " +
                       shape_to_string(in.outputs[0].shape) + ", got " +
                       (inputs[k] ? dtype_name(inputs[k]->dtype()) + " " + shape_to_string(inputs[k]->shape())
                                  : std::string("nothing")));
  }
  p.last_inputs = inputs;
  run_for_timing();
  std::vector<std::shared_ptr<TensorData>> outputs;
  for (int s : p.output_slots) outputs.push_back(from_aten(p.slots[s]));  // dense since run_for_timing
  return outputs;
}

void Executor::run_for_timing() {
  Plan& p = *plan_;
  if (p.last_inputs.empty() && !p.input_slots.empty()) p.last_inputs = random_inputs(p.graph, 1);
  set_compute_threads(p.threads);
  c10::InferenceMode guard;
  for (size_t k = 0; k < p.input_slots.size(); ++k) {
    p.slots[p.input_slots[k]] = to_aten(p.last_inputs[k]);
    p.other_layout[p.input_slots[k]] = at::Tensor();
  }
  std::vector<at::Tensor> args;
  std::vector<at::Tensor> others;
  for (const Plan::Step& step : p.steps) {
    args.clear();
    others.clear();
    for (int s : step.input_slots) {
      args.push_back(p.slots[s]);
      others.push_back(p.other_layout[s]);
    }
    std::vector<at::Tensor> outs;
    Stopwatch watch;
    try {
      outs = run_layout_aware(*step.op, step.prepared, args, step.first_input_dies, &others);
      if (p.profiling) {
        auto& entry = p.op_time[static_cast<size_t>(step.op->type)];
        entry.total_ms += watch.elapsed_ms();
        ++entry.calls;
      }
      // Keep layout conversions so later readers of the same value reuse
      // them; the slot itself keeps the producer's layout, so what a reader
      // gets does not depend on which reader ran first.
      for (size_t k = 0; k < others.size(); ++k)
        if (others[k].defined()) p.other_layout[step.input_slots[k]] = others[k];
    } catch (const c10::Error& e) {
      throw GraphError("executing " + std::string(op_type_name(step.op->type)) + " '" + step.op->name +
                       "' failed: " + e.what_without_backtrace());
    }
    if (!outs.empty()) p.blocked_output[static_cast<size_t>(step.id)] = outs[0].is_mkldnn();
    for (size_t k = 0; k < outs.size(); ++k) {
      p.slots[step.output_slots[k]] = std::move(outs[k]);
      p.other_layout[step.output_slots[k]] = at::Tensor();
    }
    for (int s : step.release_after) {
      p.slots[s] = at::Tensor();
      p.other_layout[s] = at::Tensor();
    }
  }
  for (int s : p.output_slots)
    if (p.slots[s].is_mkldnn()) p.slots[s] = p.slots[s].to_dense();
}

std::vector<std::shared_ptr<const TensorData>> random_inputs(const Graph& graph, uint64_t seed) {
  std::vector<std::shared_ptr<const TensorData>> inputs;
  for (size_t k = 0; k < graph.input_ops().size(); ++k) {
    const TensorInfo& info = graph.op(graph.input_ops()[k]).outputs[0];
    auto data = std::make_shared<TensorData>(info.dtype, info.shape);
    if (info.dtype == DType::Float32) {
      fill_random(RandomInit{seed * 7919 + k, -1.0f, 1.0f}, data->floats(), data->numel());
    } else {
      std::fill(data->ints(), data->ints() + data->numel(), 0);
    }
    inputs.push_back(std::move(data));
  }
  return inputs;
}

}  // namespace graphworld
