#include "worldmodel/world_model.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <sstream>

#include "common/checkpoint_file.h"
#include "common/error.h"
#include "learner/torch_bytes.h"
#include "worldmodel/world_model_modules.h"

namespace graphworld {
namespace {

static_assert(WorldModelHeadLosses::kRewardWeight == MdnRnnLosses::kRewardWeight);

constexpr const char* kWorldModelKind = "world-model";
// 2: the data's support (self_change_max, reward_max); 3: applications_max;
// 4: the reward's per-rule term (MdnRnnConfig::action_one_hot_at); 5: the
// config's separate_controller_memory.
constexpr int64_t kWorldModelFormat = 5;
// The summary's weight in the encoder's reconstruction loss: its entries
// are small fractions, and the cost ratio among them is what rewards follow.
constexpr double kSummaryWeight = 10.0;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::vector<const WorldEpisode*> pointers(const std::vector<WorldEpisode>& episodes) {
  std::vector<const WorldEpisode*> out;
  for (const WorldEpisode& e : episodes)
    if (!e.steps.empty()) out.push_back(&e);
  return out;
}

// Batches of `size` episodes, in a seeded order (`rng` null: in order).
std::vector<std::vector<const WorldEpisode*>> batches_of(std::vector<const WorldEpisode*> all, int32_t size,
                                                         std::mt19937_64* rng) {
  if (rng) std::shuffle(all.begin(), all.end(), *rng);
  std::vector<std::vector<const WorldEpisode*>> out;
  for (size_t i = 0; i < all.size(); i += static_cast<size_t>(size))
    out.emplace_back(all.begin() + static_cast<std::ptrdiff_t>(i),
                     all.begin() + static_cast<std::ptrdiff_t>(std::min(all.size(), i + static_cast<size_t>(size))));
  return out;
}

// The encoder's reconstruction loss of inputs [.., E] (summary, mask, locations).
torch::Tensor reconstruction_loss(LatentEncoder& encoder, const torch::Tensor& input, int64_t vocab,
                                  const torch::Tensor& weight) {
  const torch::Tensor out = encoder->decode(encoder->encode(input));
  const torch::Tensor summary = (out.narrow(-1, 0, kSummaryDim) - input.narrow(-1, 0, kSummaryDim)).pow(2).mean(-1);
  torch::Tensor per_row = kSummaryWeight * summary;
  if (vocab > 0) {
    per_row = per_row + torch::binary_cross_entropy_with_logits(out.narrow(-1, kSummaryDim, vocab),
                                                                input.narrow(-1, kSummaryDim, vocab), {}, {},
                                                                torch::Reduction::None)
                            .mean(-1);
    per_row = per_row +
              (out.narrow(-1, kSummaryDim + vocab, vocab) - input.narrow(-1, kSummaryDim + vocab, vocab)).pow(2).mean(-1);
  }
  return (per_row * weight).sum() / weight.sum().clamp_min(1.0);
}

WorldModelHeadLosses to_doubles(const MdnRnnLosses& l) {
  return {l.z_nll.item<double>(), l.reward.item<double>(), l.done.item<double>(), l.mask.item<double>(),
          l.locations.item<double>()};
}

void add_weighted(WorldModelHeadLosses& sum, const WorldModelHeadLosses& l, double w) {
  sum.z_nll += w * l.z_nll;
  sum.reward += w * l.reward;
  sum.done += w * l.done;
  sum.mask += w * l.mask;
  sum.locations += w * l.locations;
}

void scale(WorldModelHeadLosses& l, double by) {
  l.z_nll *= by;
  l.reward *= by;
  l.done *= by;
  l.mask *= by;
  l.locations *= by;
}

std::string info_text(const WorldModelInfo& info) {
  std::ostringstream out;
  out << "rule_library_hash " << info.rule_library_hash << "\nfeature_version " << info.feature_version
      << "\nmax_steps " << info.max_steps << "\ntrained_steps " << info.trained_steps << "\nsource " << info.source
      << "\n";
  for (const std::string& g : info.graphs) out << "graph " << g << "\n";
  return out.str();
}

WorldModelInfo info_from_text(const std::string& text, const std::string& path) {
  WorldModelInfo info;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const size_t space = line.find(' ');
    const std::string key = line.substr(0, space), value = space == std::string::npos ? "" : line.substr(space + 1);
    try {
      if (key == "rule_library_hash") info.rule_library_hash = value;
      else if (key == "feature_version") info.feature_version = std::stoi(value);
      else if (key == "max_steps") info.max_steps = std::stoi(value);
      else if (key == "trained_steps") info.trained_steps = std::stoll(value);
      else if (key == "source") info.source = value;
      else if (key == "graph") info.graphs.push_back(value);
    } catch (const std::exception&) {
      throw FormatError(path + ": world model info line '" + line + "' has a bad value");
    }
  }
  return info;
}

}  // namespace

void load_with_shapes(torch::nn::Module& module, torch::serialize::InputArchive& archive, const std::string& path,
                      const std::string& what) {
  // LibTorch's load replaces each tensor whatever its shape; a file whose
  // weights disagree with its own configuration must be refused here, not
  // fail inside a forward pass later.
  std::vector<std::pair<std::string, std::vector<int64_t>>> expected;
  for (const auto& p : module.named_parameters()) expected.emplace_back(p.key(), p.value().sizes().vec());
  module.load(archive);
  for (const auto& [name, sizes] : expected) {
    const torch::Tensor* loaded = module.named_parameters().find(name);
    if (loaded == nullptr || loaded->sizes().vec() != sizes)
      throw FormatError(path + ": the " + what + " weight '" + name + "' does not have the shape its configuration gives");
  }
}

LatentEncoderImpl::LatentEncoderImpl(int64_t input_dim, int64_t hidden, int64_t latent_dim) {
  in_ = register_module("encode_hidden", torch::nn::Linear(input_dim, hidden));
  code_ = register_module("encode_code", torch::nn::Linear(hidden, latent_dim));
  up_ = register_module("decode_hidden", torch::nn::Linear(latent_dim, hidden));
  out_ = register_module("decode_output", torch::nn::Linear(hidden, input_dim));
}

torch::Tensor LatentEncoderImpl::encode(const torch::Tensor& input) {
  return torch::tanh(code_->forward(torch::relu(in_->forward(input))));
}

torch::Tensor LatentEncoderImpl::decode(const torch::Tensor& z) { return out_->forward(torch::relu(up_->forward(z))); }

WorldModel::Impl::Impl(WorldModelConfig c, XferVocabulary v, WorldModelInfo i)
    : config(c), vocabulary(std::move(v)), info(std::move(i)) {
  if (c.latent_dim < 1 || c.hidden < 1 || c.components < 1 || c.encoder_hidden < 1)
    throw UsageError("a world model needs positive latent_dim, hidden, components and encoder_hidden");
  encoder = LatentEncoder(encoder_input_dim(), c.encoder_hidden, c.latent_dim);
  MdnRnnConfig rc;
  rc.latent_dim = c.latent_dim;
  rc.action_dim = action_dim();
  rc.num_xfers = vocabulary.size();
  rc.hidden = c.hidden;
  rc.components = c.components;
  rc.mask_leads_action = true;  // rnn_condition() puts the mask first
  rc.action_one_hot_at = 2 * vocabulary.size();  // after the mask and the log locations
  rc.dropout = 0.2;
  if (c.separate_controller_memory) rc.bookkeeping_inputs = 2 * vocabulary.size();  // the mask and log locations
  rnn = MdnRnn(rc);
  rnn->eval();  // train() switches dropout on while it trains
}

std::vector<float> WorldModel::Impl::encoder_input(const WorldStep& step) const {
  const int64_t v = vocabulary.size();
  std::vector<float> x(static_cast<size_t>(encoder_input_dim()), 0.0f);
  std::copy(step.summary.begin(), step.summary.end(), x.begin());
  for (size_t i = 0; i < step.allowed.size(); ++i) {
    const int32_t index = vocabulary.index_of(step.allowed[i]);
    if (index < 0) continue;
    x[static_cast<size_t>(kSummaryDim + index)] = 1.0f;
    x[static_cast<size_t>(kSummaryDim + v + index)] = static_cast<float>(std::log1p(step.locations[i]) / 4.0);
  }
  return x;
}

torch::Tensor WorldModel::Impl::encoder_inputs(const std::vector<WorldStep>& steps) const {
  std::vector<float> all;
  for (const WorldStep& step : steps) {
    const std::vector<float> x = encoder_input(step);
    all.insert(all.end(), x.begin(), x.end());
  }
  return torch::tensor(all).reshape({static_cast<int64_t>(steps.size()), encoder_input_dim()});
}

void WorldModel::Impl::set_starts(const std::vector<const WorldEpisode*>& episodes) {
  std::map<int32_t, const WorldStep*> first;
  for (const WorldEpisode* e : episodes)
    if (!e->steps.empty()) first.emplace(e->graph_index, &e->steps.front());
  std::vector<WorldStep> steps;
  for (const auto& [graph, step] : first) steps.push_back(*step);
  if (!steps.empty()) starts = encoder_inputs(steps);
}

torch::Tensor WorldModel::Impl::counts_after(const torch::Tensor& counts, torch::Tensor change,
                                            const torch::Tensor& applied) const {
  if (self_change_max.defined() && self_change_max.numel() > 0)
    change = torch::where(applied > 0.5, torch::minimum(change, self_change_max), change);
  return (counts + change.round()).clamp_min(0.0);
}

void WorldModel::Impl::set_support(const std::vector<const WorldEpisode*>& episodes) {
  const int32_t v = vocabulary.size();
  constexpr float kUnseen = -std::numeric_limits<float>::infinity();
  std::vector<float> change(static_cast<size_t>(v), kUnseen), reward(static_cast<size_t>(v) + 1, kUnseen);
  std::vector<float> applications(static_cast<size_t>(v), 1.0f);
  auto count_of = [](const WorldStep& step, int32_t xfer) {
    const auto it = std::lower_bound(step.allowed.begin(), step.allowed.end(), xfer);
    return it != step.allowed.end() && *it == xfer ? static_cast<float>(step.locations[static_cast<size_t>(it - step.allowed.begin())])
                                                   : 0.0f;
  };
  // An episode that ran into the horizon counts up to its best step only
  // (useful_steps): counting its loop would let the dream loop for as long,
  // leaving it out whole would hide how far the controller really got.
  for (const WorldEpisode* episode : episodes) {
    const WorldEpisode& e = *episode;
    std::vector<float> applied(static_cast<size_t>(v), 0.0f);
    const size_t counted = useful_steps(e, info.max_steps);
    for (size_t t = 0; t < e.steps.size(); ++t) {
      const WorldStep& step = e.steps[t];
      const int32_t index = vocabulary.index_of(step.xfer);
      if (index < 0) continue;
      if (index < v && t < counted) {
        float& a = applied[static_cast<size_t>(index)];
        a += 1.0f;
        applications[static_cast<size_t>(index)] = std::max(applications[static_cast<size_t>(index)], a);
      }
      float& r = reward[static_cast<size_t>(index)];
      r = std::max(r, step.reward);
      if (index == v || t + 1 >= e.steps.size()) continue;
      float& c = change[static_cast<size_t>(index)];
      c = std::max(c, count_of(e.steps[t + 1], step.xfer) - count_of(step, step.xfer));
    }
  }
  for (float& c : change)
    if (c == kUnseen) c = -1.0f;
  for (float& r : reward)
    if (r == kUnseen) r = 0.0f;
  reward.back() = 0.0f;  // NO-OP
  self_change_max = torch::tensor(change);
  reward_max = torch::tensor(reward);
  applications_max = torch::tensor(applications);
}

void WorldModel::Impl::start_rule_rewards(const std::vector<WorldEpisode>& episodes) {
  torch::Tensor& term = rnn->reward_by_choice();
  if (!term.defined() || term.ne(0).any().item<bool>()) return;
  const int32_t v = vocabulary.size();
  std::vector<double> sum(static_cast<size_t>(v) + 1, 0.0), count(sum.size(), 0.0);
  for (const WorldEpisode& e : episodes)
    for (const WorldStep& step : e.steps) {
      const int32_t index = vocabulary.index_of(step.xfer);
      if (index < 0) continue;
      sum[static_cast<size_t>(index)] += step.reward;
      count[static_cast<size_t>(index)] += 1.0;
    }
  std::vector<float> mean(sum.size(), 0.0f);
  for (size_t i = 0; i < mean.size(); ++i)
    if (count[i] > 0) mean[i] = static_cast<float>(sum[i] / count[i]);
  torch::NoGradGuard no_grad;
  term.copy_(torch::tensor(mean).to(term.device()));
}

EpisodeBatch WorldModel::Impl::batch(const std::vector<const WorldEpisode*>& episodes) const {
  const int64_t b = static_cast<int64_t>(episodes.size()), v = vocabulary.size(), e = encoder_input_dim();
  int64_t t = 1;
  for (const WorldEpisode* ep : episodes) t = std::max<int64_t>(t, static_cast<int64_t>(ep->steps.size()));
  std::vector<float> enc(static_cast<size_t>(t * b * e), 0.0f), mask(static_cast<size_t>(t * b * v), 0.0f),
      action(static_cast<size_t>(t * b * (v + 3)), 0.0f), reward(static_cast<size_t>(t * b), 0.0f),
      done(reward.size(), 0.0f), by_rule(reward.size(), 0.0f), outside(reward.size(), 0.0f), valid(reward.size(), 0.0f),
      next_valid(reward.size(), 0.0f);
  for (int64_t j = 0; j < b; ++j) {
    const std::vector<WorldStep>& steps = episodes[static_cast<size_t>(j)]->steps;
    for (int64_t i = 0; i < static_cast<int64_t>(steps.size()); ++i) {
      const WorldStep& s = steps[static_cast<size_t>(i)];
      const size_t row = static_cast<size_t>(i * b + j);
      const std::vector<float> x = encoder_input(s);
      std::copy(x.begin(), x.end(), enc.begin() + static_cast<std::ptrdiff_t>(row * static_cast<size_t>(e)));
      for (int64_t k = 0; k < v; ++k) mask[row * static_cast<size_t>(v) + static_cast<size_t>(k)] = x[static_cast<size_t>(kSummaryDim + k)];
      for (int32_t a : s.allowed) outside[row] += vocabulary.index_of(a) < 0 ? 1.0f : 0.0f;
      const int32_t a = vocabulary.index_of(s.xfer);
      float* act = action.data() + row * static_cast<size_t>(v + 3);
      if (a >= 0) act[a] = 1.0f;
      act[v + 1] = static_cast<float>(std::log1p(s.location) / 4.0);
      act[v + 2] = time_input(static_cast<int32_t>(i + 1));
      reward[row] = s.reward;
      done[row] = s.done ? 1.0f : 0.0f;
      by_rule[row] = a == v || (info.max_steps > 0 && i + 1 >= info.max_steps) ? 1.0f : 0.0f;
      valid[row] = 1.0f;
      next_valid[row] = i + 1 < static_cast<int64_t>(steps.size()) ? 1.0f : 0.0f;
    }
  }
  EpisodeBatch out;
  out.encoder_input = torch::tensor(enc).reshape({t, b, e});
  out.mask = torch::tensor(mask).reshape({t, b, v});
  out.action = torch::tensor(action).reshape({t, b, v + 3});
  out.reward = torch::tensor(reward).reshape({t, b});
  out.done = torch::tensor(done).reshape({t, b});
  out.done_by_rule = torch::tensor(by_rule).reshape({t, b});
  out.allowed_outside = torch::tensor(outside).reshape({t, b});
  out.valid = torch::tensor(valid).reshape({t, b});
  out.next_valid = torch::tensor(next_valid).reshape({t, b});
  return out;
}

MdnRnnTargets WorldModel::Impl::targets(const EpisodeBatch& batch, const torch::Tensor& z) const {
  const int64_t t = z.size(0), b = z.size(1), v = vocabulary.size();
  // The successor of step i is row i + 1; the last row has none (next_valid 0).
  auto shifted = [&](const torch::Tensor& x) {
    return torch::cat({x.narrow(0, 1, t - 1), torch::zeros_like(x.narrow(0, 0, 1))}, 0);
  };
  MdnRnnTargets y;
  y.next_z = shifted(z);
  y.reward = batch.reward;
  y.done = batch.done;
  y.done_scored = batch.valid * (1 - batch.done_by_rule);
  y.next_mask = torch::cat({shifted(batch.mask), torch::ones({t, b, 1})}, -1);  // NO-OP is always allowed
  const torch::Tensor counts = location_counts(batch.encoder_input.narrow(-1, kSummaryDim + v, v));
  y.location_change = torch::cat({(shifted(counts) - counts) * batch.next_valid.unsqueeze(-1), torch::zeros({t, b, 1})}, -1);
  y.valid = batch.valid;
  y.next_valid = batch.next_valid;
  return y;
}

WorldModel::WorldModel(WorldModelConfig config, XferVocabulary vocabulary, WorldModelInfo info, uint64_t seed) {
  torch::manual_seed(seed);
  impl_ = std::make_unique<Impl>(config, std::move(vocabulary), std::move(info));
}
WorldModel::WorldModel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
WorldModel::~WorldModel() = default;
WorldModel::WorldModel(WorldModel&&) noexcept = default;
WorldModel& WorldModel::operator=(WorldModel&&) noexcept = default;

const WorldModelConfig& WorldModel::config() const { return impl_->config; }
const XferVocabulary& WorldModel::vocabulary() const { return impl_->vocabulary; }
const WorldModelInfo& WorldModel::info() const { return impl_->info; }
WorldModelInfo& WorldModel::info() { return impl_->info; }

int64_t WorldModel::parameter_count() const {
  int64_t n = 0;
  for (const auto& p : impl_->encoder->parameters()) n += p.numel();
  for (const auto& p : impl_->rnn->parameters()) n += p.numel();
  return n;
}

void WorldModel::train(const std::vector<WorldEpisode>& train, const std::vector<WorldEpisode>& held_out,
                       const WorldModelTrainOptions& options) {
  if (options.batch_episodes < 1) throw UsageError("world model training needs batch_episodes >= 1");
  if (!(options.learning_rate > 0)) throw UsageError("world model training needs a positive learning rate");
  Impl& m = *impl_;
  if (pointers(train).empty()) throw UsageError("world model training needs at least one episode with steps");
  torch::manual_seed(options.seed);
  std::mt19937_64 rng(options.seed);
  const int64_t v = m.vocabulary.size();

  // Batches are built once: the data does not change between epochs.
  std::vector<EpisodeBatch> train_batches, held_batches;
  for (const auto& group : batches_of(pointers(train), options.batch_episodes, nullptr)) train_batches.push_back(m.batch(group));
  for (const auto& group : batches_of(pointers(held_out), options.batch_episodes, nullptr)) held_batches.push_back(m.batch(group));

  // Phase 1, the encoder: an autoencoder over the training steps' inputs.
  if (options.encoder_epochs > 0) {
    torch::optim::Adam optimizer(m.encoder->parameters(), torch::optim::AdamOptions(options.learning_rate));
    std::vector<size_t> order(train_batches.size());
    std::iota(order.begin(), order.end(), 0);
    for (int32_t epoch = 1; epoch <= options.encoder_epochs; ++epoch) {
      const auto start = std::chrono::steady_clock::now();
      std::shuffle(order.begin(), order.end(), rng);
      double sum = 0, weight = 0;
      for (size_t i : order) {
        const EpisodeBatch& b = train_batches[i];
        optimizer.zero_grad();
        const torch::Tensor loss = reconstruction_loss(m.encoder, b.encoder_input, v, b.valid);
        loss.backward();
        optimizer.step();
        const double w = b.valid.sum().item<double>();
        sum += loss.item<double>() * w;
        weight += w;
      }
      WorldModelEpochReport report;
      report.phase = "encoder";
      report.epoch = epoch;
      report.epochs = options.encoder_epochs;
      report.train_loss = sum / std::max(1.0, weight);
      {
        torch::NoGradGuard no_grad;
        double hs = 0, hw = 0;
        for (const EpisodeBatch& b : held_batches) {
          const double w = b.valid.sum().item<double>();
          hs += reconstruction_loss(m.encoder, b.encoder_input, v, b.valid).item<double>() * w;
          hw += w;
        }
        report.held_out_loss = hs / std::max(1.0, hw);
      }
      report.seconds = seconds_since(start);
      if (options.on_epoch) options.on_epoch(report);
    }
  }

  // Phase 2, the MDN-RNN on the frozen encoder's z.
  m.start_rule_rewards(train);
  auto latent = [&](const EpisodeBatch& b) {
    torch::NoGradGuard no_grad;
    return m.encoder->encode(b.encoder_input);
  };
  std::vector<torch::Tensor> train_z, held_z;
  for (const EpisodeBatch& b : train_batches) train_z.push_back(latent(b));
  for (const EpisodeBatch& b : held_batches) held_z.push_back(latent(b));
  // What this training may move: everything, or (keep_controller_memory)
  // all but the controller's LSTM and the next-z mixture, which then take
  // no gradient at all, so the clipping below sees only what moves.
  std::vector<torch::Tensor> kept, trained;
  if (options.keep_controller_memory) kept = m.rnn->controller_memory_parameters();
  for (const torch::Tensor& p : m.rnn->parameters())
    if (std::none_of(kept.begin(), kept.end(), [&](const torch::Tensor& k) { return k.is_same(p); }))
      trained.push_back(p);
  struct RequiresGradBack {
    std::vector<torch::Tensor>& kept;
    ~RequiresGradBack() {
      for (torch::Tensor& t : kept) t.set_requires_grad(true);
    }
  } requires_grad_back{kept};
  for (torch::Tensor& t : kept) t.set_requires_grad(false);
  torch::optim::Adam optimizer(trained, torch::optim::AdamOptions(options.learning_rate));
  std::vector<size_t> order(train_batches.size());
  std::iota(order.begin(), order.end(), 0);
  // The weights of the epoch with the lowest held-out loss are kept: past
  // it the model learns the training episodes by heart.
  double best_loss = std::numeric_limits<double>::infinity();
  std::vector<torch::Tensor> best;
  for (int32_t epoch = 1; epoch <= options.epochs; ++epoch) {
    const auto start = std::chrono::steady_clock::now();
    std::shuffle(order.begin(), order.end(), rng);
    WorldModelHeadLosses sum;
    double weight = 0;
    m.rnn->train();
    for (size_t i : order) {
      const EpisodeBatch& b = train_batches[i];
      optimizer.zero_grad();
      const MdnRnnOutput out = m.rnn->forward(train_z[i], m.rnn_condition(b));
      const MdnRnnLosses l = m.rnn->losses(out, m.targets(b, train_z[i]));
      const torch::Tensor total = l.total(m.config.latent_dim);
      if (!std::isfinite(total.item<double>())) continue;  // a bad batch must not poison the weights
      total.backward();
      torch::nn::utils::clip_grad_norm_(trained, 1.0);
      optimizer.step();
      const double w = b.valid.sum().item<double>();
      add_weighted(sum, to_doubles(l), w);
      weight += w;
    }
    m.rnn->eval();
    scale(sum, 1.0 / std::max(1.0, weight));
    WorldModelEpochReport report;
    report.phase = "mdn-rnn";
    report.epoch = epoch;
    report.epochs = options.epochs;
    report.train = sum;
    report.train_loss = sum.total(m.config.latent_dim);
    if (!held_out.empty()) {
      report.held_out = losses(held_out);
      report.held_out_loss = report.held_out.total(m.config.latent_dim);
    }
    const double score = held_out.empty() ? report.train_loss : report.held_out_loss;
    if (score < best_loss) {
      best_loss = score;
      best.clear();
      for (const torch::Tensor& p : m.rnn->parameters()) best.push_back(p.detach().clone());
    }
    report.seconds = seconds_since(start);
    if (options.on_epoch) options.on_epoch(report);
  }
  if (!best.empty()) {
    torch::NoGradGuard no_grad;
    auto params = m.rnn->parameters();
    for (size_t i = 0; i < params.size(); ++i) params[i].copy_(best[i]);
  }
  m.info.trained_steps = count_steps(train);
  // The dream's starts and bounds are facts about the real graphs, not
  // learned weights: held-out episodes show them too (the held-out scores
  // do not pass through them). A run holds out every fifth episode as it
  // arrives, often a controller's best one, and a graph may have a start
  // only there.
  std::vector<const WorldEpisode*> seen = pointers(train);
  for (const WorldEpisode* e : pointers(held_out)) seen.push_back(e);
  m.set_starts(seen);
  m.set_support(seen);
}

WorldModelHeadLosses WorldModel::losses(const std::vector<WorldEpisode>& episodes) const {
  torch::NoGradGuard no_grad;
  Impl& m = *impl_;
  WorldModelHeadLosses sum;
  double weight = 0;
  for (const auto& group : batches_of(pointers(episodes), 32, nullptr)) {
    const EpisodeBatch b = m.batch(group);
    const torch::Tensor z = m.encoder->encode(b.encoder_input);
    const MdnRnnLosses l = m.rnn->losses(m.rnn->forward(z, m.rnn_condition(b)), m.targets(b, z));
    const double w = b.valid.sum().item<double>();
    add_weighted(sum, to_doubles(l), w);
    weight += w;
  }
  scale(sum, 1.0 / std::max(1.0, weight));
  return sum;
}

WorldModelAccuracy WorldModel::evaluate(const std::vector<WorldEpisode>& episodes) const {
  torch::NoGradGuard no_grad;
  Impl& m = *impl_;
  const int64_t v = m.vocabulary.size();
  WorldModelAccuracy a;
  double tp = 0, fp = 0, fn = 0, done_right = 0, reward_abs = 0, nll = 0;
  for (const auto& group : batches_of(pointers(episodes), 32, nullptr)) {
    const EpisodeBatch b = m.batch(group);
    const torch::Tensor z = m.encoder->encode(b.encoder_input);
    const MdnRnnOutput out = m.rnn->forward(z, m.rnn_condition(b));
    const MdnRnnTargets y = m.targets(b, z);
    const int64_t t = z.size(0), n = z.size(1);
    // Masks over the vocabulary (NO-OP is always allowed and not scored);
    // a successor's xfers outside the vocabulary are misses the model
    // cannot help.
    // Scored as the dream offers it (dream_env.cc): the mask head, and a
    // match left once the count head's change is added.
    const torch::Tensor left = m.counts_after(Impl::location_counts(b.encoder_input.narrow(-1, kSummaryDim + v, v)),
                                              out.location_change.narrow(-1, 0, v), b.action.narrow(-1, 0, v)) >= 0.5;
    const torch::Tensor predicted = ((out.mask_logits.narrow(-1, 0, v) > 0) & left).to(torch::kFloat);
    const torch::Tensor truth = y.next_mask.narrow(-1, 0, v);
    const torch::Tensor nv = y.next_valid.unsqueeze(-1);
    tp += (predicted * truth * nv).sum().item<double>();
    fp += (predicted * (1 - truth) * nv).sum().item<double>();
    fn += ((1 - predicted) * truth * nv).sum().item<double>();
    const torch::Tensor outside_next =
        torch::cat({b.allowed_outside.narrow(0, 1, t - 1), torch::zeros({1, n})}, 0) * y.next_valid;
    fn += outside_next.sum().item<double>();
    // Done as the dream decides it: the done head, or the action's own rule.
    const torch::Tensor predicted_done = ((out.done_logit > 0) | (b.done_by_rule > 0.5)).to(torch::kFloat);
    done_right += ((predicted_done == y.done).to(torch::kFloat) * y.valid).sum().item<double>();
    reward_abs += ((out.reward - y.reward).abs() * y.valid).sum().item<double>();
    const int64_t k = m.config.components, d = m.config.latent_dim;
    GaussianMixture flat{out.next_z.logits.reshape({t * n, k}), out.next_z.means.reshape({t * n, k, d}),
                         out.next_z.log_sigma.reshape({t * n, k, d})};
    nll += (mixture_nll(flat, y.next_z.reshape({t * n, d})).reshape({t, n}) * y.next_valid).sum().item<double>();
    a.steps += static_cast<int64_t>(y.valid.sum().item<double>());
    a.transitions += static_cast<int64_t>(y.next_valid.sum().item<double>());
  }
  // No transition scored: zeros, not a perfect score (callers check steps).
  a.mask_precision = tp + fp > 0 ? tp / (tp + fp) : 0.0;
  a.mask_recall = tp + fn > 0 ? tp / (tp + fn) : 0.0;
  a.mask_f1 = 2 * tp + fp + fn > 0 ? 2 * tp / (2 * tp + fp + fn) : 0.0;
  a.done_accuracy = a.steps > 0 ? done_right / static_cast<double>(a.steps) : 0.0;
  a.reward_mae = a.steps > 0 ? reward_abs / static_cast<double>(a.steps) : 0.0;
  a.z_nll = a.transitions > 0 ? nll / static_cast<double>(a.transitions) : 0.0;
  return a;
}

void WorldModel::save(const std::string& path) const { write_checked_file(path, kWorldModelKind, to_bytes()); }

WorldModel WorldModel::load(const std::string& path) { return from_bytes(read_checked_file(path, kWorldModelKind), path); }

std::string WorldModel::to_bytes() const {
  const Impl& m = *impl_;
  torch::serialize::OutputArchive archive;
  archive.write("format", torch::tensor(kWorldModelFormat));
  archive.write("config", torch::tensor(std::vector<int64_t>{m.config.latent_dim, m.config.hidden,
                                                             m.config.components, m.config.encoder_hidden,
                                                             m.config.separate_controller_memory ? 1 : 0}));
  std::vector<int64_t> vocab(m.vocabulary.xfers().begin(), m.vocabulary.xfers().end());
  vocab.push_back(m.vocabulary.num_xfers());  // N last
  archive.write("vocabulary", torch::tensor(vocab));
  archive.write("info", bytes_to_tensor(info_text(m.info)));
  archive.write("starts", m.starts.defined() ? m.starts : torch::zeros({0, m.encoder_input_dim()}));
  archive.write("self_change_max", m.self_change_max.defined() ? m.self_change_max : torch::zeros({0}));
  archive.write("reward_max", m.reward_max.defined() ? m.reward_max : torch::zeros({0}));
  archive.write("applications_max", m.applications_max.defined() ? m.applications_max : torch::zeros({0}));
  torch::serialize::OutputArchive encoder, rnn;
  m.encoder->save(encoder);
  m.rnn->save(rnn);
  archive.write("encoder", encoder);
  archive.write("rnn", rnn);
  return archive_to_bytes(archive);
}

WorldModel WorldModel::from_bytes(const std::string& payload, const std::string& path) {
  torch::serialize::InputArchive archive;
  archive_from_bytes(archive, payload, path);
  const int64_t format = read_tensor(archive, "format", path).item<int64_t>();
  if (format != kWorldModelFormat)
    throw FormatError(path + ": world model format " + std::to_string(format) + ", this build reads " +
                      std::to_string(kWorldModelFormat) + " (retrain it with `graphworld worldmodel train`)");
  const torch::Tensor c = read_tensor(archive, "config", path);
  if (c.numel() != 5) throw FormatError(path + ": world model config has " + std::to_string(c.numel()) + " fields, not 5");
  WorldModelConfig config{c[0].item<int64_t>(), c[1].item<int64_t>(), c[2].item<int64_t>(), c[3].item<int64_t>(),
                          c[4].item<int64_t>() != 0};
  const torch::Tensor v = read_tensor(archive, "vocabulary", path);
  if (v.numel() < 1) throw FormatError(path + ": world model vocabulary is empty");
  std::vector<int32_t> xfers;
  for (int64_t i = 0; i + 1 < v.numel(); ++i) xfers.push_back(static_cast<int32_t>(v[i].item<int64_t>()));
  XferVocabulary vocabulary;
  try {
    vocabulary = XferVocabulary(xfers, static_cast<int32_t>(v[v.numel() - 1].item<int64_t>()));
  } catch (const Error& e) {
    throw FormatError(path + ": " + e.what());
  }
  WorldModelInfo info = info_from_text(read_bytes(archive, "info", path), path);
  if (info.feature_version != kObservationFeatureVersion)
    throw FormatError(path + ": the world model reads observation features of version " +
                      std::to_string(info.feature_version) + ", this build makes version " +
                      std::to_string(kObservationFeatureVersion) + " (retrain it with `graphworld worldmodel train`)");
  std::unique_ptr<Impl> impl;
  try {
    impl = std::make_unique<Impl>(config, std::move(vocabulary), std::move(info));
  } catch (const Error& e) {
    throw FormatError(path + ": " + e.what());
  }
  const torch::Tensor starts = read_tensor(archive, "starts", path);
  if (starts.dim() != 2 || starts.size(1) != impl->encoder_input_dim())
    throw FormatError(path + ": world model starts have the wrong shape");
  if (starts.size(0) > 0) impl->starts = starts;
  const torch::Tensor change = read_tensor(archive, "self_change_max", path), reward = read_tensor(archive, "reward_max", path);
  const torch::Tensor applications = read_tensor(archive, "applications_max", path);
  const int64_t rules = impl->vocabulary.size();
  if (change.numel() > 0 || reward.numel() > 0 || applications.numel() > 0) {
    if (change.dim() != 1 || change.size(0) != rules || reward.dim() != 1 || reward.size(0) != rules + 1 ||
        applications.dim() != 1 || applications.size(0) != rules || !torch::isfinite(change).all().item<bool>() ||
        !torch::isfinite(reward).all().item<bool>() || !torch::isfinite(applications).all().item<bool>() ||
        (applications < 1).any().item<bool>())
      throw FormatError(path + ": the world model's data support has the wrong shape or is not finite");
    impl->self_change_max = change.to(torch::kFloat);
    impl->reward_max = reward.to(torch::kFloat);
    impl->applications_max = applications.to(torch::kFloat);
  }
  try {
    torch::serialize::InputArchive encoder, rnn;
    archive.read("encoder", encoder);
    archive.read("rnn", rnn);
    load_with_shapes(*impl->encoder, encoder, path, "encoder");
    load_with_shapes(*impl->rnn, rnn, path, "MDN-RNN");
  } catch (const c10::Error& e) {
    throw FormatError(path + ": world model weights do not fit its configuration (" +
                      std::string(e.what_without_backtrace()).substr(0, 200) + ")");
  }
  return WorldModel(std::move(impl));
}

std::string describe_world_model(const WorldModel& model) {
  std::ostringstream out;
  const WorldModelInfo& info = model.info();
  out << "world model: z " << model.config().latent_dim << ", LSTM " << model.config().hidden << ", "
      << model.config().components << " Gaussians"
      << (model.config().separate_controller_memory ? " (controller's memory separate)" : "") << ", "
      << model.vocabulary().size() << " of "
      << model.vocabulary().num_xfers() << " rules in its vocabulary, " << model.parameter_count() << " parameters\n";
  out << "trained on " << info.trained_steps << " real steps";
  if (!info.graphs.empty()) {
    out << " of";
    for (const std::string& g : info.graphs) out << " " << g;
  }
  if (!info.source.empty()) out << " (from " << info.source << ")";
  out << "\nmax steps " << info.max_steps << ", rule library " << info.rule_library_hash << ", feature version "
      << info.feature_version << "\n";
  return out.str();
}

}  // namespace graphworld
