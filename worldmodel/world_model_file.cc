// A world model's file (FILE.gwworld) and bytes: a checked file around a
// LibTorch archive of the format version, the configuration, the vocabulary,
// the info, the networks and the saved tensors (starts, support clamps).
#include <sstream>

#include "common/checkpoint_file.h"
#include "common/error.h"
#include "learner/torch_bytes.h"
#include "worldmodel/world_model.h"
#include "worldmodel/world_model_modules.h"

namespace graphworld {
namespace {

constexpr const char* kWorldModelKind = "world-model";
// 2: the data's support (self_change_max, reward_max); 3: applications_max;
// 4: the reward's per-rule term (MdnRnnConfig::action_one_hot_at); 5: the
// config's separate_controller_memory. Within 5, a sixth config field says
// the mask has its per-(action, rule) term (WorldModelConfig::mask_by_choice);
// files without it have five.
constexpr int64_t kWorldModelFormat = 5;

std::string info_text(const WorldModelInfo& info) {
  std::ostringstream out;
  out << "rule_library_hash " << info.rule_library_hash << "\nfeature_version " << info.feature_version
      << "\nmax_steps " << info.max_steps << "\ntrained_steps " << info.trained_steps << "\nsource " << info.source
      << "\n";
  // Written only when set, so that a file without it reads as before.
  if (info.best_locations) out << "best_locations 1\n";
  if (info.look_ahead_locations) out << "look_ahead_locations 1\n";
  for (const std::string& g : info.graphs) out << "graph " << g << "\n";
  return out.str();
}

WorldModelInfo info_from_text(const std::string& text, const std::string& path) {
  WorldModelInfo info;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const size_t space = line.find(' ');
    const std::string key = line.substr(0, space), value = space == std::string::npos ? "" : line.substr(space + 1);
    try {
      if (key == "rule_library_hash") info.rule_library_hash = value;
      else if (key == "feature_version") info.feature_version = std::stoi(value);
      else if (key == "max_steps") info.max_steps = std::stoi(value);
      else if (key == "trained_steps") info.trained_steps = std::stoll(value);
      else if (key == "source") info.source = value;
      else if (key == "best_locations") info.best_locations = std::stoi(value) != 0;
      else if (key == "look_ahead_locations") info.look_ahead_locations = std::stoi(value) != 0;
      else if (key == "graph") info.graphs.push_back(value);
    } catch (const std::exception&) {
      throw FormatError(path + ": world model info line '" + line + "' has a bad value");
    }
  }
  return info;
}
}  // namespace

void load_with_shapes(torch::nn::Module& module, torch::serialize::InputArchive& archive, const std::string& path,
                      const std::string& what) {
  // LibTorch's load replaces each tensor whatever its shape; a file whose
  // weights disagree with its own configuration must be refused here, not
  // fail inside a forward pass later.
  std::vector<std::pair<std::string, std::vector<int64_t>>> expected;
  for (const auto& p : module.named_parameters()) expected.emplace_back(p.key(), p.value().sizes().vec());
  module.load(archive);
  for (const auto& [name, sizes] : expected) {
    const torch::Tensor* loaded = module.named_parameters().find(name);
    if (loaded == nullptr || loaded->sizes().vec() != sizes)
      throw FormatError(path + ": the " + what + " weight '" + name + "' does not have the shape its configuration gives");
  }
}

void WorldModel::save(const std::string& path) const { write_checked_file(path, kWorldModelKind, to_bytes()); }

WorldModel WorldModel::load(const std::string& path) { return from_bytes(read_checked_file(path, kWorldModelKind), path); }

std::string WorldModel::to_bytes() const {
  const Impl& m = *impl_;
  torch::serialize::OutputArchive archive;
  archive.write("format", torch::tensor(kWorldModelFormat));
  std::vector<int64_t> config{m.config.latent_dim, m.config.hidden, m.config.components, m.config.encoder_hidden,
                              m.config.separate_controller_memory ? 1 : 0};
  // A sixth field only when the mask term is on: without it a file is
  // written as before it existed, and any build reads it.
  if (m.config.mask_by_choice) config.push_back(1);
  archive.write("config", torch::tensor(config));
  std::vector<int64_t> vocab(m.vocabulary.xfers().begin(), m.vocabulary.xfers().end());
  vocab.push_back(m.vocabulary.num_xfers());  // N last
  archive.write("vocabulary", torch::tensor(vocab));
  archive.write("info", bytes_to_tensor(info_text(m.info)));
  archive.write("starts", m.starts.defined() ? m.starts : torch::zeros({0, m.encoder_input_dim()}));
  archive.write("self_change_max", m.self_change_max.defined() ? m.self_change_max : torch::zeros({0}));
  archive.write("reward_max", m.reward_max.defined() ? m.reward_max : torch::zeros({0}));
  archive.write("applications_max", m.applications_max.defined() ? m.applications_max : torch::zeros({0}));
  torch::serialize::OutputArchive encoder, rnn;
  m.encoder->save(encoder);
  m.rnn->save(rnn);
  archive.write("encoder", encoder);
  archive.write("rnn", rnn);
  return archive_to_bytes(archive);
}

WorldModel WorldModel::from_bytes(const std::string& payload, const std::string& path) {
  torch::serialize::InputArchive archive;
  archive_from_bytes(archive, payload, path);
  const int64_t format = read_tensor(archive, "format", path).item<int64_t>();
  if (format != kWorldModelFormat)
    throw FormatError(path + ": world model format " + std::to_string(format) + ", this build reads " +
                      std::to_string(kWorldModelFormat) + " (retrain it with `graphworld worldmodel train`)");
  const torch::Tensor c = read_tensor(archive, "config", path);
  if (c.numel() != 5 && c.numel() != 6)
    throw FormatError(path + ": world model config has " + std::to_string(c.numel()) + " fields, not 5 or 6");
  WorldModelConfig config{c[0].item<int64_t>(), c[1].item<int64_t>(), c[2].item<int64_t>(), c[3].item<int64_t>(),
                          c[4].item<int64_t>() != 0, c.numel() == 6 && c[5].item<int64_t>() != 0};
  const torch::Tensor v = read_tensor(archive, "vocabulary", path);
  if (v.numel() < 1) throw FormatError(path + ": world model vocabulary is empty");
  std::vector<int32_t> xfers;
  for (int64_t i = 0; i + 1 < v.numel(); ++i) xfers.push_back(static_cast<int32_t>(v[i].item<int64_t>()));
  XferVocabulary vocabulary;
  try {
    vocabulary = XferVocabulary(xfers, static_cast<int32_t>(v[v.numel() - 1].item<int64_t>()));
  } catch (const Error& e) {
    throw FormatError(path + ": " + e.what());
  }
  WorldModelInfo info = info_from_text(read_bytes(archive, "info", path), path);
  if (info.feature_version != kObservationFeatureVersion)
    throw FormatError(path + ": the world model reads observation features of version " +
                      std::to_string(info.feature_version) + ", this build makes version " +
                      std::to_string(kObservationFeatureVersion) + " (retrain it with `graphworld worldmodel train`)");
  std::unique_ptr<Impl> impl;
  try {
    impl = std::make_unique<Impl>(config, std::move(vocabulary), std::move(info));
  } catch (const Error& e) {
    throw FormatError(path + ": " + e.what());
  }
  const torch::Tensor starts = read_tensor(archive, "starts", path);
  if (starts.dim() != 2 || starts.size(1) != impl->encoder_input_dim())
    throw FormatError(path + ": world model starts have the wrong shape");
  if (starts.size(0) > 0) impl->starts = starts;
  const torch::Tensor change = read_tensor(archive, "self_change_max", path), reward = read_tensor(archive, "reward_max", path);
  const torch::Tensor applications = read_tensor(archive, "applications_max", path);
  const int64_t rules = impl->vocabulary.size();
  if (change.numel() > 0 || reward.numel() > 0 || applications.numel() > 0) {
    if (change.dim() != 1 || change.size(0) != rules || reward.dim() != 1 || reward.size(0) != rules + 1 ||
        applications.dim() != 1 || applications.size(0) != rules || !torch::isfinite(change).all().item<bool>() ||
        !torch::isfinite(reward).all().item<bool>() || !torch::isfinite(applications).all().item<bool>() ||
        (applications < 1).any().item<bool>())
      throw FormatError(path + ": the world model's data support has the wrong shape or is not finite");
    impl->self_change_max = change.to(torch::kFloat);
    impl->reward_max = reward.to(torch::kFloat);
    impl->applications_max = applications.to(torch::kFloat);
  }
  try {
    torch::serialize::InputArchive encoder, rnn;
    archive.read("encoder", encoder);
    archive.read("rnn", rnn);
    load_with_shapes(*impl->encoder, encoder, path, "encoder");
    load_with_shapes(*impl->rnn, rnn, path, "MDN-RNN");
  } catch (const c10::Error& e) {
    throw FormatError(path + ": world model weights do not fit its configuration (" +
                      std::string(e.what_without_backtrace()).substr(0, 200) + ")");
  }
  return WorldModel(std::move(impl));
}

}  // namespace graphworld
