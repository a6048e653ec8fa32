// The sockets between actors and the learner (ZeroMQ), carrying opaque
// bytes; what the bytes mean is learner/wire_message.h's business.
//
//   actor PUSH  ---- trajectories ---->  learner PULL   bounded queues both
//                                                       ends: a slow learner
//                                                       blocks its actors
//   actor SUB   <--- parameters -------  learner PUB    newest version to all
//   actor DEALER <-- control --------->  learner ROUTER hello, heartbeats,
//                                                       parameter requests
//                                                       answered at once, stop
//
// A message already received but not yet read is dropped when its
// connection closes (ZeroMQ discards the pipe), so a peer that announces its
// departure waits for the other side's acknowledgement before closing.
//
// Nothing here blocks forever: every receive takes a timeout, a blocked
// send gives up when its stop check says so, every socket closes with a
// bounded LINGER, and ZMTP heartbeats drop a peer whose machine vanished.
// Actors reconnect by themselves (ZeroMQ retries with backoff), so a learner
// that comes back on the same endpoints is found again.
//
// Endpoints are chosen per run: the learner binds ports the OS picks and
// publishes the resulting endpoints (endpoints_to_text), so runs on one
// machine never collide and leave nothing in /tmp or /dev/shm. Without
// CURVE only loopback addresses may be bound; with CURVE a ZAP handler
// admits only the run's actor keys.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/curve_keys.h"

namespace graphworld {

struct LearnerEndpoints {
  std::string trajectories, parameters, control;  // e.g. tcp://127.0.0.1:41873
};

// "trajectories=...\nparameters=...\ncontrol=...\n", and back (FormatError
// naming `what` for anything else).
std::string endpoints_to_text(const LearnerEndpoints& endpoints);
LearnerEndpoints endpoints_from_text(const std::string& text, const std::string& what);

// 127.x.x.x, ::1 or localhost: reachable from this machine only.
bool is_loopback_host(const std::string& host);

struct TransportOptions {
  int queue_messages = 1;          // high-water mark of each trajectory queue (sender and receiver): policy lag
  int linger_ms = 500;             // the longest a close waits to deliver
  int64_t max_message_bytes = int64_t{512} << 20;  // larger incoming messages are refused by ZeroMQ
  int heartbeat_interval_ms = 1000;  // ZMTP pings on every connection
  int heartbeat_timeout_ms = 3000;   // a silent connection is dropped after this
  int reconnect_ms = 100, reconnect_max_ms = 2000;  // actors' retry backoff
  // CURVE. The learner sets `own_keys` and `admitted_keys` (actors' public
  // keys); an actor sets `own_keys` and `learner_public_key`.
  bool curve = false;
  CurveKeyPair own_keys;
  std::vector<std::string> admitted_keys;
  std::string learner_public_key;
};

// Which of the learner's incoming sockets have a message waiting.
struct LearnerReadable {
  bool trajectories = false;
  bool control = false;
};

class LearnerTransport {
 public:
  // Binds the three sockets on `host` with OS-chosen ports. UsageError for a
  // non-loopback host without CURVE; UnavailableError if CURVE is asked of a
  // libzmq without it; Error if binding fails.
  LearnerTransport(const std::string& host, TransportOptions options);
  // `endpoints` again (a restarted learner keeps its ports, so actors find it).
  LearnerTransport(const LearnerEndpoints& endpoints, TransportOptions options);
  ~LearnerTransport();
  LearnerTransport(const LearnerTransport&) = delete;
  LearnerTransport& operator=(const LearnerTransport&) = delete;

  const LearnerEndpoints& endpoints() const;

  // Waits up to timeout_ms for either incoming socket.
  LearnerReadable wait(int timeout_ms);
  // The next trajectory message, or nothing after timeout_ms.
  std::optional<std::string> receive_trajectory(int timeout_ms);
  // The next control message and its sender's routing identity.
  std::optional<std::pair<std::string, std::string>> receive_control(int timeout_ms);
  // To one actor; false if it is not connected (never blocks).
  bool send_control(const std::string& peer, const std::string& bytes);
  // To every subscribed actor; a subscriber too slow to keep up misses
  // messages rather than growing the learner's memory.
  void publish(const std::string& bytes);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

class ActorTransport {
 public:
  // Connects to the learner (ZeroMQ connects lazily: the learner need not be
  // up yet). `identity` names the actor on the control socket.
  ActorTransport(const LearnerEndpoints& endpoints, const std::string& identity, TransportOptions options);
  ~ActorTransport();
  ActorTransport(const ActorTransport&) = delete;
  ActorTransport& operator=(const ActorTransport&) = delete;

  // Queues a trajectory message. While the queues are full (backpressure)
  // it waits, asking `should_stop` every 100 ms; returns false if that said
  // stop before the message was queued.
  bool send_trajectory(const std::string& bytes, const std::function<bool()>& should_stop);
  // The next published message, or nothing after timeout_ms.
  std::optional<std::string> receive_published(int timeout_ms);
  // Control to the learner; false if it cannot be queued now (never blocks).
  bool send_control(const std::string& bytes);
  std::optional<std::string> receive_control(int timeout_ms);
  // Waits up to timeout_ms until a published or a control message is there.
  bool wait(int timeout_ms);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace graphworld
