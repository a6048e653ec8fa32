#include "worldmodel/mdn_rnn.h"

#include <cmath>

#include "common/error.h"
#include "common/worker_threads.h"
#include "learner/compute_threads.h"
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
  const int64_t beside = config_.bookkeeping_inputs, w = config_.hidden;
  MdnRnnOutput out;
  torch::Tensor lstm_out, bookkeeping_out;
  if (!state && lstm_sequence_applies(lstm_, z)) {
    // Whole sequences from a fresh start (training and scoring): the fused
    // LSTMs, side by side (lstm_sequence.h says why).
    std::vector<LstmSequenceRun> runs{{controller_input(z, actions), lstm_}};
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
      // Contiguous copies: cuDNN's LSTM refuses a strided h or c (a
      // column slice of B > 1 rows); on the CPU they cost little.
      auto part = [&](int64_t at) {
        return std::make_tuple(std::get<0>(*state).narrow(-1, at, w).contiguous(),
                               std::get<1>(*state).narrow(-1, at, w).contiguous());
      };
      own = part(0);
      other = part(w);
    }
    auto [a_out, a_state] = lstm_->forward(controller_input(z, actions), own);
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
  next_z_from(z_hidden, out);
  heads_from(hidden, actions, out);
  out.hidden = lstm_out;
  return out;
}

torch::Tensor MdnRnnImpl::controller_input(const torch::Tensor& z, const torch::Tensor& actions) const {
  const int64_t beside = config_.bookkeeping_inputs;
  return torch::cat({z, beside == 0 ? actions : actions.narrow(-1, beside, actions.size(-1) - beside)}, -1);
}

void MdnRnnImpl::next_z_from(const torch::Tensor& z_hidden, MdnRnnOutput& out) {
  const int64_t t = z_hidden.size(0), b = z_hidden.size(1), k = config_.components, d = config_.latent_dim;
  const torch::Tensor mix = mixture_head_->forward(z_hidden);  // [T, B, K (1 + 2D)]
  out.next_z.logits = mix.narrow(-1, 0, k);
  out.next_z.means = mix.narrow(-1, k, k * d).reshape({t, b, k, d});
  // Deviations kept within [e^-7, e^2]: a collapsing component would make
  // the likelihood unbounded and the gradients explode.
  out.next_z.log_sigma = mix.narrow(-1, k + k * d, k * d).reshape({t, b, k, d}).clamp(-7.0, 2.0);
}

void MdnRnnImpl::heads_from(const torch::Tensor& hidden, const torch::Tensor& actions, MdnRnnOutput& out) {
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
}

MdnRnnLosses MdnRnnImpl::losses(const MdnRnnOutput& out, const MdnRnnTargets& y) const {
  MdnRnnLosses l;
  next_z_loss(out, y, l);
  head_losses(out, y, l);
  return l;
}

void MdnRnnImpl::next_z_loss(const MdnRnnOutput& out, const MdnRnnTargets& y, MdnRnnLosses& l) const {
  const int64_t t = y.next_z.size(0), b = y.next_z.size(1), k = config_.components, d = config_.latent_dim;
  const torch::Tensor next_valid = y.next_valid.defined() ? y.next_valid : y.valid;
  const torch::Tensor next_count = next_valid.sum().clamp_min(1.0);
  GaussianMixture flat{out.next_z.logits.reshape({t * b, k}), out.next_z.means.reshape({t * b, k, d}),
                       out.next_z.log_sigma.reshape({t * b, k, d})};
  l.z_nll = (mixture_nll(flat, y.next_z.reshape({t * b, d})).reshape({t, b}) * next_valid).sum() / next_count;
}

void MdnRnnImpl::head_losses(const MdnRnnOutput& out, const MdnRnnTargets& y, MdnRnnLosses& l) const {
  const torch::Tensor valid = y.valid;
  const torch::Tensor count = valid.sum().clamp_min(1.0);
  auto mean_over_valid = [&](const torch::Tensor& per_step) { return (per_step * valid).sum() / count; };
  const torch::Tensor next_valid = y.next_valid.defined() ? y.next_valid : valid;
  const torch::Tensor next_count = next_valid.sum().clamp_min(1.0);
  auto mean_over_next = [&](const torch::Tensor& per_step) { return (per_step * next_valid).sum() / next_count; };
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
}

bool MdnRnnImpl::halves_apply(const torch::Tensor& z, const WorkerThreads* threads) const {
  return config_.bookkeeping_inputs > 0 && threads != nullptr && threads->count() >= 2 &&
         lstm_sequence_applies(lstm_, z) && lstm_sequence_applies(bookkeeping_lstm_, z);
}

bool MdnRnnImpl::train_step_applies(const torch::Tensor& z, const WorkerThreads* threads) const {
  return is_training() && halves_apply(z, threads);
}

MdnRnnLosses MdnRnnImpl::halves_forward(const torch::Tensor& z, const torch::Tensor& actions, const MdnRnnTargets& y,
                                        WorkerThreads& threads, torch::Tensor half_loss[2]) {
  // The dropout seeds in forward()'s order (the bookkeeping LSTM's output
  // first), so that the halves' masks are forward()'s.
  const double p = config_.dropout;
  const bool hashes = hashed_dropout_hashes(z, p, is_training());
  const uint64_t bookkeeping_seed = hashes ? draw_dropout_seed() : 0;
  const uint64_t controller_seed = hashes ? draw_dropout_seed() : 0;
  auto dropout = [&](const torch::Tensor& x, uint64_t seed) {
    return hashes ? hashed_dropout_with_seed(x, p, seed) : hashed_dropout(x, p, is_training());
  };
  // Per thread, so the caller's for both halves: grad mode, and whether
  // denormals are flushed (compute_threads.h).
  const bool grad = torch::GradMode::is_enabled();
  const unsigned denormals = denormal_mode();
  MdnRnnOutput out;
  MdnRnnLosses l;
  threads.run([&](int32_t half) {
    const torch::AutoGradMode same_grad_mode(grad);
    const DenormalMode same_denormals(denormals);
    // Per thread: the LSTM's weight gradients go straight into .grad, as
    // on the calling thread (lstm_sequence.h).
    const LstmGradientsInPlace in_place;
    if (half == 0) {
      const torch::Tensor lstm_out = lstm_sequences({{controller_input(z, actions), lstm_}})[0].output;
      next_z_from(dropout(lstm_out, controller_seed), out);
      next_z_loss(out, y, l);
      half_loss[0] = l.z_nll / static_cast<double>(config_.latent_dim);
    } else if (half == 1) {
      const torch::Tensor bookkeeping_out = lstm_sequences({{torch::cat({z, actions}, -1), bookkeeping_lstm_}})[0].output;
      heads_from(dropout(bookkeeping_out, bookkeeping_seed), actions, out);
      head_losses(out, y, l);
      half_loss[1] = MdnRnnLosses::kRewardWeight * l.reward + l.done + l.mask + l.locations;
    }
  });
  return l;
}

std::optional<MdnRnnLosses> MdnRnnImpl::train_step(const torch::Tensor& z, const torch::Tensor& actions,
                                                   const MdnRnnTargets& y, WorkerThreads& threads) {
  TORCH_CHECK(train_step_applies(z, &threads), "MdnRnnImpl::train_step: see train_step_applies");
  TORCH_CHECK(torch::GradMode::is_enabled(), "MdnRnnImpl::train_step: needs grad mode (losses_side_by_side scores)");
  torch::Tensor half_loss[2];
  const MdnRnnLosses l = halves_forward(z, actions, y, threads, half_loss);
  // A bad batch must not poison the weights: no backward pass. Summed in
  // float as total() is, so that a sum that overflows is refused too.
  if (!std::isfinite((half_loss[0].detach() + half_loss[1].detach()).item<double>())) return std::nullopt;
  threads.run([&](int32_t half) {
    // A half whose parameters are all frozen (WorldModelTrainOptions::
    // keep_controller_memory) has nothing to backpropagate.
    if (half < 2 && half_loss[half].requires_grad()) half_loss[half].backward();
  });
  return l;
}

MdnRnnLosses MdnRnnImpl::losses_side_by_side(const torch::Tensor& z, const torch::Tensor& actions,
                                             const MdnRnnTargets& y, WorkerThreads& threads) {
  TORCH_CHECK(halves_apply(z, &threads), "MdnRnnImpl::losses_side_by_side: see halves_apply");
  torch::Tensor half_loss[2];
  return halves_forward(z, actions, y, threads, half_loss);
}

}  // namespace graphworld
