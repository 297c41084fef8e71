// runTasks: a shared counter of tasks, helper threads and the caller taking from it.
#include "io/parallel_tasks.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "io/read_stop.h"

namespace stacklens::io {

void runTasks(int64_t count, int threads, const std::function<void(int64_t)>& task) {
  std::atomic<int64_t> next{0};
  std::exception_ptr failure;
  std::mutex failureMutex;
  const auto work = [&] {
    for (int64_t t; (t = next.fetch_add(1)) < count;) {
      try {
        task(t);
      } catch (...) {
        std::lock_guard lock(failureMutex);
        if (!failure) failure = std::current_exception();
        next = count;  // the whole call fails: stop taking tasks
      }
    }
  };
  std::vector<std::thread> helpers;
  const int64_t extra = std::min<int64_t>(threads, count) - 1;
  // The helpers read for the caller: its read stop flag is theirs (io/read_stop.h).
  const std::atomic<bool>* stop = threadReadStop();
  for (int64_t i = 0; i < extra; ++i)
    helpers.emplace_back([&work, stop] {
      const ReadStopScope scope(stop);
      work();
    });
  work();
  for (std::thread& h : helpers) h.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace stacklens::io
