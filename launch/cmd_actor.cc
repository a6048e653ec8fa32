// graphworld actor --run RUN --id K
//
// An actor process of a distributed run (actors/actor.h): reads the run's
// config, endpoints and id from RUN, steps its environments with the
// parameters the learner sends and streams rollouts back. It waits for the
// learner (RUN/endpoints) to appear, keeps retrying while the learner is
// away, and exits 0 when the learner says stop or on Ctrl-C / SIGTERM.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "actors/actor.h"
#include "common/error.h"
#include "common/process_identity.h"
#include "common/run_keys.h"
#include "env/rules/rule_library.h"
#include "launch/commands.h"
#include "launch/process/stop_signal.h"
#include "launch/runs/training_setup.h"
#include "learner/compute_device.h"
#include "learner/run_cost_table.h"
#include "worldmodel/model_based_actors.h"
#include "worldmodel/model_based_config.h"

namespace graphworld {
namespace {
namespace fs = std::filesystem;

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

int run_actor(const CliArgs& args) {
  const std::string run_dir = args.value_or("--run", "");
  if (run_dir.empty()) throw UsageError("'graphworld actor' needs --run RUN (the learner's run folder)");
  const int64_t id = args.int_value("--id", -1);
  if (id < 0 || id > 1'000'000) throw UsageError("--id K (the actor's number, 0 or more) is required");
  const double wait_s = args.double_value("--wait", 120.0);
  const bool dream = args.flag("--dream");
  const int64_t nice = args.int_value("--nice", 0);
  if (nice < 0 || nice > 19) throw UsageError("--nice N takes 0 (the default) to 19");
  if (nice > 0 && setpriority(PRIO_PROCESS, 0, static_cast<int>(nice)) != 0)
    std::fprintf(stderr, "actor: cannot lower my priority to nice %lld; running at the default\n", static_cast<long long>(nice));
  install_stop_signals();
  // The learner writes endpoints and run_id once it is listening.
  const auto start = std::chrono::steady_clock::now();
  if (!fs::exists(run_dir + "/endpoints") || !fs::exists(run_dir + "/run_id"))
    std::fprintf(stderr, "actor %lld: waiting up to %.0f s for the learner of %s\n", static_cast<long long>(id), wait_s,
                 run_dir.c_str());
  while (!fs::exists(run_dir + "/endpoints") || !fs::exists(run_dir + "/run_id")) {
    if (stop_requested()) return 0;
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > wait_s)
      throw UsageError(run_dir + ": no learner endpoints after " + std::to_string(static_cast<int>(wait_s)) +
                       " s; start 'graphworld learner' for this run first");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const Config config = load_config(training_config_schema(), run_dir + "/config.yaml", {});
  const TrainingOptions options = training_options_from(config);
  const LearnerEndpoints endpoints = endpoints_from_text(read_text(run_dir + "/endpoints"), run_dir + "/endpoints");
  std::string run_id = read_text(run_dir + "/run_id");
  while (!run_id.empty() && std::isspace(static_cast<unsigned char>(run_id.back()))) run_id.pop_back();

  RuleLibrary library = options.rules.empty() ? default_rule_library() : load_rule_library(options.rules);
  const RuleMatcher matcher(library.rules);
  // The run's rates or cost table; what the table lacks the learner settles.
  Actor* worker_ptr = nullptr;
  std::unique_ptr<CostModel> cost = actor_cost_model(run_dir, options, [&](const std::string& key, const std::function<double()>& measure) {
    if (!worker_ptr)
      throw Error(run_dir + "/cost_table lacks '" + key + "' of a training graph as given; the learner puts every "
                  "such configuration there, so the table was changed after the run started");
    return worker_ptr->settle_cost(key, measure);
  });
  ActorOptions actor;
  actor.actor_id = static_cast<uint32_t>(id);
  actor.incarnation = new_incarnation();
  actor.run_id = run_id;
  actor.learner_timeout_s = options.distributed.heartbeat_timeout_s;
  actor.threads = options.threads;
  actor.network = options.network;
  actor.network.num_xfers = static_cast<int32_t>(matcher.num_rules());
  actor.collector = options.collector;
  // One update takes num_envs * steps_per_env steps. Each of the N actors
  // collects 1/N of them per message, so one update's batch comes from all
  // of them; with each starting a rollout only once the learner took its
  // last one (the receipts), the mean lag stays near one version however
  // many actors there are. Fewer live actors still fill updates, only more slowly.
  const int64_t actors = options.distributed.actors;
  actor.collector.steps_per_env = static_cast<int32_t>((options.collector.steps_per_env + actors - 1) / actors);
  if (run_has_keys(run_dir)) actor.transport = actor_transport_with_keys(run_dir, actor.transport);
  const bool model_based = options.model_based.enabled;
  if (dream && !model_based)
    throw UsageError(run_dir + " is a model-free run (model_based.enabled is false): it has no dream to act in");
  std::unique_ptr<ActorWork> work;
  const uint64_t seed = actor_seed(options.collector.seed, actor.actor_id, actor.incarnation);
  if (model_based && dream) {
    if (id < actors)
      throw UsageError("dream actor --id " + std::to_string(id) + " is a real actor's number (0 to " +
                       std::to_string(actors - 1) + " with distributed.actors " + std::to_string(actors) +
                       "); give dream actors ids from " + std::to_string(actors) + " on");
    DreamActorOptions d;
    d.rows = options.model_based.dream_rows;
    d.horizon = options.model_based.dream_horizon;
    d.tau = options.model_based.tau;
    d.dream_reward = options.model_based.dream_reward;
    d.threads = options.threads;
    d.seed = seed;
    const ResolvedDevice device = resolve_compute_device(options.device);
    if (!device.note.empty()) std::fprintf(stderr, "dream actor %lld: %s\n", static_cast<long long>(id), device.note.c_str());
    d.device = device.device;
    work = make_dream_work(d);
  } else if (model_based) {
    check_model_based_config(options);
    if (id >= actors)
      throw UsageError("real actor --id " + std::to_string(id) + " of a run with distributed.actors " +
                       std::to_string(actors) + " real actors (ids 0 to " + std::to_string(actors - 1) +
                       "); dream actors take --dream");
    RealModelBasedOptions r;
    r.env = options.collector.env;
    r.actor_index = static_cast<int32_t>(id);
    r.real_actors = static_cast<int32_t>(actors);
    r.seed = seed;
    r.max_message_steps = options.collector.num_envs * options.collector.steps_per_env;
    r.random_locations = options.model_based.random_locations;
    r.look_ahead_locations = options.model_based.look_ahead_locations;
    work = make_real_model_based_work(load_training_graphs(options.graphs), matcher, *cost, r);
  }
  std::unique_ptr<Actor> owned = work ? std::make_unique<Actor>(std::move(work), endpoints, actor)
                                      : std::make_unique<Actor>(load_training_graphs(options.graphs), matcher, *cost,
                                                                endpoints, actor);
  Actor& worker = *owned;
  worker_ptr = &worker;
  // A learner that could not rebind its old ports after a restart writes new
  // ones: an actor that sees the file change stops, and its launcher starts
  // it again on the new endpoints.
  const std::string endpoints_text = read_text(run_dir + "/endpoints");
  auto last_look = std::chrono::steady_clock::now();
  bool moved = false;
  const std::string reason = worker.run([&] {
    if (stop_requested() || moved) return true;
    if (std::chrono::steady_clock::now() - last_look > std::chrono::seconds(2)) {
      last_look = std::chrono::steady_clock::now();
      const std::string now = read_text(run_dir + "/endpoints");
      moved = !now.empty() && now != endpoints_text;
    }
    return moved;
  });
  restore_default_signals();
  const ActorCounters& c = worker.counters();
  if (moved) std::fprintf(stderr, "actor %lld: the learner moved to new endpoints; restart me\n", static_cast<long long>(id));
  std::fprintf(stderr, "actor %lld: stopped (%s) after %lld rollouts, %lld steps, %lld parameter versions\n",
               static_cast<long long>(id), reason.c_str(), static_cast<long long>(c.rollouts_sent),
               static_cast<long long>(c.steps_sent), static_cast<long long>(c.parameter_versions));
  if (c.rollouts_dropped > 0 || c.receipt_timeouts > 0)
    std::fprintf(stderr, "actor %lld: %lld rollouts dropped across a learner restart, %lld receipt waits timed out\n",
                 static_cast<long long>(id), static_cast<long long>(c.rollouts_dropped),
                 static_cast<long long>(c.receipt_timeouts));
  return moved ? 3 : 0;
}

}  // namespace

Subcommand actor_command() {
  return {{"actor",
           "--run RUN --id K [--dream]",
           "An actor process of a distributed run: environments, batched inference, trajectories to the learner.",
           "Reads RUN/config.yaml, RUN/endpoints and RUN/run_id (waiting up to --wait seconds for the learner\n"
           "to write them), acts with the newest parameters the learner sent and streams one message per\n"
           "rollout. A slow learner slows it (bounded queues); a vanished learner is retried until it\n"
           "returns. Exits 0 when the learner says stop, or on Ctrl-C.\n"
           "In a model-based run (model_based.enabled) actors 0 to distributed.actors-1 play real episodes\n"
           "with the learner's controller, and --dream actors (any other id) train it in the world model's dream.",
           {
               {"--run", "", "RUN", "the run folder the learner writes"},
               {"--id", "", "K", "this actor's number (0, 1, ...); a restart keeps its number"},
               {"--dream", "", "", "model-based runs: step dream environments in the world model (no graph is touched)"},
               {"--wait", "", "S", "how long to wait for the learner's endpoints (default 120)"},
               {"--nice", "", "N", "run at this lower priority, 0-19 (graphworld train passes 5: its actors share the learner's cores)"},
           }},
          run_actor};
}

}  // namespace graphworld
