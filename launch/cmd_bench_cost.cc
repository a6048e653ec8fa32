// graphworld bench cost [MODEL]: how fast the measured cost model is.
//
// 1. First-time measurement of every distinct op configuration, in a fresh
//    cache directory.
// 2. The graph's cost from a second model instance that finds everything in
//    the on-disk cache, then the same with its in-memory memo warm.
// 3. The incremental update after one rewrite. The rewrite splits a fused
//    activation off a Conv (or fuses a Relu into its Conv when the graph has
//    none fused): a real, equivalence-keeping rewrite of the kind rules make.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "common/error.h"
#include "common/json_writer.h"
#include "common/stopwatch.h"
#include "env/cost/aten_op_timer.h"
#include "env/cost/graph_cost.h"
#include "env/cost/measured_cost_model.h"
#include "env/ops/executor.h"
#include "launch/bench_commands.h"
#include "common/latency.h"
#include "launch/pipeline/model_source.h"

namespace graphworld {
namespace {

struct Rewrite {
  std::vector<OpId> removed;
  std::vector<OpId> changed;
};

Attributes without(const Attributes& attrs, std::initializer_list<AttrKey> drop) {
  Attributes out;
  for (const auto& [key, value] : attrs.items())
    if (std::find(drop.begin(), drop.end(), key) == drop.end()) out.set(key, value);
  return out;
}

// Conv(act) -> Conv + act.
Rewrite split_activation(Graph& g, OpId conv) {
  Op copy = g.op(conv);
  auto act = static_cast<Activation>(copy.attrs.get_int(AttrKey::Activation, 0));
  OpType act_type = OpType::Tanh;
  Attributes act_attrs;
  switch (act) {
    case Activation::Relu: act_type = OpType::Relu; break;
    case Activation::Sigmoid: act_type = OpType::Sigmoid; break;
    case Activation::HardSwish: act_type = OpType::HardSwish; break;
    case Activation::HardSigmoid:
      act_type = OpType::HardSigmoid;
      act_attrs.set(AttrKey::Beta, copy.attrs.get_float(AttrKey::ActivationBeta, 0.5));
      act_attrs.set(AttrKey::Alpha, copy.attrs.get_float(AttrKey::ActivationAlpha, 0.2));
      break;
    case Activation::LeakyRelu:
      act_type = OpType::LeakyRelu;
      act_attrs.set(AttrKey::Alpha, copy.attrs.get_float(AttrKey::ActivationAlpha, 0.01));
      break;
    case Activation::Tanh:
    case Activation::None: break;
  }
  Attributes conv_attrs = without(copy.attrs, {AttrKey::Activation, AttrKey::ActivationAlpha, AttrKey::ActivationBeta});
  OpId plain = g.add_op(OpType::Conv, copy.name + "_plain", conv_attrs, copy.inputs, copy.outputs);
  OpId activation = g.add_op(act_type, copy.name + "_act", act_attrs, {{plain, 0}}, copy.outputs);
  Rewrite r{{conv}, g.replace_uses({conv, 0}, {activation, 0})};
  r.changed.push_back(plain);
  r.changed.push_back(activation);
  return r;
}

// Conv + Relu -> Conv(act=relu), when the Relu is the conv's only reader.
Rewrite fuse_relu(Graph& g, OpId relu, OpId conv) {
  Op copy = g.op(conv);
  Attributes attrs = copy.attrs;
  attrs.set(AttrKey::Activation, static_cast<int64_t>(Activation::Relu));
  OpId fused = g.add_op(OpType::Conv, copy.name + "_relu", attrs, copy.inputs, g.op(relu).outputs);
  Rewrite r{{conv, relu}, g.replace_uses({relu, 0}, {fused, 0})};
  r.changed.push_back(fused);
  return r;
}

// Applies up to `limit` rewrites to `g`, calling `after` with each.
template <typename After>
int rewrite_all(Graph& g, int limit, After after) {
  size_t original = g.num_ops();
  int done = 0;
  auto consumers = g.consumers();
  for (size_t i = 0; i < original && done < limit; ++i) {
    OpId id = static_cast<OpId>(i);
    const Op& op = g.op(id);
    if (op.type == OpType::Conv && op.attrs.get_int(AttrKey::Activation, 0) != 0) {
      after(split_activation(g, id));
      ++done;
    } else if (op.type == OpType::Relu && g.op(op.inputs[0].op).type == OpType::Conv &&
               g.op(op.inputs[0].op).attrs.get_int(AttrKey::Activation, 0) == 0 &&
               consumers[op.inputs[0].op][0].size() == 1) {
      after(fuse_relu(g, id, op.inputs[0].op));
      ++done;
    }
  }
  return done;
}

}  // namespace

int run_bench_cost(const CliArgs& args) {
  std::string spec = args.positional_count() > 1 ? args.positional(1, "MODEL") : "resnet50";
  args.expect_at_most(2);
  int64_t requested_threads = args.int_value("--threads", 0);
  if (requested_threads < 0) throw UsageError("--threads must be >= 0");
  int threads = set_compute_threads(static_cast<int>(requested_threads));
  LoadedModel model = load_model(spec, 1, import_options_from(args));
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("graphworld-bench-cost-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);

  // 1. First-time measurement.
  double first_s = 0;
  int64_t configurations = 0;
  {
    MeasuredCostModel fresh("measured", std::make_unique<AtenOpTimer>(threads), dir.string());
    Stopwatch watch;
    graph_cost(model.graph, fresh);
    fresh.flush();
    first_s = watch.elapsed_s();
    configurations = fresh.stats().measured_now;
  }
  // 2. Fully cached: from disk, then from memory.
  MeasuredCostModel cached("measured", std::make_unique<AtenOpTimer>(threads), dir.string());
  CostTracker tracker(cached);
  Stopwatch disk_watch;
  double total = tracker.reset(model.graph);
  double from_disk_us = disk_watch.elapsed_ms() * 1e3;
  if (cached.stats().measured_now != 0) throw Error("bench cost: the cache missed configurations it had just stored");
  LatencyStats warm = measure_latency([&] { tracker.reset(model.graph); }, 20, 500);

  // 3. Incremental updates. The rewritten configurations are priced once on
  // a scratch copy, so the timed updates are lookups, as in a warm search.
  Graph scratch = model.graph;
  rewrite_all(scratch, 1000, [](const Rewrite&) {});
  CostTracker(cached).reset(scratch);
  Graph work = model.graph;
  tracker.reset(work);
  std::vector<double> update_us;
  double max_error = 0;
  int rewrites = rewrite_all(work, 1000, [&](const Rewrite& r) {
    Stopwatch watch;
    double incremental = tracker.update(work, r.removed, r.changed);
    update_us.push_back(watch.elapsed_ms() * 1e3);
    double full = CostTracker(cached).reset(work);
    max_error = std::max(max_error, std::abs(incremental - full));
  });
  if (rewrites == 0) throw UsageError("bench cost: " + spec + " has no Conv+activation to rewrite; use resnet50 or another CNN");
  double incremental_us = percentile(update_us, 0.5);
  std::filesystem::remove_all(dir);

  if (args.flag("--json")) {
    JsonWriter json;
    json.begin_object()
        .key("model").value(model.source)
        .key("total_ms").value(total)
        .key("configurations").value(configurations)
        .key("first_measure_s").value(first_s)
        .key("cached_from_disk_us").value(from_disk_us)
        .key("cached_us").value(warm.median_ms * 1e3)
        .key("incremental_us").value(incremental_us)
        .key("incremental_rewrites").value(rewrites)
        .key("incremental_max_error_ms").value(max_error)
        .key("peak_rss_mib").value(peak_rss_mib())
        .end_object();
    std::printf("%s\n", json.str().c_str());
    return 0;
  }
  std::printf("%s, measured cost model (%s)\n", model.source.c_str(), cpu_fingerprint(threads).c_str());
  std::printf("  first-time measurement: %lld distinct op configurations in %.2f s\n",
              static_cast<long long>(configurations), first_s);
  std::printf("  fully cached graph cost: %.1f us (first call, from the disk cache), %.2f us (median, memo warm)\n",
              from_disk_us, warm.median_ms * 1e3);
  std::printf("  incremental update after one rewrite: median %.2f us over %d rewrites (max |incremental - full| %.2g ms)\n",
              incremental_us, rewrites, max_error);
  std::printf("  total %.3f ms; peak RSS %.0f MiB\n", total, peak_rss_mib());
  return 0;
}

}  // namespace graphworld
