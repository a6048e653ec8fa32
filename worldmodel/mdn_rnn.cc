#include "worldmodel/mdn_rnn.h"

#include "common/error.h"
#include "worldmodel/hashed_dropout.h"
#include "worldmodel/lstm_sequence.h"

namespace graphworld {

MdnRnnImpl::MdnRnnImpl(MdnRnnConfig config) : config_(config) {
  if (config.latent_dim < 1 || config.action_dim < 1 || config.num_xfers < 0 || config.hidden < 1 ||
      config.components < 1)
    throw UsageError("an MDN-RNN needs positive latent_dim, action_dim, num_xfers, hidden and components");
  const int64_t k = config.components, d = config.latent_dim, n = config.num_xfers + 1;
  const int64_t beside = config.bookkeeping_inputs;
  if (beside < 0 || beside >= config.action_dim)
    throw UsageError("an MDN-RNN's bookkeeping inputs must leave part of the action input for the controller's LSTM");
  lstm_ = register_module("lstm", torch::nn::LSTM(torch::nn::LSTMOptions(d + config.action_dim - beside, config.hidden)));
  if (beside > 0)
    bookkeeping_lstm_ = register_module(
        "bookkeeping_lstm", torch::nn::LSTM(torch::nn::LSTMOptions(d + config.action_dim, config.hidden)));
  mixture_head_ = register_module("mixture", torch::nn::Linear(config.hidden, k * (1 + 2 * d)));
  reward_head_ = register_module("reward", torch::nn::Linear(config.hidden, 1));
  done_head_ = register_module("done", torch::nn::Linear(config.hidden, 1));
  mask_head_ = register_module("mask", torch::nn::Linear(config.hidden, n));
  locations_head_ = register_module("locations", torch::nn::Linear(config.hidden, n));
  if (config.mask_leads_action) {
    if (config.action_dim < config.num_xfers)
      throw UsageError("an MDN-RNN whose action leads with the mask needs action_dim >= num_xfers");
    mask_carry_ = register_parameter("mask_carry", torch::full({config.num_xfers}, 3.0));
  }
  if (config.action_one_hot_at >= 0) {
    if (config.action_one_hot_at + n > config.action_dim)
      throw UsageError("an MDN-RNN's action one-hot (at " + std::to_string(config.action_one_hot_at) + ", " +
                       std::to_string(n) + " wide) must lie within its action input (" +
                       std::to_string(config.action_dim) + ")");
    reward_by_choice_ = register_parameter("reward_by_choice", torch::zeros({n}));
    if (config.mask_by_choice) mask_by_choice_ = register_parameter("mask_by_choice", torch::zeros({n, n}));
  }
}

std::vector<torch::Tensor> MdnRnnImpl::controller_memory_parameters() const {
  if (config_.bookkeeping_inputs == 0) return {};
  std::vector<torch::Tensor> out = lstm_->parameters();
  for (const torch::Tensor& p : mixture_head_->parameters()) out.push_back(p);
  return out;
}

MdnRnnOutput MdnRnnImpl::forward(const torch::Tensor& z, const torch::Tensor& actions,
                                 const torch::optional<std::tuple<torch::Tensor, torch::Tensor>>& state) {
  const int64_t t = z.size(0), b = z.size(1), k = config_.components, d = config_.latent_dim;
  const int64_t beside = config_.bookkeeping_inputs, w = config_.hidden;
  MdnRnnOutput out;
  torch::Tensor lstm_out, bookkeeping_out;
  if (!state && lstm_sequence_applies(lstm_, z)) {
    // Whole sequences from a fresh start (training and scoring): the fused
    // LSTMs, side by side (lstm_sequence.h says why).
    std::vector<LstmSequenceRun> runs{
        {torch::cat({z, beside == 0 ? actions : actions.narrow(-1, beside, actions.size(-1) - beside)}, -1), lstm_}};
    if (beside > 0) runs.push_back({torch::cat({z, actions}, -1), bookkeeping_lstm_});
    const std::vector<LstmSequenceResult> r = lstm_sequences(runs);
    lstm_out = r[0].output;
    bookkeeping_out = beside == 0 ? lstm_out : r[1].output;
    out.state = beside == 0 ? std::make_tuple(r[0].h_n, r[0].c_n)
                            : std::make_tuple(torch::cat({r[0].h_n, r[1].h_n}, -1), torch::cat({r[0].c_n, r[1].c_n}, -1));
  } else if (beside == 0) {
    std::tie(lstm_out, out.state) = lstm_->forward(torch::cat({z, actions}, -1), state);
    bookkeeping_out = lstm_out;
  } else {
    torch::optional<std::tuple<torch::Tensor, torch::Tensor>> own, other;
    if (state) {
      own = std::make_tuple(std::get<0>(*state).narrow(-1, 0, w), std::get<1>(*state).narrow(-1, 0, w));
      other = std::make_tuple(std::get<0>(*state).narrow(-1, w, w), std::get<1>(*state).narrow(-1, w, w));
    }
    auto [a_out, a_state] = lstm_->forward(torch::cat({z, actions.narrow(-1, beside, actions.size(-1) - beside)}, -1), own);
    auto [b_out, b_state] = bookkeeping_lstm_->forward(torch::cat({z, actions}, -1), other);
    lstm_out = a_out;
    bookkeeping_out = b_out;
    out.state = std::make_tuple(torch::cat({std::get<0>(a_state), std::get<0>(b_state)}, -1),
                                torch::cat({std::get<1>(a_state), std::get<1>(b_state)}, -1));
  }
  // Dropout in training only: the heads otherwise learn the training
  // episodes by heart (mask F1 1.0 there, well below on held-out ones).
  const torch::Tensor hidden = hashed_dropout(bookkeeping_out, config_.dropout, is_training());
  const torch::Tensor z_hidden = beside == 0 ? hidden : hashed_dropout(lstm_out, config_.dropout, is_training());
  const torch::Tensor mix = mixture_head_->forward(z_hidden);  // [T, B, K (1 + 2D)]
  out.next_z.logits = mix.narrow(-1, 0, k);
  out.next_z.means = mix.narrow(-1, k, k * d).reshape({t, b, k, d});
  // Deviations kept within [e^-7, e^2]: a collapsing component would make
  // the likelihood unbounded and the gradients explode.
  out.next_z.log_sigma = mix.narrow(-1, k + k * d, k * d).reshape({t, b, k, d}).clamp(-7.0, 2.0);
  // The four heads that read `hidden` as one product: one matrix product
  // forward and two backward in place of four and eight, over a few
  // hundred rows where each call's overhead counted.
  const int64_t n = config_.num_xfers + 1;
  const torch::Tensor heads =
      torch::linear(hidden,
                    torch::cat({reward_head_->weight, done_head_->weight, mask_head_->weight, locations_head_->weight}),
                    torch::cat({reward_head_->bias, done_head_->bias, mask_head_->bias, locations_head_->bias}));
  out.reward = heads.select(-1, 0);
  if (config_.action_one_hot_at >= 0)
    out.reward = out.reward + (actions.narrow(-1, config_.action_one_hot_at, n) * reward_by_choice_).sum(-1);
  out.done_logit = heads.select(-1, 1);
  out.mask_logits = heads.narrow(-1, 2, n);
  if (config_.mask_leads_action) {
    const torch::Tensor carried = (2 * actions.narrow(-1, 0, config_.num_xfers) - 1) * mask_carry_;
    out.mask_logits = out.mask_logits + torch::cat({carried, torch::zeros_like(out.mask_logits.narrow(-1, 0, 1))}, -1);
  }
  if (mask_by_choice_.defined())
    out.mask_logits = out.mask_logits + actions.narrow(-1, config_.action_one_hot_at, n).matmul(mask_by_choice_);
  out.location_change = heads.narrow(-1, 2 + n, n);
  out.hidden = lstm_out;
  return out;
}

MdnRnnLosses MdnRnnImpl::losses(const MdnRnnOutput& out, const MdnRnnTargets& y) const {
  const int64_t t = y.next_z.size(0), b = y.next_z.size(1), k = config_.components, d = config_.latent_dim;
  const torch::Tensor valid = y.valid;
  const torch::Tensor count = valid.sum().clamp_min(1.0);
  auto mean_over_valid = [&](const torch::Tensor& per_step) { return (per_step * valid).sum() / count; };
  const torch::Tensor next_valid = y.next_valid.defined() ? y.next_valid : valid;
  const torch::Tensor next_count = next_valid.sum().clamp_min(1.0);
  auto mean_over_next = [&](const torch::Tensor& per_step) { return (per_step * next_valid).sum() / next_count; };
  GaussianMixture flat{out.next_z.logits.reshape({t * b, k}), out.next_z.means.reshape({t * b, k, d}),
                       out.next_z.log_sigma.reshape({t * b, k, d})};
  MdnRnnLosses l;
  l.z_nll = mean_over_next(mixture_nll(flat, y.next_z.reshape({t * b, d})).reshape({t, b}));
  l.reward = mean_over_valid((out.reward - y.reward).pow(2));
  // Steps whose action ends the episode by rule teach the done head
  // nothing, and worse: a run's early greedy episodes that stop with NO-OP
  // at step 1 would teach it that episodes end after one step.
  const torch::Tensor done_error =
      torch::binary_cross_entropy_with_logits(out.done_logit, y.done, {}, {}, torch::Reduction::None);
  l.done = y.done_scored.defined() ? (done_error * y.done_scored).sum() / y.done_scored.sum().clamp_min(1.0)
                                   : mean_over_valid(done_error);
  l.mask = mean_over_next(
      torch::binary_cross_entropy_with_logits(out.mask_logits, y.next_mask, {}, {}, torch::Reduction::None).sum(-1));
  l.locations = mean_over_next((out.location_change - y.location_change).pow(2).sum(-1));
  return l;
}

}  // namespace graphworld
