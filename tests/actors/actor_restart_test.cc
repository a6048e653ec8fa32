// An actor across a learner restart, over real loopback sockets, with this
// test speaking the learner's side of the protocol so that it decides the
// order of events: the new learner's first word arrives while the actor is
// making a trajectory with the old learner's parameters. A learner refuses
// such a trajectory and sends no receipt for it, so the actor must neither
// send it nor wait for its receipt; it waits for the new learner's
// parameters and goes on at once.
#include "actors/actor.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "common/stopwatch.h"
#include "common/transport.h"
#include "learner/wire_message.h"

namespace graphworld {
namespace {

using namespace std::chrono_literals;

const char* const kRunId = "actor-restart-test";

// The smallest trajectory the wire carries (one dream step); the actor's
// connection logic does not look inside. make() holds until the test opens
// the gate, polling the connection as real work does.
class GatedWork final : public ActorWork {
 public:
  void load_parameters(const std::string&, int64_t) override {}

  std::optional<MessageBody> make(const std::function<bool()>& stop_now) override {
    making = true;
    while (!open) {
      if (stop_now()) return std::nullopt;
      std::this_thread::sleep_for(2ms);
    }
    making = false;
    DreamTrajectoryMessage d;
    d.rows = d.steps = d.latent_dim = d.hidden_dim = 1;
    d.actions = 2;
    d.z = d.h = d.log_prob = d.value = d.reward = d.bootstrap = {0.0f};
    d.mask = {1, 1};
    d.action = {0};
    d.done = {0};
    return MessageBody{d};
  }

  std::atomic<bool> open{false}, making{false};
};

// The test's learner: one incarnation on the run's endpoints.
struct ScriptedLearner {
  ScriptedLearner(std::unique_ptr<LearnerTransport> t, uint64_t incarnation)
      : transport(std::move(t)), incarnation(incarnation) {}

  std::string encode(MessageBody body, int64_t version) const {
    MessageHeader h;
    h.run_id = kRunId;
    h.sender_id = kLearnerSenderId;
    h.incarnation = incarnation;
    h.policy_version = version;
    return encode_message(Message{h, std::move(body)});
  }
  void send_parameters(const std::string& peer, int64_t version) const {
    for (ParameterChunkMessage& chunk : split_parameters(version, "parameters of " + std::to_string(incarnation)))
      transport->send_control(peer, encode(std::move(chunk), version));
  }
  // The actor's next control message of kind T within `seconds` (others
  // are answered as a learner would: heartbeats get a heartbeat back),
  // with the peer to answer.
  template <typename T>
  std::optional<std::pair<std::string, Message>> next_control(double seconds, bool answer_heartbeats = true) {
    MessageExpectations expect;
    expect.run_id = kRunId;
    Stopwatch clock;
    while (clock.elapsed_s() < seconds) {
      auto got = transport->receive_control(50);
      if (!got) continue;
      DecodeResult r = decode_message(got->second, expect);
      if (!r.message) continue;
      peer = got->first;
      if (std::holds_alternative<T>(r.message->body)) return std::make_pair(got->first, std::move(*r.message));
      if (answer_heartbeats && std::holds_alternative<HeartbeatMessage>(r.message->body))
        transport->send_control(got->first, encode(HeartbeatMessage{}, 1));
    }
    return std::nullopt;
  }
  // The next trajectory within `seconds`, decoded whatever learner's
  // parameters made it (the test checks that itself).
  std::optional<DreamTrajectoryMessage> next_trajectory(double seconds) {
    MessageExpectations expect;
    expect.run_id = kRunId;
    Stopwatch clock;
    while (clock.elapsed_s() < seconds) {
      next_control<StopMessage>(0.01);  // keep answering heartbeats
      auto bytes = transport->receive_trajectory(50);
      if (!bytes) continue;
      DecodeResult r = decode_message(*bytes, expect);
      if (r.message) return std::get<DreamTrajectoryMessage>(r.message->body);
    }
    return std::nullopt;
  }

  std::unique_ptr<LearnerTransport> transport;
  uint64_t incarnation;
  std::string peer;
};

TEST(ActorRestart, NothingTheOldLearnersParametersActedIsSentOrWaitedFor) {
  ScriptedLearner old_learner(std::make_unique<LearnerTransport>("127.0.0.1", TransportOptions{}), 11);
  const LearnerEndpoints endpoints = old_learner.transport->endpoints();
  auto owned_work = std::make_unique<GatedWork>();
  GatedWork& work = *owned_work;
  ActorOptions options;
  options.actor_id = 0;
  options.incarnation = 1;
  options.run_id = kRunId;
  options.receipt_wait_s = 3.0;  // what a refused trajectory would cost each later one
  options.learner_timeout_s = 30.0;
  Actor actor(std::move(owned_work), endpoints, options);
  std::atomic<bool> stop{false};
  std::thread acting([&] { actor.run([&] { return stop.load(); }); });
  struct Join {
    std::atomic<bool>& stop;
    std::thread& t;
    ~Join() {
      stop = true;
      if (t.joinable()) t.join();
    }
  } join{stop, acting};

  // The old learner: the actor's hello, its parameters, one trajectory.
  const auto hello = old_learner.next_control<HelloMessage>(10);
  ASSERT_TRUE(hello) << "the actor never said hello";
  old_learner.send_parameters(hello->first, 5);
  work.open = true;
  const auto first = old_learner.next_trajectory(10);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->parameters_from, 11u);
  // The actor starts its next trajectory with the old parameters once the
  // first is receipted; the old learner dies, and a new one comes up on the
  // same endpoints.
  work.open = false;
  old_learner.transport->send_control(old_learner.peer, old_learner.encode(ReceiptMessage{1}, 5));
  Stopwatch clock;
  while (!work.making && clock.elapsed_s() < 10) std::this_thread::sleep_for(2ms);
  ASSERT_TRUE(work.making) << "the actor did not start its second trajectory";
  old_learner.transport.reset();
  ScriptedLearner new_learner(std::make_unique<LearnerTransport>(endpoints, TransportOptions{}), 22);
  // Its first word (a heartbeat's answer) comes in mid-trajectory; the
  // actor greets the new learner, and only then does the trajectory end.
  const auto greeted = new_learner.next_control<HelloMessage>(10);
  ASSERT_TRUE(greeted) << "the actor did not notice the new learner";
  work.open = true;
  // It does not act again until the new learner's parameters come.
  EXPECT_FALSE(new_learner.next_trajectory(1.0)) << "a trajectory came before the new learner's parameters";
  new_learner.send_parameters(greeted->first, 3);
  // Then every trajectory is made with them, and each receipt lets the
  // next one start: none waits out receipt_wait_s (counted below).
  for (uint64_t taken = 1; taken <= 3; ++taken) {
    const auto t = new_learner.next_trajectory(10);
    ASSERT_TRUE(t) << "trajectory " << taken << " never came";
    EXPECT_EQ(t->parameters_from, 22u) << "trajectory " << taken << " was made with the old learner's parameters";
    new_learner.transport->send_control(new_learner.peer, new_learner.encode(ReceiptMessage{taken}, 3));
  }
  stop = true;
  acting.join();
  EXPECT_EQ(actor.counters().rollouts_dropped, 1) << "the trajectory made with the old parameters";
  EXPECT_EQ(actor.counters().receipt_timeouts, 0);
}

}  // namespace
}  // namespace graphworld
