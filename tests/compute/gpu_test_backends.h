// The GPU tests' backends: one CUDA backend and one CPU backend per test program, made on first
// use, and a fixture that skips with the reason when no CUDA device is usable (CI has none).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "compute/backend.h"

namespace stacklens::testing {

struct TestBackends {
  std::unique_ptr<compute::Backend> cpu, gpu;  // both null without a usable device
  std::string why;                             // why not
};

inline TestBackends& testBackends() {
  static TestBackends b = [] {
    TestBackends x;
    if (compute::cudaUsable(&x.why)) {
      x.gpu = compute::makeCudaBackend();
      x.cpu = compute::makeCpuBackend();
    }
    return x;
  }();
  return b;
}

class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testBackends().gpu) GTEST_SKIP() << testBackends().why;
    cpu = testBackends().cpu.get();
    gpu = testBackends().gpu.get();
  }
  compute::Backend* cpu = nullptr;
  compute::Backend* gpu = nullptr;
};

}  // namespace stacklens::testing
