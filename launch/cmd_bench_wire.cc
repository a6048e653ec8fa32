// graphworld bench wire [MODEL]: the costs of moving and keeping
// trajectories, on a real rollout of MODEL (default resnet50): bytes per
// step of a trajectory message, encode and decode-with-validation rates
// (steps/s, one thread; decode is what the learner does per received
// message), and the HDF5 rollout store's write rate and bytes per stored
// step.
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "common/error.h"
#include "common/json_writer.h"
#include "common/rollout_store.h"
#include "common/stopwatch.h"
#include "env/cost/analytic_cost_model.h"
#include "env/rules/rule_library.h"
#include "launch/bench_commands.h"
#include "launch/model_source.h"
#include "learner/compute_threads.h"
#include "learner/rollout_collector.h"
#include "learner/wire_message.h"

namespace graphworld {

int run_bench_wire(const CliArgs& args) {
  args.expect_at_most(2);
  const std::string model_name = args.positional_count() > 1 ? args.positional(1, "MODEL") : "resnet50";
  const int64_t store_steps = args.int_value("--store-steps", 2'000'000);
  const double seconds = args.double_value("--seconds", 3.0);
  const bool json = args.flag("--json");
  ComputeThreads threads(1);

  // A real rollout: 8 environments x 32 steps with an untrained policy.
  const RuleLibrary& library = default_rule_library();
  const RuleMatcher matcher(library.rules);
  AnalyticCostModel cost;
  std::vector<TrainingGraph> graphs = {{model_name, load_model(model_name).graph}};
  RolloutCollectorOptions collector_options;
  collector_options.env.max_steps = 200;
  RolloutCollector collector(graphs, matcher, cost, collector_options);
  PolicyNetworkConfig network;
  network.num_xfers = static_cast<int32_t>(library.rules.size());
  PolicyNetwork policy(network);
  const Rollout rollout = *collector.collect(policy, 0, nullptr);
  const auto steps = static_cast<double>(rollout.env_steps());

  MessageHeader header;
  header.run_id = "bench";
  const Message message{header, rollout};
  MessageExpectations expect;
  expect.run_id = "bench";
  expect.num_xfers = network.num_xfers;
  expect.num_graphs = 1;

  std::string bytes;
  int64_t encodes = 0;
  Stopwatch encode_clock;
  while (encode_clock.elapsed_s() < seconds || encodes == 0) {
    bytes = encode_message(message);
    ++encodes;
  }
  const double encode_steps_per_s = steps * static_cast<double>(encodes) / encode_clock.elapsed_s();
  int64_t decodes = 0;
  Stopwatch decode_clock;
  while (decode_clock.elapsed_s() < seconds || decodes == 0) {
    const DecodeResult r =
        decode_message(std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), expect);
    if (!r.message) throw Error("the benchmark's own message did not decode: " + r.error);
    ++decodes;
  }
  const double decode_steps_per_s = steps * static_cast<double>(decodes) / decode_clock.elapsed_s();
  const double message_bytes_per_step = static_cast<double>(bytes.size()) / steps;

  // The store: the rollout's steps appended over and over, in rollout-sized
  // batches, with the default flush schedule.
  const std::string path = (std::filesystem::temp_directory_path() / ("graphworld-bench-store-" +
                                                                       std::to_string(getpid()) + ".h5")).string();
  std::filesystem::remove(path);
  const std::vector<StoredStep> stored = to_stored_steps(rollout, 0);
  RolloutStoreInfo info;
  info.run_id = "bench";
  info.graphs = {model_name};
  info.num_xfers = network.num_xfers;
  Stopwatch store_clock;
  {
    auto writer = RolloutStoreWriter::create(path, info);
    while (writer->steps() < store_steps) writer->append(stored);
    writer->close();
  }
  const double store_s = store_clock.elapsed_s();
  const auto written = static_cast<double>((store_steps + static_cast<int64_t>(stored.size()) - 1) /
                                           static_cast<int64_t>(stored.size()) * static_cast<int64_t>(stored.size()));
  const double store_bytes_per_step = static_cast<double>(std::filesystem::file_size(path)) / written;
  std::filesystem::remove(path);

  if (json) {
    JsonWriter out;
    out.begin_object().key("model").value(model_name).key("nodes").value(static_cast<int64_t>(
        rollout.segments[0].steps[0].observation.graph.num_nodes))
        .key("message_bytes_per_step").value(message_bytes_per_step).key("encode_steps_per_s").value(encode_steps_per_s)
        .key("decode_steps_per_s").value(decode_steps_per_s).key("store_bytes_per_step").value(store_bytes_per_step)
        .key("store_write_steps_per_s").value(written / store_s).key("peak_rss_mib").value(peak_rss_mib()).end_object();
    std::printf("%s\n", out.str().c_str());
  } else {
    std::printf("trajectory messages, %s (%d nodes), a rollout of %.0f steps:\n", model_name.c_str(),
                rollout.segments[0].steps[0].observation.graph.num_nodes, steps);
    std::printf("  %.0f bytes per step; encode %.0f steps/s, decode and validate %.0f steps/s (one thread)\n",
                message_bytes_per_step, encode_steps_per_s, decode_steps_per_s);
    std::printf("rollout store (HDF5): %.1f bytes per step; %.0f steps/s written (%.0f steps, flushed every 5 s)\n",
                store_bytes_per_step, written / store_s, written);
    std::printf("peak RSS %.0f MiB\n", peak_rss_mib());
  }
  return 0;
}

}  // namespace graphworld
