// The actor–learner sockets on real loopback TCP: messages arrive intact;
// runs on one machine get distinct endpoints; a learner that stops reading
// blocks its actors after a bounded queue; nothing waits forever on a gone
// peer; actors find a learner that comes back on its endpoints; CURVE
// admits only the run's keys; key files are private.
#include "common/transport.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "common/error.h"
#include "common/stopwatch.h"
#include "tests/support/test_env.h"

namespace graphworld {
namespace {

std::string payload(size_t bytes, char fill) { return std::string(bytes, fill); }

// Polls `receive` until it yields or `seconds` pass.
template <typename F>
auto receive_within(double seconds, F receive) -> decltype(receive()) {
  Stopwatch clock;
  while (clock.elapsed_s() < seconds)
    if (auto got = receive()) return got;
  return std::nullopt;
}

TEST(Transport, TrajectoriesControlAndParametersArriveIntact) {
  LearnerTransport learner("127.0.0.1", {});
  ActorTransport actor(learner.endpoints(), "actor-1", {});
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(actor.send_trajectory(payload(100000 + i, static_cast<char>('a' + i)), nullptr));
  for (int i = 0; i < 5; ++i) {
    const auto got = learner.receive_trajectory(5000);
    ASSERT_TRUE(got) << "trajectory " << i << " did not arrive";
    EXPECT_EQ(*got, payload(100000 + i, static_cast<char>('a' + i)));
  }
  ASSERT_TRUE(actor.send_control("hello"));
  const auto hello = learner.receive_control(5000);
  ASSERT_TRUE(hello);
  EXPECT_EQ(hello->first, "actor-1");
  EXPECT_EQ(hello->second, "hello");
  EXPECT_TRUE(learner.send_control("actor-1", "parameters, directly"));
  EXPECT_EQ(actor.receive_control(5000), "parameters, directly");
  EXPECT_FALSE(learner.send_control("no-such-actor", "x")) << "a send to an unknown actor must fail, not vanish";
  // A subscription takes a moment to reach the publisher: publish until seen.
  const auto published = receive_within(5.0, [&] {
    learner.publish("version 3");
    return actor.receive_published(50);
  });
  EXPECT_EQ(published, "version 3");
}

TEST(Transport, RunsOnOneMachineGetTheirOwnEndpoints) {
  LearnerTransport a("127.0.0.1", {}), b("127.0.0.1", {});
  for (const std::string& e : {a.endpoints().trajectories, a.endpoints().parameters, a.endpoints().control}) {
    EXPECT_NE(e, b.endpoints().trajectories);
    EXPECT_NE(e, b.endpoints().parameters);
    EXPECT_NE(e, b.endpoints().control);
    EXPECT_EQ(e.rfind("tcp://127.0.0.1:", 0), 0u) << e;
  }
  const LearnerEndpoints back = endpoints_from_text(endpoints_to_text(a.endpoints()), "endpoints");
  EXPECT_EQ(back.trajectories, a.endpoints().trajectories);
  EXPECT_EQ(back.control, a.endpoints().control);
  EXPECT_THROW(endpoints_from_text("trajectories=tcp://x:1\n", "endpoints"), FormatError);
  EXPECT_THROW(endpoints_from_text("bogus=1\n", "endpoints"), FormatError);
}

TEST(Transport, WithoutCurveOnlyLoopbackMayBeBound) {
  try {
    LearnerTransport learner("0.0.0.0", {});
    FAIL() << "bound every interface without CURVE";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("CURVE"), std::string::npos) << e.what();
  }
}

TEST(Transport, ALearnerThatStopsReadingBlocksItsActorsAfterABoundedQueue) {
  TransportOptions options;
  options.queue_messages = 2;
  LearnerTransport learner("127.0.0.1", options);
  ActorTransport actor(learner.endpoints(), "actor-1", options);
  // Wait for the connection, so the count below is of queued messages.
  ASSERT_TRUE(actor.send_trajectory("first", nullptr));
  ASSERT_EQ(learner.receive_trajectory(5000), "first");
  int queued = 0;
  Stopwatch clock;
  const std::string message = payload(1 << 20, 'x');
  while (clock.elapsed_s() < 3.0) {
    const bool sent = actor.send_trajectory(message, [&] { return clock.elapsed_s() > 3.0; });
    if (!sent) break;
    ++queued;
    ASSERT_LT(queued, 100) << "the actor was never held back";
  }
  // The queues at both ends plus what the kernel's socket buffers hold.
  EXPECT_GE(queued, 2);
  EXPECT_LE(queued, 24) << "1 MiB messages kept being accepted: the queue is not bounded";
  // The learner reads again: the actor is released.
  for (int i = 0; i < queued; ++i) ASSERT_TRUE(learner.receive_trajectory(5000)) << i;
  EXPECT_TRUE(actor.send_trajectory("after", nullptr));
  EXPECT_EQ(learner.receive_trajectory(5000), "after");
}

TEST(Transport, ClosingNeverWaitsLongOnAGonePeer) {
  LearnerEndpoints endpoints;
  {
    LearnerTransport learner("127.0.0.1", {});
    endpoints = learner.endpoints();
  }
  Stopwatch clock;
  {
    ActorTransport actor(endpoints, "actor-1", {});
    EXPECT_FALSE(actor.send_trajectory("nobody listens", [&] { return clock.elapsed_s() > 0.5; }));
    EXPECT_FALSE(actor.receive_published(100));
    EXPECT_FALSE(actor.receive_control(100));
  }
  EXPECT_LT(clock.elapsed_s(), 3.0) << "an actor with no learner took too long to give up and close";
  Stopwatch learner_clock;
  {
    LearnerTransport learner("127.0.0.1", {});
    ActorTransport actor(learner.endpoints(), "actor-2", {});
    ASSERT_TRUE(actor.send_trajectory("queued", nullptr));
    // The learner goes away with the message unread, the actor right after.
  }
  EXPECT_LT(learner_clock.elapsed_s(), 3.0);
}

TEST(Transport, ActorsFindALearnerThatComesBackOnItsEndpoints) {
  auto learner = std::make_unique<LearnerTransport>("127.0.0.1", TransportOptions{});
  const LearnerEndpoints endpoints = learner->endpoints();
  ActorTransport actor(endpoints, "actor-1", {});
  ASSERT_TRUE(actor.send_trajectory("before", nullptr));
  ASSERT_EQ(learner->receive_trajectory(5000), "before");
  learner.reset();  // the learner dies
  learner = std::make_unique<LearnerTransport>(endpoints, TransportOptions{});
  // A message sent into the dead connection before the actor notices is
  // lost with it (the learner died holding it anyway): send until one lands.
  Stopwatch clock;
  const auto got = receive_within(10.0, [&] {
    actor.send_trajectory("after", [&] { return clock.elapsed_s() > 10; });
    return learner->receive_trajectory(100);
  });
  EXPECT_EQ(got, "after") << "the actor never reconnected";
  EXPECT_LT(clock.elapsed_s(), 5.0);
}

TransportOptions learner_curve(const CurveKeyPair& learner, const std::vector<std::string>& admitted) {
  TransportOptions o;
  o.curve = true;
  o.own_keys = learner;
  o.admitted_keys = admitted;
  return o;
}

TransportOptions actor_curve(const CurveKeyPair& actor, const std::string& learner_public) {
  TransportOptions o;
  o.curve = true;
  o.own_keys = actor;
  o.learner_public_key = learner_public;
  return o;
}

TEST(Transport, CurveAdmitsTheRunsKeysOnly) {
  const CurveKeyPair learner_keys = generate_curve_keys(), good = generate_curve_keys(),
                     stranger = generate_curve_keys();
  LearnerTransport learner("0.0.0.0", learner_curve(learner_keys, {good.public_key}));
  EXPECT_EQ(learner.endpoints().trajectories.find("0.0.0.0"), std::string::npos)
      << "a wildcard bind should publish the host's name";
  LearnerEndpoints local = learner.endpoints();
  for (std::string* e : {&local.trajectories, &local.parameters, &local.control})
    *e = "tcp://127.0.0.1" + e->substr(e->rfind(':'));

  ActorTransport intruder(local, "intruder", actor_curve(stranger, learner_keys.public_key));
  ActorTransport wrong_server(local, "wrong-server", actor_curve(good, stranger.public_key));
  ActorTransport member(local, "member", actor_curve(good, learner_keys.public_key));
  Stopwatch clock;
  auto give_up = [&] { return clock.elapsed_s() > 2.0; };
  EXPECT_FALSE(intruder.send_trajectory("from a stranger", give_up)) << "an unknown key got a connection";
  EXPECT_FALSE(wrong_server.send_trajectory("to the wrong server", give_up));
  ASSERT_TRUE(member.send_trajectory("from the run", nullptr));
  EXPECT_EQ(learner.receive_trajectory(5000), "from the run");
  EXPECT_FALSE(learner.receive_trajectory(500)) << "something other than the member's message arrived";
}

TEST(Transport, KeyFilesArePrivateAndCheckedWhenRead) {
  const std::string dir = testing::scratch_dir() + "/keys";
  std::filesystem::create_directories(dir);
  const CurveKeyPair keys = generate_curve_keys();
  write_curve_keys(dir + "/learner.key", keys);
  struct stat info {};
  ASSERT_EQ(::stat((dir + "/learner.key").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  const CurveKeyPair back = read_curve_keys(dir + "/learner.key");
  EXPECT_EQ(back.public_key, keys.public_key);
  EXPECT_EQ(back.secret_key, keys.secret_key);
  ::chmod((dir + "/learner.key").c_str(), 0644);
  EXPECT_THROW(read_curve_keys(dir + "/learner.key"), FormatError);
  EXPECT_THROW(read_curve_keys(dir + "/missing.key"), FormatError);
}

}  // namespace
}  // namespace graphworld
