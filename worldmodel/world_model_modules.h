// The torch side of WorldModel (world_model.h): the latent encoder, the
// MDN-RNN and the tensors built from episodes. Included only by worldmodel/
// .cc files and tests.
//
// Inputs of the encoder per step: the observation summary, the xfer mask
// over the vocabulary and log(1 + locations) / 4 of each vocabulary xfer.
// Inputs of the MDN-RNN per step: z_t, the mask over the vocabulary, the
// action (one-hot over the vocabulary and NO-OP), log(1 + location) / 4 and
// the steps taken after it over max_steps.
// The mask rides beside z rather than inside it: it must come back exactly
// (it decides which actions exist), and a 32-wide code would blur it.
#pragma once

#include <torch/torch.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "worldmodel/mdn_rnn.h"
#include "worldmodel/world_model.h"

namespace graphworld {

class LatentEncoderImpl : public torch::nn::Module {
 public:
  LatentEncoderImpl(int64_t input_dim, int64_t hidden, int64_t latent_dim);
  torch::Tensor encode(const torch::Tensor& input);   // [.., input_dim] -> z in (-1, 1) [.., D]
  torch::Tensor decode(const torch::Tensor& z);       // -> reconstruction [.., input_dim] (mask part as logits)
 private:
  // Names avoid Python keywords ("in"): archives are TorchScript underneath.
  torch::nn::Linear in_{nullptr}, code_{nullptr}, up_{nullptr}, out_{nullptr};
};
TORCH_MODULE(LatentEncoder);

// Episodes padded into [T, B, ..] tensors.
struct EpisodeBatch {
  torch::Tensor encoder_input;  // [T, B, E]: each step's encoder input
  torch::Tensor mask;           // [T, B, V]: the step's mask over the vocabulary
  torch::Tensor action;         // [T, B, V + 3]: one-hot xfer (NO-OP last), log(1 + location) / 4, steps after it / max_steps
  torch::Tensor reward, done;   // [T, B]
  // [T, B]: 1 where the step's action alone ends the episode (NO-OP, or the
  // step reaches max_steps); the dream ends those by rule, not by its done
  // head.
  torch::Tensor done_by_rule;
  torch::Tensor allowed_outside;  // [T, B]: allowed xfers outside the vocabulary (count)
  torch::Tensor valid;          // [T, B]
  torch::Tensor next_valid;     // [T, B]: the step has a successor in its episode
};

// The weights of a module's matrices (its 2-D parameters): a row through
// every one of them once, as an MLP's or an LSTM step's, costs two FLOPs
// per weight in matrix products (multiply and add), and its backward pass
// twice that. What the benchmarks count their GFLOP/s from.
inline int64_t matrix_weights(const torch::nn::Module& module) {
  int64_t n = 0;
  for (const torch::Tensor& p : module.parameters())
    if (p.dim() == 2) n += p.numel();
  return n;
}

// Module::load that refuses weights whose shapes differ from the module's
// (FormatError naming `path` and the weight).
void load_with_shapes(torch::nn::Module& module, torch::serialize::InputArchive& archive, const std::string& path,
                      const std::string& what);

// Calls a visitor on each of some episodes, in order: episodes in memory,
// or read one at a time from an EpisodeSource (a store too large to hold).
using EpisodeVisitor = std::function<void(const WorldEpisode&)>;
using EpisodeWalk = std::function<void(const EpisodeVisitor&)>;
inline EpisodeWalk walk_of(const std::vector<const WorldEpisode*>& episodes) {
  return [&episodes](const EpisodeVisitor& visit) {
    for (const WorldEpisode* e : episodes) visit(*e);
  };
}

struct WorldModel::Impl {
  WorldModelConfig config;
  XferVocabulary vocabulary;
  WorldModelInfo info;
  LatentEncoder encoder{nullptr};
  MdnRnn rnn{nullptr};

  Impl(WorldModelConfig config, XferVocabulary vocabulary, WorldModelInfo info);
  // Moves the networks and the saved tensors (starts, support clamps) to a
  // device, "cpu" or "cuda:N": a dream actor on a GPU. Bytes are read to
  // the CPU; a model moved to a GPU is not saved again (only learners save,
  // and they train on the CPU).
  void to_device(const torch::Device& device) {
    encoder->to(device);
    rnn->to(device);
    for (torch::Tensor* t : {&starts, &self_change_max, &reward_max, &applications_max})
      if (t->defined()) *t = t->to(device);
  }
  torch::Device device() { return rnn->parameters().front().device(); }
  int64_t encoder_input_dim() const { return kSummaryDim + 2 * vocabulary.size(); }
  // The MDN-RNN's input beside z: mask [V], log locations [V], action [V + 3].
  int64_t action_dim() const { return 3 * vocabulary.size() + 3; }

  float time_input(int32_t steps_after) const {
    return static_cast<float>(steps_after) / static_cast<float>(std::max(1, info.max_steps));
  }
  // Location counts from their encoder inputs (log(1 + count) / 4), and back.
  static torch::Tensor location_counts(const torch::Tensor& scaled) { return torch::round(torch::expm1(4.0 * scaled)); }
  static torch::Tensor scaled_locations(const torch::Tensor& counts) { return torch::log1p(counts) / 4.0; }
  // Match counts [.., V] after a step, as the dream keeps them: `counts`
  // plus the count head's `change`, in whole matches, never below 0; the
  // applied rule's own change (where the one-hot `applied` [.., V] is 1) no
  // larger than the data showed (self_change_max, once the support is set).
  torch::Tensor counts_after(const torch::Tensor& counts, torch::Tensor change, const torch::Tensor& applied) const;
  // One step's encoder input, [E]; several, [S, E].
  std::vector<float> encoder_input(const WorldStep& step) const;
  torch::Tensor encoder_inputs(const std::vector<WorldStep>& steps) const;
  // Real initial states to start dreams from: the first step of the first
  // episode of each graph (resets are deterministic), [S, E], row g for
  // graph g. Saved with the model.
  torch::Tensor starts;
  void set_starts(const std::vector<const WorldEpisode*>& episodes);
  void set_starts(const EpisodeWalk& episodes);
  // What the training data supports, which the dream does not go beyond
  // (a controller trained in the dream hunts for predictions the data never
  // backed): per vocabulary rule, the largest change of its own location
  // count seen when it was applied ([V]; -1 for a rule never applied: each
  // application takes a match), and the largest reward seen for each action
  // ([V + 1]; 0 for one never taken), and the most times each rule was
  // applied in one real episode ([V]; 1 for a rule never applied). A rule
  // whose matches the real graph hands back for a while and then runs out
  // shows no change in its own count until the end, so the count clamp
  // alone lets the dream offer it for ever. Undefined: no clamps. Saved
  // with the model.
  torch::Tensor self_change_max, reward_max, applications_max;
  void set_support(const std::vector<const WorldEpisode*>& episodes);
  void set_support(const EpisodeWalk& episodes);
  // Starts the reward's per-rule term at each rule's mean reward in
  // `episodes` (0 for rules they never apply), if it has not learned yet
  // (all zero): the LSTM's part then learns only what the state adds.
  void start_rule_rewards(const std::vector<WorldEpisode>& episodes);
  void start_rule_rewards(const EpisodeWalk& episodes);
  EpisodeBatch batch(const std::vector<const WorldEpisode*>& episodes) const;
  // The MDN-RNN's per-step input beside z: the mask [.., V] (first, see
  // MdnRnnConfig::mask_leads_action), log(1 + locations) / 4 [.., V] (a
  // rule's last location taken turns its mask bit off) and the action
  // [.., V + 3]. The time input lets done at max_steps be learned without z
  // carrying it exactly (a dream counts its own steps).
  torch::Tensor rnn_condition(const torch::Tensor& mask, const torch::Tensor& log_locations,
                              const torch::Tensor& action) const {
    return torch::cat({mask, log_locations, action}, -1);
  }
  torch::Tensor rnn_condition(const EpisodeBatch& b) const {
    return rnn_condition(b.mask, b.encoder_input.narrow(-1, kSummaryDim + vocabulary.size(), vocabulary.size()),
                         b.action);
  }
  // Action inputs [B, V + 3] of vocabulary indices `choice` [B] (int64) at
  // location 0, with `steps_after` [B] (int64) steps taken after them.
  torch::Tensor action_input(const torch::Tensor& choice, const torch::Tensor& steps_after) const {
    const int64_t v = vocabulary.size();
    torch::Tensor action = torch::zeros({choice.size(0), v + 3}, torch::TensorOptions(choice.device()));
    action.scatter_(1, choice.unsqueeze(1), 1.0);
    action.select(1, v + 2).copy_(steps_after.to(torch::kFloat) / static_cast<double>(std::max(1, info.max_steps)));
    return action;
  }
  // Targets of a batch given its z [T, B, D].
  MdnRnnTargets targets(const EpisodeBatch& batch, const torch::Tensor& z) const;
};

}  // namespace graphworld
