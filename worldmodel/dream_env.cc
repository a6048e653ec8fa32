#include "worldmodel/dream_env.h"

#include <algorithm>
#include <string>
#include <vector>

#include "common/error.h"
#include "worldmodel/device_random.h"

namespace graphworld {

namespace {

// Rows per MDN-RNN call. A step over 1,024 rows at once keeps a dozen
// 1,024 x 1,024 intermediates alive and runs from main memory; blocks of
// 128 stay in cache (batch 1,024 on 2 cores: 31k -> 55-59k dream steps/s).
// A GPU takes the whole batch in one call: there, each block would be
// another few dozen kernel launches.
constexpr int64_t kBlockRows = 128;

MdnRnnOutput forward_in_blocks(MdnRnnImpl& rnn, const torch::Tensor& z, const torch::Tensor& condition,
                               const torch::Tensor& h, const torch::Tensor& c) {
  const int64_t b = z.size(0);
  if (b <= kBlockRows || !z.device().is_cpu())
    return rnn.forward(z.unsqueeze(0), condition.unsqueeze(0), std::make_tuple(h.unsqueeze(0), c.unsqueeze(0)));
  std::vector<MdnRnnOutput> parts;
  for (int64_t start = 0; start < b; start += kBlockRows) {
    const int64_t n = std::min(kBlockRows, b - start);
    parts.push_back(rnn.forward(z.narrow(0, start, n).unsqueeze(0), condition.narrow(0, start, n).unsqueeze(0),
                                std::make_tuple(h.narrow(0, start, n).unsqueeze(0), c.narrow(0, start, n).unsqueeze(0))));
  }
  auto join = [&](auto field) {
    std::vector<torch::Tensor> pieces;
    for (const MdnRnnOutput& p : parts) pieces.push_back(field(p));
    return torch::cat(pieces, 1);  // [T = 1, B, ..]
  };
  MdnRnnOutput out;
  out.next_z.logits = join([](const MdnRnnOutput& p) { return p.next_z.logits; });
  out.next_z.means = join([](const MdnRnnOutput& p) { return p.next_z.means; });
  out.next_z.log_sigma = join([](const MdnRnnOutput& p) { return p.next_z.log_sigma; });
  out.reward = join([](const MdnRnnOutput& p) { return p.reward; });
  out.done_logit = join([](const MdnRnnOutput& p) { return p.done_logit; });
  out.mask_logits = join([](const MdnRnnOutput& p) { return p.mask_logits; });
  out.location_change = join([](const MdnRnnOutput& p) { return p.location_change; });
  out.hidden = join([](const MdnRnnOutput& p) { return p.hidden; });
  out.state = std::make_tuple(join([](const MdnRnnOutput& p) { return std::get<0>(p.state); }),
                              join([](const MdnRnnOutput& p) { return std::get<1>(p.state); }));
  return out;
}

}  // namespace

DreamEnv::DreamEnv(const WorldModel& model, const torch::Tensor& starts, DreamOptions options)
    : model_(&model.impl()), options_(options) {
  if (options.batch < 1) throw UsageError("a dream needs batch >= 1");
  if (options.max_steps < 1) throw UsageError("a dream needs max_steps >= 1");
  if (!(options.tau >= 0)) throw UsageError("a dream needs a temperature tau >= 0");
  const int64_t v = model_->vocabulary.size();
  if (starts.dim() != 2 || starts.size(0) < 1 || starts.size(1) != model_->encoder_input_dim())
    throw UsageError("a dream needs at least one real initial state of " + std::to_string(model_->encoder_input_dim()) +
                     " encoder inputs");
  torch::NoGradGuard no_grad;
  // The dream runs where the model is (WorldModel::Impl::to_device).
  device_ = model_->device();
  generator_ = options.default_generator ? seeded_default_generator(device_, options.seed)
                                         : seeded_generator(device_, options.seed);
  const torch::TensorOptions on(device_);
  const torch::Tensor x = starts.to(device_, torch::kFloat);
  start_z_ = model_->encoder->encode(x);
  start_mask_ = torch::cat({x.narrow(1, kSummaryDim, v) > 0.5, torch::ones({x.size(0), 1}, on.dtype(torch::kBool))}, 1);
  start_locations_ = x.narrow(1, kSummaryDim + v, v);
  start_counts_ = WorldModel::Impl::location_counts(start_locations_);
  next_start_ = torch::zeros({}, on.dtype(torch::kInt64));
  refused_row_ = torch::full({}, -1, on.dtype(torch::kInt64));
  refused_action_ = torch::full({}, -1, on.dtype(torch::kInt64));
  const int64_t b = options.batch;
  z_ = torch::zeros({b, model_->config.latent_dim}, on);
  hidden_width_ = model_->config.hidden;
  h_ = torch::zeros({b, model_->rnn->state_width()}, on);
  c_ = torch::zeros({b, model_->rnn->state_width()}, on);
  mask_ = torch::zeros({b, v + 1}, on.dtype(torch::kBool));
  locations_ = torch::zeros({b, v}, on);
  counts_ = torch::zeros({b, v}, on);
  applied_ = torch::zeros({b, v}, on);
  steps_ = torch::zeros({b}, on.dtype(torch::kInt64));
  returns_ = torch::zeros({b}, on);
  start_ = torch::zeros({b}, on.dtype(torch::kInt64));
  restart(torch::ones({b}, on.dtype(torch::kBool)));
}

std::vector<torch::Tensor*> DreamEnv::state_members() {
  return {&z_,     &mask_,    &locations_, &counts_,     &applied_,     &h_, &c_,
          &steps_, &returns_, &start_,     &next_start_, &refused_row_, &refused_action_};
}

std::vector<torch::Tensor> DreamEnv::state() {
  std::vector<torch::Tensor> out;
  for (const torch::Tensor* member : state_members()) out.push_back(*member);
  return out;
}

void DreamEnv::set_state(const std::vector<torch::Tensor>& state) {
  const std::vector<torch::Tensor*> members = state_members();
  if (state.size() != members.size())
    throw UsageError("DreamEnv::set_state: " + std::to_string(members.size()) + " tensors, as state() gives them");
  for (size_t i = 0; i < members.size(); ++i) {
    const torch::Tensor& now = *members[i];
    if (!state[i].defined() || state[i].sizes() != now.sizes() || state[i].scalar_type() != now.scalar_type() ||
        state[i].device() != now.device())
      throw UsageError("DreamEnv::set_state: tensor " + std::to_string(i) +
                       " differs from state()'s in shape, type or device");
  }
  for (size_t i = 0; i < members.size(); ++i) *members[i] = state[i];
}

void DreamEnv::restart(const torch::Tensor& rows) {
  // Every row is computed and the restarted ones kept (torch::where), so
  // the shapes never depend on how many restart: no count is read back.
  // The restarted rows take consecutive starts in row order, round robin.
  const int64_t s = start_z_.size(0);
  const torch::Tensor order = rows.to(torch::kInt64).cumsum(0) - 1;  // [B]: rank among the restarted rows
  const torch::Tensor picks = torch::remainder(order + next_start_, s);
  next_start_ = torch::remainder(next_start_ + rows.sum(), s);
  const torch::Tensor wide = rows.unsqueeze(1);
  z_ = torch::where(wide, start_z_.index_select(0, picks), z_);
  mask_ = torch::where(wide, start_mask_.index_select(0, picks), mask_);
  locations_ = torch::where(wide, start_locations_.index_select(0, picks), locations_);
  counts_ = torch::where(wide, start_counts_.index_select(0, picks), counts_);
  // In place: each of these is the dream's own (a step makes h and c
  // anew; what a caller kept of the last step's are other tensors).
  applied_.masked_fill_(wide, 0.0);
  h_.masked_fill_(wide, 0.0);
  c_.masked_fill_(wide, 0.0);
  steps_.masked_fill_(rows, 0);
  returns_.masked_fill_(rows, 0.0);
  start_ = torch::where(rows, picks, start_);
}

void DreamEnv::note_refused(const torch::Tensor& a) {
  const int64_t v = model_->vocabulary.size();
  const torch::Tensor inside = (a >= 0) & (a <= v);
  const torch::Tensor allowed = inside & mask_.gather(1, a.clamp(0, v).unsqueeze(1)).squeeze(1);
  const torch::Tensor refused = allowed.logical_not();
  const torch::Tensor first = refused.to(torch::kInt64).argmax();  // the first refused row (0 when none)
  const torch::Tensor fresh = refused.any() & (refused_row_ < 0);
  refused_row_ = torch::where(fresh, first, refused_row_);
  refused_action_ = torch::where(fresh, a.index_select(0, first.view({1})).squeeze(0), refused_action_);
}

void DreamEnv::check_actions() {
  const int64_t row = refused_row_.item<int64_t>();
  if (row < 0) return;
  const int64_t action = refused_action_.item<int64_t>(), v = model_->vocabulary.size();
  refused_row_.fill_(-1);  // reported once: the dream can go on with allowed actions
  refused_action_.fill_(-1);
  if (action < 0 || action > v)
    throw UsageError("dream row " + std::to_string(row) + ": action " + std::to_string(action) +
                     " is outside the vocabulary [0, " + std::to_string(v) + "]");
  throw UsageError("dream row " + std::to_string(row) + ": action " + std::to_string(action) +
                   " is masked by the predicted mask");
}

DreamStepResult DreamEnv::step(const torch::Tensor& actions) {
  torch::NoGradGuard no_grad;
  const int64_t b = options_.batch, v = model_->vocabulary.size();
  if (actions.dim() != 1 || actions.size(0) != b)
    throw UsageError("a dream step takes one action per row (" + std::to_string(b) + ")");
  const torch::Tensor given = actions.to(device_, torch::kInt64);
  note_refused(given);
  if (options_.check_each_step) check_actions();
  // Unchecked, a refused action is stepped as one inside the vocabulary
  // (and reported by check_actions()): an index past it would fault.
  const torch::Tensor a = given.clamp(0, v);
  const torch::Tensor condition =
      model_->rnn_condition(mask_.narrow(1, 0, v).to(torch::kFloat), locations_, model_->action_input(a, steps_ + 1));
  const MdnRnnOutput out = forward_in_blocks(*model_->rnn, z_, condition, h_, c_);
  DreamStepResult result;
  // NO-OP changes nothing and earns nothing, as in the real environment.
  // No reward beyond the largest the data showed for the action, and no
  // rule's own count growing more than the data showed when it was
  // applied (WorldModel::Impl::counts_after): a controller trained in the
  // dream otherwise learns to repeat a rule the model wrongly keeps
  // offering and rewarding.
  torch::Tensor reward = out.reward.squeeze(0);
  if (model_->reward_max.defined()) reward = torch::minimum(reward, model_->reward_max.index_select(0, a));
  // Each row's applied rule, one-hot over the vocabulary (NO-OP rows: none).
  const torch::Tensor applied =
      v > 0 ? torch::one_hot(a.clamp_max(v - 1), v).to(torch::kFloat) * (a < v).to(torch::kFloat).unsqueeze(1)
            : torch::zeros({b, 0}, torch::TensorOptions(device_));
  result.reward = torch::where(a == v, torch::zeros({b}, torch::TensorOptions(device_)), reward);
  h_ = std::get<0>(out.state).squeeze(0);
  c_ = std::get<1>(out.state).squeeze(0);
  GaussianMixture next{out.next_z.logits.squeeze(0), out.next_z.means.squeeze(0), out.next_z.log_sigma.squeeze(0)};
  z_ = sample_mixture(next, options_.tau, generator_).clamp(-1.0, 1.0);  // the encoder's range
  // Counts move by whole matches, as real ones do (counts_after rounds
  // each predicted change). The location head predicts the mean change,
  // and for a rule a step leaves alone that is a small negative number
  // (-0.03 to -0.07 on NasRNN) wherever such rules sometimes lose a match;
  // kept as fractions and added up over 60 steps, those wore a count of 10
  // down to 8.2 and ended the dream's run of that rule two applications
  // before the real graph's. A change predicted within half a match of 0
  // is then no change at all: such a count stays, and the mask head and
  // the application clamp end the rule. A rule is offered only where the
  // mask head and its count agree, and with nothing left to apply the
  // episode ends, as a real one does ("no-match"). Nor is a rule applied
  // in one episode more often than any real episode applied it.
  const torch::Tensor counts = model_->counts_after(counts_, out.location_change.squeeze(0).narrow(1, 0, v), applied);
  mask_ = out.mask_logits.squeeze(0) > 0;
  mask_.narrow(1, 0, v).logical_and_(counts >= 0.5);
  applied_ += applied;
  if (v > 0 && model_->applications_max.defined())
    mask_.narrow(1, 0, v).logical_and_(applied_ < model_->applications_max);
  mask_.select(1, v).fill_(true);
  counts_ = counts * mask_.narrow(1, 0, v);
  locations_ = WorldModel::Impl::scaled_locations(counts_);
  steps_ += 1;
  returns_ += result.reward;
  const torch::Tensor nothing_left = mask_.narrow(1, 0, v).any(1).logical_not();
  result.done = (out.done_logit.squeeze(0) > 0) | (a == v) | (steps_ >= options_.max_steps) | nothing_left;
  result.episode_return = torch::where(result.done, returns_, torch::zeros_like(returns_));
  restart(result.done);
  return result;
}

}  // namespace graphworld
