#include "common/worker_threads.h"

#include "common/error.h"

namespace graphworld {

WorkerThreads::WorkerThreads(int32_t count) : count_(count), errors_(static_cast<size_t>(count > 0 ? count : 1)) {
  if (count < 1) throw UsageError("worker threads: the count must be at least 1");
  for (int32_t k = 1; k < count; ++k) threads_.emplace_back([this, k] { serve(k); });
}

WorkerThreads::~WorkerThreads() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  start_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void WorkerThreads::serve(int32_t worker) {
  uint64_t seen = 0;
  for (;;) {
    const std::function<void(int32_t)>* job = nullptr;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      start_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
      job = job_;
    }
    std::exception_ptr error;
    try {
      (*job)(worker);
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    errors_[static_cast<size_t>(worker)] = error;
    if (--running_ == 0) done_.notify_one();
  }
}

void WorkerThreads::run(const std::function<void(int32_t)>& job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = &job;
    running_ = count_ - 1;
    ++generation_;
    for (std::exception_ptr& e : errors_) e = nullptr;
  }
  start_.notify_all();
  try {
    job(0);
  } catch (...) {
    errors_[0] = std::current_exception();  // only this thread writes slot 0
  }
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [&] { return running_ == 0; });
  job_ = nullptr;
  for (const std::exception_ptr& e : errors_)
    if (e) std::rethrow_exception(e);
}

}  // namespace graphworld
