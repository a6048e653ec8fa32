#include "learner/policy_file.h"

#include <cstdio>
#include <sstream>

#include "common/checkpoint_file.h"
#include "common/checksum.h"
#include "common/error.h"
#include "env/gym/observation.h"
#include "learner/torch_bytes.h"

namespace graphworld {
namespace {

constexpr const char* kPolicyKind = "policy";

std::string join(const std::vector<std::string>& items) {
  std::string s;
  for (const std::string& item : items) s += (s.empty() ? "" : "\n") + item;
  return s;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

}  // namespace

std::string rule_library_hash(const RuleLibrary& library) {
  RuleLibrary rules_only;
  rules_only.rules = library.rules;
  const std::string bytes = serialize_rule_library(rules_only);
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(fnv1a_64(bytes.data(), bytes.size())));
  return hex;
}

void save_policy_file(const std::string& path, const PolicyNetwork& network, const PolicyFileInfo& info) {
  torch::serialize::OutputArchive archive;
  archive.write("parameters", bytes_to_tensor(network.save_parameters()));
  const PolicyNetworkConfig& c = network.config();
  // A fourth entry (location rewards) came later: files with three read as without.
  archive.write("network", torch::tensor({int64_t{c.num_xfers}, int64_t{c.hidden}, int64_t{c.message_rounds},
                                          int64_t{c.location_rewards ? 1 : 0}},
                                         torch::kInt64));
  archive.write("feature_version", torch::tensor({int64_t{info.feature_version}}, torch::kInt64));
  archive.write("rule_library_hash", bytes_to_tensor(info.rule_library_hash));
  archive.write("episode", torch::tensor({int64_t{info.max_steps}, int64_t{info.max_locations}}, torch::kInt64));
  archive.write("trained_on", bytes_to_tensor(join(info.trained_on)));
  archive.write("cost_model", bytes_to_tensor(info.cost_model));
  archive.write("source", bytes_to_tensor(info.source));
  archive.write("progress", torch::tensor({info.updates, info.env_steps}, torch::kInt64));
  write_checked_file(path, kPolicyKind, archive_to_bytes(archive));
}

LoadedPolicy load_policy_file(const std::string& path) {
  const std::string payload = read_checked_file(path, kPolicyKind);
  torch::serialize::InputArchive archive;
  archive_from_bytes(archive, payload, path);
  PolicyFileInfo info;
  const torch::Tensor network = read_tensor(archive, "network", path);
  if (network.numel() != 3 && network.numel() != 4) throw FormatError(path + ": 'network' has the wrong size");
  info.network.num_xfers = static_cast<int32_t>(network[0].item<int64_t>());
  info.network.hidden = static_cast<int32_t>(network[1].item<int64_t>());
  info.network.message_rounds = static_cast<int32_t>(network[2].item<int64_t>());
  info.network.location_rewards = network.numel() == 4 && network[3].item<int64_t>() != 0;
  info.feature_version = static_cast<int32_t>(read_tensor(archive, "feature_version", path).item<int64_t>());
  info.rule_library_hash = read_bytes(archive, "rule_library_hash", path);
  const torch::Tensor episode = read_tensor(archive, "episode", path);
  if (episode.numel() != 2) throw FormatError(path + ": 'episode' has the wrong size");
  info.max_steps = static_cast<int32_t>(episode[0].item<int64_t>());
  info.max_locations = static_cast<int32_t>(episode[1].item<int64_t>());
  info.trained_on = split_lines(read_bytes(archive, "trained_on", path));
  info.cost_model = read_bytes(archive, "cost_model", path);
  info.source = read_bytes(archive, "source", path);
  const torch::Tensor progress = read_tensor(archive, "progress", path);
  if (progress.numel() != 2) throw FormatError(path + ": 'progress' has the wrong size");
  info.updates = progress[0].item<int64_t>();
  info.env_steps = progress[1].item<int64_t>();
  PolicyNetwork net = [&] {
    try {
      return PolicyNetwork(info.network);
    } catch (const UsageError& e) {
      throw FormatError(path + ": its network configuration is invalid: " + e.what());
    }
  }();
  net.load_parameters(read_bytes(archive, "parameters", path), path);
  return {std::move(info), std::move(net)};
}

void check_policy_fits(const PolicyFileInfo& info, const RuleLibrary& library, const std::string& path) {
  if (info.feature_version != kObservationFeatureVersion)
    throw UsageError(path + ": the policy reads observation features version " + std::to_string(info.feature_version) +
                     ", this graphworld makes version " + std::to_string(kObservationFeatureVersion) +
                     "; retrain it (or export it again) with this graphworld");
  const std::string hash = rule_library_hash(library);
  if (info.rule_library_hash != hash || info.network.num_xfers != static_cast<int32_t>(library.rules.size()))
    throw UsageError(path + ": the policy was trained with another rule library (hash " + info.rule_library_hash +
                     ", " + std::to_string(info.network.num_xfers) + " rules) than this one (hash " + hash + ", " +
                     std::to_string(library.rules.size()) + " rules); pass the library it was trained with (--rules) "
                     "or retrain it");
}

std::string describe_policy(const PolicyFileInfo& info, int64_t parameters) {
  std::ostringstream out;
  out << "network          hidden " << info.network.hidden << ", " << info.network.message_rounds
      << " message rounds, " << parameters << " parameters"
      << (info.network.location_rewards ? ", reads location rewards" : "") << "\n";
  out << "rules            " << info.network.num_xfers << " (library hash " << info.rule_library_hash << ")\n";
  out << "features         version " << info.feature_version << "\n";
  out << "episodes         max_steps " << info.max_steps << ", max_locations " << info.max_locations << "\n";
  out << "trained on       ";
  for (size_t i = 0; i < info.trained_on.size(); ++i) out << (i ? ", " : "") << info.trained_on[i];
  out << "\ncost model       " << info.cost_model << "\n";
  out << "training         " << info.updates << " updates, " << info.env_steps << " real env steps\n";
  out << "exported from    " << info.source << "\n";
  return out.str();
}

}  // namespace graphworld
