// Choosing a backend: "auto" says in plain words why it runs on the CPU (a machine without an
// NVIDIA driver used to be told "CUDA driver version is insufficient").
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <string>

#include "compute/backend.h"

using namespace stacklens::compute;

TEST(BackendChoice, AutoSaysWhyItRunsOnTheCpu) {
  std::string why;
  if (cudaUsable(&why)) GTEST_SKIP() << "a CUDA device is usable here";
#ifdef STACKLENS_HAVE_CUDA
  if (void* driver = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL)) {
    ::dlclose(driver);
    GTEST_SKIP() << "an NVIDIA driver is installed: " << why;
  }
  EXPECT_EQ(why, "no NVIDIA driver found");
#else
  EXPECT_EQ(why, "this build of StackLens has no CUDA backend");
#endif
  std::string note;
  auto backend = makeBackend("auto", &note);
  EXPECT_EQ(backend->name(), "cpu");
  EXPECT_EQ(note, why + "; processing runs on the CPU");
  EXPECT_THROW(makeBackend("metal", &note), InvalidArgument);
}
