// The CUDA volume renderer keeps a texture of the last volume it was given: a different volume of
// the same shape, on the host or the device, must not be drawn from it (skipped without a GPU).
#include <gtest/gtest.h>

#include <algorithm>

#include "compute/backend.h"
#include "compute/volume_render.h"
#include "tests/compute/gpu_test_backends.h"

using namespace stacklens::compute;

namespace {

using CudaVolumeTexture = stacklens::testing::GpuTest;

TEST_F(CudaVolumeTexture, ANewVolumeOfTheSameShapeIsNotTheTextureKept) {
  // Prepare
  const Shape s{16, 16, 16};
  Image first = Image::host(s), second = Image::host(s);
  std::fill_n(first.data(), s.count(), 1.f);
  std::fill_n(second.data(), s.count(), 3.f);
  const Image device = gpu->upload(second);
  VolumeRenderParams p;
  p.width = p.height = 8;

  // Run, Verify
  EXPECT_NEAR(gpu->download(gpu->renderVolume(first, p)).data()[36], 1.f, 1e-6);
  EXPECT_NEAR(gpu->download(gpu->renderVolume(device, p)).data()[36], 3.f, 1e-6);
  EXPECT_NEAR(gpu->download(gpu->renderVolume(first, p)).data()[36], 1.f, 1e-6);
}

}  // namespace
