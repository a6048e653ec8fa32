#include "learner/distributed_learner.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/process_identity.h"
#include "common/process_memory.h"
#include "common/rollout_store.h"
#include "common/run_keys.h"
#include "common/stopwatch.h"
#include "learner/actor_registry.h"
#include "learner/compute_device.h"
#include "learner/compute_threads.h"
#include "learner/data_parallel.h"
#include "learner/data_parallel_follower.h"
#include "learner/run_cost_table.h"
#include "learner/training_config.h"
#include "learner/wire_message.h"

namespace graphworld {
namespace fs = std::filesystem;
namespace {

// A new run may start in a folder that holds only what `graphworld launch`
// put there before the job ran: its Slurm files and the run's CURVE keys.
bool holds_run_files(const std::string& run_dir) {
  std::error_code ec;
  if (!fs::exists(run_dir, ec)) return false;
  for (const auto& entry : fs::directory_iterator(run_dir, ec)) {
    if (!is_launcher_entry(entry.path().filename().string())) return true;
  }
  return false;
}

// The local store of a run kept off the run folder: a new run starts with
// none (a file left there belongs to another run); a resume keeps a local
// store of this run at least as long as the run folder's copy (it may hold
// steps after the last copy), or starts from that copy.
void place_local_store(const std::string& local, const std::string& published, const std::string& run_id, bool resume) {
  bool keep = false;
  if (resume && fs::exists(local)) {
    try {
      const RolloutStoreReader mine(local);
      // A local store left by an earlier job on this node is behind the run
      // folder's copy when a job elsewhere went on meanwhile.
      const int64_t theirs = fs::exists(published) ? static_cast<int64_t>(RolloutStoreReader(published).steps()) : 0;
      keep = mine.info().run_id == run_id && static_cast<int64_t>(mine.steps()) >= theirs;
    } catch (const Error&) {
      keep = false;  // unreadable: the copy replaces it
    }
  }
  if (keep) return;
  std::error_code ec;
  fs::remove(local, ec);
  if (resume && fs::exists(published)) {
    std::cerr << "learner: copying the rollout store " << published << " to " << local << "\n";
    copy_file_atomically(published, local);
  }
}

}  // namespace

struct DistributedLearner::Impl {
  Config config;
  TrainingOptions options;
  DistributedLearnerOptions distributed;
  std::string run_dir;
  int64_t max_policy_lag = 0;
  double heartbeat_timeout_s = 5;
  uint64_t incarnation = new_incarnation();
  std::unique_ptr<PpoLearner> learner;
  std::unique_ptr<LearnerExtension> extension;  // a model-based run's learning; null: model-free
  std::unique_ptr<RolloutStoreWriter> store;
  std::string store_path;      // where the store is written
  std::string published_path;  // RUN/rollouts.h5 when that is elsewhere (options.store_dir), else empty
  std::unique_ptr<LearnerTransport> transport;
  std::unique_ptr<RunCostTable> cost_table;  // measured/cuda runs: settles what actors' tables lack
  ActorRegistry actors{5.0};
  LearnerCounters counters;
  int64_t env_steps = 0, episodes = 0;
  double wall_s = 0;
  std::map<std::string, double> best_reduction_pct;  // per graph name, from episode summaries
  std::vector<std::string> parameter_messages;       // the current version, encoded, chunk by chunk
  std::map<uint32_t, uint64_t> actor_rss_bytes;      // from each actor's latest heartbeat
  // Where this process's time went (seconds, cumulative over this process's
  // life): checking trajectory messages, writing the store, PPO (or the
  // model-based extension's) updates, publishing parameters, checkpoints.
  // Each actor reports its own in a metrics message with its heartbeats
  // (actors/actor.h): the latest, per actor.
  double ingest_s = 0, store_s = 0, update_s = 0, broadcast_s = 0, checkpoint_s = 0;
  std::map<uint32_t, MetricsMessage> actor_times;
  // gpu cost model: each actor's latest (table hits, model fallbacks).
  std::map<uint32_t, std::pair<int64_t, int64_t>> actor_cost_counts;
  // Per actor id: its latest incarnation and how many of that incarnation's
  // trajectory messages this learner has taken (the receipts' count).
  std::map<uint32_t, std::pair<uint64_t, uint64_t>> trajectories_taken;
  MessageExpectations expect;

  int64_t version() const { return extension ? extension->version() : learner->version(); }

  MessageHeader header() const {
    MessageHeader h;
    h.run_id = distributed.run_id;
    h.sender_id = kLearnerSenderId;
    h.incarnation = incarnation;
    h.policy_version = version();
    h.sent_unix_ns = unix_time_ns();
    return h;
  }

  void encode_parameters() {
    parameter_messages.clear();
    const std::string blob = extension ? extension->parameters() : learner->policy().save_parameters();
    for (ParameterChunkMessage& chunk : split_parameters(version(), blob))
      parameter_messages.push_back(encode_message(Message{header(), std::move(chunk)}));
  }

  void publish_parameters() {
    Stopwatch clock;
    encode_parameters();
    for (const std::string& m : parameter_messages) transport->publish(m);
    broadcast_s += clock.elapsed_s();
  }

  void send_parameters_to(const std::string& peer) {
    for (const std::string& m : parameter_messages) transport->send_control(peer, m);
  }

  std::string write_checkpoint() {
    CheckpointContents c;
    c.config = config;
    c.learner_state = extension ? extension->save_state() : learner->save_state();
    c.actor_parameters = extension ? extension->parameters() : learner->policy().save_parameters();
    c.rule_library_hash = distributed.rule_library_hash;
    c.num_xfers = distributed.num_xfers;
    c.env_steps = env_steps;
    c.episodes = episodes;
    c.wall_s = wall_s;
    c.learner_counters = counters_now();
    return write_checkpoint_file(run_dir, version(), c, static_cast<int>(options.keep_checkpoints));
  }

  // A checkpoint never runs ahead of the store, nor of the run folder's copy
  // of it: a kill between the two leaves the copy ahead, which a resume
  // tolerates (steps after a checkpoint are kept), never behind.
  std::string checkpoint_with_store() {
    Stopwatch clock;
    store->flush();
    publish_store();
    store_s += clock.elapsed_s();
    clock.restart();
    std::string written = write_checkpoint();
    checkpoint_s += clock.elapsed_s();
    return written;
  }

  void publish_store() {
    if (!published_path.empty()) copy_file_atomically(store_path, published_path);
  }

  // Control messages: joins, heartbeats, parameter requests.
  void handle_control(const std::string& peer, const std::string& bytes) {
    const DecodeResult r = decode_message(bytes, expect);
    if (!r.message) {
      ++counters.refused_messages;
      return;
    }
    const Message& m = *r.message;
    const bool joined = actors.heard_from(m.header.sender_id, m.header.incarnation, peer, std::chrono::steady_clock::now());
    if (joined) std::cerr << "learner: actor " << m.header.sender_id << " joined\n";
    if (const auto* beat = std::get_if<HeartbeatMessage>(&m.body)) {
      actor_rss_bytes[m.header.sender_id] = beat->rss_bytes;
      transport->send_control(peer, encode_message(Message{header(), HeartbeatMessage{}}));
      // The receipt count again: a lost receipt must not hold the actor.
      const auto taken = trajectories_taken.find(m.header.sender_id);
      if (taken != trajectories_taken.end() && taken->second.first == m.header.incarnation)
        transport->send_control(peer, encode_message(Message{header(), ReceiptMessage{taken->second.second}}));
    } else if (const auto* cost = std::get_if<CostEntryMessage>(&m.body)) {
      if (!cost_table->present()) {
        ++counters.refused_messages;  // an analytic run has no table
      } else {
        // A question gets the run's price or "unknown"; a proposal settles it.
        const double ms = cost->ms == kUnknownCost ? cost_table->find(cost->key).value_or(kUnknownCost)
                                                   : cost_table->settle(cost->key, cost->ms);
        transport->send_control(peer, encode_message(Message{header(), CostEntryMessage{cost->key, ms}}));
      }
    } else if (const auto* times = std::get_if<MetricsMessage>(&m.body)) {
      actor_times[m.header.sender_id] = *times;
    } else if (std::holds_alternative<HelloMessage>(m.body) || std::holds_alternative<ParameterRequestMessage>(m.body)) {
      send_parameters_to(peer);
    } else {
      ++counters.refused_messages;  // not a control message
    }
    if (joined && std::holds_alternative<HeartbeatMessage>(m.body)) send_parameters_to(peer);
  }

  // Tells the actor that sent a trajectory message (taken into a batch, or
  // counted stale) how many of its messages this learner has taken: it
  // starts a new rollout only once its last one is taken, which bounds lag.
  void send_receipt(const MessageHeader& sender) {
    auto& [incarnation, taken] = trajectories_taken[sender.sender_id];
    if (incarnation != sender.incarnation) {
      incarnation = sender.incarnation;
      taken = 0;
    }
    ++taken;
    const std::string peer = actors.peer_of(sender.sender_id, sender.incarnation);
    if (!peer.empty()) transport->send_control(peer, encode_message(Message{header(), ReceiptMessage{taken}}));
  }

  // Real episodes a model-based run finished since its last metrics row.
  double real_reduction_sum = 0;
  int64_t real_episodes_since_row = 0;

  // A model-based run's real trajectory: stored, counted and handed to the
  // extension (the world model learns off-policy, so no lag applies).
  void take_real_for_extension(const Rollout& rollout, uint32_t sender) {
    const std::vector<StoredStep> steps = to_stored_steps(rollout, sender);
    Stopwatch storing;
    store->append(steps);
    store_s += storing.elapsed_s();
    extension->take_real(steps, rollout.episodes);
    ++counters.messages;
    env_steps += rollout.env_steps();
    for (const EpisodeSummary& e : rollout.episodes) {
      real_reduction_sum += e.reduction_pct;
      ++real_episodes_since_row;
      ++episodes;
      double& best = best_reduction_pct[e.graph];
      best = std::max(best, e.best_reduction_pct);
    }
  }

  // The counters with the registry's join and loss counts, which it keeps.
  const LearnerCounters& counters_now() {
    counters.actor_joins = actors.joins();
    counters.actor_losses = actors.losses();
    return counters;
  }

  // The learner's own numbers, after the fixed ones of a metrics row.
  void add_counters(UpdateReport& report) {
    counters_now();
    std::vector<std::pair<std::string, double>> own = {{"actors_alive", actors.alive()},
        {"actor_joins", static_cast<double>(counters.actor_joins)},
        {"actor_losses", static_cast<double>(counters.actor_losses)},
        {"stale_samples", static_cast<double>(counters.stale_samples)},
        {"mean_policy_lag", counters.lag_samples > 0 ? counters.lag_sum / static_cast<double>(counters.lag_samples) : 0.0},
        {"refused_messages", static_cast<double>(counters.refused_messages)},
        {"costs_settled", static_cast<double>(cost_table->added())},
        {"stored_steps", static_cast<double>(store->steps())},
        {"learner_rss_mib", static_cast<double>(current_rss_bytes()) / (1 << 20)},
        {"actor_rss_mib_max", [&] {
           uint64_t most = 0;
           for (const auto& [id, bytes] : actor_rss_bytes) most = std::max(most, bytes);
           return static_cast<double>(most) / (1 << 20);
         }()}};
    own.emplace_back("time_ingest_s", ingest_s);
    own.emplace_back("time_store_s", store_s);
    own.emplace_back("time_update_s", update_s);
    own.emplace_back("time_broadcast_s", broadcast_s);
    own.emplace_back("time_checkpoint_s", checkpoint_s);
    // The actors' own figures, summed over the actors heard from.
    std::map<std::string, double> actor_sums;
    for (const auto& [id, times] : actor_times)
      for (size_t k = 0; k < times.names.size() && k < times.values.size(); ++k)
        actor_sums[times.names[k]] += times.values[k];
    for (const auto& [name, value] : actor_sums) own.emplace_back("actors_" + name, value);
    if (options.cost_model == "gpu") {
      // Distinct configurations per actor, summed over actors.
      int64_t hits = 0, fallbacks = 0;
      for (const auto& [id, counts] : actor_cost_counts) {
        hits += counts.first;
        fallbacks += counts.second;
      }
      own.emplace_back("cost_table_hits", static_cast<double>(hits));
      own.emplace_back("cost_model_fallbacks", static_cast<double>(fallbacks));
    }
    report.extra.insert(report.extra.begin(), own.begin(), own.end());
  }

  // A trajectory message: accepted into `batch` (and the store) or counted.
  void handle_trajectory(const std::string& bytes, std::vector<Rollout>& batch, int64_t& batch_steps) {
    Stopwatch clock;
    const double store_before = store_s;
    handle_trajectory_timed(bytes, batch, batch_steps);
    ingest_s += clock.elapsed_s() - (store_s - store_before);
  }

  void handle_trajectory_timed(const std::string& bytes, std::vector<Rollout>& batch, int64_t& batch_steps) {
    DecodeResult r = decode_message(bytes, expect);
    const bool dream = r.message && std::holds_alternative<DreamTrajectoryMessage>(r.message->body);
    if (!r.message || !(std::holds_alternative<Rollout>(r.message->body) || (dream && extension))) {
      ++counters.refused_messages;
      return;
    }
    Message& m = *r.message;
    send_receipt(m.header);
    if (dream) {
      const auto& d = std::get<DreamTrajectoryMessage>(m.body);
      if (extension->take_dream(d, m.header.policy_version)) {
        ++counters.messages;
        const int64_t lag = version() - m.header.policy_version;
        counters.lag_sum += static_cast<double>(lag) * static_cast<double>(d.dream_steps());
        counters.lag_samples += d.dream_steps();
      } else {
        counters.stale_samples += d.dream_steps();
      }
      return;
    }
    Rollout& rollout = std::get<Rollout>(m.body);
    actor_cost_counts[m.header.sender_id] = {rollout.cost_table_hits, rollout.cost_model_fallbacks};
    if (extension) {
      rollout.policy_version = m.header.policy_version;
      take_real_for_extension(rollout, m.header.sender_id);
      return;
    }
    rollout.policy_version = m.header.policy_version;
    // Every valid step is kept, stale ones too: they are real environment
    // steps, and a replay of a later step needs its episode's every action.
    Stopwatch storing;
    store->append(to_stored_steps(rollout, m.header.sender_id));
    store_s += storing.elapsed_s();
    const int64_t lag = learner->version() - rollout.policy_version;
    if (lag < 0 || lag > max_policy_lag) {  // (below 0: a version this learner never published)
      counters.stale_samples += rollout.env_steps();
      return;
    }
    ++counters.messages;
    counters.lag_sum += static_cast<double>(lag) * static_cast<double>(rollout.env_steps());
    counters.lag_samples += rollout.env_steps();
    batch_steps += rollout.env_steps();
    batch.push_back(std::move(rollout));
  }
};

DistributedLearner::DistributedLearner(const RunSettings& settings, DistributedLearnerOptions options,
                                       const std::string& run_dir, bool resume, const std::string& checkpoint)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  const Config& config = settings.resolved;  // kept and compared on resume, never read
  s.config = config;
  s.options = settings.options;
  s.options.network.num_xfers = options.num_xfers;
  s.distributed = std::move(options);
  s.run_dir = run_dir;
  s.max_policy_lag = s.options.distributed.max_policy_lag;
  s.heartbeat_timeout_s = s.options.distributed.heartbeat_timeout_s;
  s.actors = ActorRegistry(s.heartbeat_timeout_s);
  s.expect.run_id = s.distributed.run_id;
  s.expect.num_xfers = s.distributed.num_xfers;
  s.expect.num_graphs = static_cast<int32_t>(s.distributed.graphs.size());
  s.expect.max_steps = int64_t{s.options.collector.num_envs} * s.options.collector.steps_per_env;
  s.expect.parameters_from = s.incarnation;
  std::error_code ec;
  if (!resume && holds_run_files(run_dir))
    throw UsageError(run_dir + " already holds files; continue that run with --resume " + run_dir +
                     ", or choose a new folder");
  const ResolvedDevice device = resolve_compute_device(s.options.device);
  if (!device.note.empty()) std::cerr << "learner: " << device.note << "\n";
  s.learner = std::make_unique<PpoLearner>(s.options.network, s.options.ppo, device.device);
  if (!s.distributed.store_dir.empty() && fs::absolute(s.distributed.store_dir) != fs::absolute(run_dir)) {
    fs::create_directories(s.distributed.store_dir, ec);
    if (ec) throw Error(s.distributed.store_dir + ": cannot create the rollout store's folder (" + ec.message() + ")");
    s.store_path = s.distributed.store_dir + "/rollouts.h5";
    s.published_path = run_dir + "/rollouts.h5";
    place_local_store(s.store_path, s.published_path, s.distributed.run_id, resume);
  } else {
    s.store_path = run_dir + "/rollouts.h5";
  }
  const std::string& store_path = s.store_path;
  std::optional<CheckpointContents> saved_extension;  // restored once the extension exists
  std::string saved_from;
  std::vector<StoredStep> stored_steps;
  if (resume) {
    const std::string path = checkpoint.empty() ? newest_checkpoint(run_dir) : checkpoint;
    const CheckpointContents saved = read_checkpoint(path);
    check_resumable(saved, config, s.distributed.rule_library_hash, s.distributed.num_xfers, path);
    if (s.distributed.make_extension) {
      saved_extension = saved;
      saved_from = path;
    } else {
      s.learner->restore_state(saved.learner_state, path);
    }
    s.env_steps = saved.env_steps;
    s.episodes = saved.episodes;
    s.wall_s = saved.wall_s;
    s.counters = saved.learner_counters;
    s.actors.continue_counts(saved.learner_counters.actor_joins, saved.learner_counters.actor_losses);
    truncate_metrics(run_dir + "/metrics.jsonl", saved.updates);
    // A model-based run rebuilds what it learned from out of the store,
    // read before the writer takes it over.
    if (saved_extension && fs::exists(store_path)) {
      const RolloutStoreReader reader(store_path);
      stored_steps = reader.read(0, reader.steps());
    }
    s.env_steps = std::max<int64_t>(s.env_steps, static_cast<int64_t>(stored_steps.size()));
    s.store = fs::exists(store_path) ? RolloutStoreWriter::resume(store_path, s.distributed.run_id)
                                     : nullptr;
  } else {
    fs::create_directories(run_dir + "/checkpoints", ec);
    if (ec) throw Error(run_dir + ": cannot create the run folder (" + ec.message() + ")");
  }
  if (s.distributed.prepare_run_folder || s.distributed.make_extension) {
    try {
      if (s.distributed.prepare_run_folder) s.distributed.prepare_run_folder(run_dir);
      if (s.distributed.make_extension) s.extension = s.distributed.make_extension(run_dir);
    } catch (...) {
      // A new run's folder was empty: leave it so, to be used again once
      // the problem (a bad env.cost_table, say) is mended.
      if (!resume)
        for (const auto& entry : fs::directory_iterator(run_dir, ec)) fs::remove_all(entry.path(), ec);
      throw;
    }
  }
  if (saved_extension) s.extension->restore_state(saved_extension->learner_state, stored_steps, saved_from);
  if (DataParallelGroup* group = s.distributed.data_parallel) {
    if (s.extension)
      throw UsageError("data-parallel learners train the model-free agent; a model-based run (model_based.enabled) "
                       "runs one learner rank");
    std::string run_id = s.distributed.run_id, state = s.learner->save_state();
    group->broadcast_bytes(run_id);
    group->broadcast_bytes(state);
    s.learner->set_data_parallel(group);
  }
  if (!s.store) {
    RolloutStoreInfo info;
    info.run_id = s.distributed.run_id;
    info.graphs = s.distributed.graphs;
    info.num_xfers = s.distributed.num_xfers;
    info.config_text = config.to_yaml();
    s.store = RolloutStoreWriter::create(store_path, info,
                                         {.chunk_steps = 16384, .flush_every_s = s.options.distributed.store_flush_s});
  }
  if (!resume) write_file_atomically(run_dir + "/config.yaml", config.to_yaml());
  if (!resume) s.write_checkpoint();
  s.cost_table = std::make_unique<RunCostTable>(run_dir);
  if (s.distributed.curve || run_has_keys(run_dir)) {
    make_run_keys(run_dir);
    s.distributed.transport = learner_transport_with_keys(run_dir, s.distributed.transport);
  }
  // A resumed learner binds the endpoints its actors already know.
  const std::string endpoints_file = run_dir + "/endpoints";
  if (resume && fs::exists(endpoints_file)) {
    std::ifstream in(endpoints_file);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    try {
      s.transport = std::make_unique<LearnerTransport>(endpoints_from_text(text, endpoints_file), s.distributed.transport);
    } catch (const Error& e) {
      std::cerr << "learner: cannot bind the run's previous endpoints (" << e.what() << "); binding new ones\n";
    }
  }
  if (!s.transport) s.transport = std::make_unique<LearnerTransport>(s.distributed.bind_host, s.distributed.transport);
  write_file_atomically(endpoints_file, endpoints_to_text(s.transport->endpoints()));
  s.encode_parameters();
}

DistributedLearner::~DistributedLearner() = default;

const LearnerEndpoints& DistributedLearner::endpoints() const { return impl_->transport->endpoints(); }
const LearnerCounters& DistributedLearner::counters() const { return impl_->counters; }
int64_t DistributedLearner::version() const { return impl_->version(); }

TrainingOutcome DistributedLearner::run(const std::function<bool()>& should_stop,
                                        const std::function<void(const UpdateReport&)>& on_update) {
  Impl& s = *impl_;
  ComputeThreads threads(s.options.threads);
  keep_freed_tensor_memory();
  TrainingOutcome outcome;
  const int64_t rollout_steps = int64_t{s.options.collector.num_envs} * s.options.collector.steps_per_env;
  std::vector<Rollout> batch;
  int64_t batch_steps = 0;
  int64_t checkpointed = s.learner->version();
  Stopwatch since_update;
  s.publish_parameters();
  while (s.env_steps < s.options.total_env_steps) {
    if (should_stop && should_stop()) {
      outcome.stopped_early = true;
      break;
    }
    const LearnerReadable readable = s.transport->wait(100);
    if (readable.control)
      while (auto control = s.transport->receive_control(0)) s.handle_control(control->first, control->second);
    if (readable.trajectories) {
      while (batch_steps < rollout_steps) {
        std::optional<std::string> bytes = s.transport->receive_trajectory(0);
        if (!bytes) break;
        s.handle_trajectory(*bytes, batch, batch_steps);
      }
    }
    for (uint32_t id : s.actors.newly_lost(std::chrono::steady_clock::now()))
      std::cerr << "learner: actor " << id << " silent for " << s.heartbeat_timeout_s << " s: counted lost\n";
    if (s.extension) {
      if (s.extension->finished()) break;
      UpdateReport report;
      Stopwatch updating;
      const bool advanced = s.extension->advance(report);
      s.update_s += updating.elapsed_s();
      if (!advanced) continue;
      s.publish_parameters();
      const double elapsed = since_update.elapsed_s();
      since_update.restart();
      s.wall_s += elapsed;
      report.update = s.version();
      report.env_steps = s.env_steps;
      report.episodes = s.episodes;
      report.wall_s = s.wall_s;
      report.episodes_this_update = s.real_episodes_since_row;
      report.mean_episode_reduction_pct =
          s.real_episodes_since_row > 0 ? s.real_reduction_sum / static_cast<double>(s.real_episodes_since_row) : 0.0;
      s.real_reduction_sum = 0;
      s.real_episodes_since_row = 0;
      for (const std::string& g : s.distributed.graphs) report.best_reduction_pct.emplace_back(g, s.best_reduction_pct[g]);
      s.add_counters(report);
      append_metrics_row(s.run_dir + "/metrics.jsonl", report);
      if (s.version() % s.options.checkpoint_every == 0) {
        outcome.last_checkpoint = s.checkpoint_with_store();
        checkpointed = s.version();
      }
      if (on_update) on_update(report);
      continue;
    }
    if (batch_steps < rollout_steps) continue;

    std::vector<const Rollout*> rollouts;
    for (const Rollout& r : batch) rollouts.push_back(&r);
    UpdateReport report;
    report.collect_s = since_update.elapsed_s();
    if (DataParallelGroup* group = s.distributed.data_parallel) {
      std::vector<std::string> messages;
      for (const Rollout& r : batch) {
        MessageHeader h = s.header();
        h.policy_version = r.policy_version;
        messages.push_back(encode_message(Message{h, r}));
      }
      std::string payload = encode_follower_batch(messages);
      group->broadcast_bytes(payload);
    }
    Stopwatch updating;
    report.stats = s.learner->update(rollouts);
    s.update_s += updating.elapsed_s();
    s.publish_parameters();
    s.env_steps += batch_steps;
    double sum = 0;
    int64_t ended = 0;
    for (const Rollout& r : batch)
      for (const EpisodeSummary& e : r.episodes) {
        sum += e.reduction_pct;
        ++ended;
        double& best = s.best_reduction_pct[e.graph];
        best = std::max(best, e.best_reduction_pct);
      }
    s.episodes += ended;
    const double elapsed = since_update.elapsed_s();
    since_update.restart();
    s.wall_s += elapsed;
    report.update = s.learner->version();
    report.env_steps = s.env_steps;
    report.episodes = s.episodes;
    report.wall_s = s.wall_s;
    report.env_steps_per_s = static_cast<double>(batch_steps) / elapsed;
    report.episodes_this_update = ended;
    report.mean_episode_reduction_pct = ended > 0 ? sum / static_cast<double>(ended) : 0.0;
    for (const std::string& g : s.distributed.graphs) report.best_reduction_pct.emplace_back(g, s.best_reduction_pct[g]);
    s.add_counters(report);
    batch.clear();
    batch_steps = 0;
    // Rows go out before the checkpoint: a resume drops rows after it.
    append_metrics_row(s.run_dir + "/metrics.jsonl", report);
    if (s.learner->version() % s.options.checkpoint_every == 0) {
      outcome.last_checkpoint = s.checkpoint_with_store();
      checkpointed = s.learner->version();
    }
    if (on_update) on_update(report);
  }
  if (DataParallelGroup* group = s.distributed.data_parallel) {
    std::string stop = follower_stop();
    group->broadcast_bytes(stop);
  }
  if (checkpointed != s.version() || outcome.last_checkpoint.empty()) outcome.last_checkpoint = s.checkpoint_with_store();
  const std::string stop = encode_message(Message{s.header(), StopMessage{outcome.stopped_early ? "the learner stopped" : "training is done"}});
  // Actors read the stop before this side closes (an unread message dies
  // with its connection): wait, at most 2 s, for each to acknowledge.
  int told = 0, acknowledged = 0;
  for (const std::string& peer : s.actors.live_peers()) told += s.transport->send_control(peer, stop) ? 1 : 0;
  Stopwatch waiting;
  while (acknowledged < told && waiting.elapsed_s() < 2.0) {
    const auto control = s.transport->receive_control(100);
    if (!control) continue;
    const DecodeResult r = decode_message(control->second, s.expect);
    if (r.message && std::holds_alternative<StopMessage>(r.message->body)) ++acknowledged;
  }
  if (acknowledged < told)
    std::cerr << "learner: " << told - acknowledged << " of " << told << " actors did not acknowledge the stop\n";
  s.store->close();
  s.publish_store();
  outcome.updates = s.version();
  outcome.env_steps = s.env_steps;
  return outcome;
}

}  // namespace graphworld
