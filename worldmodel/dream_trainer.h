// The controller's training in the dream: the learner's PPO (ppo_loss.h,
// gae.h) on batches of dream steps. One update collects `horizon` steps of
// every dream row, computes GAE per row and takes PPO's minibatch epochs.
// Included only by worldmodel/ .cc files and tests.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <vector>

#include "learner/ppo_learner.h"
#include "worldmodel/controller.h"
#include "worldmodel/dream_env.h"

namespace graphworld {

struct DreamTrainingOptions {
  DreamOptions dream;
  int32_t horizon = 16;  // steps per row per update
  PpoOptions ppo;
};

struct DreamUpdateReport {
  int64_t dream_steps = 0;     // this update's
  int64_t episodes = 0;        // dream episodes that ended in it
  double mean_return = 0;      // their mean predicted reduction (percent)
  double policy_loss = 0, value_loss = 0, entropy = 0, approx_kl = 0, clip_fraction = 0;
  double seconds = 0;
};

class DreamTrainer {
 public:
  // `starts` [S, E]: see DreamEnv.
  DreamTrainer(const WorldModel& model, DreamController controller, const torch::Tensor& starts,
               DreamTrainingOptions options);
  DreamUpdateReport update();
  DreamController& controller() { return controller_; }

 private:
  DreamTrainingOptions options_;
  DreamController controller_;
  DreamEnv env_;
  std::unique_ptr<torch::optim::Adam> optimizer_;
  std::mt19937_64 rng_;          // minibatch order
  torch::Generator generator_;  // the controller's sampled actions
};

// The dream's own estimate of the controller's reduction from each start:
// greedy actions, one episode per start, at temperature tau, up to the
// model's max_steps.
struct DreamEpisode {
  double predicted_reduction = 0;  // sum of predicted rewards, percent
  std::vector<int32_t> xfers;      // the rules chosen (xfer ids; N: NO-OP)
};
std::vector<DreamEpisode> dream_greedy_episodes(const WorldModel& model, DreamController& controller,
                                                const torch::Tensor& starts, double tau, uint64_t seed);

}  // namespace graphworld
