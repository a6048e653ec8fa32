// graphworld train CONFIG [key=value ...] | train --resume RUN [key=value ...]
//
// Trains an agent in one process (learner/trainer.h) and prints progress
// after each update. Ctrl-C (or SIGTERM) stops after the current update or
// drops the rollout being collected, writes a final checkpoint and exits 0;
// a second Ctrl-C aborts at once.
#include <atomic>
#include <cstdio>

#include "common/error.h"
#include "common/stopwatch.h"
#include "env/rules/rule_library.h"
#include "launch/commands.h"
#include "launch/supervisor/single_node_launcher.h"
#include "launch/process/stop_signal.h"
#include "launch/runs/training_setup.h"
#include "learner/trainer.h"

namespace graphworld {
namespace {

void print_update(const UpdateReport& r, const std::string& best_line) {
  std::fprintf(stderr,
               "update %lld  steps %lld  %.0f steps/s  episodes %lld  mean reduction %.2f%%  best %s  "
               "loss pi %.3f v %.3f  entropy %.2f  kl %.4f  clip %.2f  ev %.2f\n",
               static_cast<long long>(r.update), static_cast<long long>(r.env_steps), r.env_steps_per_s,
               static_cast<long long>(r.episodes), r.mean_episode_reduction_pct, best_line.c_str(), r.stats.policy_loss,
               r.stats.value_loss, r.stats.entropy, r.stats.approx_kl, r.stats.clip_fraction,
               r.stats.explained_variance);
}

// The learner and actors as processes (launch/supervisor/single_node_launcher.h).
int run_train_processes(const CliArgs& args, const TrainingRun& run) {
  if (args.value("--checkpoint")) throw UsageError("--checkpoint applies to --inline runs; the learner resumes from its newest");
  const bool quiet = args.flag("--quiet");
  SingleNodePlan plan;
  plan.run_dir = run.run_dir;
  plan.actors = run.options.distributed.actors;
  if (run.options.model_based.enabled) plan.dream_actors = run.options.model_based.dream_actors;
  plan.quiet = quiet;
  std::vector<std::string> overrides;
  std::string config_path;
  for (size_t i = 0; i < args.positional_count(); ++i) {
    const std::string& item = args.positional(i, "");
    if (item.find('=') != std::string::npos) overrides.push_back(item);
    else config_path = item;
  }
  plan.learner_args = run.resume ? std::vector<std::string>{"learner", "--resume", run.run_dir}
                                 : std::vector<std::string>{"learner", config_path, "--run", run.run_dir};
  plan.learner_args.insert(plan.learner_args.end(), overrides.begin(), overrides.end());
  plan.learner_resume_args = {"learner", "--resume", run.run_dir};
  if (quiet) {
    plan.learner_args.push_back("--quiet");
    plan.learner_resume_args.push_back("--quiet");
  }
  if (!quiet)
    std::fprintf(stderr, "%s run %s: a learner, %d actor processes%s (--inline trains in this process)\n",
                 run.resume ? "resuming" : "starting", run.run_dir.c_str(), plan.actors,
                 plan.dream_actors > 0 ? (" and " + std::to_string(plan.dream_actors) + " dream actors").c_str() : "");
  install_stop_signals();
  const int code = run_single_node(plan, [] { return stop_requested(); });
  restore_default_signals();
  std::printf("metrics      %s/metrics.jsonl\n", run.run_dir.c_str());
  if (code != 0 || stop_requested()) std::printf("continue with: graphworld train --resume %s\n", run.run_dir.c_str());
  return code;
}

int run_train(const CliArgs& args) {
  const TrainingRun run = prepare_training_run(args);
  if (!args.flag("--inline")) return run_train_processes(args, run);
  if (run.options.model_based.enabled)
    throw UsageError("--inline trains the model-free agent; a model-based run (model_based.enabled) runs as processes "
                     "(drop --inline), or in one process with 'graphworld worldmodel agent'");
  const Config& config = run.config;
  const TrainingOptions& options = run.options;
  const std::optional<std::string> resume = run.resume ? std::optional<std::string>(run.run_dir) : std::nullopt;
  const std::string& run_dir = run.run_dir;
  const bool quiet = args.flag("--quiet");

  RuleLibrary library = options.rules.empty() ? default_rule_library() : load_rule_library(options.rules);
  const RuleMatcher matcher(library.rules);
  std::unique_ptr<CostModel> cost = training_cost_model(options);
  if (!quiet) std::fprintf(stderr, "loading %zu training graph(s)\n", options.graphs.size());
  std::vector<TrainingGraph> graphs = load_training_graphs(options.graphs);
  const std::string checkpoint = args.value_or("--checkpoint", "");
  if (!checkpoint.empty() && !resume) throw UsageError("--checkpoint CKPT picks what --resume RUN continues from");
  Trainer trainer(RunSettings{options, config}, std::move(graphs), matcher, *cost, run_dir, resume.has_value(), checkpoint);
  if (!quiet)
    std::fprintf(stderr, "%s run %s: %zu graph(s), %d envs x %d steps per update, %lld parameters, %s cost model, %zu rules\n",
                 resume ? "resuming" : "starting", run_dir.c_str(), trainer.collector().graphs().size(),
                 options.collector.num_envs, options.collector.steps_per_env,
                 static_cast<long long>(trainer.learner().policy().num_parameters()), cost->name().c_str(),
                 matcher.num_rules());

  install_stop_signals();
  // Polled by the learner and by the collector's thread.
  std::atomic<bool> announced{false};
  auto should_stop = [&] {
    if (stop_requested() && !quiet && !announced.exchange(true))
      std::fprintf(stderr, "\nstopping: writing a final checkpoint (Ctrl-C again to abort without one)\n");
    return stop_requested();
  };
  Stopwatch since_print;
  auto on_update = [&](const UpdateReport& r) {
    if (quiet || (since_print.elapsed_s() < 2.0 && r.env_steps < options.total_env_steps)) return;
    since_print.restart();
    std::string best;
    for (const auto& [graph, pct] : r.best_reduction_pct) best += (best.empty() ? "" : ", ") + graph + " " + std::to_string(pct).substr(0, 5) + "%";
    print_update(r, best);
  };
  const TrainingOutcome outcome = trainer.run(should_stop, on_update);
  restore_default_signals();

  std::printf("%s after %lld updates and %lld real env steps\n", outcome.stopped_early ? "stopped" : "finished",
              static_cast<long long>(outcome.updates), static_cast<long long>(outcome.env_steps));
  for (size_t g = 0; g < trainer.collector().best().size(); ++g)
    std::printf("  %-20s best reduction %.2f%%\n", trainer.collector().graphs()[g].name.c_str(),
                trainer.collector().best()[g].reduction_pct());
  std::printf("run folder   %s\n", run_dir.c_str());
  std::printf("checkpoint   %s\n", outcome.last_checkpoint.c_str());
  std::printf("metrics      %s/metrics.jsonl\n", run_dir.c_str());
  std::printf("best graphs  %s/best/\n", run_dir.c_str());
  if (outcome.stopped_early) std::printf("continue with: graphworld train --inline --resume %s\n", run_dir.c_str());
  return 0;
}

}  // namespace

Subcommand train_command() {
  return {{"train",
           "CONFIG [key=value ...]",
           "Train an agent (GNN policy, PPO) on this machine: a learner and actor processes, or --inline.",
           "CONFIG is a YAML file (configs/train.yaml lists every key with its default); key=value items\n"
           "override it, e.g. 'ppo.learning_rate=1e-3 train.graphs=[bert,nasrnn]'. An unknown key or a bad\n"
           "value is an error naming the key and the closest valid one.\n"
           "The run folder gets config.yaml, checkpoints/, metrics.jsonl (one JSON row per update) and best/\n"
           "(the cheapest graph found per training graph). Ctrl-C stops cleanly with a final checkpoint;\n"
           "'graphworld train --resume RUN' continues (train.total_env_steps may be raised).\n"
           "By default it runs the distributed system on this machine: 'graphworld learner' and\n"
           "distributed.actors 'graphworld actor' processes over loopback sockets, restarting a crashed actor;\n"
           "every rollout is kept in RUN/rollouts.h5. --inline trains in this one process instead (collection\n"
           "and update on two threads), deterministically: a resumed --inline run equals an uninterrupted one.",
           {
               {"--run", "", "DIR", "the run folder (default runs/<config name>-<date-time>)"},
               {"--resume", "", "RUN", "continue the run in folder RUN from its newest checkpoint"},
               {"--inline", "", "", "train in this process (deterministic; for debugging and exact reproduction)"},
               {"--checkpoint", "", "CKPT", "--resume: continue from this checkpoint instead (e.g. when the newest is damaged)"},
               {"--quiet", "-q", "", "no progress on stderr"},
           }},
          run_train};
}

}  // namespace graphworld
