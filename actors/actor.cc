#include "actors/actor.h"

#include <unistd.h>

#include <chrono>
#include <iostream>
#include <optional>

#include "common/error.h"
#include "common/process_identity.h"
#include "common/process_memory.h"
#include "learner/compute_threads.h"
#include "learner/wire_message.h"

namespace graphworld {

uint64_t actor_seed(uint64_t run_seed, uint32_t actor_id, uint64_t incarnation) {
  return run_seed ^ ((uint64_t{actor_id} + 1) * 0x9e3779b97f4a7c15ull) ^ (incarnation * 0xbf58476d1ce4e5b9ull);
}

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// The model-free actor's work: the collector's rollouts with the policy
// network the learner trains.
class PolicyRolloutWork final : public ActorWork {
 public:
  PolicyRolloutWork(std::vector<TrainingGraph> graphs, const RuleMatcher& matcher, CostModel& cost,
                    const ActorOptions& options)
      : collector_(std::move(graphs), matcher, cost, options.collector), policy_(options.network) {}

  void load_parameters(const std::string& blob, int64_t version) override {
    policy_.load_parameters(blob, "parameters of version " + std::to_string(version));
    version_ = version;
  }

  std::optional<MessageBody> make(const std::function<bool()>& stop_now) override {
    std::optional<Rollout> rollout = collector_.collect(policy_, version_, stop_now);
    if (!rollout) return std::nullopt;
    return MessageBody{std::move(*rollout)};
  }

 private:
  RolloutCollector collector_;
  PolicyNetwork policy_;
  int64_t version_ = 0;
};

int64_t steps_in(const MessageBody& body) {
  if (const auto* rollout = std::get_if<Rollout>(&body)) return rollout->env_steps();
  if (const auto* dream = std::get_if<DreamTrajectoryMessage>(&body)) return dream->dream_steps();
  return 0;
}

}  // namespace

struct Actor::Impl {
  ActorOptions options;
  std::unique_ptr<ActorWork> work;
  std::unique_ptr<ActorTransport> transport;
  int64_t policy_version = -1;
  ParameterAssembler assembler;
  std::optional<std::pair<int64_t, std::string>> pending_parameters;  // taken at the next rollout boundary
  uint64_t pending_from = 0, parameters_from = 0;  // the learner incarnation they came from
  // Trajectory messages sent to the current learner incarnation, and how
  // many of them it says it has taken.
  uint64_t sent_to_learner = 0, receipted = 0;
  bool learner_known = false;
  uint64_t learner_incarnation = 0;
  bool learner_lost = false;
  Clock::time_point last_heartbeat = Clock::now(), last_heard = Clock::now();
  Clock::time_point last_request = Clock::now() - std::chrono::seconds(10);
  std::string stop_reason;
  std::function<bool()> stop_now;  // set while run() runs
  // The configuration settle_cost() waits on, and the learner's answer
  // (kUnknownCost: the run has no price yet). Answers for any other key
  // (a repeat of an earlier question) are dropped.
  std::optional<std::string> awaited_cost;
  std::optional<double> cost_answer;
  MessageExpectations expect;
  ActorCounters counters;
  // Where this actor's time went (seconds, cumulative): waiting for
  // parameters or for the learner to take its earlier messages, making
  // rollouts (environment steps and the policy's inference), encoding and
  // sending them. Reported with each heartbeat, as a metrics message the
  // learner adds to its metrics rows.
  double wait_s = 0, collect_s = 0, send_s = 0;

  MessageHeader header(int64_t version) const {
    MessageHeader h;
    h.run_id = options.run_id;
    h.sender_id = options.actor_id;
    h.incarnation = options.incarnation;
    h.policy_version = std::max<int64_t>(version, 0);
    h.sent_unix_ns = unix_time_ns();
    return h;
  }

  void send_hello() {
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    transport->send_control(encode_message(Message{header(policy_version), HelloMessage{"actor", host, static_cast<uint32_t>(getpid())}}));
  }

  void handle(const std::string& bytes) {
    const DecodeResult r = decode_message(bytes, expect);
    if (!r.message || r.message->header.sender_id != kLearnerSenderId) {
      ++counters.refused_messages;
      return;
    }
    const Message& m = *r.message;
    last_heard = Clock::now();
    if (learner_lost) {
      learner_lost = false;
      std::cerr << "actor " << options.actor_id << ": the learner answers again\n";
    }
    if (!learner_known || m.header.incarnation != learner_incarnation) {
      // A new learner (first contact, or restarted from a checkpoint): its
      // versions start where its checkpoint was, possibly below ours.
      if (learner_known) std::cerr << "actor " << options.actor_id << ": a restarted learner; taking its parameters\n";
      learner_known = true;
      learner_incarnation = m.header.incarnation;
      assembler = ParameterAssembler();
      // Messages sent to an earlier learner are not this one's to receipt.
      sent_to_learner = receipted = 0;
      send_hello();
    }
    if (const auto* chunk = std::get_if<ParameterChunkMessage>(&m.body)) {
      std::string why;
      if (assembler.add(*chunk, &why) == ParameterAssembler::Outcome::kComplete) {
        pending_parameters.emplace(assembler.version(), assembler.take());
        pending_from = learner_incarnation;
      }
      else if (!why.empty())
        ++counters.refused_messages;
    } else if (const auto* stop = std::get_if<StopMessage>(&m.body)) {
      stop_reason = "the learner said stop: " + stop->reason;
      // The learner waits for this before it closes.
      transport->send_control(encode_message(Message{header(policy_version), StopMessage{"stopping"}}));
    } else if (const auto* cost = std::get_if<CostEntryMessage>(&m.body)) {
      if (awaited_cost && cost->key == *awaited_cost) cost_answer = cost->ms;
    } else if (const auto* receipt = std::get_if<ReceiptMessage>(&m.body)) {
      receipted = std::max(receipted, receipt->trajectories_taken);
    } else if (!std::holds_alternative<HeartbeatMessage>(m.body)) {
      ++counters.refused_messages;
    }
  }

  // Everything the learner sent, a heartbeat when one is due, and the
  // learner-lost report. Called once per environment step.
  void poll_learner(int timeout_ms = 0) {
    if (timeout_ms > 0) transport->wait(timeout_ms);
    while (auto bytes = transport->receive_published(0)) handle(*bytes);
    while (auto bytes = transport->receive_control(0)) handle(*bytes);
    if (seconds_since(last_heartbeat) >= options.heartbeat_every_s) {
      last_heartbeat = Clock::now();
      transport->send_control(encode_message(Message{header(policy_version), HeartbeatMessage{
                                                         static_cast<uint64_t>(counters.steps_sent), current_rss_bytes()}}));
      transport->send_control(encode_message(Message{
          header(policy_version),
          MetricsMessage{{"wait_s", "collect_s", "send_s", "steps_sent"},
                         {wait_s, collect_s, send_s, static_cast<double>(counters.steps_sent)}}}));
    }
    if (!learner_lost && seconds_since(last_heard) > options.learner_timeout_s) {
      learner_lost = true;
      ++counters.learner_losses;
      std::cerr << "actor " << options.actor_id << ": no word from the learner for " << options.learner_timeout_s
                << " s; retrying\n";
    }
  }

  void take_pending_parameters() {
    if (!pending_parameters) return;
    try {
      work->load_parameters(pending_parameters->second, pending_parameters->first);
      policy_version = pending_parameters->first;
      parameters_from = pending_from;
      ++counters.parameter_versions;
    } catch (const std::exception& e) {  // LibTorch and the standard library throw their own
      ++counters.refused_messages;
      std::cerr << "actor " << options.actor_id << ": refused parameters: " << e.what() << "\n";
    }
    pending_parameters.reset();
  }
};

Actor::Actor(std::vector<TrainingGraph> graphs, const RuleMatcher& matcher, CostModel& cost,
             const LearnerEndpoints& endpoints, ActorOptions options)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  options.collector.seed = actor_seed(options.collector.seed, options.actor_id, options.incarnation);
  s.options = options;
  s.expect.run_id = options.run_id;
  s.expect.num_xfers = options.network.num_xfers;
  s.expect.num_graphs = static_cast<int32_t>(graphs.size());
  s.expect.max_steps = 0;  // the learner sends no trajectories
  s.work = std::make_unique<PolicyRolloutWork>(std::move(graphs), matcher, cost, options);
  s.transport = std::make_unique<ActorTransport>(endpoints, "actor-" + std::to_string(options.actor_id),
                                                 options.transport);
}

Actor::Actor(std::unique_ptr<ActorWork> work, const LearnerEndpoints& endpoints, ActorOptions options)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.options = options;
  s.expect.run_id = options.run_id;
  s.expect.max_steps = 0;  // the learner sends no trajectories
  s.work = std::move(work);
  s.transport = std::make_unique<ActorTransport>(endpoints, "actor-" + std::to_string(options.actor_id),
                                                 options.transport);
}

Actor::~Actor() = default;

const ActorCounters& Actor::counters() const { return impl_->counters; }

double Actor::settle_cost(const std::string& key, const std::function<double()>& measure) {
  Impl& s = *impl_;
  s.awaited_cost = key;
  s.cost_answer.reset();
  std::optional<double> proposal;  // measured here once the learner said it has no price
  Clock::time_point asked = Clock::now() - std::chrono::seconds(10);
  double result = -1;
  while (true) {
    if (seconds_since(asked) >= 2.0) {
      asked = Clock::now();
      s.transport->send_control(
          encode_message(Message{s.header(s.policy_version), CostEntryMessage{key, proposal.value_or(kUnknownCost)}}));
    }
    s.poll_learner(50);
    if (s.cost_answer && *s.cost_answer >= 0) {
      result = *s.cost_answer;
      ++s.counters.costs_settled;
      break;
    }
    if (s.cost_answer && !proposal) {  // nobody has priced it yet: this actor does
      proposal = measure();
      s.cost_answer.reset();
      asked = Clock::now() - std::chrono::seconds(10);
      continue;
    }
    s.cost_answer.reset();
    if (!s.stop_now || s.stop_now()) {
      result = proposal ? *proposal : measure();
      break;
    }
  }
  s.awaited_cost.reset();
  return result;
}

std::string Actor::run(const std::function<bool()>& should_stop) {
  Impl& s = *impl_;
  // One thread, as the in-process trainer's collector: on a small machine
  // the learner and the other actors need the other cores, and an OpenMP
  // pool spinning here would take them.
  ComputeThreads threads(s.options.threads);
  keep_freed_tensor_memory();
  auto stop_now = [&] {
    s.poll_learner();
    if (s.stop_reason.empty() && should_stop && should_stop()) s.stop_reason = "asked to stop";
    return !s.stop_reason.empty();
  };
  s.stop_now = stop_now;
  struct Forget {  // settle_cost() must not call into a finished run()
    Impl& s;
    ~Forget() { s.stop_now = nullptr; }
  } forget{s};
  s.send_hello();
  while (true) {
    // Parameters first: a rollout is made with one version, start to end.
    // And no rollout starts while more than max_unreceipted earlier ones
    // wait for the learner, so what it makes is acted with nearly the
    // learner's newest version. A message the learner never took (it
    // refused it) is given up after receipt_wait_s, while the learner
    // answers; a paused or gone one keeps this actor waiting.
    const Clock::time_point waiting_since = Clock::now();
    bool receipt_timed_out = false;
    // Parameters from the learner that answers now: a restarted one
    // refuses what its predecessor's acted (it sends its own on the hello
    // that its first word brings from here).
    auto parameters_current = [&] { return !s.learner_known || s.parameters_from == s.learner_incarnation; };
    auto may_start = [&] {
      if (s.policy_version < 0 || !parameters_current() || !s.work->has_work()) return false;
      const uint64_t waiting = s.sent_to_learner > s.receipted ? s.sent_to_learner - s.receipted : 0;
      if (waiting <= static_cast<uint64_t>(s.options.max_unreceipted)) return true;
      receipt_timed_out = !s.learner_lost && seconds_since(waiting_since) > s.options.receipt_wait_s;
      return receipt_timed_out;
    };
    while (true) {
      s.take_pending_parameters();
      if (may_start()) {
        // The newest parameters that came while waiting for the receipt;
        // a restarted learner's first word may come with them, and then
        // its own parameters are awaited.
        s.poll_learner(0);
        s.take_pending_parameters();
        if (!parameters_current()) continue;
        if (receipt_timed_out) {
          // The learner answers but never took the last message: it was
          // refused, and each such wait costs a rollout receipt_wait_s.
          ++s.counters.receipt_timeouts;
          std::cerr << "actor " << s.options.actor_id << ": no receipt for the last rollout after "
                    << s.options.receipt_wait_s << " s although the learner answers; starting the next one\n";
        }
        break;
      }
      // Without parameters, ask again every second: a request sent before
      // the connection was up is dropped, and so is a reply sent into a
      // dying one.
      if ((s.policy_version < 0 || !parameters_current()) && seconds_since(s.last_request) >= 1.0) {
        s.last_request = Clock::now();
        s.transport->send_control(encode_message(Message{s.header(s.policy_version), ParameterRequestMessage{s.policy_version}}));
      }
      s.poll_learner(100);
      if (stop_now()) return s.stop_reason;
    }
    s.wait_s += seconds_since(waiting_since);
    const int64_t version = s.policy_version;
    const Clock::time_point making = Clock::now();
    std::optional<MessageBody> body = s.work->make(stop_now);
    s.collect_s += seconds_since(making);
    // A stop inside the last step (a cost settled locally) ends here too.
    if (!body || !s.stop_reason.empty()) return s.stop_reason;
    // A learner refuses what another learner's parameters acted, and a
    // message it refuses gets no receipt. A restarted learner's first word
    // can also come in while a rollout is made or sent (both poll the
    // learner), so a rollout made with the parameters of the learner before
    // is not sent, and one that went out as the new learner took over is
    // not waited for: either would hold every later rollout for
    // receipt_wait_s.
    const uint64_t made_with = s.parameters_from;
    if (s.learner_known && made_with != s.learner_incarnation) {
      ++s.counters.rollouts_dropped;
      std::cerr << "actor " << s.options.actor_id << ": dropped a rollout of " << steps_in(*body)
                << " steps made with the previous learner's parameters; the restarted learner would refuse it\n";
      continue;
    }
    if (auto* rollout = std::get_if<Rollout>(&*body)) rollout->parameters_from = made_with;
    if (auto* dream = std::get_if<DreamTrajectoryMessage>(&*body)) dream->parameters_from = made_with;
    const int64_t steps = steps_in(*body);
    const Clock::time_point sending = Clock::now();
    const std::string bytes = encode_message(Message{s.header(version), std::move(*body)});
    const bool sent = s.transport->send_trajectory(bytes, stop_now);
    s.send_s += seconds_since(sending);
    if (!sent) return s.stop_reason;
    ++s.counters.rollouts_sent;
    if (made_with == s.learner_incarnation) ++s.sent_to_learner;
    s.counters.steps_sent += steps;
  }
}

}  // namespace graphworld
