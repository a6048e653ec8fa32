// The MDN-RNN world model: an LSTM over (z_t, a_t) whose output predicts the
// next step of the environment in latent space:
// - a mixture of K diagonal Gaussians for z_{t+1} (mixture_density.h);
// - the reward of the step, and whether it ended the episode (done);
// - the next xfer mask (which rewrites will apply, NO-OP included), so a
//   dream never asks a real graph what is legal;
// - log(1 + locations) per xfer, so a dream knows how many places each
//   rewrite has.
// The dream controller acts on (z_t, h_t); the same h drives it in the real
// environment. Included only by worldmodel/ .cc files and tests.
#pragma once

#include <torch/torch.h>

#include "worldmodel/mixture_density.h"

namespace graphworld {

struct MdnRnnConfig {
  int64_t latent_dim = 32;   // D: size of z
  int64_t action_dim = 0;    // size of the action encoding a_t
  int64_t num_xfers = 0;     // N: the mask has N + 1 entries (NO-OP last)
  int64_t hidden = 256;      // LSTM width
  int64_t components = 8;    // K
};

// One step's (or one sequence's) predictions. Leading dims [T, B].
struct MdnRnnOutput {
  GaussianMixture next_z;     // logits [T, B, K], means / log_sigma [T, B, K, D]
  torch::Tensor reward;       // [T, B]
  torch::Tensor done_logit;   // [T, B]
  torch::Tensor mask_logits;  // [T, B, N + 1]
  torch::Tensor log_locations;  // [T, B, N + 1]: predicted log(1 + locations)
  torch::Tensor hidden;       // [T, B, H]: h_t for the controller
  std::tuple<torch::Tensor, torch::Tensor> state;  // the LSTM's (h, c) after the last step
};

// What a training sequence holds beside z and a. Leading dims [T, B].
struct MdnRnnTargets {
  torch::Tensor next_z;         // [T, B, D]
  torch::Tensor reward;         // [T, B]
  torch::Tensor done;           // [T, B] float 0/1
  torch::Tensor next_mask;      // [T, B, N + 1] float 0/1
  torch::Tensor next_log_locations;  // [T, B, N + 1]
  torch::Tensor valid;          // [T, B] float: 0 for padding after an episode's end
};

struct MdnRnnLosses {
  torch::Tensor z_nll, reward, done, mask, locations;  // means over valid steps
  torch::Tensor total() const { return z_nll + reward + done + mask + locations; }
};

class MdnRnnImpl : public torch::nn::Module {
 public:
  explicit MdnRnnImpl(MdnRnnConfig config);

  // z [T, B, D], actions [T, B, A]; `state` empty for a fresh start.
  MdnRnnOutput forward(const torch::Tensor& z, const torch::Tensor& actions,
                       const torch::optional<std::tuple<torch::Tensor, torch::Tensor>>& state = torch::nullopt);
  MdnRnnLosses losses(const MdnRnnOutput& out, const MdnRnnTargets& targets) const;
  const MdnRnnConfig& config() const { return config_; }

 private:
  MdnRnnConfig config_;
  torch::nn::LSTM lstm_{nullptr};
  torch::nn::Linear mixture_head_{nullptr}, reward_head_{nullptr}, done_head_{nullptr}, mask_head_{nullptr},
      locations_head_{nullptr};
};
TORCH_MODULE(MdnRnn);

}  // namespace graphworld
