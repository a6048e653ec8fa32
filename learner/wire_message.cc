#include "learner/wire_message.h"

#include <capnp/message.h>
#include <capnp/serialize.h>

#include <bit>
#include <cmath>
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "common/checksum.h"
#include "common/schema/messages.capnp.h"

namespace graphworld {

static_assert(std::endian::native == std::endian::little,
              "messages carry little-endian arrays as raw bytes; a big-endian host needs byte swapping here");

namespace {

// Limits on what a peer may ask the receiver to allocate or walk.
constexpr int32_t kMaxNodes = 1 << 22;
constexpr int32_t kMaxEdges = 1 << 23;
constexpr int32_t kMaxLocations = 1 << 20;
constexpr int64_t kMaxLocationsPerObservation = int64_t{1} << 28;  // keeps the int32 tables from overflowing
constexpr size_t kMaxTextBytes = 4096;
constexpr size_t kMaxMetrics = 4096;
constexpr size_t kMaxCostKeyBytes = 16384;  // a canonical key names an op, its attributes and input shapes
constexpr unsigned kMaxSegments = 1 << 16;
constexpr unsigned kMaxEpisodes = 1 << 20;
// Features are normalised to a few units; rewards, values and costs are
// milliseconds or returns of them. Anything beyond this is corrupt and
// would overflow the update's arithmetic.
constexpr float kMaxMagnitude = 1e7f;

bool plausible(float x) { return std::isfinite(x) && std::fabs(x) <= kMaxMagnitude; }

// Thrown inside decode only, and turned into DecodeResult::error.
struct Invalid {
  std::string what;
};

[[noreturn]] void invalid(std::string what) { throw Invalid{std::move(what)}; }

template <typename T>
capnp::Data::Reader as_data(const std::vector<T>& v) {
  static_assert(std::is_trivially_copyable_v<T>);
  return capnp::Data::Reader(reinterpret_cast<const kj::byte*>(v.data()), v.size() * sizeof(T));
}

// A Data blob as `count` values of T; the size must match exactly.
template <typename T>
std::vector<T> from_data(capnp::Data::Reader data, size_t count, const std::string& field) {
  if (data.size() != count * sizeof(T))
    invalid(field + " holds " + std::to_string(data.size()) + " bytes, expected " + std::to_string(count * sizeof(T)));
  std::vector<T> out(count);
  if (count > 0) std::memcpy(out.data(), data.begin(), data.size());
  return out;
}

// A Data blob of int32 whose length is not known in advance.
std::vector<int32_t> int32_data(capnp::Data::Reader data, const std::string& field) {
  if (data.size() % sizeof(int32_t) != 0) invalid(field + " is not a whole number of int32 values");
  return from_data<int32_t>(data, data.size() / sizeof(int32_t), field);
}

std::string text(capnp::Text::Reader t, const std::string& field) {
  if (t.size() > kMaxTextBytes) invalid(field + " is longer than " + std::to_string(kMaxTextBytes) + " bytes");
  return std::string(t.cStr(), t.size());
}

// --- encoding ---------------------------------------------------------------

void encode_observation(const Observation& o, schema::CompactObservation::Builder b) {
  const GraphTuple& g = o.graph;
  b.setNumNodes(g.num_nodes);
  b.setNumEdges(g.num_edges);
  b.setNumXfers(o.num_xfers);
  b.setMaxLocations(o.max_locations);
  b.setNodeFeatures(as_data(g.node_features));
  b.setEdgeFeatures(as_data(g.edge_features));
  b.setGlobals(as_data(g.globals));
  b.setSenders(as_data(g.senders));
  b.setReceivers(as_data(g.receivers));
  b.setNodeOp(as_data(g.node_op));
  b.setXferMask(as_data(o.xfer_mask));
  std::vector<int32_t> xfers, counts;
  for (int32_t x = 0; x < o.num_xfers && static_cast<size_t>(x) + 1 < o.location_begin.size(); ++x)
    if (o.location_count(x) > 0) {
      xfers.push_back(x);
      counts.push_back(o.location_count(x));
    }
  b.setLocationXfers(as_data(xfers));
  b.setLocationCounts(as_data(counts));
  b.setNodeBegin(as_data(o.node_begin));
  b.setMatchNodes(as_data(o.match_nodes));
  b.setLocationReward(as_data(o.location_reward));
  b.setXferReward(as_data(o.xfer_reward));
}

void encode_rollout(const Rollout& rollout, schema::TrajectoryBatch::Builder b) {
  b.setParametersFrom(rollout.parameters_from);
  b.setCostTableHits(static_cast<uint64_t>(std::max<int64_t>(0, rollout.cost_table_hits)));
  b.setCostModelFallbacks(static_cast<uint64_t>(std::max<int64_t>(0, rollout.cost_model_fallbacks)));
  auto segments = b.initSegments(static_cast<unsigned>(rollout.segments.size()));
  for (size_t s = 0; s < rollout.segments.size(); ++s) {
    const RolloutSegment& segment = rollout.segments[s];
    auto sb = segments[static_cast<unsigned>(s)];
    const auto n = static_cast<unsigned>(segment.steps.size());
    sb.setBootstrapValue(segment.bootstrap_value);
    auto graph_index = sb.initGraphIndex(n);
    auto seed = sb.initEpisodeSeed(n);
    auto episode_step = sb.initEpisodeStep(n);
    auto xfer = sb.initXfer(n);
    auto location = sb.initLocation(n);
    auto log_prob = sb.initLogProb(n);
    auto value = sb.initValue(n);
    auto reward = sb.initReward(n);
    auto done = sb.initDone(n);
    auto cost = sb.initCostMs(n);
    auto observations = sb.initObservations(n);
    for (unsigned k = 0; k < n; ++k) {
      const RolloutStep& step = segment.steps[k];
      graph_index.set(k, step.graph_index);
      seed.set(k, step.episode_seed);
      episode_step.set(k, step.episode_step);
      xfer.set(k, step.action.xfer);
      location.set(k, step.action.location);
      log_prob.set(k, step.log_prob);
      value.set(k, step.value);
      reward.set(k, step.reward);
      done.set(k, step.done);
      cost.set(k, step.cost_ms);
      encode_observation(step.observation, observations[k]);
    }
  }
  auto episodes = b.initEpisodes(static_cast<unsigned>(rollout.episodes.size()));
  for (size_t e = 0; e < rollout.episodes.size(); ++e) {
    const EpisodeSummary& summary = rollout.episodes[e];
    auto eb = episodes[static_cast<unsigned>(e)];
    eb.setGraph(summary.graph);
    eb.setReductionPct(summary.reduction_pct);
    eb.setBestReductionPct(summary.best_reduction_pct);
    eb.setSteps(summary.steps);
    eb.setGreedy(summary.greedy);
  }
}

struct BodyEncoder {
  schema::Message::Body::Builder b;
  void operator()(const HelloMessage& m) {
    auto h = b.initHello();
    h.setRole(m.role);
    h.setHostname(m.hostname);
    h.setPid(m.pid);
  }
  void operator()(const HeartbeatMessage& m) {
    auto h = b.initHeartbeat();
    h.setStepsSent(m.steps_sent);
    h.setRssBytes(m.rss_bytes);
  }
  void operator()(const StopMessage& m) { b.initStop().setReason(m.reason); }
  void operator()(const Rollout& m) { encode_rollout(m, b.initTrajectory()); }
  void operator()(const ParameterChunkMessage& m) {
    auto c = b.initParameterChunk();
    c.setVersion(m.version);
    c.setChunkIndex(m.chunk_index);
    c.setChunkCount(m.chunk_count);
    c.setTotalBytes(m.total_bytes);
    c.setBlobChecksum(m.blob_checksum);
    c.setChunkChecksum(word_checksum_64(m.data.data(), m.data.size()));
    c.setData(capnp::Data::Reader(reinterpret_cast<const kj::byte*>(m.data.data()), m.data.size()));
  }
  void operator()(const ParameterRequestMessage& m) { b.initParameterRequest().setHaveVersion(m.have_version); }
  void operator()(const ReceiptMessage& m) { b.initReceipt().setTrajectoriesTaken(m.trajectories_taken); }
  void operator()(const CostEntryMessage& m) {
    auto c = b.initCostEntry();
    c.setKey(m.key);
    c.setMs(m.ms);
  }
  void operator()(const DreamTrajectoryMessage& m) {
    auto d = b.initDreamTrajectory();
    d.setWorldModel(m.world_model);
    d.setRows(static_cast<uint32_t>(m.rows));
    d.setSteps(static_cast<uint32_t>(m.steps));
    d.setLatentDim(static_cast<uint32_t>(m.latent_dim));
    d.setHiddenDim(static_cast<uint32_t>(m.hidden_dim));
    d.setActions(static_cast<uint32_t>(m.actions));
    d.setZ(as_data(m.z));
    d.setH(as_data(m.h));
    d.setMask(as_data(m.mask));
    d.setAction(as_data(m.action));
    d.setLogProb(as_data(m.log_prob));
    d.setValue(as_data(m.value));
    d.setReward(as_data(m.reward));
    d.setDone(as_data(m.done));
    d.setBootstrap(as_data(m.bootstrap));
    d.setEpisodes(m.episodes);
    d.setReturnSum(m.return_sum);
    d.setParametersFrom(m.parameters_from);
  }
  void operator()(const MetricsMessage& m) {
    auto metrics = b.initMetrics();
    auto names = metrics.initNames(static_cast<unsigned>(m.names.size()));
    for (size_t i = 0; i < m.names.size(); ++i) names.set(static_cast<unsigned>(i), m.names[i]);
    auto values = metrics.initValues(static_cast<unsigned>(m.values.size()));
    for (size_t i = 0; i < m.values.size(); ++i) values.set(static_cast<unsigned>(i), m.values[i]);
  }
};

// --- decoding ---------------------------------------------------------------

Observation decode_observation(schema::CompactObservation::Reader r, int32_t num_xfers, const std::string& where) {
  Observation o;
  GraphTuple& g = o.graph;
  g.num_nodes = r.getNumNodes();
  g.num_edges = r.getNumEdges();
  o.num_xfers = r.getNumXfers();
  o.max_locations = r.getMaxLocations();
  if (g.num_nodes < 0 || g.num_nodes > kMaxNodes) invalid(where + ": numNodes " + std::to_string(g.num_nodes) + " out of range");
  if (g.num_edges < 0 || g.num_edges > kMaxEdges) invalid(where + ": numEdges " + std::to_string(g.num_edges) + " out of range");
  if (o.num_xfers != num_xfers)
    invalid(where + ": the observation has " + std::to_string(o.num_xfers) + " xfers, this run's rule library " +
            std::to_string(num_xfers));
  if (o.max_locations < 1 || o.max_locations > kMaxLocations) invalid(where + ": maxLocations out of range");
  const auto nodes = static_cast<size_t>(g.num_nodes), edges = static_cast<size_t>(g.num_edges);
  g.node_features = from_data<float>(r.getNodeFeatures(), nodes * kNodeFeatureDim, where + ".nodeFeatures");
  g.edge_features = from_data<float>(r.getEdgeFeatures(), edges * kEdgeFeatureDim, where + ".edgeFeatures");
  g.globals = from_data<float>(r.getGlobals(), kGlobalFeatureDim, where + ".globals");
  g.senders = from_data<int32_t>(r.getSenders(), edges, where + ".senders");
  g.receivers = from_data<int32_t>(r.getReceivers(), edges, where + ".receivers");
  g.node_op = from_data<int32_t>(r.getNodeOp(), nodes, where + ".nodeOp");
  o.xfer_mask = from_data<uint8_t>(r.getXferMask(), static_cast<size_t>(num_xfers) + 1, where + ".xferMask");
  const std::vector<int32_t> xfers = int32_data(r.getLocationXfers(), where + ".locationXfers");
  const std::vector<int32_t> counts = int32_data(r.getLocationCounts(), where + ".locationCounts");
  if (xfers.size() != counts.size()) invalid(where + ": locationXfers and locationCounts differ in length");
  o.location_begin.assign(static_cast<size_t>(num_xfers) + 1, 0);
  int64_t total = 0;
  int32_t previous = -1;
  for (size_t i = 0; i < xfers.size(); ++i) {
    if (xfers[i] <= previous || xfers[i] >= num_xfers) invalid(where + ".locationXfers: not increasing xfer ids below " + std::to_string(num_xfers));
    if (counts[i] < 1 || counts[i] > o.max_locations) invalid(where + ".locationCounts[" + std::to_string(i) + "] out of range");
    previous = xfers[i];
    total += counts[i];
    if (total > kMaxLocationsPerObservation) invalid(where + ": more candidate locations than allowed");
  }
  for (size_t i = 0, x = 0; x < static_cast<size_t>(num_xfers); ++x) {
    if (i < xfers.size() && static_cast<size_t>(xfers[i]) == x) o.location_begin[x + 1] = o.location_begin[x] + counts[i++];
    else o.location_begin[x + 1] = o.location_begin[x];
  }
  o.node_begin = from_data<int32_t>(r.getNodeBegin(), static_cast<size_t>(total) + 1, where + ".nodeBegin");
  o.match_nodes = int32_data(r.getMatchNodes(), where + ".matchNodes");
  const capnp::Data::Reader location_reward = r.getLocationReward(), xfer_reward = r.getXferReward();
  if (xfer_reward.size() > 0) {  // location rewards on
    o.location_reward = from_data<float>(location_reward, static_cast<size_t>(total), where + ".locationReward");
    o.xfer_reward = from_data<float>(xfer_reward, static_cast<size_t>(num_xfers) + 1, where + ".xferReward");
  } else if (location_reward.size() > 0) {
    invalid(where + ": locationReward without xferReward");
  }
  const std::string problem = observation_problem(o, num_xfers);
  if (!problem.empty()) invalid(where + ": " + problem);
  return o;
}

Rollout decode_rollout(schema::TrajectoryBatch::Reader r, const MessageExpectations& expect) {
  // Each list reader is fetched once: Cap'n Proto charges every fetch
  // against the traversal limit, so fetching per step would refuse long,
  // honest segments.
  Rollout rollout;
  rollout.parameters_from = r.getParametersFrom();
  rollout.cost_table_hits = static_cast<int64_t>(std::min<uint64_t>(r.getCostTableHits(), INT64_MAX));
  rollout.cost_model_fallbacks = static_cast<int64_t>(std::min<uint64_t>(r.getCostModelFallbacks(), INT64_MAX));
  const auto segments = r.getSegments();
  if (segments.size() > kMaxSegments) invalid(std::to_string(segments.size()) + " segments is more than allowed");
  if (r.getParametersFrom() != expect.parameters_from && expect.parameters_from != 0)
    invalid("made with parameters from another learner process (one that ran before a restart)");
  int64_t total_steps = 0;
  for (unsigned s = 0; s < segments.size(); ++s) {
    const auto sr = segments[s];
    const std::string where = "segment " + std::to_string(s);
    const auto graph_index = sr.getGraphIndex();
    const auto seed = sr.getEpisodeSeed();
    const auto episode_step = sr.getEpisodeStep();
    const auto xfer = sr.getXfer();
    const auto location = sr.getLocation();
    const auto log_prob = sr.getLogProb();
    const auto value = sr.getValue();
    const auto reward = sr.getReward();
    const auto done = sr.getDone();
    const auto cost = sr.getCostMs();
    const auto observations = sr.getObservations();
    const unsigned n = xfer.size();
    if (graph_index.size() != n || seed.size() != n || episode_step.size() != n || location.size() != n ||
        log_prob.size() != n || value.size() != n || reward.size() != n || done.size() != n || cost.size() != n ||
        observations.size() != n)
      invalid(where + ": its step columns differ in length");
    total_steps += n;
    if (total_steps > expect.max_steps)
      invalid("more than " + std::to_string(expect.max_steps) + " steps in one message (a rollout is smaller)");
    RolloutSegment segment;
    segment.bootstrap_value = sr.getBootstrapValue();
    if (!plausible(segment.bootstrap_value)) invalid(where + ": bootstrapValue is not a plausible number");
    segment.steps.reserve(n);
    for (unsigned k = 0; k < n; ++k) {
      const std::string at = where + " step " + std::to_string(k);
      RolloutStep step;
      step.graph_index = graph_index[k];
      step.episode_seed = seed[k];
      step.episode_step = episode_step[k];
      step.action = Action{xfer[k], location[k]};
      step.log_prob = log_prob[k];
      step.value = value[k];
      step.reward = reward[k];
      step.done = done[k];
      step.cost_ms = cost[k];
      if (step.graph_index < 0 || step.graph_index >= expect.num_graphs)
        invalid(at + ": graph index " + std::to_string(step.graph_index) + " is not one of the run's " +
                std::to_string(expect.num_graphs) + " graphs");
      if (step.episode_step < 0) invalid(at + ": negative episodeStep");
      // A sampled action's log-probability is far above -1e3 (float32
      // probabilities underflow near -104); larger magnitudes elsewhere
      // would overflow PPO's ratio or the value loss.
      if (!(step.log_prob <= 0 && step.log_prob > -1e3f) || !plausible(step.value) || !plausible(step.reward) ||
          !(std::isfinite(step.cost_ms) && step.cost_ms >= 0))
        invalid(at + ": logProb, value, reward or costMs is out of range (or not a number)");
      step.observation = decode_observation(observations[k], expect.num_xfers, at);
      const Observation& o = step.observation;
      const Action a = step.action;
      if (a.xfer < 0 || a.xfer > o.num_xfers || !o.xfer_mask[static_cast<size_t>(a.xfer)])
        invalid(at + ": xfer " + std::to_string(a.xfer) + " is not allowed by the observation's mask");
      if (a.xfer != o.num_xfers && (a.location < 0 || a.location >= o.location_count(a.xfer)))
        invalid(at + ": location " + std::to_string(a.location) + " is not one of xfer " + std::to_string(a.xfer) +
                "'s " + std::to_string(o.location_count(a.xfer)) + " listed locations");
      segment.steps.push_back(std::move(step));
    }
    rollout.segments.push_back(std::move(segment));
  }
  const auto episodes = r.getEpisodes();
  if (episodes.size() > kMaxEpisodes) invalid(std::to_string(episodes.size()) + " episode summaries is more than allowed");
  for (unsigned e = 0; e < episodes.size(); ++e) {
    const auto er = episodes[e];
    EpisodeSummary summary;
    summary.graph = text(er.getGraph(), "episode " + std::to_string(e) + ".graph");
    summary.reduction_pct = er.getReductionPct();
    summary.best_reduction_pct = er.getBestReductionPct();
    summary.steps = er.getSteps();
    summary.greedy = er.getGreedy();
    if (!std::isfinite(summary.reduction_pct) || !std::isfinite(summary.best_reduction_pct) || summary.steps < 0)
      invalid("episode " + std::to_string(e) + ": a reduction is not finite or the step count is negative");
    rollout.episodes.push_back(std::move(summary));
  }
  return rollout;
}

void check_plausible(const std::vector<float>& values, const std::string& field) {
  for (size_t i = 0; i < values.size(); ++i)
    if (!plausible(values[i])) invalid(field + "[" + std::to_string(i) + "] is not a finite number of sane size");
}

// Every column the size its dimensions say, every number finite, every
// action within range and allowed by its own mask.
DreamTrajectoryMessage decode_dream(schema::DreamTrajectory::Reader r, const MessageExpectations& expect) {
  DreamTrajectoryMessage m;
  m.world_model = r.getWorldModel();
  const uint64_t rows = r.getRows(), steps = r.getSteps(), latent = r.getLatentDim(), hidden = r.getHiddenDim(),
                 actions = r.getActions();
  if (m.world_model < 0) invalid("dream trajectory: negative world-model generation");
  if (rows == 0 || steps == 0 || rows * steps > static_cast<uint64_t>(expect.max_dream_steps))
    invalid("dream trajectory: " + std::to_string(rows) + " rows x " + std::to_string(steps) +
            " steps is empty or more than the " + std::to_string(expect.max_dream_steps) + " allowed");
  if (latent == 0 || latent > 4096 || hidden == 0 || hidden > 65536 || actions < 1 || actions > (1u << 20))
    invalid("dream trajectory: implausible sizes (latent " + std::to_string(latent) + ", hidden " +
            std::to_string(hidden) + ", actions " + std::to_string(actions) + ")");
  m.rows = static_cast<int32_t>(rows);
  m.steps = static_cast<int32_t>(steps);
  m.latent_dim = static_cast<int32_t>(latent);
  m.hidden_dim = static_cast<int32_t>(hidden);
  m.actions = static_cast<int32_t>(actions);
  const size_t n = rows * steps;
  m.z = from_data<float>(r.getZ(), n * latent, "dream.z");
  m.h = from_data<float>(r.getH(), n * hidden, "dream.h");
  m.mask = from_data<uint8_t>(r.getMask(), n * actions, "dream.mask");
  m.action = from_data<int32_t>(r.getAction(), n, "dream.action");
  m.log_prob = from_data<float>(r.getLogProb(), n, "dream.logProb");
  m.value = from_data<float>(r.getValue(), n, "dream.value");
  m.reward = from_data<float>(r.getReward(), n, "dream.reward");
  m.done = from_data<uint8_t>(r.getDone(), n, "dream.done");
  m.bootstrap = from_data<float>(r.getBootstrap(), rows, "dream.bootstrap");
  for (const auto* column : {&m.z, &m.h, &m.log_prob, &m.value, &m.reward, &m.bootstrap})
    check_plausible(*column, "dream column");
  for (size_t i = 0; i < n; ++i) {
    const int32_t a = m.action[i];
    if (a < 0 || static_cast<uint64_t>(a) >= actions || !m.mask[i * actions + static_cast<size_t>(a)])
      invalid("dream trajectory: step " + std::to_string(i) + " took action " + std::to_string(a) +
              ", which its mask does not allow");
    if (m.log_prob[i] > 1e-4f || m.log_prob[i] < -1e3f)
      invalid("dream trajectory: step " + std::to_string(i) + " has a log-probability outside [-1000, 0]");
    if (m.done[i] > 1) invalid("dream trajectory: step " + std::to_string(i) + " has a done flag other than 0 or 1");
  }
  m.episodes = r.getEpisodes();
  m.return_sum = r.getReturnSum();
  if (m.episodes > n || !std::isfinite(m.return_sum)) invalid("dream trajectory: implausible episode count or return");
  m.parameters_from = r.getParametersFrom();
  if (expect.parameters_from != 0 && m.parameters_from != expect.parameters_from)
    invalid("dream trajectory made with another learner's parameters");
  return m;
}

MessageBody decode_body(schema::Message::Body::Reader b, const MessageExpectations& expect) {
  switch (b.which()) {
    case schema::Message::Body::HELLO: {
      auto h = b.getHello();
      return HelloMessage{text(h.getRole(), "hello.role"), text(h.getHostname(), "hello.hostname"), h.getPid()};
    }
    case schema::Message::Body::HEARTBEAT:
      return HeartbeatMessage{b.getHeartbeat().getStepsSent(), b.getHeartbeat().getRssBytes()};
    case schema::Message::Body::STOP:
      return StopMessage{text(b.getStop().getReason(), "stop.reason")};
    case schema::Message::Body::TRAJECTORY:
      return decode_rollout(b.getTrajectory(), expect);
    case schema::Message::Body::PARAMETER_CHUNK: {
      auto c = b.getParameterChunk();
      ParameterChunkMessage m;
      m.version = c.getVersion();
      m.chunk_index = c.getChunkIndex();
      m.chunk_count = c.getChunkCount();
      m.total_bytes = c.getTotalBytes();
      m.blob_checksum = c.getBlobChecksum();
      auto data = c.getData();
      if (m.version < 0) invalid("parameter chunk: negative version");
      if (m.chunk_count == 0 || m.chunk_index >= m.chunk_count || m.chunk_count > std::max<uint64_t>(1, m.total_bytes))
        invalid("parameter chunk " + std::to_string(m.chunk_index) + " of " + std::to_string(m.chunk_count) +
                " does not fit a blob of " + std::to_string(m.total_bytes) + " bytes");
      if (m.total_bytes > expect.max_parameter_bytes || data.size() > m.total_bytes)
        invalid("parameter chunk: " + std::to_string(m.total_bytes) + " bytes in all is more than allowed or than its data");
      if (word_checksum_64(data.begin(), data.size()) != c.getChunkChecksum())
        invalid("parameter chunk " + std::to_string(m.chunk_index) + " of version " + std::to_string(m.version) +
                ": its checksum does not match its data");
      m.data.assign(reinterpret_cast<const char*>(data.begin()), data.size());
      return m;
    }
    case schema::Message::Body::PARAMETER_REQUEST:
      return ParameterRequestMessage{b.getParameterRequest().getHaveVersion()};
    case schema::Message::Body::COST_ENTRY: {
      const auto c = b.getCostEntry();
      const auto key = c.getKey();
      if (key.size() == 0 || key.size() > kMaxCostKeyBytes) invalid("cost entry: the key is empty or too long");
      CostEntryMessage m{std::string(key.cStr(), key.size()), c.getMs()};
      if (m.ms != kUnknownCost && (!std::isfinite(m.ms) || m.ms < 0 || m.ms > 1e9))
        invalid("cost entry: the price is neither a finite, non-negative number of ms nor 'unknown'");
      return m;
    }
    case schema::Message::Body::DREAM_TRAJECTORY:
      return decode_dream(b.getDreamTrajectory(), expect);
    case schema::Message::Body::RECEIPT:
      return ReceiptMessage{b.getReceipt().getTrajectoriesTaken()};
    case schema::Message::Body::METRICS: {
      const auto m = b.getMetrics();
      const auto names = m.getNames();
      const auto values = m.getValues();
      if (names.size() != values.size() || names.size() > kMaxMetrics)
        invalid("metrics: names and values differ in count, or there are too many");
      MetricsMessage out;
      for (unsigned i = 0; i < names.size(); ++i) {
        out.names.push_back(text(names[i], "metrics.names"));
        out.values.push_back(values[i]);
      }
      return out;
    }
  }
  invalid("the message body is of a kind this build does not know (a newer schema?)");
}

}  // namespace

const char* message_kind(const MessageBody& body) {
  static constexpr const char* kNames[] = {"hello",           "heartbeat",         "stop",   "trajectory",
                                           "parameter chunk", "parameter request", "metrics", "receipt", "cost entry",
                                           "dream trajectory"};
  return kNames[body.index()];
}

std::string encode_message(const Message& message) {
  capnp::MallocMessageBuilder builder;
  auto root = builder.initRoot<schema::Message>();
  auto h = root.initHeader();
  const MessageHeader& header = message.header;
  h.setSchemaVersion(header.schema_version);
  h.setRunId(header.run_id);
  h.setSenderId(header.sender_id);
  h.setIncarnation(header.incarnation);
  h.setPolicyVersion(header.policy_version);
  h.setSentUnixNs(header.sent_unix_ns);
  std::visit(BodyEncoder{root.getBody()}, message.body);
  const kj::Array<capnp::word> words = capnp::messageToFlatArray(builder);
  const auto bytes = words.asBytes();
  return std::string(reinterpret_cast<const char*>(bytes.begin()), bytes.size());
}

DecodeResult decode_message(std::span<const uint8_t> bytes, const MessageExpectations& expect) {
  DecodeResult result;
  try {
    if (bytes.empty()) invalid("an empty message");
    if (bytes.size() % sizeof(capnp::word) != 0) invalid("its length " + std::to_string(bytes.size()) + " is not a whole number of 8-byte words");
    if (bytes.size() > expect.max_message_bytes)
      invalid(std::to_string(bytes.size()) + " bytes is more than the limit of " + std::to_string(expect.max_message_bytes));
    // Cap'n Proto reads words in place, so they must be 8-byte aligned. A
    // received std::string is (malloc aligns to 16); anything else is
    // copied first.
    kj::Array<capnp::word> copy;
    kj::ArrayPtr<const capnp::word> words(reinterpret_cast<const capnp::word*>(bytes.data()),
                                          bytes.size() / sizeof(capnp::word));
    if (reinterpret_cast<uintptr_t>(bytes.data()) % alignof(capnp::word) != 0) {
      copy = kj::heapArray<capnp::word>(bytes.size() / sizeof(capnp::word));
      std::memcpy(copy.begin(), bytes.data(), bytes.size());
      words = copy.asPtr();
    }
    capnp::ReaderOptions options;
    // Reading walks at most twice the message: a hostile message cannot make
    // the receiver traverse shared pointers without end.
    options.traversalLimitInWords = 2 * words.size() + 1024;
    options.nestingLimit = 16;
    capnp::FlatArrayMessageReader reader(words, options);
    auto root = reader.getRoot<schema::Message>();
    auto h = root.getHeader();
    Message message;
    message.header.schema_version = h.getSchemaVersion();
    if (message.header.schema_version != kMessageSchemaVersion)
      invalid("schema version " + std::to_string(message.header.schema_version) + ", this build speaks " +
              std::to_string(kMessageSchemaVersion) + " (actor and learner are different graphworld builds)");
    message.header.run_id = text(h.getRunId(), "header.runId");
    if (message.header.run_id != expect.run_id)
      invalid("run id '" + message.header.run_id + "' is not this run's ('" + expect.run_id + "')");
    message.header.sender_id = h.getSenderId();
    message.header.incarnation = h.getIncarnation();
    message.header.policy_version = h.getPolicyVersion();
    message.header.sent_unix_ns = h.getSentUnixNs();
    if (message.header.policy_version < 0) invalid("negative policy version");
    message.body = decode_body(root.getBody(), expect);
    result.message = std::move(message);
  } catch (const Invalid& e) {
    result.error = e.what;
  } catch (const kj::Exception& e) {
    result.error = "not a readable message: " + std::string(e.getDescription().cStr());
  } catch (const std::bad_alloc&) {
    result.error = "the message asked for more memory than is available";
  }
  return result;
}

std::string observation_problem(const Observation& o, int32_t expected_num_xfers) {
  const GraphTuple& g = o.graph;
  const auto nodes = static_cast<size_t>(g.num_nodes), edges = static_cast<size_t>(g.num_edges);
  if (g.num_nodes < 0 || g.num_edges < 0) return "negative node or edge count";
  if (g.node_features.size() != nodes * kNodeFeatureDim || g.edge_features.size() != edges * kEdgeFeatureDim ||
      g.globals.size() != kGlobalFeatureDim || g.senders.size() != edges || g.receivers.size() != edges ||
      g.node_op.size() != nodes)
    return "feature or edge arrays do not match the node and edge counts";
  for (const std::vector<float>* v : {&g.node_features, &g.edge_features, &g.globals})
    for (float x : *v)
      if (!plausible(x)) return "a feature is not finite or beyond +-1e7";
  for (size_t e = 0; e < edges; ++e)
    if (g.senders[e] < 0 || g.senders[e] >= g.num_nodes || g.receivers[e] < 0 || g.receivers[e] >= g.num_nodes)
      return "edge " + std::to_string(e) + " names a node outside the graph";
  if (o.num_xfers != expected_num_xfers)
    return std::to_string(o.num_xfers) + " xfers where " + std::to_string(expected_num_xfers) + " are expected";
  const auto xfers = static_cast<size_t>(o.num_xfers);
  if (o.xfer_mask.size() != xfers + 1 || o.location_begin.size() != xfers + 1)
    return "the xfer mask or location table does not have one entry per xfer and NO-OP";
  for (uint8_t bit : o.xfer_mask)
    if (bit > 1) return "the xfer mask holds a value other than 0 and 1";
  if (o.xfer_mask[xfers] != 1) return "the xfer mask does not allow NO-OP, which is always allowed";
  if (o.location_begin[0] != 0) return "the location table does not start at 0";
  for (size_t x = 0; x < xfers; ++x)
    if (o.location_begin[x + 1] < o.location_begin[x] || o.location_begin[x + 1] - o.location_begin[x] > o.max_locations)
      return "xfer " + std::to_string(x) + " lists a negative count or more than max_locations locations";
  const auto locations = static_cast<size_t>(o.location_begin[xfers]);
  if (o.node_begin.size() != locations + 1 || o.node_begin[0] != 0)
    return "the matched-node table does not have one entry per location";
  for (size_t l = 0; l < locations; ++l)
    if (o.node_begin[l + 1] < o.node_begin[l]) return "the matched-node table goes backwards";
  if (static_cast<size_t>(o.node_begin[locations]) != o.match_nodes.size())
    return "the matched-node table does not end at the number of matched nodes";
  for (int32_t node : o.match_nodes)
    if (node < 0 || node >= g.num_nodes) return "a matched node is outside the graph";
  for (const std::vector<float>* rewards : {&o.location_reward, &o.xfer_reward})
    for (float r : *rewards)
      if (!std::isfinite(r)) return "a location or xfer reward is not finite";
  return "";
}

std::vector<ParameterChunkMessage> split_parameters(int64_t version, const std::string& blob, size_t chunk_bytes) {
  if (chunk_bytes == 0) chunk_bytes = kParameterChunkBytes;
  const uint64_t checksum = word_checksum_64(blob.data(), blob.size());
  // Equal chunks (the last may be shorter): a receiver places chunk i at
  // i * ceil(total / count) without being told offsets.
  const size_t count = std::max<size_t>(1, (blob.size() + chunk_bytes - 1) / chunk_bytes);
  chunk_bytes = std::max<size_t>(1, (blob.size() + count - 1) / count);
  std::vector<ParameterChunkMessage> chunks(count);
  for (size_t i = 0; i < count; ++i) {
    ParameterChunkMessage& c = chunks[i];
    c.version = version;
    c.chunk_index = static_cast<uint32_t>(i);
    c.chunk_count = static_cast<uint32_t>(count);
    c.total_bytes = blob.size();
    c.blob_checksum = checksum;
    c.data = blob.substr(std::min(blob.size(), i * chunk_bytes), chunk_bytes);
  }
  return chunks;
}

ParameterAssembler::Outcome ParameterAssembler::add(const ParameterChunkMessage& chunk, std::string* why) {
  auto refuse = [&](const std::string& reason) {
    if (why) *why = "parameter chunk " + std::to_string(chunk.chunk_index) + " of version " +
                    std::to_string(chunk.version) + ": " + reason;
    return Outcome::kRefused;
  };
  if (chunk.chunk_count == 0 || chunk.chunk_index >= chunk.chunk_count ||
      chunk.chunk_count > std::max<uint64_t>(1, chunk.total_bytes))
    return refuse("index outside its count, or more chunks than bytes");
  if (chunk.total_bytes > max_bytes_) return refuse("larger than the limit of " + std::to_string(max_bytes_) + " bytes");
  if (chunk.version < version_ || (chunk.version == version_ && complete_)) return Outcome::kStale;
  if (chunk.version > version_) {
    // A newer version replaces whatever was in progress.
    version_ = chunk.version;
    chunk_count_ = chunk.chunk_count;
    total_bytes_ = chunk.total_bytes;
    blob_checksum_ = chunk.blob_checksum;
    received_ = 0;
    complete_ = false;
    have_.assign(chunk_count_, 0);
    blob_.assign(static_cast<size_t>(total_bytes_), '\0');
  }
  if (chunk.chunk_count != chunk_count_ || chunk.total_bytes != total_bytes_ || chunk.blob_checksum != blob_checksum_)
    return refuse("its count, size or blob checksum disagrees with the version's other chunks");
  const uint64_t per_chunk = (total_bytes_ + chunk_count_ - 1) / chunk_count_;
  const uint64_t offset = uint64_t{chunk.chunk_index} * per_chunk;
  const uint64_t expected = offset >= total_bytes_ ? 0 : std::min<uint64_t>(per_chunk, total_bytes_ - offset);
  if (chunk.data.size() != expected)
    return refuse(std::to_string(chunk.data.size()) + " bytes where " + std::to_string(expected) + " belong");
  if (have_[chunk.chunk_index]) return Outcome::kPartial;  // a duplicate: harmless
  std::memcpy(blob_.data() + offset, chunk.data.data(), chunk.data.size());
  have_[chunk.chunk_index] = 1;
  if (++received_ < chunk_count_) return Outcome::kPartial;
  if (word_checksum_64(blob_.data(), blob_.size()) != blob_checksum_) {
    // Start this version over, so a resend of it can still complete.
    received_ = 0;
    have_.assign(chunk_count_, 0);
    return refuse("the assembled blob's checksum does not match");
  }
  complete_ = true;
  return Outcome::kComplete;
}

}  // namespace graphworld
