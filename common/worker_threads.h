// A fixed set of threads that run one job together and wait for each
// other: job(0) on the calling thread, job(1) .. job(count - 1) on threads
// kept for the object's life (a PPO minibatch's shares, 25 ms each, would
// otherwise pay a thread start every time). Shut down explicitly by the
// destructor: it wakes the threads, which finish and are joined.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace graphworld {

class WorkerThreads {
 public:
  // count >= 1; count - 1 threads are started.
  explicit WorkerThreads(int32_t count);
  ~WorkerThreads();
  WorkerThreads(const WorkerThreads&) = delete;
  WorkerThreads& operator=(const WorkerThreads&) = delete;

  int32_t count() const { return count_; }

  // Runs job(k) for every k in [0, count) and returns when all have ended.
  // The first exception thrown by any of them (the lowest k) is rethrown
  // here once all have ended. Not reentrant: one run at a time.
  void run(const std::function<void(int32_t)>& job);

 private:
  void serve(int32_t worker);

  int32_t count_;
  std::mutex mutex_;
  std::condition_variable start_, done_;
  const std::function<void(int32_t)>* job_ = nullptr;
  uint64_t generation_ = 0;  // bumped per run, so each thread runs a job once
  int32_t running_ = 0;
  bool stopping_ = false;
  std::vector<std::exception_ptr> errors_;
  std::vector<std::thread> threads_;
};

}  // namespace graphworld
