// The backends the compute tests run on: one CPU and one CUDA backend per test program, made on
// first use; a fixture for tests of the CUDA backend alone and one for tests that run on each
// backend in turn. CUDA tests skip with the reason when no CUDA device is usable (CI has none).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "compute/backend.h"

namespace stacklens::testing {

struct TestBackends {
  std::unique_ptr<compute::Backend> cpu;  // always there
  std::unique_ptr<compute::Backend> gpu;  // null without a usable device
  std::string why;                        // why not
};

inline TestBackends& testBackends() {
  static TestBackends b = [] {
    TestBackends x;
    x.cpu = compute::makeCpuBackend();
    if (compute::cudaUsable(&x.why)) x.gpu = compute::makeCudaBackend();
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

// A test that runs once per backend, named by the parameter ("cpu" or "cuda"): instantiate its
// suite with STACKLENS_ON_EACH_BACKEND. The CUDA instance skips with the reason when no CUDA
// device is usable.
class OnEachBackend : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "cpu") {
      backend = testBackends().cpu.get();
      return;
    }
    if (!testBackends().gpu) GTEST_SKIP() << "no usable CUDA device: " << testBackends().why;
    backend = testBackends().gpu.get();
  }
  // A result, wherever the backend left it, on the host.
  compute::Image onHost(const compute::Image& image) { return backend->download(image); }
  compute::LabelImage onHost(const compute::LabelImage& labels) {
    return backend->download(labels);
  }
  compute::Backend* backend = nullptr;
};

}  // namespace stacklens::testing

// Runs every TEST_P of Suite (a fixture derived from OnEachBackend) on the CPU and on CUDA.
#define STACKLENS_ON_EACH_BACKEND(Suite)                                          \
  INSTANTIATE_TEST_SUITE_P(                                                       \
      Backend, Suite, ::testing::Values(std::string("cpu"), std::string("cuda")), \
      [](const ::testing::TestParamInfo<std::string>& info) { return info.param; })
