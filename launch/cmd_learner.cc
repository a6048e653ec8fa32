// graphworld learner CONFIG --run RUN [key=value ...] | learner --resume RUN
//
// The learner process of a distributed run (learner/distributed_learner.h):
// binds loopback ports, writes RUN/endpoints and RUN/run_id for the actors,
// trains on what they send, and keeps every step in RUN/rollouts.h5.
// `graphworld train` starts it together with its actors; run it by hand to
// place actors yourself (graphworld actor --run RUN --id K).
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/process_identity.h"
#include "common/rollout_store.h"
#include "common/stopwatch.h"
#include "env/rules/rule_library.h"
#include "launch/commands.h"
#include "launch/process/stop_signal.h"
#include "launch/runs/training_setup.h"
#include "learner/data_parallel.h"
#include "learner/data_parallel_follower.h"
#include "learner/distributed_learner.h"
#include "learner/policy_file.h"
#include "learner/run_cost_table.h"
#include "launch/runs/run_replay.h"
#include "worldmodel/model_based_config.h"
#include "worldmodel/model_based_agent.h"
#include "worldmodel/model_based_learner.h"

namespace graphworld {
namespace {
namespace fs = std::filesystem;

// A run's id: made once, kept in RUN/run_id; every message carries it.
std::string run_id_of(const std::string& run_dir, bool resume) {
  // The store is written first and names the run; run_id follows it.
  if (resume && fs::exists(run_dir + "/rollouts.h5")) return RolloutStoreReader(run_dir + "/rollouts.h5").info().run_id;
  const std::string path = run_dir + "/run_id";
  if (resume && fs::exists(path)) {
    std::ifstream in(path);
    std::string id;
    in >> id;
    if (!id.empty()) return id;
  }
  return new_run_id();
}

// --ranks/--rank, or what srun gives each task of a multi-task step.
int32_t rank_setting(const CliArgs& args, const std::string& flag, const char* slurm_variable, int64_t fallback) {
  if (const auto value = args.value(flag)) return static_cast<int32_t>(args.int_value(flag, fallback));
  if (const char* from_slurm = std::getenv(slurm_variable)) return static_cast<int32_t>(std::atoll(from_slurm));
  return static_cast<int32_t>(fallback);
}

int run_learner(const CliArgs& args) {
  const TrainingRun run = prepare_training_run(args, "learner");
  const bool quiet = args.flag("--quiet");
  RuleLibrary library = run.options.rules.empty() ? default_rule_library() : load_rule_library(run.options.rules);
  std::unique_ptr<DataParallelGroup> group;
  if (const auto rendezvous = args.value("--data-parallel")) {
    DataParallelOptions dp = parse_rendezvous(*rendezvous, "--data-parallel");
    dp.size = rank_setting(args, "--ranks", "SLURM_NTASKS", 1);
    dp.rank = rank_setting(args, "--rank", "SLURM_PROCID", 0);
    if (!quiet)
      std::fprintf(stderr, "learner rank %d of %d: joining the data-parallel group at %s\n", dp.rank, dp.size,
                   rendezvous->c_str());
    // srun passes SIGUSR1 and SIGTERM to every rank of the step; the ranks
    // other than 0 ignore them and stop when rank 0 says, after its final
    // checkpoint (dying first would end the step under rank 0's feet).
    if (dp.rank > 0)
      for (int signal : {SIGINT, SIGTERM, SIGUSR1}) std::signal(signal, SIG_IGN);
    if (dp.size > 1) group = std::make_unique<DataParallelGroup>(dp);
    if (group && group->rank() > 0) {
      TrainingOptions options = run.options;
      options.network.num_xfers = static_cast<int32_t>(library.rules.size());
      const FollowerCounters done =
          follow_data_parallel(*group, options, static_cast<int32_t>(run.options.graphs.size()));
      std::printf("learner rank %d: rank 0 stopped after %lld updates (batches of %lld samples in all)\n", group->rank(),
                  static_cast<long long>(done.updates), static_cast<long long>(done.samples));
      return 0;
    }
  }
  DistributedLearnerOptions options;
  options.bind_host = args.value_or("--bind", "127.0.0.1");
  options.curve = args.flag("--curve") || !is_loopback_host(options.bind_host);
  options.run_id = run_id_of(run.run_dir, run.resume);
  options.store_dir = args.value_or("--store-dir", "");
  options.data_parallel = group.get();
  options.num_xfers = static_cast<int32_t>(library.rules.size());
  options.rule_library_hash = rule_library_hash(library);
  // Graph names as the actors will load them (load_training_graphs names them).
  const std::vector<TrainingGraph> graphs = load_training_graphs(run.options.graphs);
  for (const TrainingGraph& g : graphs) options.graphs.push_back(g.name);
  options.prepare_run_folder = [&](const std::string& dir) { prepare_run_cost_model(dir, run.options, graphs); };
  if (run.options.model_based.enabled) {
    check_model_based_config(run.options);
    // Made once the run folder holds its cost model: the learner rebuilds
    // real episodes by replay with exactly the actors' prices.
    options.make_extension = [&](const std::string& dir) {
      auto replay = std::make_shared<RunReplay>(dir, run.options, run.options.graphs);
      ModelBasedRunOptions mb;
      mb.agent = model_based_options_from(run.options);
      mb.graphs = options.graphs;
      mb.num_xfers = options.num_xfers;
      mb.max_steps = run.options.collector.env.max_steps;
      mb.rule_library_hash = options.rule_library_hash;
      mb.max_policy_lag = run.options.distributed.max_policy_lag;
      mb.replay = [replay](const std::vector<StoredStep>& steps,
                           const std::function<void(size_t, const Observation&)>& visit) {
        replay->replay().replay(steps, visit);
      };
      if (!quiet) mb.log = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
      mb.world_model_path = run_world_model_path(dir);
      mb.controller_path = run_controller_path(dir);
      return make_model_based_learner(std::move(mb));
    };
  }
  DistributedLearner learner(RunSettings{run.options, run.config}, options, run.run_dir, run.resume, args.value_or("--checkpoint", ""));
  write_file_atomically(run.run_dir + "/run_id", options.run_id + "\n");
  // Before the ready file: a learner started in the background ignores
  // Ctrl-C until its handler is in, and whoever waits for the file may send it.
  install_stop_signals();
  // The launcher starts actors once this exists.
  write_file_atomically(run.run_dir + "/learner.ready", std::to_string(getpid()) + "\n");
  if (!quiet)
    std::fprintf(stderr, "learner: %s run %s (id %s), trajectories at %s\n", run.resume ? "resuming" : "starting",
                 run.run_dir.c_str(), options.run_id.c_str(), learner.endpoints().trajectories.c_str());
  Stopwatch since_print;
  const bool model_based = run.options.model_based.enabled;
  auto on_update = [&](const UpdateReport& r) {
    if (quiet || model_based || since_print.elapsed_s() < 2.0) return;
    since_print.restart();
    double alive = 0, lag = 0, stale = 0;
    for (const auto& [name, value] : r.extra) {
      if (name == "actors_alive") alive = value;
      if (name == "mean_policy_lag") lag = value;
      if (name == "stale_samples") stale = value;
    }
    std::fprintf(stderr, "update %lld  steps %lld  %.0f steps/s  actors %.0f  lag %.2f  stale %.0f  mean reduction %.2f%%  "
                 "entropy %.2f  kl %.4f\n", static_cast<long long>(r.update), static_cast<long long>(r.env_steps),
                 r.env_steps_per_s, alive, lag, stale, r.mean_episode_reduction_pct, r.stats.entropy, r.stats.approx_kl);
  };
  const TrainingOutcome outcome = learner.run([] { return stop_requested(); }, on_update);
  restore_default_signals();
  std::printf("%s after %lld updates and %lld real env steps\n", outcome.stopped_early ? "stopped" : "finished",
              static_cast<long long>(outcome.updates), static_cast<long long>(outcome.env_steps));
  std::printf("run folder   %s\n", run.run_dir.c_str());
  std::printf("checkpoint   %s\n", outcome.last_checkpoint.c_str());
  std::printf("rollouts     %s/rollouts.h5\n", run.run_dir.c_str());
  if (model_based)
    std::printf("world model  %s\ncontroller   %s\n", run_world_model_path(run.run_dir).c_str(),
                run_controller_path(run.run_dir).c_str());
  std::printf("refused messages %lld, stale samples %lld\n", static_cast<long long>(learner.counters().refused_messages),
              static_cast<long long>(learner.counters().stale_samples));
  return 0;
}

}  // namespace

Subcommand learner_command() {
  return {{"learner",
           "CONFIG --run RUN [key=value ...] | --resume RUN",
           "The learner process of a distributed run: PPO on the trajectories actor processes send.",
           "Binds loopback ports (or --bind HOST with CURVE, in cluster runs), writes RUN/endpoints and\n"
           "RUN/run_id, and trains until train.total_env_steps real steps have arrived. Every valid step\n"
           "is kept in RUN/rollouts.h5; samples older than distributed.max_policy_lag updates are not learned\n"
           "from, and counted. Ctrl-C writes a final checkpoint, flushes the store and tells the actors to stop.",
           {
               {"--run", "", "DIR", "the run folder"},
               {"--resume", "", "RUN", "continue RUN from its newest checkpoint; actors reconnect by themselves"},
               {"--checkpoint", "", "CKPT", "--resume: continue from this checkpoint instead"},
               {"--bind", "", "HOST", "address to listen on (default 127.0.0.1); any other than loopback turns CURVE on"},
               {"--curve", "", "", "secure the sockets with CURVE keys made into RUN/keys (also on loopback)"},
               {"--store-dir", "", "DIR", "write the rollout store to DIR (a node's local disk) and copy it to RUN/rollouts.h5 "
                                          "after each checkpoint and at the end"},
               {"--data-parallel", "", "HOST:PORT", "data-parallel learner ranks meet at rank 0's HOST:PORT (gloo); rank 0\n"
                                                   "talks to the actors, the others share each update's work"},
               {"--ranks", "", "N", "--data-parallel: how many ranks (default: $SLURM_NTASKS, else 1)"},
               {"--rank", "", "R", "--data-parallel: this process's rank (default: $SLURM_PROCID, else 0)"},
               {"--quiet", "-q", "", "no progress on stderr"},
           }},
          run_learner};
}

}  // namespace graphworld
