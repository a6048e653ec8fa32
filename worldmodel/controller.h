// The model-based agent's controller: a small network on (z_t, h_t), the
// world model's latent and the LSTM's hidden state, with a policy head over
// the world model's vocabulary plus NO-OP (masked: a masked action gets
// probability exactly 0) and a value head. It is trained by the learner's
// PPO inside the dream (dream_trainer.h); in the real environment it runs on
// the real encoder's z, the world model's h and the real masks
// (real_controller_episode below). Included only by worldmodel/ .cc files
// and tests.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <random>
#include <string>

#include "env/gym/graph_env.h"
#include "worldmodel/world_model.h"

namespace graphworld {

struct ControllerOutput {
  torch::Tensor logits;  // [B, V + 1], masked entries at -inf
  torch::Tensor value;   // [B]
};

class DreamControllerImpl : public torch::nn::Module {
 public:
  DreamControllerImpl(int64_t latent_dim, int64_t hidden_dim, int64_t vocabulary, int64_t width = 128);
  ControllerOutput forward(const torch::Tensor& z, const torch::Tensor& h, const torch::Tensor& mask);
  int64_t latent_dim() const { return latent_dim_; }
  int64_t hidden_dim() const { return hidden_dim_; }
  int64_t vocabulary() const { return vocabulary_; }
  int64_t width() const { return width_; }

 private:
  int64_t latent_dim_, hidden_dim_, vocabulary_, width_;
  torch::nn::Linear body_{nullptr}, body2_{nullptr}, policy_{nullptr}, value_{nullptr};
};
TORCH_MODULE(DreamController);

// A controller sized for `model`.
DreamController make_controller(const WorldModel& model, uint64_t seed);
// One action per row [B] drawn from the controller's masked logits, on the
// logits' device, drawn there with `generator`, a generator of that device
// (seeded_generator in device_random.h): nothing is read back to the host.
torch::Tensor sample_actions(const ControllerOutput& out, torch::Generator& generator);
// Checked files (kind "controller"); load refuses one that does not fit `model`.
void save_controller(const std::string& path, DreamController& controller);
DreamController load_controller(const std::string& path, const WorldModel& model);
// The same without the file: what a model-based run's parameters carry.
// `what` names the source in errors.
std::string controller_to_bytes(DreamController& controller);
DreamController controller_from_bytes(const std::string& bytes, const WorldModel& model, const std::string& what);

struct RealEpisodeResult {
  double reduction_percent = 0;  // 100 (C0 - CT) / C0 in the real environment
  // The same for the cheapest graph the episode passed through (C0 itself
  // counts): what an agent's result is when it optimises a graph
  // (`graphworld evaluate`, model_based_agent.h), as for a policy's rollouts.
  double best_reduction_percent = 0;
  int32_t steps = 0;
  WorldEpisode episode;          // what happened, for the world model to learn from
};

// One real episode of `env` acted by the controller: greedy (most likely
// allowed action) or sampled (with `rng`, and a uniformly random allowed
// action with probability `explore`). Xfers outside the model's
// vocabulary are never chosen. Each rule goes to its place_rule
// (world_episode.h): the first, the best-paying where `env` prices them, or
// the best within two rewrites where the model's info says so.
// `on_step`, if given, sees each step as an actor reports it: the compact
// observation before it (learner/rollout.h), the action, the controller's
// log-probability of that action and its value, and the step's result.
using RealStepCallback =
    std::function<void(Observation compact_before, Action action, float log_prob, float value, const StepResult& result)>;
RealEpisodeResult real_controller_episode(GraphEnv& env, int32_t graph_index, const WorldModel& model,
                                          DreamController& controller, bool greedy, double explore,
                                          std::mt19937_64& rng, uint64_t seed, const RealStepCallback& on_step = {});

}  // namespace graphworld
