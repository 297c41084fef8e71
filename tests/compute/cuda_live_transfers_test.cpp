// The CUDA backend's live-slice transfers: a host buffer it page-locks receives a download with
// the device image's values (one DMA), and is a plain buffer again after unpinning (skipped
// without a GPU).
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "compute/backend.h"
#include "tests/compute/gpu_test_backends.h"
#include "tests/compute/image_checks.h"

using namespace stacklens::compute;
using stacklens::testing::GpuTest;

namespace {

class CudaLiveTransfers : public GpuTest {};

TEST_F(CudaLiveTransfers, APinnedVectorReceivesTheDownloadExactly) {
  const Shape shape{1, 37, 53};
  const Image source = stacklens::testing::randomImage(shape, 11, -5.f, 5.f);
  const Image device = gpu->upload(source);

  std::vector<float> pixels(static_cast<size_t>(shape.count()), -1.f);
  ASSERT_TRUE(gpu->device().pinHostMemory(pixels.data(), pixels.size() * sizeof(float)));
  Image host(shape, Location::Host, std::shared_ptr<float>(pixels.data(), [](float*) {}));
  gpu->device().downloadInto(device, host);
  for (int64_t i = 0; i < shape.count(); ++i) ASSERT_EQ(pixels[size_t(i)], source.data()[i]) << i;
  gpu->device().unpinHostMemory(pixels.data());

  // Unpinned, the same buffer still works through the staged download.
  std::fill(pixels.begin(), pixels.end(), 0.f);
  gpu->device().downloadInto(device, host);
  EXPECT_EQ(pixels[100], source.data()[100]);
  // Nothing to pin.
  EXPECT_FALSE(gpu->device().pinHostMemory(nullptr, 16));
}

TEST_F(CudaLiveTransfers, ThePeakDeviceMemoryCoversWhatWasHeld) {
  const Image big = gpu->upload(Image::host({8, 256, 256}));  // 2 MiB held on the device
  EXPECT_GE(gpu->device().devicePeakBytes(), big.bytes());
  EXPECT_EQ(makeCpuBackend(1)->device().devicePeakBytes(), 0u);
}

TEST(CpuLiveTransfers, TheCpuBackendPinsNothing) {
  auto cpu = makeCpuBackend(1);
  std::vector<float> v(16);
  EXPECT_FALSE(cpu->device().pinHostMemory(v.data(), v.size() * sizeof(float)));
  cpu->device().unpinHostMemory(v.data());  // harmless
}

}  // namespace
