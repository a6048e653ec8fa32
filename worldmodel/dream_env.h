// Batched rollouts inside a world model ("the dream"). Each of B rows holds
// a dream episode: the latent z_t, the predicted xfer mask over the model's
// vocabulary (NO-OP last, always allowed) and the LSTM's state. A step
// feeds (z_t, mask_t, locations_t, a_t) to the MDN-RNN and takes from its
// output the reward, done, the next mask (logit > 0), the next location
// counts (moved by whole matches) and a z_{t+1} sampled at temperature
// tau. No graph and no real environment is touched: rows start from real
// initial states given once (DreamStart), and that is all.
//
// An episode ends on predicted done, NO-OP, or max_steps; the row then
// restarts from the next start (round robin), like a vectorised env.
// Actions are vocabulary indices; a masked one is refused (UsageError).
//
// A step stays on the model's device: masks, the action check, restarts
// and the draws are fixed-shape tensor operations with the device's own
// generator, and nothing is read back to the host unless the action check
// is asked for at each step (DreamOptions::check_each_step). Loops whose
// actions come from sample_actions over the mask turn it off and call
// check_actions() when they read their results anyway.
//
// Location choice: a dream has no graph, so it cannot name places. The
// controller picks the rule and the real environment picks the place
// (chosen_location in world_episode.h): the rule's first location in the
// matcher's deterministic order, or, with best locations
// (WorldModelInfo::best_locations), its best-paying one. The world model is
// trained on data where that is what happened, so a dream action is "the
// rule at that place".
//
// Included only by worldmodel/ .cc files and tests.
#pragma once

#include <torch/torch.h>

#include <vector>

#include "worldmodel/world_model.h"
#include "worldmodel/world_model_modules.h"

namespace graphworld {

struct DreamOptions {
  int64_t batch = 64;
  double tau = 1.0;         // mixture temperature when sampling z_{t+1}
  int32_t max_steps = 200;  // the real environment's horizon
  uint64_t seed = 0;
  // Refuse a masked or out-of-range action before stepping (one read from
  // the device per step). Off, the refusal is remembered on the device,
  // the step goes on with the action clamped into the vocabulary, and
  // check_actions() throws it.
  bool check_each_step = true;
  // Draw z_{t+1} from the device's default generator, seeded here with
  // `seed` (which reseeds it for the whole process), instead of a copy of
  // it: a step captured in a CUDA graph may draw only from generators the
  // graph advances between replays, and every LibTorch version's graphs
  // advance the default one (dream_step_graph.h).
  bool default_generator = false;
};

struct DreamStepResult {
  torch::Tensor reward;  // [B] predicted reward of the step
  torch::Tensor done;    // [B] bool: the step ended the row's episode (the row has restarted)
  // [B] sum of predicted rewards of the episode that just ended (0 elsewhere).
  torch::Tensor episode_return;
};

class DreamEnv {
 public:
  // `starts` are real initial states as encoder inputs [S, E]
  // (WorldModel::Impl::encoder_inputs of the first steps of real episodes;
  // a trained model keeps one per training graph: Impl::starts).
  DreamEnv(const WorldModel& model, const torch::Tensor& starts, DreamOptions options);

  // What the controller sees for the current step.
  const torch::Tensor& z() const { return z_; }          // [B, D]
  // [B, H]: the controller's h, the first H of the LSTM state (MdnRnnImpl
  // keeps the controller's LSTM first in it).
  torch::Tensor hidden() const { return h_.narrow(1, 0, hidden_width_); }
  const torch::Tensor& mask() const { return mask_; }    // [B, V + 1] bool
  const torch::Tensor& start_index() const { return start_; }  // [B] int64: the start each row's episode began from
  // [B, V]: each row's predicted match count per rule, whole numbers (0
  // where the rule is not offered).
  const torch::Tensor& counts() const { return counts_; }

  // `actions` [B] int64 vocabulary indices (V = NO-OP). Results are on the
  // model's device.
  DreamStepResult step(const torch::Tensor& actions);
  // Throws UsageError for the first action refused since the last check
  // (its row and action), if any, and forgets it; reads two numbers from
  // the device.
  void check_actions();
  int64_t batch() const { return options_.batch; }
  const torch::Device& device() const { return device_; }
  const DreamOptions& options() const { return options_; }

  // Every tensor a step reads and replaces or changes in place: the rows'
  // episodes, the LSTM state, the round-robin and refusal bookkeeping.
  // set_state() puts tensors of the same shapes back (shallow: the dream
  // then works on them). A CUDA graph keeps its step's inputs where they
  // were at capture and copies each step's new state into them
  // (dream_step_graph.h).
  // Not const: the tensors are the dream's own (copy_ into them moves it).
  std::vector<torch::Tensor> state();
  void set_state(const std::vector<torch::Tensor>& state);

 private:
  void restart(const torch::Tensor& rows);  // bool [B]
  std::vector<torch::Tensor*> state_members();  // what state() lists, in its order
  // Records the first refused action of `a` [B] (-1 when none) on the device.
  void note_refused(const torch::Tensor& a);

  WorldModel::Impl* model_;
  torch::Device device_{torch::kCPU};  // the model's: every state tensor lives there
  DreamOptions options_;
  torch::Generator generator_;
  torch::Tensor start_z_, start_mask_, start_locations_, start_counts_;  // [S, D], [S, V + 1], [S, V], [S, V]
  torch::Tensor next_start_;  // 0-dim int64: the start the next restarted row takes
  torch::Tensor refused_row_, refused_action_;  // 0-dim int64: the first refused action (-1: none)
  torch::Tensor z_, mask_, steps_, returns_, start_;
  torch::Tensor h_, c_;  // the LSTM state [B, MdnRnnImpl::state_width()]
  int64_t hidden_width_ = 0;  // H
  torch::Tensor counts_;     // [B, V]: predicted match counts (whole numbers)
  torch::Tensor applied_;    // [B, V]: times each rule was applied in the row's episode
  torch::Tensor locations_;  // [B, V]: log(1 + counts) / 4, the rnn's input
};

}  // namespace graphworld
