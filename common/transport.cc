#include "common/transport.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <sstream>
#include <thread>
#include <zmq.hpp>

#include "common/error.h"

namespace graphworld {
namespace {

// Where libzmq looks for the authentication handler (ZAP, RFC 27).
constexpr const char* kZapEndpoint = "inproc://zeromq.zap.01";
// Published and control messages are few but may come in bursts (a policy
// is several chunks); their queues are sized in messages.
constexpr int kBurstQueueMessages = 1000;


// The host of a tcp endpoint ("tcp://HOST:PORT").
std::string host_of(const std::string& endpoint) {
  const std::string prefix = "tcp://";
  if (endpoint.rfind(prefix, 0) != 0) return "";
  const std::string rest = endpoint.substr(prefix.size());
  return rest.substr(0, rest.rfind(':'));
}

void set_common_options(zmq::socket_t& socket, const TransportOptions& o) {
  socket.set(zmq::sockopt::linger, o.linger_ms);
  socket.set(zmq::sockopt::heartbeat_ivl, o.heartbeat_interval_ms);
  socket.set(zmq::sockopt::heartbeat_timeout, o.heartbeat_timeout_ms);
  socket.set(zmq::sockopt::heartbeat_ttl, o.heartbeat_timeout_ms);
}

void set_server_security(zmq::socket_t& socket, const TransportOptions& o) {
  if (!o.curve) return;
  socket.set(zmq::sockopt::zap_domain, "graphworld");
  socket.set(zmq::sockopt::curve_server, true);
  socket.set(zmq::sockopt::curve_secretkey, o.own_keys.secret_key);
}

void set_client_options(zmq::socket_t& socket, const TransportOptions& o) {
  set_common_options(socket, o);
  socket.set(zmq::sockopt::reconnect_ivl, o.reconnect_ms);
  socket.set(zmq::sockopt::reconnect_ivl_max, o.reconnect_max_ms);
  if (o.curve) {
    socket.set(zmq::sockopt::curve_serverkey, o.learner_public_key);
    socket.set(zmq::sockopt::curve_publickey, o.own_keys.public_key);
    socket.set(zmq::sockopt::curve_secretkey, o.own_keys.secret_key);
  }
}

void check_security(const std::string& host, const TransportOptions& o) {
  if (o.curve) {
    require_curve();
    if (o.own_keys.public_key.size() != 40 || o.own_keys.secret_key.size() != 40)
      throw UsageError("CURVE needs this process's key pair (40-character Z85 keys)");
  } else if (!is_loopback_host(host)) {
    throw UsageError("binding '" + host + "' without CURVE would let anyone who can reach it feed the learner; "
                     "single-node runs bind loopback (127.0.0.1), cluster runs turn CURVE on");
  }
}

// zmq::poll, with a signal's interruption (EINTR) read as "nothing yet":
// the caller's loop then sees the stop request the signal raised.
int poll_sockets(zmq::pollitem_t* items, size_t count, int timeout_ms) {
  try {
    return zmq::poll(items, count, std::chrono::milliseconds(timeout_ms));
  } catch (const zmq::error_t& e) {
    if (e.num() == EINTR) return 0;
    throw;
  }
}

// A non-blocking receive, with EINTR read as "nothing yet".
bool receive_now(zmq::socket_t& socket, zmq::message_t& message) {
  try {
    return socket.recv(message, zmq::recv_flags::dontwait).has_value();
  } catch (const zmq::error_t& e) {
    if (e.num() == EINTR) return false;
    throw;
  }
}

// A non-blocking send; false if it would block or a signal interrupted it.
bool send_now(zmq::socket_t& socket, const std::string& bytes) {
  try {
    return socket.send(zmq::buffer(bytes), zmq::send_flags::dontwait).has_value();
  } catch (const zmq::error_t& e) {
    if (e.num() == EINTR) return false;
    throw;
  }
}

std::optional<std::string> receive_bytes(zmq::socket_t& socket, int timeout_ms) {
  zmq::pollitem_t item{socket.handle(), 0, ZMQ_POLLIN, 0};
  if (poll_sockets(&item, 1, timeout_ms) <= 0) return std::nullopt;
  zmq::message_t message;
  if (!receive_now(socket, message)) return std::nullopt;
  std::string bytes(static_cast<const char*>(message.data()), message.size());
  // Parts beyond the first are not part of the protocol: read and drop them.
  while (message.more() && receive_now(socket, message)) {
  }
  return bytes;
}

// Admits CURVE clients whose public key is on the run's list; everything
// else gets status 400 and never reaches a socket.
class ZapHandler {
 public:
  ZapHandler(zmq::context_t& context, std::vector<std::string> admitted)
      : context_(context), socket_(context, zmq::socket_type::rep), admitted_(std::move(admitted)) {
    socket_.set(zmq::sockopt::linger, 0);
    socket_.bind(kZapEndpoint);
    thread_ = std::thread([this] { serve(); });
  }
  ~ZapHandler() {
    stop_ = true;
    thread_.join();
  }

 private:
  void serve() {
    while (!stop_) {
      try {
        answer_one();
      } catch (const zmq::error_t&) {
        // A signal (EINTR) or a failed reply part leaves the REP socket
        // mid-exchange, where it would refuse every later request: start it
        // over. A client caught in between retries its handshake.
        try {
          socket_.close();
          socket_ = zmq::socket_t(context_, zmq::socket_type::rep);
          socket_.set(zmq::sockopt::linger, 0);
          socket_.bind(kZapEndpoint);
        } catch (const zmq::error_t&) {
          return;  // the context is closing
        }
      }
    }
    socket_.close();
  }

  void answer_one() {
    zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
    if (poll_sockets(&item, 1, 100) <= 0) return;
    std::vector<zmq::message_t> frames;
    zmq::message_t frame;
    do {
      if (!receive_now(socket_, frame)) break;
      frames.emplace_back(std::move(frame));
    } while (frames.back().more());
    if (frames.empty()) return;
    const std::string request_id = frames.size() > 1 ? frames[1].to_string() : "";
    bool admit = false;
    if (frames.size() >= 7 && frames[5].to_string() == "CURVE" && frames[6].size() == 32) {
      char z85[41] = {};
      zmq_z85_encode(z85, static_cast<const uint8_t*>(frames[6].data()), 32);
      for (const std::string& key : admitted_) admit = admit || key == z85;
    }
    const std::vector<std::string> reply = {"1.0", request_id, admit ? "200" : "400",
                                            admit ? "OK" : "not a key of this run", "", ""};
    for (size_t i = 0; i < reply.size(); ++i)
      socket_.send(zmq::buffer(reply[i]), i + 1 < reply.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
  }

  zmq::context_t& context_;
  zmq::socket_t socket_;
  std::vector<std::string> admitted_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace

std::string endpoints_to_text(const LearnerEndpoints& e) {
  return "trajectories=" + e.trajectories + "\nparameters=" + e.parameters + "\ncontrol=" + e.control + "\n";
}

LearnerEndpoints endpoints_from_text(const std::string& text, const std::string& what) {
  LearnerEndpoints e;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const size_t eq = line.find('=');
    if (line.empty()) continue;
    if (eq == std::string::npos) throw FormatError(what + ": '" + line + "' is not NAME=ENDPOINT");
    const std::string name = line.substr(0, eq), value = line.substr(eq + 1);
    if (name == "trajectories") e.trajectories = value;
    else if (name == "parameters") e.parameters = value;
    else if (name == "control") e.control = value;
    else throw FormatError(what + ": unknown endpoint '" + name + "' (expected trajectories, parameters, control)");
  }
  if (e.trajectories.empty() || e.parameters.empty() || e.control.empty())
    throw FormatError(what + ": the trajectories, parameters and control endpoints are not all there");
  return e;
}

struct LearnerTransport::Impl {
  TransportOptions options;
  zmq::context_t context{1};
  std::unique_ptr<ZapHandler> zap;  // before the sockets: they consult it while binding clients
  zmq::socket_t trajectories{context, zmq::socket_type::pull};
  zmq::socket_t parameters{context, zmq::socket_type::pub};
  zmq::socket_t control{context, zmq::socket_type::router};
  LearnerEndpoints endpoints;

  explicit Impl(TransportOptions o) : options(std::move(o)) {
    if (options.curve) zap = std::make_unique<ZapHandler>(context, options.admitted_keys);
    for (zmq::socket_t* s : {&trajectories, &parameters, &control}) {
      set_common_options(*s, options);
      set_server_security(*s, options);
    }
    trajectories.set(zmq::sockopt::rcvhwm, options.queue_messages);
    trajectories.set(zmq::sockopt::maxmsgsize, options.max_message_bytes);
    control.set(zmq::sockopt::maxmsgsize, options.max_message_bytes);
    control.set(zmq::sockopt::router_mandatory, true);  // a send to a gone actor fails instead of vanishing
    // An actor that reconnects keeps its routing id. Without a handover the
    // router refuses the new connection while it still holds the old one,
    // which it does after a pause of its own (a stopped learner has not yet
    // seen the actor's end close): the actor's messages are then dropped and
    // the learner's replies go to the dead connection, both sides waiting.
    control.set(zmq::sockopt::router_handover, true);
    control.set(zmq::sockopt::sndhwm, kBurstQueueMessages);
    parameters.set(zmq::sockopt::sndhwm, kBurstQueueMessages);
  }

  void bind(zmq::socket_t& socket, const std::string& endpoint, std::string& bound) {
    try {
      socket.bind(endpoint);
    } catch (const zmq::error_t& e) {
      throw Error("cannot bind " + endpoint + ": " + e.what() +
                  " (is another learner of this run still running, or the port taken?)");
    }
    bound = socket.get(zmq::sockopt::last_endpoint);
  }

  ~Impl() {
    for (zmq::socket_t* s : {&trajectories, &parameters, &control}) s->close();
    zap.reset();
    context.close();
  }
};

LearnerTransport::LearnerTransport(const std::string& host, TransportOptions options) {
  check_security(host, options);
  impl_ = std::make_unique<Impl>(std::move(options));
  const std::string any = "tcp://" + (host == "localhost" ? std::string("127.0.0.1") : host) + ":*";
  impl_->bind(impl_->trajectories, any, impl_->endpoints.trajectories);
  impl_->bind(impl_->parameters, any, impl_->endpoints.parameters);
  impl_->bind(impl_->control, any, impl_->endpoints.control);
  // A wildcard address is where the learner listens, not where actors find it.
  if (host == "0.0.0.0" || host == "*") {
    char name[256] = {};
    gethostname(name, sizeof(name) - 1);
    for (std::string* e : {&impl_->endpoints.trajectories, &impl_->endpoints.parameters, &impl_->endpoints.control})
      *e = "tcp://" + std::string(name) + e->substr(e->rfind(':'));
  }
}

LearnerTransport::LearnerTransport(const LearnerEndpoints& endpoints, TransportOptions options) {
  for (const std::string* e : {&endpoints.trajectories, &endpoints.parameters, &endpoints.control})
    check_security(host_of(*e), options);
  impl_ = std::make_unique<Impl>(std::move(options));
  impl_->bind(impl_->trajectories, endpoints.trajectories, impl_->endpoints.trajectories);
  impl_->bind(impl_->parameters, endpoints.parameters, impl_->endpoints.parameters);
  impl_->bind(impl_->control, endpoints.control, impl_->endpoints.control);
}

LearnerTransport::~LearnerTransport() = default;

const LearnerEndpoints& LearnerTransport::endpoints() const { return impl_->endpoints; }

LearnerReadable LearnerTransport::wait(int timeout_ms) {
  zmq::pollitem_t items[] = {{impl_->trajectories.handle(), 0, ZMQ_POLLIN, 0},
                             {impl_->control.handle(), 0, ZMQ_POLLIN, 0}};
  poll_sockets(items, 2, timeout_ms);
  return {(items[0].revents & ZMQ_POLLIN) != 0, (items[1].revents & ZMQ_POLLIN) != 0};
}

std::optional<std::string> LearnerTransport::receive_trajectory(int timeout_ms) {
  return receive_bytes(impl_->trajectories, timeout_ms);
}

std::optional<std::pair<std::string, std::string>> LearnerTransport::receive_control(int timeout_ms) {
  zmq::pollitem_t item{impl_->control.handle(), 0, ZMQ_POLLIN, 0};
  if (poll_sockets(&item, 1, timeout_ms) <= 0) return std::nullopt;
  zmq::message_t identity, body;
  if (!receive_now(impl_->control, identity)) return std::nullopt;
  if (!identity.more() || !receive_now(impl_->control, body)) return std::nullopt;
  std::pair<std::string, std::string> out{identity.to_string(), body.to_string()};
  zmq::message_t extra;
  while (body.more() && receive_now(impl_->control, extra)) body.swap(extra);
  return out;
}

bool LearnerTransport::send_control(const std::string& peer, const std::string& bytes) {
  try {
    if (!impl_->control.send(zmq::buffer(peer), zmq::send_flags::sndmore | zmq::send_flags::dontwait)) return false;
    return impl_->control.send(zmq::buffer(bytes), zmq::send_flags::dontwait).has_value();
  } catch (const zmq::error_t&) {
    return false;  // EHOSTUNREACH: no such actor connected (router_mandatory); or EINTR
  }
}

void LearnerTransport::publish(const std::string& bytes) { send_now(impl_->parameters, bytes); }

struct ActorTransport::Impl {
  TransportOptions options;
  zmq::context_t context{1};
  zmq::socket_t trajectories{context, zmq::socket_type::push};
  zmq::socket_t published{context, zmq::socket_type::sub};
  zmq::socket_t control{context, zmq::socket_type::dealer};

  ~Impl() {
    for (zmq::socket_t* s : {&trajectories, &published, &control}) s->close();
    context.close();
  }
};

ActorTransport::ActorTransport(const LearnerEndpoints& endpoints, const std::string& identity,
                               TransportOptions options)
    : impl_(std::make_unique<Impl>()) {
  if (options.curve) {
    require_curve();
    if (options.learner_public_key.size() != 40 || options.own_keys.secret_key.size() != 40)
      throw UsageError("CURVE needs the learner's public key and this actor's key pair");
  }
  impl_->options = std::move(options);
  const TransportOptions& o = impl_->options;
  for (zmq::socket_t* s : {&impl_->trajectories, &impl_->published, &impl_->control}) set_client_options(*s, o);
  // Queue only to a live connection: while the learner is away, sends wait
  // (and see the stop check) instead of filling a pipe to nowhere.
  impl_->trajectories.set(zmq::sockopt::sndhwm, o.queue_messages);
  impl_->trajectories.set(zmq::sockopt::immediate, true);
  impl_->published.set(zmq::sockopt::rcvhwm, kBurstQueueMessages);
  impl_->published.set(zmq::sockopt::maxmsgsize, o.max_message_bytes);
  impl_->published.set(zmq::sockopt::subscribe, "");
  impl_->control.set(zmq::sockopt::routing_id, identity);
  impl_->control.set(zmq::sockopt::immediate, true);
  impl_->control.set(zmq::sockopt::sndhwm, kBurstQueueMessages);
  impl_->control.set(zmq::sockopt::maxmsgsize, o.max_message_bytes);
  try {
    impl_->trajectories.connect(endpoints.trajectories);
    impl_->published.connect(endpoints.parameters);
    impl_->control.connect(endpoints.control);
  } catch (const zmq::error_t& e) {
    throw UsageError(std::string("cannot connect to the learner's endpoints: ") + e.what());
  }
}

ActorTransport::~ActorTransport() = default;

bool ActorTransport::send_trajectory(const std::string& bytes, const std::function<bool()>& should_stop) {
  while (true) {
    if (send_now(impl_->trajectories, bytes)) return true;
    if (should_stop && should_stop()) return false;
    zmq::pollitem_t item{impl_->trajectories.handle(), 0, ZMQ_POLLOUT, 0};
    poll_sockets(&item, 1, 100);
  }
}

std::optional<std::string> ActorTransport::receive_published(int timeout_ms) {
  return receive_bytes(impl_->published, timeout_ms);
}

bool ActorTransport::send_control(const std::string& bytes) { return send_now(impl_->control, bytes); }

std::optional<std::string> ActorTransport::receive_control(int timeout_ms) {
  return receive_bytes(impl_->control, timeout_ms);
}

bool ActorTransport::wait(int timeout_ms) {
  zmq::pollitem_t items[] = {{impl_->published.handle(), 0, ZMQ_POLLIN, 0},
                             {impl_->control.handle(), 0, ZMQ_POLLIN, 0}};
  return poll_sockets(items, 2, timeout_ms) > 0;
}

bool is_loopback_host(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

}  // namespace graphworld
