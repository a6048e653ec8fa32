// graphworld bench wire [MODEL]: the costs of moving and keeping
// trajectories, on a real rollout of MODEL (default resnet50): bytes per
// step of a trajectory message, encode and decode-with-validation rates
// (steps/s, one thread; decode is what the learner does per received
// message), and the HDF5 rollout store's write rate and bytes per stored
// step, and over loopback sockets the learner's ingest rate from synthetic
// actors and the parameter broadcast time.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <thread>
#include <filesystem>

#include "common/error.h"
#include "common/json_writer.h"
#include "common/rollout_store.h"
#include "common/stopwatch.h"
#include "common/transport.h"
#include "env/cost/analytic_cost_model.h"
#include "env/rules/rule_library.h"
#include "launch/bench_commands.h"
#include "launch/pipeline/model_source.h"
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
  keep_freed_tensor_memory();  // as actor and learner processes do

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
        decode_message(bytes, expect);
    if (!r.message) throw Error("the benchmark's own message did not decode: " + r.error);
    ++decodes;
  }
  const double decode_steps_per_s = steps * static_cast<double>(decodes) / decode_clock.elapsed_s();
  const double message_bytes_per_step = static_cast<double>(bytes.size()) / steps;

  // Learner ingest over loopback: synthetic actors (threads, one socket
  // each) send this message as fast as the learner takes it; the learner
  // receives, validates, decodes and batches (no PPO).
  const int actors = static_cast<int>(args.int_value("--actors", 2));
  double ingest_steps_per_s = 0;
  {
    LearnerTransport learner("127.0.0.1", {});
    std::atomic<bool> stop{false};
    std::vector<std::thread> senders;
    for (int a = 0; a < actors; ++a)
      senders.emplace_back([&, a] {
        ActorTransport actor(learner.endpoints(), "bench-" + std::to_string(a), {});
        while (!stop) actor.send_trajectory(bytes, [&] { return stop.load(); });
      });
    std::vector<Rollout> batch;
    int64_t received = 0;
    while (!learner.receive_trajectory(5000)) {
    }
    Stopwatch clock;
    while (clock.elapsed_s() < seconds) {
      const std::optional<std::string> got = learner.receive_trajectory(1000);
      if (!got) continue;
      DecodeResult r = decode_message(*got, expect);
      if (!r.message) throw Error("ingest: " + r.error);
      batch.push_back(std::move(std::get<Rollout>(r.message->body)));
      if (batch.size() >= 4) batch.clear();
      received += rollout.env_steps();
    }
    ingest_steps_per_s = static_cast<double>(received) / clock.elapsed_s();
    stop = true;
    for (std::thread& t : senders) t.join();
  }

  // Parameter broadcast: the default policy's parameters (or this run's
  // network) published to `actors` subscribers; time until every one has
  // assembled the version, and the bytes per second that makes.
  double broadcast_s = 0, broadcast_bytes = 0;
  {
    const std::string blob = policy.save_parameters();
    LearnerTransport learner("127.0.0.1", {});
    std::vector<std::unique_ptr<ActorTransport>> subscribers;
    for (int a = 0; a < actors; ++a)
      subscribers.push_back(std::make_unique<ActorTransport>(learner.endpoints(), "sub-" + std::to_string(a), TransportOptions{}));
    // Subscriptions take a moment to reach the publisher: version 0 until all have it.
    // Each subscriber assembles on its own thread, as actor processes would.
    auto deliver = [&](int64_t version) {
      std::vector<std::string> messages;
      for (ParameterChunkMessage& c : split_parameters(version, blob)) messages.push_back(encode_message(Message{header, std::move(c)}));
      std::atomic<int> complete{0};
      std::atomic<bool> go{false};
      Stopwatch clock;
      std::vector<std::thread> receivers;
      for (int a = 0; a < actors; ++a)
        receivers.emplace_back([&, a] {
          ParameterAssembler assembler;
          while (!go) std::this_thread::yield();
          while (clock.elapsed_s() < 2.0) {
            const std::optional<std::string> got = subscribers[static_cast<size_t>(a)]->receive_published(10);
            if (!got) continue;
            DecodeResult r = decode_message(*got, expect);
            std::string why;
            if (r.message && assembler.add(std::get<ParameterChunkMessage>(r.message->body), &why) ==
                                 ParameterAssembler::Outcome::kComplete) {
              ++complete;
              return;
            }
          }
        });
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // receivers are waiting
      clock.restart();
      go = true;
      for (const std::string& m : messages) learner.publish(m);
      for (std::thread& t : receivers) t.join();
      return complete == actors ? clock.elapsed_s() : -1.0;
    };
    for (int64_t v = 0; v < 100 && deliver(v) < 0; ++v) {
    }
    std::vector<double> times;
    for (int64_t v = 100; v < 110; ++v) times.push_back(deliver(v));
    std::sort(times.begin(), times.end());
    broadcast_s = times[times.size() / 2];
    broadcast_bytes = static_cast<double>(blob.size());
  }

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
        .key("store_write_steps_per_s").value(written / store_s).key("actors").value(int64_t{actors})
        .key("ingest_steps_per_s").value(ingest_steps_per_s).key("parameter_bytes").value(broadcast_bytes)
        .key("broadcast_s").value(broadcast_s).key("broadcast_gb_per_s").value(broadcast_bytes * actors / broadcast_s / 1e9).key("peak_rss_mib").value(peak_rss_mib()).end_object();
    std::printf("%s\n", out.str().c_str());
  } else {
    std::printf("trajectory messages, %s (%d nodes), a rollout of %.0f steps:\n", model_name.c_str(),
                rollout.segments[0].steps[0].observation.graph.num_nodes, steps);
    std::printf("  %.0f bytes per step; encode %.0f steps/s, decode and validate %.0f steps/s (one thread)\n",
                message_bytes_per_step, encode_steps_per_s, decode_steps_per_s);
    std::printf("learner ingest over loopback from %d actors (receive, validate, decode, batch): %.0f steps/s\n",
                actors, ingest_steps_per_s);
    std::printf("parameter broadcast: %.0f bytes to %d actors, all hold it after %.2f ms median (%.2f GB/s delivered)\n",
                broadcast_bytes, actors, broadcast_s * 1e3, broadcast_bytes * actors / broadcast_s / 1e9);
    std::printf("rollout store (HDF5): %.1f bytes per step; %.0f steps/s written (%.0f steps, flushed every 5 s)\n",
                store_bytes_per_step, written / store_s, written);
    std::printf("peak RSS %.0f MiB\n", peak_rss_mib());
  }
  return 0;
}

}  // namespace graphworld
