// graphworld train CONFIG [key=value ...] | train --resume RUN [key=value ...]
//
// Trains an agent in one process (learner/trainer.h) and prints progress
// after each update. Ctrl-C (or SIGTERM) stops after the current update or
// drops the rollout being collected, writes a final checkpoint and exits 0;
// a second Ctrl-C aborts at once.
#include <atomic>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <set>

#include <yaml-cpp/yaml.h>

#include "common/error.h"
#include "common/stopwatch.h"
#include "env/cost/analytic_cost_model.h"
#include "env/cost/cost_model_factory.h"
#include "env/rules/rule_library.h"
#include "learner/trainer.h"
#include "launch/commands.h"
#include "launch/model_source.h"

namespace graphworld {
namespace {
namespace fs = std::filesystem;

// Lock-free, so safe to set in a signal handler and to read from the
// collector's thread.
std::atomic<bool> stop_requested{false};
static_assert(std::atomic<bool>::is_always_lock_free);

void on_stop_signal(int signal) {
  stop_requested = true;
  // A second signal takes the default action: the process ends at once.
  std::signal(signal, SIG_DFL);
}

std::string timestamp() {
  const std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof(text), "%Y%m%d-%H%M%S", std::localtime(&now));
  return text;
}

// A file named in a config, as an absolute path: found from the working
// directory or, failing that, beside the config file. Anything else (a zoo
// name, "builtin", a missing file for the loader to report) is kept as is.
std::string resolve_config_file(const std::string& item, const std::string& config_path) {
  if (item.empty() || fs::path(item).is_absolute()) return item;
  if (fs::exists(item)) return fs::absolute(item).lexically_normal().string();
  if (!config_path.empty()) {
    const fs::path beside = fs::absolute(fs::path(config_path).parent_path() / item).lexically_normal();
    if (fs::exists(beside)) return beside.string();
  }
  return item;
}

// Rewrites the file-valued keys of a new run's config as absolute paths, so
// the run folder's config.yaml finds them from anywhere on resume.
Config with_absolute_paths(Config config, const std::string& config_path) {
  std::string graphs = "[";
  for (const std::string& spec : config.get_string_list("train.graphs")) {
    YAML::Emitter item;
    item << YAML::DoubleQuoted << resolve_config_file(spec, config_path);
    graphs += (graphs.size() > 1 ? ", " : "") + std::string(item.c_str());
  }
  config.set("train.graphs", graphs + "]", config_path);
  for (const char* key : {"env.rates", "env.rules"})  // plain strings: set takes the text as the value
    config.set(key, resolve_config_file(config.get_string(key), config_path), config_path);
  return config;
}

// A zoo name is its own name; a file is named by its stem. Names are made
// unique (they name metrics and the files in best/).
std::vector<TrainingGraph> load_training_graphs(const std::vector<std::string>& specs) {
  std::vector<TrainingGraph> graphs;
  std::set<std::string> taken;
  for (const std::string& spec : specs) {
    LoadedModel model;
    try {
      model = load_model(spec);
    } catch (const Error& e) {
      throw UsageError("train.graphs: " + std::string(e.what()));
    }
    const std::string stem = model.from_zoo ? spec : fs::path(spec).stem().string();
    std::string name = stem;
    for (int k = 2; !taken.insert(name).second; ++k) name = stem + "-" + std::to_string(k);
    graphs.push_back({name, std::move(model.graph)});
  }
  return graphs;
}

std::unique_ptr<CostModel> training_cost_model(const TrainingOptions& o) {
  if (o.cost_model == "analytic" && o.rates == "builtin") return std::make_unique<AnalyticCostModel>();
  CostModelOptions options;
  options.kind = o.cost_model;
  if (o.rates != "builtin") options.rates_path = o.rates;
  return make_cost_model(options);
}

void print_update(const UpdateReport& r, const std::string& best_line) {
  std::fprintf(stderr,
               "update %lld  steps %lld  %.0f steps/s  episodes %lld  mean reduction %.2f%%  best %s  "
               "loss pi %.3f v %.3f  entropy %.2f  kl %.4f  clip %.2f  ev %.2f\n",
               static_cast<long long>(r.update), static_cast<long long>(r.env_steps), r.env_steps_per_s,
               static_cast<long long>(r.episodes), r.mean_episode_reduction_pct, best_line.c_str(), r.stats.policy_loss,
               r.stats.value_loss, r.stats.entropy, r.stats.approx_kl, r.stats.clip_fraction,
               r.stats.explained_variance);
}

int run_train(const CliArgs& args) {
  const std::optional<std::string> resume = args.value("--resume");
  std::string config_path;
  std::vector<std::string> overrides;
  for (size_t i = 0; i < args.positional_count(); ++i) {
    const std::string& item = args.positional(i, "");
    if (item.find('=') != std::string::npos) overrides.push_back(item);
    else if (config_path.empty() && !resume) config_path = item;
    else throw UsageError("unexpected argument '" + item + "': give one CONFIG file (or --resume RUN) and key=value overrides");
  }
  std::string run_dir;
  if (resume) {
    run_dir = *resume;
    if (args.value("--run")) throw UsageError("--resume RUN continues RUN; --run does not apply");
    if (!fs::is_regular_file(run_dir + "/config.yaml"))
      throw UsageError(run_dir + " is not a training run folder (no config.yaml in it)");
    config_path = run_dir + "/config.yaml";
  } else if (config_path.empty()) {
    throw UsageError("'graphworld train' needs a CONFIG file (configs/train.yaml lists every key), or --resume RUN");
  }
  Config config = load_config(training_config_schema(), config_path, overrides);
  if (!resume) config = with_absolute_paths(config, config_path);
  const TrainingOptions options = training_options_from(config);
  if (!resume) {
    const std::string stem = fs::path(config_path).stem().string();
    run_dir = args.value_or("--run", "runs/" + stem + "-" + timestamp());
  }
  const bool quiet = args.flag("--quiet");

  RuleLibrary library = options.rules.empty() ? default_rule_library() : load_rule_library(options.rules);
  const RuleMatcher matcher(library.rules);
  std::unique_ptr<CostModel> cost = training_cost_model(options);
  if (!quiet) std::fprintf(stderr, "loading %zu training graph(s)\n", options.graphs.size());
  std::vector<TrainingGraph> graphs = load_training_graphs(options.graphs);
  const std::string checkpoint = args.value_or("--checkpoint", "");
  if (!checkpoint.empty() && !resume) throw UsageError("--checkpoint CKPT picks what --resume RUN continues from");
  Trainer trainer(config, std::move(graphs), matcher, *cost, run_dir, resume.has_value(), checkpoint);
  if (!quiet)
    std::fprintf(stderr, "%s run %s: %zu graph(s), %d envs x %d steps per update, %lld parameters, %s cost model, %zu rules\n",
                 resume ? "resuming" : "starting", run_dir.c_str(), trainer.collector().graphs().size(),
                 options.collector.num_envs, options.collector.steps_per_env,
                 static_cast<long long>(trainer.learner().policy().num_parameters()), cost->name().c_str(),
                 matcher.num_rules());

  stop_requested = false;
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
  // Polled by the learner and by the collector's thread.
  std::atomic<bool> announced{false};
  auto should_stop = [&] {
    if (stop_requested && !quiet && !announced.exchange(true))
      std::fprintf(stderr, "\nstopping: writing a final checkpoint (Ctrl-C again to abort without one)\n");
    return stop_requested.load();
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
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);

  std::printf("%s after %lld updates and %lld real env steps\n", outcome.stopped_early ? "stopped" : "finished",
              static_cast<long long>(outcome.updates), static_cast<long long>(outcome.env_steps));
  for (size_t g = 0; g < trainer.collector().best().size(); ++g)
    std::printf("  %-20s best reduction %.2f%%\n", trainer.collector().graphs()[g].name.c_str(),
                trainer.collector().best()[g].reduction_pct());
  std::printf("run folder   %s\n", run_dir.c_str());
  std::printf("checkpoint   %s\n", outcome.last_checkpoint.c_str());
  std::printf("metrics      %s/metrics.jsonl\n", run_dir.c_str());
  std::printf("best graphs  %s/best/\n", run_dir.c_str());
  if (outcome.stopped_early) std::printf("continue with: graphworld train --resume %s\n", run_dir.c_str());
  return 0;
}

}  // namespace

Subcommand train_command() {
  return {{"train",
           "CONFIG [key=value ...]",
           "Train an agent (GNN policy, PPO) on one machine, in one process.",
           "CONFIG is a YAML file (configs/train.yaml lists every key with its default); key=value items\n"
           "override it, e.g. 'ppo.learning_rate=1e-3 train.graphs=[bert,nasrnn]'. An unknown key or a bad\n"
           "value is an error naming the key and the closest valid one.\n"
           "The run folder gets config.yaml, checkpoints/, metrics.jsonl (one JSON row per update) and best/\n"
           "(the cheapest graph found per training graph). Ctrl-C stops cleanly with a final checkpoint;\n"
           "'graphworld train --resume RUN' continues (train.total_env_steps may be raised).",
           {
               {"--run", "", "DIR", "the run folder (default runs/<config name>-<date-time>)"},
               {"--resume", "", "RUN", "continue the run in folder RUN from its newest checkpoint"},
               {"--checkpoint", "", "CKPT", "--resume: continue from this checkpoint instead (e.g. when the newest is damaged)"},
               {"--quiet", "-q", "", "no progress on stderr"},
           }},
          run_train};
}

}  // namespace graphworld
