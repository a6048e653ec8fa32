// The world model itself: the latent encoder, the tensors built from
// episodes, what the dream is bounded by, and its description. Its training
// is in world_model_training.cc, its file format in world_model_file.cc.
#include "worldmodel/world_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>

#include "common/error.h"
#include "worldmodel/world_model_modules.h"

namespace graphworld {

static_assert(WorldModelHeadLosses::kRewardWeight == MdnRnnLosses::kRewardWeight);

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
  rc.mask_by_choice = c.mask_by_choice;
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

void WorldModel::Impl::set_starts(const EpisodeWalk& walk) {
  std::map<int32_t, WorldStep> first;
  walk([&](const WorldEpisode& e) {
    if (!e.steps.empty() && !first.count(e.graph_index)) first.emplace(e.graph_index, e.steps.front());
  });
  std::vector<WorldStep> steps;
  for (auto& [graph, step] : first) steps.push_back(std::move(step));
  if (!steps.empty()) starts = encoder_inputs(steps);
}

void WorldModel::Impl::set_starts(const std::vector<const WorldEpisode*>& episodes) {
  set_starts(walk_of(episodes));
}

torch::Tensor WorldModel::Impl::counts_after(const torch::Tensor& counts, torch::Tensor change,
                                            const torch::Tensor& applied) const {
  if (self_change_max.defined() && self_change_max.numel() > 0)
    change = torch::where(applied > 0.5, torch::minimum(change, self_change_max), change);
  return (counts + change.round()).clamp_min(0.0);
}

void WorldModel::Impl::set_support(const std::vector<const WorldEpisode*>& episodes) {
  set_support(walk_of(episodes));
}

void WorldModel::Impl::set_support(const EpisodeWalk& walk) {
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
  walk([&](const WorldEpisode& e) {
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
  });
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
  start_rule_rewards([&](const EpisodeVisitor& visit) {
    for (const WorldEpisode& e : episodes) visit(e);
  });
}

void WorldModel::Impl::start_rule_rewards(const EpisodeWalk& walk) {
  torch::Tensor& term = rnn->reward_by_choice();
  if (!term.defined() || term.ne(0).any().item<bool>()) return;
  const int32_t v = vocabulary.size();
  std::vector<double> sum(static_cast<size_t>(v) + 1, 0.0), count(sum.size(), 0.0);
  walk([&](const WorldEpisode& e) {
    for (const WorldStep& step : e.steps) {
      const int32_t index = vocabulary.index_of(step.xfer);
      if (index < 0) continue;
      sum[static_cast<size_t>(index)] += step.reward;
      count[static_cast<size_t>(index)] += 1.0;
    }
  });
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
      // Where the environment picks the place (best locations), the dream's
      // action means "the rule at its chosen place", which it feeds as 0.
      act[v + 1] = info.best_locations ? 0.0f : static_cast<float>(std::log1p(s.location) / 4.0);
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
  y.next_mask = torch::cat({shifted(batch.mask), torch::ones({t, b, 1}, z.options())}, -1);  // NO-OP is always allowed
  const torch::Tensor counts = location_counts(batch.encoder_input.narrow(-1, kSummaryDim + v, v));
  y.location_change =
      torch::cat({(shifted(counts) - counts) * batch.next_valid.unsqueeze(-1), torch::zeros({t, b, 1}, z.options())}, -1);
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

std::string rule_placement(bool best_locations, bool look_ahead_locations) {
  if (best_locations && look_ahead_locations) return "the location that pays most within two rewrites";
  return best_locations ? "their best-paying location" : "their first location";
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
  out << "chosen rules go to " << rule_placement(info.best_locations, info.look_ahead_locations) << "\n";
  return out.str();
}

}  // namespace graphworld

