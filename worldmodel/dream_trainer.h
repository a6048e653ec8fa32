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
  // What a rewrite that earns nothing costs the controller in the dream
  // (percentage points; NO-OP is free). Rules that change nothing otherwise
  // tie with NO-OP, so a controller never learns to stop and every real
  // episode it plays runs to max_steps: real steps that buy nothing. A
  // rewrite is charged only what its predicted reward falls short of this
  // (all of it at a reward of 0 or less, nothing at this or more): a flat
  // charge on every rewrite made a longer road of small gains look worse
  // than a shorter one of larger gains that earned less in all (NasRNN
  // under the CPU rates: about 110 rewrites of 0.02 to 0.04 pp against 60
  // merges of 0.044 pp). Predicted reductions are reported without it.
  double step_cost = 0.0;
  // What a step pays the controller before that charge: Incremental, its
  // predicted reward; Final, nothing until the episode ends and then the
  // episode's predicted reduction (the sum of its predicted rewards), as
  // env.reward=final pays in the real environment. Paid at the end, a
  // rewrite that pays little now but opens better ones later is credited
  // with what the whole path earned (ResNet-18: folding every BatchNorm
  // before merging the downsampling convs, which greedy search never does).
  // Every rewrite but an episode's last then earns 0 of its own, so the
  // charge above takes step_cost from each in full.
  RewardKind dream_reward = RewardKind::Incremental;
};

struct DreamUpdateReport {
  int64_t dream_steps = 0;     // this update's
  int64_t episodes = 0;        // dream episodes that ended in it
  double mean_return = 0;      // their mean predicted reduction (percent)
  UpdateStats ppo;             // the update's losses and diagnostics (learner/ppo_epochs.h)
  double seconds = 0;
};

// T steps of B dream rows, flattened step-major (row j's step t is entry
// t * B + j): what PPO needs of each step. Made by an in-process trainer or
// a dream actor (then it travels as a DreamTrajectoryMessage,
// worldmodel/dream_message.h).
struct DreamBatch {
  int64_t rows = 0, steps = 0;
  torch::Tensor z, h;       // [T*B, D], [T*B, H]
  torch::Tensor mask;       // [T*B, V+1] bool
  torch::Tensor action;     // [T*B] int64
  torch::Tensor log_prob, value, reward;  // [T*B] float; reward: what the step pays (collect_dream_batch)
  torch::Tensor done;       // [T*B] bool
  torch::Tensor bootstrap;  // [B]: the value after the last step
  int64_t episodes = 0;     // dream episodes that ended in it
  double return_sum = 0;    // their predicted reductions, summed
};

// `horizon` steps of every row of `env`, actions sampled from the controller
// with `generator` (a generator of the env's device). The steps stay on the
// device; the batch is copied to the host at the end, where a refused
// action, if any, is thrown (DreamEnv::check_actions). Its rewards are what
// `paid` pays (DreamTrainingOptions::dream_reward).
DreamBatch collect_dream_batch(DreamEnv& env, DreamController& controller, int32_t horizon, torch::Generator& generator,
                               RewardKind paid = RewardKind::Incremental);

// What the controller learns from: each rewrite's predicted reward less
// what it falls short of `step_cost`, at most `step_cost`
// (DreamTrainingOptions::step_cost); NO-OP (action `noop`) is free.
torch::Tensor controller_rewards(const torch::Tensor& predicted, const torch::Tensor& action, int64_t noop,
                                 double step_cost);

// PPO's epochs over one batch (GAE per row with the learner's estimator),
// on controller_rewards.
// Fills the report's PPO statistics; dream_steps, episodes and mean_return
// come from the batch.
DreamUpdateReport learn_from_dream_batch(DreamController& controller, torch::optim::Optimizer& optimizer,
                                         const DreamBatch& batch, const PpoOptions& ppo, double step_cost,
                                         std::mt19937_64& rng);

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
