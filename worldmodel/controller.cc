#include "worldmodel/controller.h"

#include <algorithm>
#include <limits>

#include "common/checkpoint_file.h"
#include "common/error.h"
#include "learner/rollout.h"
#include "learner/torch_bytes.h"
#include "worldmodel/device_random.h"
#include "worldmodel/world_model_modules.h"

namespace graphworld {

DreamControllerImpl::DreamControllerImpl(int64_t latent_dim, int64_t hidden_dim, int64_t vocabulary, int64_t width)
    : latent_dim_(latent_dim), hidden_dim_(hidden_dim), vocabulary_(vocabulary), width_(width) {
  if (latent_dim < 1 || hidden_dim < 1 || vocabulary < 0 || width < 1)
    throw UsageError("a controller needs positive latent, hidden and width sizes");
  body_ = register_module("body", torch::nn::Linear(latent_dim + hidden_dim, width));
  body2_ = register_module("body2", torch::nn::Linear(width, width));
  policy_ = register_module("policy", torch::nn::Linear(width, vocabulary + 1));
  value_ = register_module("value", torch::nn::Linear(width, 1));
}

ControllerOutput DreamControllerImpl::forward(const torch::Tensor& z, const torch::Tensor& h, const torch::Tensor& mask) {
  const torch::Tensor x = torch::tanh(body2_->forward(torch::tanh(body_->forward(torch::cat({z, h}, -1)))));
  ControllerOutput out;
  out.logits = policy_->forward(x).masked_fill(mask.logical_not(), -std::numeric_limits<float>::infinity());
  out.value = value_->forward(x).squeeze(-1);
  return out;
}

DreamController make_controller(const WorldModel& model, uint64_t seed) {
  torch::manual_seed(seed);
  return DreamController(model.config().latent_dim, model.config().hidden, model.vocabulary().size());
}

torch::Tensor sample_actions(const ControllerOutput& out, torch::Generator& generator) {
  return sample_categorical(torch::softmax(out.logits, -1), generator);
}

std::string controller_to_bytes(DreamController& controller) {
  torch::serialize::OutputArchive archive;
  archive.write("shape", torch::tensor(std::vector<int64_t>{controller->latent_dim(), controller->hidden_dim(),
                                                            controller->vocabulary(), controller->width()}));
  torch::serialize::OutputArchive weights;
  controller->save(weights);
  archive.write("weights", weights);
  return archive_to_bytes(archive);
}

void save_controller(const std::string& path, DreamController& controller) {
  write_checked_file(path, "controller", controller_to_bytes(controller));
}

DreamController load_controller(const std::string& path, const WorldModel& model) {
  return controller_from_bytes(read_checked_file(path, "controller"), model, path);
}

DreamController controller_from_bytes(const std::string& bytes, const WorldModel& model, const std::string& path) {
  torch::serialize::InputArchive archive;
  archive_from_bytes(archive, bytes, path);
  const torch::Tensor shape = read_tensor(archive, "shape", path);
  if (shape.numel() != 4) throw FormatError(path + ": controller shape has " + std::to_string(shape.numel()) + " fields, not 4");
  const int64_t d = shape[0].item<int64_t>(), h = shape[1].item<int64_t>(), v = shape[2].item<int64_t>();
  if (d != model.config().latent_dim || h != model.config().hidden || v != model.vocabulary().size())
    throw UsageError(path + ": the controller was made for a world model with z " + std::to_string(d) + ", LSTM " +
                     std::to_string(h) + " and " + std::to_string(v) + " rules; this one has " +
                     std::to_string(model.config().latent_dim) + ", " + std::to_string(model.config().hidden) +
                     " and " + std::to_string(model.vocabulary().size()));
  DreamController controller(d, h, v, shape[3].item<int64_t>());
  try {
    torch::serialize::InputArchive weights;
    archive.read("weights", weights);
    load_with_shapes(*controller, weights, path, "controller");
  } catch (const c10::Error& e) {
    throw FormatError(path + ": controller weights do not fit its shape (" +
                      std::string(e.what_without_backtrace()).substr(0, 200) + ")");
  }
  return controller;
}

RealEpisodeResult real_controller_episode(GraphEnv& env, int32_t graph_index, const WorldModel& model,
                                          DreamController& controller, bool greedy, double explore,
                                          std::mt19937_64& rng, uint64_t seed, const RealStepCallback& on_step) {
  torch::NoGradGuard no_grad;
  WorldModel::Impl& m = model.impl();
  const int64_t v = m.vocabulary.size();
  RealEpisodeResult result;
  result.episode.graph_index = graph_index;
  const Observation* observation = &env.reset(seed);
  torch::optional<std::tuple<torch::Tensor, torch::Tensor>> state;
  torch::Tensor h = torch::zeros({1, m.config.hidden});
  for (;;) {
    WorldStep step = world_step_from(*observation, {env.noop(), 0}, 0, false);
    const torch::Tensor x = torch::tensor(m.encoder_input(step)).unsqueeze(0);
    const torch::Tensor z = m.encoder->encode(x);
    torch::Tensor mask = torch::cat({x.narrow(1, kSummaryDim, v) > 0.5, torch::ones({1, 1}, torch::kBool)}, 1);
    const ControllerOutput out = controller->forward(z, h, mask);
    int64_t choice;
    // The allowed vocabulary indices, ascending, from the step itself (the
    // vocabulary keeps xfer order), NO-OP last.
    std::vector<int64_t> allowed;
    for (int32_t x : step.allowed)
      if (const int32_t index = m.vocabulary.index_of(x); index >= 0) allowed.push_back(index);
    allowed.push_back(v);
    if (greedy) {
      choice = out.logits.argmax(1).item<int64_t>();
    } else if (std::uniform_real_distribution<double>(0, 1)(rng) < explore) {
      choice = allowed[std::uniform_int_distribution<size_t>(0, allowed.size() - 1)(rng)];
    } else {
      const torch::Tensor p = torch::softmax(out.logits, 1)[0];
      double u = std::uniform_real_distribution<double>(0, 1)(rng), acc = 0;
      choice = allowed.back();
      for (int64_t i : allowed) {
        acc += p[i].item<double>();
        if (u < acc) {
          choice = i;
          break;
        }
      }
    }
    const int32_t xfer = m.vocabulary.xfer(static_cast<int32_t>(choice));
    const Action action{xfer, place_rule(env, xfer, model.info().look_ahead_locations)};
    step.xfer = action.xfer;
    Observation before;
    if (on_step) before = compact_observation(*observation, action.xfer);
    const StepResult r = env.step(action);
    if (on_step)
      on_step(std::move(before), action, torch::log_softmax(out.logits, 1)[0][choice].item<float>(),
              out.value[0].item<float>(), r);
    step.reward = static_cast<float>(r.reward);
    step.done = r.done;
    if (r.info.initial_cost_ms > 0)
      result.best_reduction_percent = std::max(
          result.best_reduction_percent, 100.0 * (r.info.initial_cost_ms - r.info.cost_ms) / r.info.initial_cost_ms);
    // The world model follows the real episode, giving h for the next step.
    const torch::Tensor condition =
        m.rnn_condition(mask.narrow(1, 0, v).to(torch::kFloat), x.narrow(1, kSummaryDim + v, v),
                        m.action_input(torch::tensor({choice}), torch::tensor({static_cast<int64_t>(result.steps + 1)})));
    const MdnRnnOutput next = m.rnn->forward(z.unsqueeze(0), condition.unsqueeze(0), state);
    state = next.state;
    h = next.hidden.squeeze(0);
    result.episode.steps.push_back(std::move(step));
    ++result.steps;
    if (r.done) {
      result.reduction_percent = r.info.initial_cost_ms > 0
                                     ? 100.0 * (r.info.initial_cost_ms - r.info.cost_ms) / r.info.initial_cost_ms
                                     : 0.0;
      break;
    }
    observation = r.observation;
  }
  return result;
}

}  // namespace graphworld
