// A compute::RawSliceReader over the ramp stack (tests/compute/fake_backend.h's rampSlab) that
// counts its reads and can be slowed down or told to fail, for the live processor and slice store
// tests.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include "compute/slice_store.h"
#include "tests/compute/fake_backend.h"

namespace stacklens::testing {

struct CountingSource {
  compute::Image stack;
  std::shared_ptr<std::atomic<int>> reads = std::make_shared<std::atomic<int>>(0);
  std::shared_ptr<std::atomic<bool>> fail = std::make_shared<std::atomic<bool>>(false);
  std::shared_ptr<std::atomic<int>> delayMs = std::make_shared<std::atomic<int>>(0);
  // While set, a read that has begun waits: a read in progress for as long as a test needs,
  // whatever the machine's load.
  std::shared_ptr<std::atomic<bool>> hold = std::make_shared<std::atomic<bool>>(false);

  explicit CountingSource(int64_t z, int64_t y = 6, int64_t x = 5) : stack(rampSlab(z, y, x)) {}
  // A failed read throws "stack.fits: slice z: bad".
  compute::RawSliceReader source() const {
    compute::RawSliceReader s;
    s.shape = stack.shape();
    s.read = [stack = stack, reads = reads, fail = fail, delay = delayMs, hold = hold](int64_t z,
                                                                                       float* out) {
      reads->fetch_add(1);
      std::this_thread::sleep_for(std::chrono::milliseconds(delay->load()));
      while (hold->load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      if (fail->load())
        throw std::runtime_error("stack.fits: slice " + std::to_string(z) + ": bad");
      std::copy_n(stack.slice(z), stack.shape().sliceCount(), out);
    };
    return s;
  }
  float at(int64_t z, int64_t y, int64_t x) const { return stack.at(z, y, x); }
};

}  // namespace stacklens::testing
