// The MDN-RNN world model: an LSTM over (z_t, a_t) whose output predicts the
// next step of the environment in latent space:
// - a mixture of K diagonal Gaussians for z_{t+1} (mixture_density.h);
// - the reward of the step, and whether it ended the episode (done);
// - the next xfer mask (which rewrites will apply, NO-OP included), so a
//   dream never asks a real graph what is legal;
// - the change of each xfer's location count, so a dream counts how many
//   places each rewrite has left and ends when none has any.
// The dream controller acts on (z_t, h_t); the same h drives it in the real
// environment. Included only by worldmodel/ .cc files and tests.
#pragma once

#include <torch/torch.h>

#include <optional>

#include "worldmodel/mixture_density.h"

namespace graphworld {

class WorkerThreads;

struct MdnRnnConfig {
  int64_t latent_dim = 32;   // D: size of z
  int64_t action_dim = 0;    // size of the action encoding a_t (the world model also puts the current mask there)
  int64_t num_xfers = 0;     // N: the mask has N + 1 entries (NO-OP last)
  int64_t hidden = 256;      // LSTM width
  int64_t components = 8;    // K
  // The action input starts with the current xfer mask (N entries, NO-OP
  // excluded): the next mask's logits then start from it (a learned
  // per-rule weight times +-1), so the LSTM learns only what a step changes.
  bool mask_leads_action = false;
  // Where the action input holds the one-hot over the N + 1 choices (-1:
  // nowhere). The reward then has a learned term per choice beside the
  // LSTM's: a rewrite's reward is mostly its rule's own (a fusion saves a
  // kernel launch wherever it is), and from a few hundred real steps the
  // LSTM alone learns that badly for rules whose rewards are small beside
  // other rules' (NasRNN's MatMul merge, +0.04 pp each, was predicted at
  // -0.1 to -0.2 pp, and the controller learned to stop at once).
  int64_t action_one_hot_at = -1;
  // With the one-hot above: the next mask's logits also get a learned term
  // per (choice, rule), [N + 1, N + 1]: applying rule a tends to end rule
  // a's last match and to open or close matches of rules that overlap it,
  // whatever the graph, and the LSTM alone learns those pairs slowly.
  bool mask_by_choice = false;
  double dropout = 0.0;  // on the LSTM's output, before the heads, in training mode
  // 0: one LSTM over (z, action input) drives every head and is h. Above
  // 0: two LSTMs. The first skips the first `bookkeeping_inputs` entries
  // of the action input (the world model's bookkeeping: the current mask
  // and location counts), drives the next-z mixture and is h, what the
  // controller reads; the second reads everything and drives the reward,
  // done, mask and location heads. The state holds both, [.., 2 * hidden].
  int64_t bookkeeping_inputs = 0;
};

// One step's (or one sequence's) predictions. Leading dims [T, B].
struct MdnRnnOutput {
  GaussianMixture next_z;     // logits [T, B, K], means / log_sigma [T, B, K, D]
  torch::Tensor reward;       // [T, B]
  torch::Tensor done_logit;   // [T, B]
  torch::Tensor mask_logits;  // [T, B, N + 1]
  torch::Tensor location_change;  // [T, B, N + 1]: predicted change of each xfer's location count
  torch::Tensor hidden;       // [T, B, H]: h_t for the controller
  std::tuple<torch::Tensor, torch::Tensor> state;  // the LSTM's (h, c) after the last step
};

// What a training sequence holds beside z and a. Leading dims [T, B].
struct MdnRnnTargets {
  torch::Tensor next_z;         // [T, B, D]
  torch::Tensor reward;         // [T, B]
  torch::Tensor done;           // [T, B] float 0/1
  torch::Tensor next_mask;      // [T, B, N + 1] float 0/1
  torch::Tensor location_change;  // [T, B, N + 1]: count after the step minus count before
  torch::Tensor valid;          // [T, B] float: 0 for padding after an episode's end
  // [T, B] float: 1 where done is the done head's to predict; 0 where the
  // action alone ends the episode (NO-OP, the last allowed step), which the
  // dream decides by rule. Undefined: same as valid.
  torch::Tensor done_scored;
  // [T, B] float: 1 where the state after the step is known (next_z,
  // next_mask, location_change are targets); undefined: same as valid.
  // The state after an episode's last step is never observed.
  torch::Tensor next_valid;
};

// Means over valid steps of: the next z's NLL (nats), the reward's squared
// error, done's cross-entropy, and the mask's cross-entropy and the
// location counts' squared error summed over the N + 1 entries (a mean
// over ~1,000 mostly-constant entries would drown the few that matter).
struct MdnRnnLosses {
  // Rewards are percentage points: an error of 0.1 is a loss of 0.01, too
  // small beside the others for the reward head to be learned well.
  static constexpr double kRewardWeight = 10.0;
  torch::Tensor z_nll, reward, done, mask, locations;
  // The NLL enters per latent dimension: summed over D it dwarfs the heads
  // that decide what a dream offers and pays.
  torch::Tensor total(int64_t latent_dim) const {
    return z_nll / static_cast<double>(latent_dim) + kRewardWeight * reward + done + mask + locations;
  }
};

class MdnRnnImpl : public torch::nn::Module {
 public:
  explicit MdnRnnImpl(MdnRnnConfig config);

  // z [T, B, D], actions [T, B, A]; `state` empty for a fresh start.
  MdnRnnOutput forward(const torch::Tensor& z, const torch::Tensor& actions,
                       const torch::optional<std::tuple<torch::Tensor, torch::Tensor>>& state = torch::nullopt);
  MdnRnnLosses losses(const MdnRnnOutput& out, const MdnRnnTargets& targets) const;

  // One training batch's forward pass, losses and backward pass, with the
  // model's two LSTMs (bookkeeping_inputs > 0) in two halves side by side
  // on `threads`' first two threads: the controller's LSTM, the next-z
  // mixture and its NLL on one; the bookkeeping LSTM, the reward, done,
  // mask and location heads and their losses on the other. The halves
  // share no parameter, so each backpropagates its own part of
  // losses(...).total() and the gradients (added into the parameters'
  // .grad) are those of forward(), losses() and total().backward(), to
  // the bit, when they start at zero as a training loop's do (each LSTM
  // adds its weight gradients in place: lstm_sequence.h). Why: beside the two LSTMs, a batch of a hundred steps is a
  // few hundred small LibTorch operators forward and backward, which on
  // one thread left the other idle for half of an epoch.
  // Returns the losses, or nothing (and no backward pass) when the loss is
  // not finite. Needs train_step_applies(z, &threads).
  std::optional<MdnRnnLosses> train_step(const torch::Tensor& z, const torch::Tensor& actions,
                                         const MdnRnnTargets& targets, WorkerThreads& threads);
  // Training mode and halves_apply.
  bool train_step_applies(const torch::Tensor& z, const WorkerThreads* threads) const;
  // losses(forward(z, actions), targets) in the same two halves side by
  // side, without a backward pass (scoring held-out episodes; in eval
  // mode, no dropout). Needs halves_apply(z, &threads).
  MdnRnnLosses losses_side_by_side(const torch::Tensor& z, const torch::Tensor& actions, const MdnRnnTargets& targets,
                                   WorkerThreads& threads);
  // Two LSTMs that lstm_sequences runs over z's sequences (CPU, float),
  // and at least two threads.
  bool halves_apply(const torch::Tensor& z, const WorkerThreads* threads) const;
  const MdnRnnConfig& config() const { return config_; }
  // Width of the LSTM state (h, c): hidden, or twice that with two LSTMs,
  // the controller's first (its h is the state's first `hidden` entries).
  int64_t state_width() const { return config_.bookkeeping_inputs > 0 ? 2 * config_.hidden : config_.hidden; }
  // [N + 1]: the reward's per-choice term (action_one_hot_at >= 0), for a
  // caller to start it from the data's mean rewards; undefined otherwise.
  torch::Tensor& reward_by_choice() { return reward_by_choice_; }
  // With two LSTMs (bookkeeping_inputs > 0): what the controller's h and
  // the next z come from, the controller's LSTM and the mixture head; the
  // rest is the bookkeeping. Empty with one LSTM, which is both.
  std::vector<torch::Tensor> controller_memory_parameters() const;

 private:
  // The controller LSTM's input: z and the action input past the
  // bookkeeping entries.
  torch::Tensor controller_input(const torch::Tensor& z, const torch::Tensor& actions) const;
  // out.next_z from the controller LSTM's output (after dropout).
  void next_z_from(const torch::Tensor& z_hidden, MdnRnnOutput& out);
  // out's reward, done, mask and location predictions from the bookkeeping
  // LSTM's output (after dropout).
  void heads_from(const torch::Tensor& hidden, const torch::Tensor& actions, MdnRnnOutput& out);
  void next_z_loss(const MdnRnnOutput& out, const MdnRnnTargets& targets, MdnRnnLosses& l) const;
  // Both halves' forward passes and losses side by side; half_loss[h] is
  // half h's share of the losses' total().
  MdnRnnLosses halves_forward(const torch::Tensor& z, const torch::Tensor& actions, const MdnRnnTargets& targets,
                              WorkerThreads& threads, torch::Tensor half_loss[2]);
  void head_losses(const MdnRnnOutput& out, const MdnRnnTargets& targets, MdnRnnLosses& l) const;

  MdnRnnConfig config_;
  torch::nn::LSTM lstm_{nullptr};
  torch::nn::LSTM bookkeeping_lstm_{nullptr};  // bookkeeping_inputs > 0
  torch::nn::Linear mixture_head_{nullptr}, reward_head_{nullptr}, done_head_{nullptr}, mask_head_{nullptr},
      locations_head_{nullptr};
  torch::Tensor mask_carry_;  // [N]: how strongly the current mask carries over (mask_leads_action)
  torch::Tensor reward_by_choice_;  // [N + 1]: the reward's per-choice term (action_one_hot_at)
  torch::Tensor mask_by_choice_;    // [N + 1, N + 1]: the next mask's per-(choice, rule) term (mask_by_choice)
};
TORCH_MODULE(MdnRnn);

}  // namespace graphworld
