// graphworld policy export RUN -o FILE.gwpolicy [--checkpoint CKPT]
// graphworld policy show FILE.gwpolicy
//
// Turns a training run's checkpoint into a policy file that `optimize
// --policy` reads, and describes policy files.
#include <cstdio>

#include "common/error.h"
#include "env/gym/observation.h"
#include "env/rules/rule_library.h"
#include "learner/policy_file.h"
#include "learner/policy_onnx_export.h"
#include "learner/ppo_learner.h"
#include "learner/trainer.h"
#include "learner/training_config.h"
#include "launch/commands.h"

namespace graphworld {
namespace {

int export_policy(const CliArgs& args) {
  const std::string& run_dir = args.positional(1, "a training RUN folder");
  args.expect_at_most(2);
  const std::string out = args.value_or("--output", "");
  const std::string onnx = args.value_or("--onnx", "");
  if (out.empty() && onnx.empty()) throw UsageError("policy export needs -o FILE.gwpolicy and/or --onnx FILE.onnx");
  if (out == onnx) throw UsageError("-o and --onnx name the same file " + out + "; give them different names");
  const std::string checkpoint = args.value_or("--checkpoint", "");
  const std::string path = checkpoint.empty() ? newest_checkpoint(run_dir) : checkpoint;
  const CheckpointContents saved = read_checkpoint(path);
  TrainingOptions options = training_options_from(saved.config);
  // The library the run trained with, as the checkpoint records it (not
  // whatever env.rules names today).
  options.network.num_xfers = saved.num_xfers;
  PpoLearner learner(options.network, options.ppo);
  learner.restore_state(saved.learner_state, path);
  PolicyFileInfo info;
  info.network = options.network;
  info.feature_version = kObservationFeatureVersion;
  info.rule_library_hash = saved.rule_library_hash;
  info.max_steps = options.collector.env.max_steps;
  info.max_locations = options.collector.env.max_locations;
  info.trained_on = options.graphs;
  info.cost_model = options.cost_model + (options.cost_model == "analytic" ? " (rates: " + options.rates + ")"
                                          : options.cost_model == "gpu"    ? " (" + options.gpu + ", table: " + options.gpu_table + ")"
                                                                           : "");
  info.source = path;
  info.updates = saved.updates;
  info.env_steps = saved.env_steps;
  if (!out.empty()) save_policy_file(out, learner.policy(), info);
  if (!onnx.empty()) export_policy_onnx_file(learner.policy(), onnx);
  for (const std::string& file : {out, onnx})
    if (!file.empty())
      std::printf("wrote %s from %s (%lld updates, %lld real env steps)\n", file.c_str(), path.c_str(),
                  static_cast<long long>(saved.updates), static_cast<long long>(saved.env_steps));
  if (!onnx.empty())
    std::printf("the ONNX policy's inputs and outputs are described in learner/policy_onnx_export.h\n");
  return 0;
}

int show_policy(const CliArgs& args) {
  const std::string& file = args.positional(1, "a policy FILE");
  args.expect_at_most(2);
  const LoadedPolicy policy = load_policy_file(file);
  std::printf("%s\n%s", file.c_str(), describe_policy(policy.info, policy.network.num_parameters()).c_str());
  const RuleLibrary& library = default_rule_library();
  if (policy.info.rule_library_hash == rule_library_hash(library) && policy.info.feature_version == kObservationFeatureVersion)
    std::printf("fits             this graphworld's built-in rules and features\n");
  else
    std::printf("fits             not the built-in rules or features of this graphworld (see the hash and version above)\n");
  return 0;
}

int run_policy(const CliArgs& args) {
  const std::string& action = args.positional(0, "an action: export or show");
  if (action == "export") return export_policy(args);
  if (action == "show") return show_policy(args);
  throw UsageError("unknown policy action '" + action + "'; use 'policy export RUN -o FILE' or 'policy show FILE'");
}

}  // namespace

Subcommand policy_command() {
  return {{"policy",
           "export RUN -o FILE.gwpolicy | show FILE",
           "Export a trained policy from a training run, or describe a policy file.",
           "export: the newest checkpoint of RUN (or --checkpoint CKPT) becomes one versioned file with the\n"
           "weights, the network configuration, the observation-feature version, the rule library's hash and\n"
           "the episode settings; 'graphworld optimize MODEL -o OUT --policy FILE' uses it.\n"
           "show: what a policy file holds and whether it fits this graphworld.",
           {
               {"--output", "-o", "FILE", "export: the policy file to write"},
               {"--onnx", "", "FILE", "export: also (or only) the policy network as ONNX (opset 17, dynamic sizes)"},
               {"--checkpoint", "", "CKPT", "export: this checkpoint instead of the run's newest"},
           }},
          run_policy};
}

}  // namespace graphworld
