// graphworld worldmodel train --from STORE[,STORE...] -o FILE.gwworld
// graphworld worldmodel eval FILE.gwworld --from STORE[,STORE...]
// graphworld worldmodel show FILE.gwworld
// graphworld worldmodel bench FILE.gwworld
// graphworld worldmodel agent --graphs G[,G...] [-o DIR]
//
// World models offline: trained from rollout stores alone, measured on any
// store, their dream throughput, and the model-based agent trained in one
// process (worldmodel/model_based_training.h).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <variant>

#include "common/error.h"
#include "common/json_writer.h"
#include "common/process_memory.h"
#include "env/cost/analytic_cost_model.h"
#include "env/cost/cost_model_factory.h"
#include "env/gym/observation.h"
#include "env/rules/rule_library.h"
#include "launch/bench_commands.h"
#include "launch/commands.h"
#include "launch/pipeline/cost_options.h"
#include "launch/runs/store_episode_set.h"
#include "launch/runs/training_setup.h"
#include "learner/compute_device.h"
#include "learner/compute_threads.h"
#include "learner/gemm_rate.h"
#include "learner/policy_file.h"
#include "learner/training_config.h"
#include "worldmodel/dream_benchmark.h"
#include "worldmodel/model_based_training.h"
#include "worldmodel/world_model.h"

namespace graphworld {
namespace {

// "45s", "3m05s", "1h02m": a time left, as a progress line shows it.
std::string duration_text(double seconds) {
  const auto s = static_cast<long long>(std::max(0.0, seconds) + 0.5);
  char text[32];
  if (s < 60) {
    std::snprintf(text, sizeof(text), "%llds", s);
  } else if (s < 3600) {
    std::snprintf(text, sizeof(text), "%lldm%02llds", s / 60, s % 60);
  } else {
    std::snprintf(text, sizeof(text), "%lldh%02lldm", s / 3600, (s % 3600) / 60);
  }
  return text;
}

int default_threads() { return std::max(1, static_cast<int>(std::thread::hardware_concurrency())); }

// --threads T: T >= 1, or 0 for all cores.
int thread_option(const CliArgs& args, int fallback) {
  const int64_t t = args.int_value("--threads", fallback);
  if (t < 0 || t > 1024) throw UsageError("--threads must be 0 (all cores) or a count up to 1024, got " + std::to_string(t));
  return t == 0 ? default_threads() : static_cast<int>(t);
}

// The stores' episodes (--from), in memory or, past --resident-steps, in
// a temporary file in --spill-dir (launch/runs/store_episode_set.h).
StoreEpisodeSet read_stores(const CliArgs& args, const std::string& default_spill_dir) {
  const std::string from = args.value_or("--from", "");
  if (from.empty()) throw UsageError("give the rollout stores to read with --from RUN/rollouts.h5[,MORE.h5]");
  StoreEpisodeSetOptions options;
  options.resident_steps = args.int_value("--resident-steps", StoreEpisodeSetOptions{}.resident_steps);
  if (options.resident_steps < 1)
    throw UsageError("--resident-steps must be a positive number of steps, got " + std::to_string(options.resident_steps));
  options.spill_dir = args.value_or("--spill-dir", default_spill_dir.empty() ? "." : default_spill_dir);
  if (!std::filesystem::is_directory(options.spill_dir))
    throw UsageError("--spill-dir " + options.spill_dir + ": no such folder");
  options.first_steps = args.int_value("--first-steps", 0);
  return StoreEpisodeSet(split_comma_list(from), options,
                         [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); });
}

void print_accuracy(const WorldModelAccuracy& a, const char* what) {
  std::printf("%s: %lld steps, %lld transitions\n", what, static_cast<long long>(a.steps),
              static_cast<long long>(a.transitions));
  std::printf("  xfer-mask F1     %.4f (precision %.4f, recall %.4f)   target >= 0.99\n", a.mask_f1, a.mask_precision,
              a.mask_recall);
  std::printf("  done accuracy    %.4f                                 target >= 0.99\n", a.done_accuracy);
  std::printf("  reward MAE       %.4f pp per step                     target <= 0.1\n", a.reward_mae);
  std::printf("  z NLL            %.3f nats per transition\n", a.z_nll);
}

void accuracy_json(JsonWriter& json, const WorldModelAccuracy& a) {
  json.begin_object()
      .key("steps").value(a.steps)
      .key("transitions").value(a.transitions)
      .key("mask_f1").value(a.mask_f1)
      .key("mask_precision").value(a.mask_precision)
      .key("mask_recall").value(a.mask_recall)
      .key("done_accuracy").value(a.done_accuracy)
      .key("reward_mae").value(a.reward_mae)
      .key("z_nll").value(a.z_nll)
      .end_object();
}

// --split shuffle (a seeded shuffle holds out --holdout of the episodes) or
// arrival (every round(1/holdout)-th episode in store order, as a
// model-based run holds them out while it learns).
EpisodeSplit split_as_asked(const CliArgs& args, const EpisodeSource& all) {
  const std::string split = args.value_or("--split", "shuffle");
  const double holdout = args.double_value("--holdout", 0.2);
  if (split == "shuffle")
    return split_by_flags(all, held_out_by_shuffle(all.size(), holdout, static_cast<uint64_t>(args.int_value("--seed", 0))));
  if (split == "arrival") {
    std::vector<bool> complete(all.size());
    for (size_t i = 0; i < all.size(); ++i) complete[i] = all.complete(i);
    return split_by_flags(all, held_out_by_arrival(complete, holdout));
  }
  throw UsageError("--split takes 'shuffle' or 'arrival', not '" + split + "'");
}

// The output's folder, where a large store's rebuilt episodes go by default.
std::string folder_of(const std::string& file) {
  const std::string parent = std::filesystem::path(file).parent_path().string();
  return parent.empty() ? "." : parent;
}

int train_world_model(const CliArgs& args) {
  args.expect_at_most(1);
  const std::string out = args.value_or("--output", "");
  if (out.empty()) throw UsageError("worldmodel train needs -o FILE.gwworld");
  const int at_threads = thread_option(args, default_threads());
  const ComputeThreads threads(at_threads);
  const StoreEpisodeSet stores = read_stores(args, folder_of(out));
  const StoreEpisodes& data = stores.info();
  const EpisodeSource& all = stores.episodes();
  if (all.size() < 2)
    throw UsageError("the stores hold " + std::to_string(all.size()) +
                     " episodes; a world model needs at least 2 (one is held out)");
  const uint64_t seed = static_cast<uint64_t>(args.int_value("--seed", 0));
  const EpisodeSplit split = split_as_asked(args, all);
  const EpisodeSource& train = *split.train;
  const EpisodeSource& held_out = *split.held_out;
  WorldModelConfig config;
  config.latent_dim = args.int_value("--latent", config.latent_dim);
  config.hidden = args.int_value("--hidden", config.hidden);
  config.components = args.int_value("--components", config.components);
  config.separate_controller_memory = !args.flag("--shared-controller-memory");
  WorldModelInfo info;
  info.rule_library_hash = data.rule_library_hash;
  info.feature_version = kObservationFeatureVersion;
  info.max_steps = data.max_steps;
  info.best_locations = data.best_locations;
  info.look_ahead_locations = data.look_ahead_locations;
  info.graphs = data.graphs;
  info.source = args.value_or("--from", "");
  WorldModel model(config, vocabulary_of(train, data.num_xfers), info, seed);
  std::printf("%zu episodes (%lld steps) for training, %zu held out (%lld steps); %d of %d rules in the vocabulary\n",
              train.size(), static_cast<long long>(train.total_steps()), held_out.size(),
              static_cast<long long>(held_out.total_steps()), model.vocabulary().size(), data.num_xfers);
  if (stores.on_disk())
    std::printf("episodes kept on disk: %.1f MiB in %s\n", static_cast<double>(stores.bytes_on_disk()) / (1 << 20),
                args.value_or("--spill-dir", folder_of(out)).c_str());
  WorldModelTrainOptions options;
  options.encoder_epochs = static_cast<int32_t>(args.int_value("--encoder-epochs", options.encoder_epochs));
  options.epochs = static_cast<int32_t>(args.int_value("--epochs", options.epochs));
  const int64_t batch_steps = args.int_value("--batch-steps", options.batch_steps);
  if (batch_steps < 1 || batch_steps > 1000000)
    throw UsageError("--batch-steps must be a whole number of steps from 1 to 1000000, got " + std::to_string(batch_steps));
  options.batch_steps = static_cast<int32_t>(batch_steps);
  const int64_t min_batches = args.int_value("--min-batches", options.min_batches);
  if (min_batches < 1 || min_batches > 1000000)
    throw UsageError("--min-batches must be a whole number from 1 to 1000000, got " + std::to_string(min_batches));
  options.min_batches = static_cast<int32_t>(min_batches);
  options.learning_rate = args.double_value("--lr", options.learning_rate);
  options.resident_steps = args.int_value("--resident-steps", StoreEpisodeSetOptions{}.resident_steps);
  options.seed = seed;
  const ResolvedDevice device = resolve_compute_device(args.value_or("--device", "cpu"), "--device");
  if (!device.note.empty()) std::fprintf(stderr, "%s\n", device.note.c_str());
  options.device = device.device;
  // Time left: this phase's remaining epochs at this epoch's pace, and
  // the MDN-RNN's epochs at the encoder's while it runs (a rough guess).
  const double gemm_gflops = measure_gemm_gflops(options.device, at_threads);
  if (options.device == "cpu")
    std::printf("this machine's sgemm (1024 wide, %d threads): %.1f GFLOP/s\n", at_threads, gemm_gflops);
  else
    std::printf("training on %s; its GEMM (8192 wide): %.1f GFLOP/s\n", options.device.c_str(), gemm_gflops);
  options.on_epoch = [epochs = options.epochs](const WorldModelEpochReport& r) {
    const double steps_per_s = r.seconds > 0 ? static_cast<double>(r.steps) / r.seconds : 0.0;
    const double left_s = r.seconds * (r.epochs - r.epoch + (r.phase == "encoder" ? epochs : 0));
    if (r.phase == "encoder") {
      std::printf("encoder %3d/%d  reconstruction train %.4f held-out %.4f  %.2fs", r.epoch, r.epochs, r.train_loss,
                  r.held_out_loss, r.seconds);
    } else {
      std::printf("mdn-rnn %3d/%d  train %.4f held-out %.4f | held-out z-nll %.3f reward %.5f done %.4f mask %.4f "
                  "locations %.4f  %.2fs",
                  r.epoch, r.epochs, r.train_loss, r.held_out_loss, r.held_out.z_nll, r.held_out.reward,
                  r.held_out.done, r.held_out.mask, r.held_out.locations, r.seconds);
    }
    std::printf("  %.0f steps/s, %.1f GFLOP/s, %s left\n", steps_per_s, r.seconds > 0 ? r.gflop / r.seconds : 0.0,
                duration_text(left_s).c_str());
    std::fflush(stdout);
  };
  model.train(train, held_out, options);
  model.save(out);
  print_accuracy(model.evaluate(held_out), "held-out episodes");
  std::printf("wrote %s (the epoch with the lowest held-out loss)\n", out.c_str());
  return 0;
}

int eval_world_model(const CliArgs& args) {
  const std::string& file = args.positional(1, "a world model FILE.gwworld");
  args.expect_at_most(2);
  const ComputeThreads threads(thread_option(args, default_threads()));
  const WorldModel model = WorldModel::load(file);
  const StoreEpisodeSet stores = read_stores(args, ".");
  const StoreEpisodes& data = stores.info();
  if (data.rule_library_hash != model.info().rule_library_hash)
    throw UsageError(file + " was trained on another rule library than the stores' runs used");
  // The model's graph indices are its own; only names matter for starts,
  // and accuracy is per step, so episodes are scored as they come.
  if (data.max_steps != model.info().max_steps)
    throw UsageError(file + " was trained on episodes of up to " + std::to_string(model.info().max_steps) +
                     " steps; the stores' runs had " + std::to_string(data.max_steps) + " (its time input would mislead it)");
  if (data.best_locations != model.info().best_locations ||
      data.look_ahead_locations != model.info().look_ahead_locations)
    throw UsageError(file + " learned from rules applied at " +
                     rule_placement(model.info().best_locations, model.info().look_ahead_locations) +
                     ", the stores' runs applied them at " +
                     rule_placement(data.best_locations, data.look_ahead_locations) +
                     " (model_based.best_locations, look_ahead_locations); score it on stores played the same way");
  EpisodeSplit split;
  if (args.flag("--held-out")) split = split_as_asked(args, stores.episodes());
  const EpisodeSource& scored = split.held_out ? *split.held_out : stores.episodes();
  if (scored.total_steps() == 0) throw UsageError("the stores hold no step that could be rebuilt; nothing to score");
  const WorldModelAccuracy a = model.evaluate(scored);
  if (args.flag("--json")) {
    JsonWriter json;
    json.begin_object().key("model").value(file).key("episodes").value(static_cast<int64_t>(scored.size()));
    json.key("accuracy");
    accuracy_json(json, a);
    json.end_object();
    std::printf("%s\n", json.str().c_str());
  } else {
    print_accuracy(a, "episodes");
  }
  return 0;
}

int show_world_model(const CliArgs& args) {
  const std::string& file = args.positional(1, "a world model FILE.gwworld");
  args.expect_at_most(2);
  std::printf("%s", describe_world_model(WorldModel::load(file)).c_str());
  return 0;
}

int bench_world_model(const CliArgs& args) {
  const std::string& file = args.positional(1, "a world model FILE.gwworld");
  args.expect_at_most(2);
  const int thread_count = thread_option(args, default_threads());
  const ComputeThreads threads(thread_count);
  WorldModel model = WorldModel::load(file);
  const ResolvedDevice device = resolve_compute_device(args.value_or("--device", "cpu"), "--device");
  if (!device.note.empty()) std::fprintf(stderr, "%s\n", device.note.c_str());
  const double seconds = args.double_value("--seconds", 3.0);
  const double tau = args.double_value("--tau", 1.0);
  const bool cuda_graph = args.flag("--cuda-graph");
  const double gemm_gflops = measure_gemm_gflops(device.device, thread_count);
  std::vector<DreamThroughput> results;
  for (const std::string& b : split_comma_list(args.value_or("--batches", "1,64,1024"))) {
    char* end = nullptr;
    const long long batch = std::strtoll(b.c_str(), &end, 10);
    if (b.empty() || *end != '\0' || batch < 1 || batch > 1'000'000)
      throw UsageError("--batches: batch sizes are whole numbers from 1 to 1000000, got '" + b + "'");
    results.push_back(measure_dream_throughput(model, batch, seconds, tau, 0, device.device, cuda_graph));
  }
  if (args.flag("--json")) {
    JsonWriter json;
    json.begin_object().key("model").value(file).key("device").value(device.device);
    json.key("threads").value(static_cast<int64_t>(thread_count)).key("cuda_graph").value(cuda_graph);
    json.key("results").begin_array();
    for (const DreamThroughput& r : results)
      json.begin_object().key("batch").value(r.batch).key("steps").value(r.steps).key("steps_per_s").value(r.steps_per_s)
          .key("gflop_per_step").value(r.gflop_per_step).key("gflops").value(r.gflops).end_object();
    json.end_array().key("gemm_gflops").value(gemm_gflops).key("peak_rss_mib").value(peak_rss_mib()).end_object();
    std::printf("%s\n", json.str().c_str());
  } else {
    std::printf("dream steps/s on %s, %d threads (controller + MDN-RNN step + sampling, tau %.2f%s):\n",
                device.device.c_str(), thread_count, tau, cuda_graph ? ", each step one CUDA graph" : "");
    for (const DreamThroughput& r : results)
      std::printf("  batch %5lld  %12.0f steps/s  %8.2f GFLOP/s\n", static_cast<long long>(r.batch), r.steps_per_s,
                  r.gflops);
    std::printf("GFLOP/s: of the matrix products of a step (%.2f MFLOP); this device's %s reaches %.1f GFLOP/s. Peak "
                "RSS %.0f MiB\n",
                results.empty() ? 0.0 : results[0].gflop_per_step * 1e3,
                device.device == "cpu" ? "sgemm (1024 wide)" : "GEMM (8192 wide)", gemm_gflops, peak_rss_mib());
  }
  return 0;
}

// --dream-reward: the names and the default are those of the run config's
// model_based.dream_reward, so the flag and the key cannot drift apart.
RewardKind dream_reward_from_flag(const CliArgs& args) {
  const ConfigSchema::Entry* key = training_config_schema().find("model_based.dream_reward");
  const std::string name = args.value_or("--dream-reward", std::get<std::string>(key->fallback));
  if (std::find(key->choices.begin(), key->choices.end(), name) == key->choices.end()) {
    std::string names;
    for (const std::string& choice : key->choices) names += (names.empty() ? "" : " or ") + choice;
    throw UsageError("--dream-reward is " + names + ", not '" + name + "'");
  }
  return reward_kind_from_name(name);
}

int agent(const CliArgs& args) {
  args.expect_at_most(1);
  const std::string graphs_arg = args.value_or("--graphs", "");
  if (graphs_arg.empty()) throw UsageError("worldmodel agent needs --graphs G[,G...] (zoo names or ONNX files)");
  const ComputeThreads threads(thread_option(args, 1));
  const std::vector<TrainingGraph> graphs = load_training_graphs(split_comma_list(graphs_arg));
  CostModelOptions cost_options = cost_options_from(args);
  // The agent's analytic default is the built-in rates, not a calibrated file
  // in the cache, so that its figures are the same on every machine.
  if (cost_options.kind == "analytic" && cost_options.rates_path.empty()) cost_options.rates_path = "builtin";
  if (cost_options.kind == "measured" || cost_options.kind == "cuda")
    throw UsageError("worldmodel agent prices with --cost analytic or --cost gpu (deterministic models); '" +
                     cost_options.kind + "' measures on this machine and would make its rounds irreproducible");
  const std::unique_ptr<CostModel> cost_model = make_cost_model(cost_options);
  CostModel& cost = *cost_model;
  const RuleLibrary& library = default_rule_library();
  const RuleMatcher matcher(library.rules);
  GraphEnvOptions env_options;
  env_options.max_steps = static_cast<int32_t>(args.int_value("--max-steps", 200));
  // Every location priced, so that each chosen rule goes where it pays most.
  env_options.location_rewards = args.flag("--best-locations");
  if (args.flag("--look-ahead-locations") && !env_options.location_rewards)
    throw UsageError("--look-ahead-locations needs --best-locations: it compares what each location pays, which "
                     "only environments that price every location report");
  std::vector<GraphEnv> envs;
  std::vector<GraphEnv*> env_pointers;
  std::vector<std::string> names;
  for (const TrainingGraph& g : graphs) {
    envs.emplace_back(g.graph, matcher, cost, env_options);
    names.push_back(g.name);
  }
  for (GraphEnv& e : envs) env_pointers.push_back(&e);
  ModelBasedOptions options;
  options.settings.rounds = static_cast<int32_t>(args.int_value("--rounds", options.settings.rounds));
  options.settings.random_episodes =
      static_cast<int32_t>(args.int_value("--random-episodes", options.settings.random_episodes));
  options.settings.random_steps = static_cast<int32_t>(args.int_value("--random-steps", options.settings.random_steps));
  options.settings.episodes_per_round =
      static_cast<int32_t>(args.int_value("--episodes-per-round", options.settings.episodes_per_round));
  options.settings.verify_plans = !args.flag("--no-plan-checks");
  options.settings.best_locations = env_options.location_rewards;
  options.settings.look_ahead_locations = args.flag("--look-ahead-locations");
  options.settings.calibration_episodes =
      static_cast<int32_t>(args.int_value("--calibration-episodes", options.settings.calibration_episodes));
  options.settings.calibration_keeps_controller_memory = !args.flag("--calibration-moves-controller-memory");
  options.settings.dream_updates =
      static_cast<int32_t>(args.int_value("--dream-updates", options.settings.dream_updates));
  options.settings.tau = args.double_value("--tau", options.settings.tau);
  options.settings.step_cost = args.double_value("--step-cost", options.settings.step_cost);
  options.settings.random_locations = args.flag("--random-locations");
  options.settings.dream_reward = dream_reward_from_flag(args);
  options.seed = static_cast<uint64_t>(args.int_value("--seed", 0));
  options.settings.hidden = args.int_value("--hidden", options.settings.hidden);
  options.settings.separate_controller_memory = !args.flag("--shared-controller-memory");
  const std::string out_dir = args.value_or("--output", "");
  if (!out_dir.empty()) std::filesystem::create_directories(out_dir);
  const bool json_out = args.flag("--json"), show_actions = args.flag("--actions");
  ModelBasedResult result = train_model_based(
      env_pointers, names, static_cast<int32_t>(matcher.num_rules()), options,
      [&](const ModelBasedRound& r) {
        if (json_out) return;
        std::printf("round %d: %lld real steps, %lld dream steps, %.1f s; ", r.round,
                    static_cast<long long>(r.real_steps), static_cast<long long>(r.dream_steps), r.wall_s);
        if (r.held_out.transitions > 0)
          std::printf("held-out mask F1 %.4f reward MAE %.4f; ", r.held_out.mask_f1, r.held_out.reward_mae);
        else
          std::printf("no held-out episode yet; ");
        std::printf("dream return %.3f%%\n", r.dream_return);
        for (const GraphOutcome& g : r.graphs) {
          std::printf("  %-24s real %.3f%% in %zu steps  dream %.3f%% in %zu steps  gap %.3f pp", g.graph.c_str(),
                      g.real_reduction, g.real_xfers.size(), g.dream_reduction, g.dream_xfers.size(),
                      g.dream_reduction - g.real_reduction);
          // The end's figure is what the dream predicts; the agent's result
          // is the cheapest graph on the way, when that was earlier.
          if (g.real_best_reduction > g.real_reduction) std::printf("  (real best %.3f%% on the way)", g.real_best_reduction);
          std::printf("\n");
          if (show_actions) {
            std::printf("    real rules: ");
            for (int32_t x : g.real_xfers) std::printf("%d ", x);
            std::printf("\n    dream rules: ");
            for (int32_t x : g.dream_xfers) std::printf("%d ", x);
            std::printf("\n");
          }
        }
        std::fflush(stdout);
      },
      out_dir.empty() ? "" : out_dir + "/controller.gwctl");
  result.kept_model->info().rule_library_hash = rule_library_hash(library);
  if (!out_dir.empty()) result.kept_model->save(out_dir + "/world_model.gwworld");
  if (json_out) {
    JsonWriter json;
    json.begin_object().key("cost_model").value(cost.name()).key("cost_description").value(cost.description());
    json.key("rounds").begin_array();
    for (const ModelBasedRound& r : result.rounds) {
      json.begin_object()
          .key("round").value(static_cast<int64_t>(r.round))
          .key("real_steps").value(r.real_steps)
          .key("dream_steps").value(r.dream_steps)
          .key("wall_s").value(r.wall_s)
          .key("dream_return").value(r.dream_return)
          .key("held_out");
      accuracy_json(json, r.held_out);
      json.key("graphs").begin_array();
      for (const GraphOutcome& g : r.graphs)
        json.begin_object()
            .key("graph").value(g.graph)
            .key("real_reduction").value(g.real_reduction)
            .key("real_best_reduction").value(g.real_best_reduction)
            .key("dream_reduction").value(g.dream_reduction)
            .end_object();
      json.end_array().end_object();
    }
    json.end_array()
        .key("kept_round").value(static_cast<int64_t>(result.kept_round))
        .key("kept_real_reduction").value(result.kept_real.best_reduction)
        .key("kept_real_end_reduction").value(result.kept_real.end_reduction)
        .key("peak_rss_mib").value(peak_rss_mib())
        .end_object();
    std::printf("%s\n", json.str().c_str());
  } else {
    std::printf("kept round %d's agent: its greedy controller reached %.3f%% in the real graph%s (the cheapest graph "
                "on its way; its episode%s end%s at %.3f%%)\n",
                result.kept_round, result.kept_real.best_reduction, names.size() > 1 ? "s (mean)" : "",
                names.size() > 1 ? "s" : "", names.size() > 1 ? "" : "s", result.kept_real.end_reduction);
    if (!out_dir.empty())
      std::printf("wrote %s/world_model.gwworld and %s/controller.gwctl\n", out_dir.c_str(), out_dir.c_str());
  }
  return 0;
}

int run_worldmodel(const CliArgs& args) {
  const std::string& action = args.positional(0, "an action: train, eval, show, bench or agent");
  if (action == "train") return train_world_model(args);
  if (action == "eval") return eval_world_model(args);
  if (action == "show") return show_world_model(args);
  if (action == "bench") return bench_world_model(args);
  if (action == "agent") return agent(args);
  throw UsageError("unknown worldmodel action '" + action + "'; use train, eval, show, bench or agent");
}

}  // namespace

Subcommand worldmodel_command() {
  return {{"worldmodel",
           "train --from STORES -o FILE | eval FILE --from STORES | show FILE | bench FILE | agent --graphs GRAPHS",
           "World models: train offline from rollout stores, measure, benchmark the dream, run the model-based agent.",
           "train   trains a world model (latent encoder, then MDN-RNN) from the real episodes in one or more\n"
           "        rollout stores (comma-separated RUN/rollouts.h5 files); observations are rebuilt by replay\n"
           "        with each store's run config. A held-out share of the episodes (--holdout) is scored every\n"
           "        epoch, per head, and the epoch with the lowest held-out loss is kept.\n"
           "eval    xfer-mask F1, done accuracy, reward MAE (percentage points per step) and z NLL of a world\n"
           "        model on the episodes of any stores (one-step predictions from real states).\n"
           "show    describes a world model file.\n"
           "bench   dream steps/s with the controller acting, at each batch of --batches.\n"
           "agent   the model-based agent in one process on --graphs: random episodes, then rounds of world\n"
           "        model training, PPO in the dream and real episodes by the controller. Prints real and\n"
           "        dream steps, wall time and, per graph, the reduction the greedy controller reaches in the\n"
           "        real environment against the one the dream predicts. -o keeps the agent of the round whose\n"
           "        greedy controller reached the most in the real graphs (of equals, the one whose episodes\n"
           "        end highest, then the later).",
           {
               {"--from", "", "STORES", "train, eval: comma-separated rollout stores (RUN/rollouts.h5)"},
               {"--output", "-o", "PATH", "train: the world model file to write; agent: a folder for the model and controller"},
               {"--holdout", "", "F", "train: share of episodes held out (default 0.2)"},
               {"--split", "", "KIND", "train, eval --held-out: 'shuffle' (seeded, the default) or 'arrival' (every\n"
                                       "round(1/holdout)-th episode in store order, as a model-based run holds out)"},
               {"--held-out", "", "", "eval: score only the episodes the split holds out"},
               {"--first-steps", "", "N", "train, eval: only the first episodes in store order, N steps in all (a\n"
                                          "model-based run's model says how many it learned from)"},
               {"--resident-steps", "", "N", "train, eval: steps held in memory at once (default 1000000). Larger\n"
                "stores are rebuilt into a temporary file and trained a part at a time"},
               {"--spill-dir", "", "DIR", "train, eval: where that file goes (train: the output's folder, eval: the\n"
                "working folder); about 0.6 KiB a step"},
               {"--epochs", "", "N", "train: MDN-RNN epochs (default 100)"},
               {"--encoder-epochs", "", "N", "train: encoder epochs (default 40)"},
               {"--batch-steps", "", "N", "train: steps per Adam step, padding included; episodes of similar length "
                "are batched together (default 512)"},
               {"--min-batches", "", "N", "train: Adam steps per epoch at least, where the data allows: smaller "
                "batches for small data (default 64)"},
               {"--lr", "", "LR", "train: Adam learning rate (default 0.002)"},
               {"--latent", "", "D", "train: size of z (default 32)"},
               {"--hidden", "", "H", "train, agent: LSTM width (default 256)"},
               {"--components", "", "K", "train: Gaussians in the next-z mixture (default 8)"},
               {"--shared-controller-memory", "", "", "train, agent: one LSTM for the controller's h and the mask and\n"
                                                      "count heads (default: the controller's h from an LSTM over\n"
                                                      "(z, a) of its own; see worldmodel/README.md)"},
               {"--seed", "", "S", "train, agent: seed (default 0)"},
               {"--threads", "", "T", "math threads (default: all cores; agent: 1)"},
               {"--batches", "", "LIST", "bench: dream batch sizes (default 1,64,1024)"},
               {"--seconds", "", "S", "bench: seconds per batch size (default 3)"},
               {"--device", "", "DEV", "train, bench: cpu (default) or cuda[:N], where this LibTorch has CUDA and sees a GPU"},
               {"--tau", "", "TAU", "bench, agent: mixture temperature (default 1.0)"},
               {"--cuda-graph", "", "", "bench, with --device cuda: capture a step in a CUDA graph and replay it\n"
                                        "(needs a LibTorch built with CUDA)"},
               {"--graphs", "", "LIST", "agent: zoo names or ONNX files"},
               {"--cost", "", "MODEL", "agent: analytic (default) or gpu (a named GPU, its measured table first)"},
               {"--gpu", "", "NAME", "agent, with --cost gpu: h100-sxm (default), a100-sxm, v100-sxm or a profile YAML"},
               {"--gpu-table", "", "FILE", "agent, with --cost gpu: a measured table, or 'none' for the model alone\n"
                                           "(default: the table shipped in configs/gpu/ for the GPU, if any)"},
               {"--rates", "", "FILE", "agent: analytic cost rates (default: built-in)"},
               {"--max-steps", "", "N", "agent: episode horizon (default 200)"},
               {"--rounds", "", "N", "agent: rounds (default 6)"},
               {"--random-episodes", "", "N", "agent: random episodes per graph first (default 4)"},
               {"--random-steps", "", "N", "agent: rewrites per random episode before it stops (default 100; 0: no limit)"},
               {"--random-locations", "", "", "agent: the random episodes put each rule at a random one of its matches\n"
                                              "(default: where the controller's rules go)"},
               {"--dream-reward", "", "KIND", "agent: what the dream pays the controller: incremental (each step's predicted\n"
                                              "reward, the default) or final (the episode's predicted reduction at its end)"},
               {"--step-cost", "", "PP", "agent: what a rewrite that earns nothing costs the controller in the dream\n"
                                                    "(a rewrite pays what its reward falls short of this; default 0.01)"},
               {"--episodes-per-round", "", "N", "agent: controller episodes per graph per round (default 1)"},
               {"--no-plan-checks", "", "", "agent: do not play the dream's greedy plan in the real graphs each round"},
               {"--best-locations", "", "", "agent: apply each rule the controller picks at its best-paying location (the\n"
                                            "environments price every location; default: its first location)"},
               {"--look-ahead-locations", "", "", "agent, with --best-locations: apply it where it pays most within two\n"
                                                  "rewrites (its saving now and the best the next rewrite saves), each\n"
                                                  "location tried on a copy of the graph; among equals, where it gives\n"
                                                  "rules the most new matches"},
               {"--calibration-episodes", "", "N", "agent: the final controller's sampled episodes per graph that the world model learns from before it predicts that controller (default 4)"},
               {"--calibration-moves-controller-memory", "", "", "agent: let that retraining move the controller's LSTM and\n"
                                                                 "the next-z mixture too (default: only the bookkeeping half)"},
               {"--dream-updates", "", "N", "agent: PPO updates in the dream per round (default 60)"},
               {"--actions", "", "", "agent: print the rules the greedy controller chose, real and dreamed"},
               {"--json", "", "", "eval, bench, agent: one JSON object"},
           }},
          run_worldmodel};
}

}  // namespace graphworld
