#include "launch/supervisor/single_node_launcher.h"

#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <thread>

#include "common/error.h"
#include "launch/process/child_process.h"

namespace graphworld {
namespace {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct ActorSlot {
  std::unique_ptr<ChildProcess> process;
  Clock::time_point started, restart_at;
  double backoff_s = 1.0;
  bool restart_pending = false;
};

// The learner writes RUN/learner.ready once its sockets are bound.
bool wait_until_ready(const std::string& ready, ChildProcess& learner, double timeout_s,
                      const std::function<bool()>& stop_requested) {
  const auto start = Clock::now();
  while (since(start) < timeout_s) {
    if (fs::exists(ready)) return true;
    if (!learner.running() || stop_requested()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

}  // namespace

int run_single_node(const SingleNodePlan& plan, const std::function<bool()>& stop_requested) {
  const std::string exe = own_executable();
  const std::string ready = plan.run_dir + "/learner.ready";
  auto start_learner = [&](const std::vector<std::string>& args) {
    std::error_code ec;
    fs::remove(ready, ec);
    std::vector<std::string> argv = {exe};
    argv.insert(argv.end(), args.begin(), args.end());
    return std::make_unique<ChildProcess>(plan.wrap_learner ? plan.wrap_learner(argv) : argv);
  };
  // Actors run at a lower priority than the learner: on one machine they
  // share its cores, and the learner's update is the step everything waits
  // for (an actor that got ahead would only wait for its receipt). Measured
  // on 2 cores with 2 actors: 599-603 real steps/s at equal priority, 714
  // with the actors at nice 5.
  auto start_actor = [&](int32_t k) {
    std::vector<std::string> argv{exe, "actor", "--run", plan.run_dir, "--id", std::to_string(k)};
    argv.insert(argv.end(), plan.actor_args.begin(), plan.actor_args.end());
    if (k >= plan.actors) argv.push_back("--dream");
    return std::make_unique<ChildProcess>(plan.wrap_actor ? plan.wrap_actor(k, argv) : argv);
  };
  auto log = [&](const std::string& line) {
    if (!plan.quiet) std::fprintf(stderr, "launcher: %s\n", line.c_str());
  };

  std::unique_ptr<ChildProcess> learner = start_learner(plan.learner_args);
  if (!wait_until_ready(ready, *learner, 300.0, stop_requested)) {
    if (const auto status = learner->poll()) {
      log("the learner ended before it was ready (" + ChildProcess::describe(*status) + ")");
      return WIFEXITED(*status) && WEXITSTATUS(*status) != 0 ? WEXITSTATUS(*status) : 1;
    }
    learner->signal(SIGTERM);
    for (int i = 0; i < 100 && learner->running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    return stop_requested() ? 0 : 1;
  }
  const int32_t all_actors = plan.actors + plan.dream_actors;
  std::vector<ActorSlot> actors(static_cast<size_t>(all_actors));
  for (int32_t k = 0; k < all_actors; ++k) {
    actors[static_cast<size_t>(k)].process = start_actor(k);
    actors[static_cast<size_t>(k)].started = Clock::now();
  }
  log("learner (pid " + std::to_string(learner->pid()) + ") and " + std::to_string(plan.actors) + " actors" +
      (plan.dream_actors > 0 ? " and " + std::to_string(plan.dream_actors) + " dream actors" : std::string()) + " running");

  int learner_restarts = 0;
  int exit_code = 0;
  bool stopping = false, learner_done = false;
  Clock::time_point stop_at{}, done_at{};
  bool learner_restart_pending = false;
  Clock::time_point learner_restart_at = Clock::now();
  while (true) {
    if (!stopping && stop_requested()) {
      stopping = true;
      stop_at = Clock::now();
      log("stopping: the learner writes a final checkpoint and stops the actors");
      learner->signal(plan.learner_stop_signal);
    }
    if (!learner_done && !learner_restart_pending) {
      if (const auto status = learner->poll()) {
        const bool clean = WIFEXITED(*status) && WEXITSTATUS(*status) == 0;
        if (clean || stopping) {
          learner_done = true;
          done_at = Clock::now();
          if (!clean) exit_code = 1;
        } else if (learner_restarts < plan.max_learner_restarts) {
          ++learner_restarts;
          log("the learner ended (" + ChildProcess::describe(*status) + "); restarting it from its last checkpoint");
          learner_restart_pending = true;
          learner_restart_at = Clock::now() + std::chrono::seconds(1);
        } else {
          log("the learner ended (" + ChildProcess::describe(*status) + ")" +
              (plan.max_learner_restarts > 0 ? " after " + std::to_string(learner_restarts) + " restarts" : std::string()) +
              "; giving up");
          learner_done = true;
          done_at = Clock::now();
          exit_code = 1;
          for (ActorSlot& a : actors) a.process->signal(SIGTERM);
        }
      }
    }
    if (learner_restart_pending && stopping) {
      // A stop came while the learner was down: its last checkpoint stands.
      learner_restart_pending = false;
      learner_done = true;
      done_at = Clock::now();
      for (ActorSlot& a : actors)
        if (!a.restart_pending) a.process->signal(SIGTERM);
    } else if (learner_restart_pending && Clock::now() >= learner_restart_at) {
      learner_restart_pending = false;
      learner = start_learner(plan.learner_resume_args);
    }
    for (size_t k = 0; k < actors.size(); ++k) {
      ActorSlot& a = actors[k];
      if (a.restart_pending) {
        if (!stopping && !learner_done && Clock::now() >= a.restart_at) {
          a.process = start_actor(static_cast<int32_t>(k));
          a.started = Clock::now();
          a.restart_pending = false;
        }
        continue;
      }
      const auto status = a.process->poll();
      if (!status || stopping || learner_done) continue;
      // Exit 0: the learner told it to stop (training is done), and the
      // learner's own end is about to be seen.
      if (WIFEXITED(*status) && WEXITSTATUS(*status) == 0) {
        a.restart_pending = true;
        a.restart_at = Clock::time_point::max();
        continue;
      }
      // One that ran for seconds is not crash-looping (a bad config kills an
      // actor within its first second or two): its next restart is prompt.
      if (since(a.started) > 5.0) a.backoff_s = 1.0;
      log("actor " + std::to_string(k) + " ended (" + ChildProcess::describe(*status) + "); restarting it in " +
          std::to_string(static_cast<int>(a.backoff_s)) + " s");
      a.restart_pending = true;
      a.restart_at = Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(a.backoff_s * 1000));
      a.backoff_s = std::min(8.0, a.backoff_s * 2);
    }
    bool any_running = learner->running();
    for (ActorSlot& a : actors) any_running = any_running || (!a.restart_pending && a.process->running());
    if ((learner_done || stopping) && !any_running) break;
    // Deadlines: actors get 3 s after the learner is done to hear its stop;
    // the whole stop takes at most stop_kill_s.
    const double after_done = learner_done ? since(done_at) : 0.0;
    const double after_stop = stopping ? since(stop_at) : 0.0;
    if (after_done > 3.0 || after_stop > plan.stop_grace_s) {
      for (ActorSlot& a : actors)
        if (!a.restart_pending) a.process->signal(SIGTERM);
    }
    if (after_done > 5.0 || after_stop > plan.stop_kill_s) {
      log("killing what is still running");
      // A learner killed here may not have written its final checkpoint.
      if (learner->running()) exit_code = 1;
      learner->signal(SIGKILL);
      for (ActorSlot& a : actors)
        if (!a.restart_pending) a.process->signal(SIGKILL);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return exit_code;
}

}  // namespace graphworld
