// The CUDA backend as a device: choosing it (also where none is usable, as on CI), the device time
// of the last operation, and buffers that round-trip and stay on the device (skipped without a
// usable device).
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "compute/backend.h"
#include "tests/compute/gpu_test_backends.h"
#include "tests/compute/image_checks.h"

using namespace stacklens::compute;

namespace {

using stacklens::testing::randomImage;

class CudaDevice : public stacklens::testing::GpuTest {};

TEST(CudaBackendChoice, CudaWithoutUsableDeviceIsUnavailableAndAutoFallsBackToCpu) {
  std::string why;
  if (cudaUsable(&why)) {
    auto b = makeCudaBackend();
    EXPECT_EQ(b->name(), "cuda");
    EXPECT_NE(b->deviceName().find("driver"), std::string::npos) << b->deviceName();
    std::string note;
    EXPECT_EQ(makeBackend("auto", &note)->name(), "cuda");
    return;
  }
  EXPECT_FALSE(why.empty());
  EXPECT_THROW(makeCudaBackend(), BackendUnavailable);
  EXPECT_THROW(makeBackend("cuda"), BackendUnavailable);
  std::string note;
  EXPECT_EQ(makeBackend("auto", &note)->name(), "cpu");
  EXPECT_NE(note.find("CPU"), std::string::npos) << note;
}

TEST_F(CudaDevice, LastDeviceMsReportsTheLastOperationsDeviceTime) {
  auto fresh = makeCudaBackend();
  Image in = fresh->upload(randomImage({4, 256, 256}, 30));
  BlurParams p;
  p.sigmaY = p.sigmaX = 2.0;
  Image untimed = fresh->gaussianBlur(in, p);
  EXPECT_LT(fresh->device().lastDeviceMs(), 0.0) << "operations are not timed unless asked";
  fresh->device().timeOperations(true);
  EXPECT_LT(fresh->device().lastDeviceMs(), 0.0) << "no timed operation has run yet";
  in = fresh->upload(randomImage({4, 256, 256}, 30));
  EXPECT_LT(fresh->device().lastDeviceMs(), 0.0) << "an upload is not an operation";
  Image out = fresh->gaussianBlur(in, p);
  const double blurMs = fresh->device().lastDeviceMs();  // waits for the blur itself
  EXPECT_GT(blurMs, 0.0);
  EXPECT_LT(blurMs, 10000.0);
  ClipStats stats = fresh->sigmaClip(out, ClipParams{});
  EXPECT_GT(stats.iterations, 0);
  const double clipMs = fresh->device().lastDeviceMs();
  EXPECT_GT(clipMs, 0.0);
  EXPECT_NE(clipMs, blurMs);  // a new figure for the new operation
  // A failed operation leaves no figure rather than the previous one.
  EXPECT_THROW(fresh->medianFilter(in, 4), InvalidArgument);
  EXPECT_LT(fresh->device().lastDeviceMs(), 0.0);
}

TEST_F(CudaDevice, UploadDownloadRoundTripsAndResultsStayOnTheDevice) {
  // Larger than one staging chunk (16 MiB), not a multiple of it.
  Image in = randomImage({5, 1000, 1001}, 1);
  Image dev = gpu->upload(in);
  EXPECT_EQ(dev.location(), Location::Cuda);
  Image back = gpu->download(dev);
  ASSERT_EQ(back.shape(), in.shape());
  for (int64_t i = 0; i < in.shape().count(); ++i) ASSERT_EQ(back.data()[i], in.data()[i]) << i;
  Image blurred = gpu->gaussianBlur(dev, BlurParams{});
  EXPECT_EQ(blurred.location(), Location::Cuda);
  // A device input and a host input give the same result.
  Image fromHost = gpu->download(gpu->medianFilter(in, 3));
  Image fromDevice = gpu->download(gpu->medianFilter(dev, 3));
  for (int64_t i = 0; i < in.shape().count(); ++i)
    ASSERT_EQ(fromHost.data()[i], fromDevice.data()[i]) << i;
}

TEST_F(CudaDevice, UploadsFromUnalignedPageableViewsOfAnyLengthArriveExactly) {
  // Pageable input is staged with 16-byte streaming stores: a view that starts off a 16-byte
  // boundary, and lengths that end inside a 64-byte block, inside a copy thread's part or past a
  // staging buffer, must still arrive bit for bit (their heads and tails go by memcpy).
  // Past the staging slots (8 MiB of 1 MiB pieces up to 32 MiB, 24 MiB of 4 MiB pieces beyond),
  // the slots are reused while earlier pieces may still be on their way.
  Image whole = randomImage({1, 1, (int64_t(41) << 20) / 4 + 64}, 7);
  for (const int64_t offset : {0, 1, 2, 3})
    for (const int64_t length :
         {int64_t(1), int64_t(15), int64_t(16 + 3), int64_t(131071), int64_t(1) << 20,
          (int64_t(17) << 20) / 4 + 5, (int64_t(41) << 20) / 4 + 7}) {
      // Prepare
      const Image view({1, 1, length}, Location::Host,
                       std::shared_ptr<float>(whole.data() + offset, [whole](float*) {}));

      // Run
      const Image back = gpu->download(gpu->upload(view));

      // Verify
      ASSERT_EQ(back.shape(), view.shape());
      EXPECT_EQ(std::memcmp(back.data(), view.data(), size_t(length) * sizeof(float)), 0)
          << "offset " << offset << ", length " << length;
    }
}

TEST_F(CudaDevice, BackToBackPageableUploadsDoNotOverwriteEachOthersStaging) {
  // An upload returns once its input is staged, with DMAs still reading the staging; the next
  // upload must wait for them before it reuses a staging slot. Uploads of 40 MiB go round the
  // 24 MiB of large staging slots, so a second one started at once meets the first one's last
  // pieces.
  const int64_t n = (int64_t(40) << 20) / 4 + 3;
  std::vector<Image> hosts, devices;
  for (unsigned seed : {11u, 12u, 13u}) hosts.push_back(randomImage({1, 1, n}, seed));

  for (const Image& h : hosts) devices.push_back(gpu->upload(h));
  std::vector<Image> back;
  for (const Image& d : devices) back.push_back(gpu->download(d));

  for (size_t i = 0; i < hosts.size(); ++i)
    EXPECT_EQ(std::memcmp(back[i].data(), hosts[i].data(), size_t(n) * sizeof(float)), 0)
        << "upload " << i;
}

TEST_F(CudaDevice, BackToBackPageableUploadsOfBothPieceSizesArriveExactly) {
  // Uploads up to 32 MiB go in 1 MiB pieces, larger ones in 4 MiB pieces through slots of their
  // own that share the small slots' events: queued back to back, alternating between the two
  // sizes and wrapping both rings, each must still arrive bit for bit.
  std::vector<Image> hosts, devices;
  unsigned seed = 21;
  for (const int64_t bytes : {int64_t(40) << 20, int64_t(9) << 20, int64_t(33) << 20,
                              int64_t(3) << 20, int64_t(45) << 20, int64_t(31) << 20})
    hosts.push_back(randomImage({1, 1, bytes / 4 + 5}, seed++));

  for (const Image& h : hosts) devices.push_back(gpu->upload(h));
  std::vector<Image> back;
  for (const Image& d : devices) back.push_back(gpu->download(d));

  for (size_t i = 0; i < hosts.size(); ++i)
    EXPECT_EQ(std::memcmp(back[i].data(), hosts[i].data(), hosts[i].bytes()), 0) << "upload " << i;
}

TEST_F(CudaDevice, AResultKeepsItsMemoryWhileHeldAndItsSizeIsReusedOnceDropped) {
  // The context keeps the memory of dropped buffers for its next allocation of the same size: a
  // buffer still held must never be handed out again, and one dropped and reused must hold the
  // new operation's values.
  const Image in = gpu->upload(randomImage({2, 300, 257}, 21));
  BlurParams p;
  p.sigmaY = p.sigmaX = 2.0;
  Image first = gpu->gaussianBlur(in, p);
  const Image firstBack = gpu->download(first);
  const size_t bytes = size_t(in.shape().count()) * sizeof(float);

  const Image second = gpu->gaussianBlur(first, p);  // first's size, while first is held
  first = Image();
  const Image third = gpu->gaussianBlur(in, p);  // may reuse first's memory
  const Image fourth = gpu->medianFilter(second, 3);

  EXPECT_NE(second.data(), third.data());
  EXPECT_NE(third.data(), fourth.data());
  EXPECT_EQ(std::memcmp(gpu->download(third).data(), firstBack.data(), bytes), 0);
  const Image secondBack = gpu->download(second);
  const Image again = gpu->download(gpu->gaussianBlur(gpu->upload(firstBack), p));
  EXPECT_EQ(std::memcmp(secondBack.data(), again.data(), bytes), 0);
  const Image fourthBack = gpu->download(fourth);
  const Image medianAgain = gpu->download(gpu->medianFilter(secondBack, 3));
  EXPECT_EQ(std::memcmp(fourthBack.data(), medianAgain.data(), bytes), 0);
}

}  // namespace
