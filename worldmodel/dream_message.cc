#include "worldmodel/dream_message.h"

#include <cstring>

#include "common/error.h"

namespace graphworld {

namespace {

template <typename T>
std::vector<T> column(const torch::Tensor& t, torch::ScalarType type) {
  const torch::Tensor c = t.to(type).contiguous();
  std::vector<T> out(static_cast<size_t>(c.numel()));
  if (!out.empty()) std::memcpy(out.data(), c.data_ptr(), out.size() * sizeof(T));
  return out;
}

template <typename T>
torch::Tensor tensor_of(const std::vector<T>& v, torch::ScalarType type, std::vector<int64_t> shape) {
  return torch::from_blob(const_cast<T*>(v.data()), shape, type).clone();
}

}  // namespace

DreamTrajectoryMessage dream_batch_to_message(const DreamBatch& batch, int64_t world_model_generation) {
  DreamTrajectoryMessage m;
  m.world_model = world_model_generation;
  m.rows = static_cast<int32_t>(batch.rows);
  m.steps = static_cast<int32_t>(batch.steps);
  m.latent_dim = static_cast<int32_t>(batch.z.size(1));
  m.hidden_dim = static_cast<int32_t>(batch.h.size(1));
  m.actions = static_cast<int32_t>(batch.mask.size(1));
  m.z = column<float>(batch.z, torch::kFloat);
  m.h = column<float>(batch.h, torch::kFloat);
  m.mask = column<uint8_t>(batch.mask, torch::kUInt8);
  m.action = column<int32_t>(batch.action, torch::kInt);
  m.log_prob = column<float>(batch.log_prob, torch::kFloat);
  m.value = column<float>(batch.value, torch::kFloat);
  m.reward = column<float>(batch.reward, torch::kFloat);
  m.done = column<uint8_t>(batch.done, torch::kUInt8);
  m.bootstrap = column<float>(batch.bootstrap, torch::kFloat);
  m.episodes = static_cast<uint64_t>(batch.episodes);
  m.return_sum = batch.return_sum;
  return m;
}

DreamBatch dream_batch_from_message(const DreamTrajectoryMessage& m, const WorldModel& model) {
  if (m.latent_dim != model.config().latent_dim || m.hidden_dim != model.config().hidden ||
      m.actions != model.vocabulary().size() + 1)
    throw UsageError("a dream trajectory with z " + std::to_string(m.latent_dim) + ", LSTM " +
                     std::to_string(m.hidden_dim) + " and " + std::to_string(m.actions) +
                     " actions does not fit the world model (" + std::to_string(model.config().latent_dim) + ", " +
                     std::to_string(model.config().hidden) + ", " + std::to_string(model.vocabulary().size() + 1) + ")");
  const int64_t n = m.dream_steps();
  DreamBatch b;
  b.rows = m.rows;
  b.steps = m.steps;
  b.z = tensor_of(m.z, torch::kFloat, {n, m.latent_dim});
  b.h = tensor_of(m.h, torch::kFloat, {n, m.hidden_dim});
  b.mask = tensor_of(m.mask, torch::kUInt8, {n, m.actions}).to(torch::kBool);
  b.action = tensor_of(m.action, torch::kInt, {n}).to(torch::kLong);
  b.log_prob = tensor_of(m.log_prob, torch::kFloat, {n});
  b.value = tensor_of(m.value, torch::kFloat, {n});
  b.reward = tensor_of(m.reward, torch::kFloat, {n});
  b.done = tensor_of(m.done, torch::kUInt8, {n}).to(torch::kBool);
  b.bootstrap = tensor_of(m.bootstrap, torch::kFloat, {int64_t{m.rows}});
  b.episodes = static_cast<int64_t>(m.episodes);
  b.return_sum = m.return_sum;
  return b;
}

}  // namespace graphworld
