// The benchmark harness: warm-up and repeats, error lines, JSON shape, the synthetic sky.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "compute/backend.h"
#include "compute/bench/workloads.h"

namespace {

using namespace stacklens::compute;

// A backend whose operations count their calls, or throw, without computing anything.
class CallCountingBackend final : public Backend, public DeviceControl {
 public:
  explicit CallCountingBackend(bool fail, std::string name = "cpu")
      : fail_(fail), name_(std::move(name)) {}
  std::string name() const override { return name_; }
  std::string deviceName() const override { return "fake \"device\""; }
  int threads() const override { return 3; }
  Image upload(const Image& i) override {
    ++uploads;
    return i;
  }
  Image download(const Image& i) override { return i; }
  LabelImage download(const LabelImage& l) override { return l; }
  void synchronize() override {}
  DeviceControl& device() override { return *this; }
  double lastDeviceMs() const override { return deviceMs; }
  Image gaussianBlur(const Image& in, const BlurParams&, const Job&) override { return call(in); }
  Image richardsonLucy(const Image& in, const Image&, const DeconvolveParams&,
                       const Job&) override {
    return call(in);
  }
  ClipStats sigmaClip(const Image& in, const ClipParams&, const Job&) override {
    call(in);
    return {};
  }
  Segmentation segment(const Image& in, const SegmentParams&, const Job&) override {
    call(in);
    return {};
  }
  Image medianFilter(const Image& in, int, const Job&) override { return call(in); }
  Image removeOutliers(const Image& in, const OutlierParams&, const Job&) override {
    return call(in);
  }
  Image resample(const Image& in, const ResampleParams&, const Job&) override { return call(in); }
  Image project(const Image& in, const ProjectParams&, const Job&) override { return call(in); }
  Image moment(const Image& in, const MomentParams&, const Job&) override { return call(in); }
  Image renderVolume(const Image& in, const VolumeRenderParams&, const Job&) override {
    return call(in);
  }
  int calls = 0, uploads = 0;
  double deviceMs = -1;

 private:
  Image call(const Image& in) {
    ++calls;
    if (fail_) throw InvalidArgument("gaussian_blur is not implemented yet");
    return in;
  }
  bool fail_;
  std::string name_;
};

TEST(Bench, RunsOneWarmUpThenTheRepeats) {
  CallCountingBackend backend(false);
  bench::Result r = bench::runWorkload("blur2d_gaussian_f32", backend, 4);
  EXPECT_EQ(backend.calls, 5);
  EXPECT_TRUE(r.error.empty());
  EXPECT_EQ(r.shape, (std::vector<int64_t>{2048, 2048}));
  EXPECT_LE(r.minSeconds, r.medianSeconds);
  const std::string json = bench::toJson(r);
  EXPECT_EQ(json.rfind("{\"workload\": \"blur2d_gaussian_f32\", \"backend\": \"cpu\", "
                       "\"shape\": [2048, 2048], \"min_s\": ",
                       0),
            0u)
      << json;
  EXPECT_NE(json.find("\"threads\": 3, \"device\": \"fake \\\"device\\\"\"}"), std::string::npos)
      << json;
}

TEST(Bench, ACopyingBackendReportsDeviceTimeTransfersAndTheWholeRoundTrip) {
  CallCountingBackend backend(false, "cuda");
  backend.deviceMs = 2.5;
  bench::Result r = bench::runWorkload("blur2d_gaussian_f32", backend, 3);
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_EQ(backend.uploads, 1);  // the device-resident runs share one upload
  ASSERT_TRUE(r.kernelMedianSeconds && r.transferMedianSeconds && r.inclusiveMedianSeconds);
  EXPECT_DOUBLE_EQ(*r.kernelMedianSeconds, 0.0025);  // the backend's own figure, not wall time
  EXPECT_EQ(backend.calls, 1 + 2 * 3);  // warm-up, then a device run and a host run per repeat
  const std::string json = bench::toJson(r);
  EXPECT_NE(json.find("\"kernel_median_s\": 0.0025"), std::string::npos) << json;
  EXPECT_NE(json.find("\"transfer_inclusive_median_s\": "), std::string::npos) << json;
  // Without a device figure the kernel time falls back to the wall time of the call.
  CallCountingBackend plain(false, "cuda");
  bench::Result p = bench::runWorkload("blur2d_gaussian_f32", plain, 3);
  ASSERT_TRUE(p.kernelMedianSeconds);
  EXPECT_DOUBLE_EQ(*p.kernelMedianSeconds, p.medianSeconds);
}

TEST(Bench, CpuLinesAppendTheFloorAndTheFftOnlyYardstick) {
  bench::Result r;
  r.workload = "rl2d_fft20";
  r.backend = "cpu";
  r.shape = {8, 8};
  r.minSeconds = 1.5;
  r.medianSeconds = 2;
  r.threads = 2;
  r.device = "cpu";
  const std::string plain = bench::toJson(r);
  r.bandwidth = 4e9;
  r.floorBytes = 2e9;
  r.fftOnlySeconds = 1.6;
  const std::string json = bench::toJson(r);
  // The older fields keep their order; the new ones follow them.
  EXPECT_EQ(json.rfind(plain.substr(0, plain.size() - 1), 0), 0u) << json;
  EXPECT_NE(json.find(", \"memory_bandwidth_GBps\": 4, \"floor_bytes\": 2e+09, \"floor_s\": 0.5, "
                      "\"x_floor\": 4, \"fft_only_s\": 1.6, \"x_fft\": 1.25}"),
            std::string::npos)
      << json;
  // runWorkload fills them in for the CPU only, given a bandwidth; the blur has no FFT.
  CallCountingBackend cpu(false);
  bench::Result blur = bench::runWorkload("blur2d_gaussian_f32", cpu, 2, 1e10);
  ASSERT_TRUE(blur.bandwidth && blur.floorBytes);
  EXPECT_DOUBLE_EQ(*blur.floorBytes, 2 * 4.0 * 2048 * 2048);  // one read and one write
  EXPECT_FALSE(blur.fftOnlySeconds);
  EXPECT_FALSE(bench::runWorkload("blur2d_gaussian_f32", cpu, 1).floorBytes);
  CallCountingBackend gpu(false, "cuda");
  EXPECT_FALSE(bench::runWorkload("blur2d_gaussian_f32", gpu, 1, 1e10).floorBytes);
}

TEST(Bench, AFailingOperationBecomesAnErrorLine) {
  CallCountingBackend backend(true);
  bench::Result r = bench::runWorkload("blur2d_gaussian_f32", backend, 3);
  EXPECT_EQ(r.error, "gaussian_blur is not implemented yet");
  EXPECT_EQ(bench::toJson(r),
            "{\"workload\": \"blur2d_gaussian_f32\", \"backend\": \"cpu\", \"shape\": [2048, "
            "2048], \"error\": \"gaussian_blur is not implemented yet\"}");
}

TEST(Bench, RejectsUnknownNamesAndRepeats) {
  CallCountingBackend backend(false);
  EXPECT_THROW(bench::runWorkload("nope", backend, 1), InvalidArgument);
  EXPECT_THROW(bench::runWorkload("sigmaclip", backend, 0), InvalidArgument);
  // The names of shared/docs/benchmarks.md, plus our variants (reflect boundary, clipping timed)
  // the projections, moments and 3D view of issue 19.
  const std::vector<std::string> expected = {"blur2d_gaussian_f32",
                                             "sigmaclip",
                                             "segment_label_measure",
                                             "segment_with_clip",
                                             "rl2d_fft20",
                                             "rl2d_fft20_reflect",
                                             "rl3d_fft20",
                                             "rl3d_fft20_reflect",
                                             "median3_stack",
                                             "median5_stack",
                                             "zoom3d_order3",
                                             "project_max",
                                             "project_median",
                                             "moment1",
                                             "volume_mip",
                                             "volume_iso"};
  EXPECT_EQ(bench::workloadNames(), expected);
}

TEST(Bench, SyntheticSkyIsDeterministicWithTheDocumentedNoise) {
  Image a = bench::syntheticSky(2048, 7), b = bench::syntheticSky(2048, 7);
  ASSERT_EQ(a.shape(), (Shape{1, 2048, 2048}));
  for (int64_t i = 0; i < a.shape().count(); ++i) ASSERT_EQ(a.data()[i], b.data()[i]);
  // A corner far from the extended source, where point sources cover a minority of pixels:
  // robust σ via the median absolute deviation of a 200×200 patch.
  std::vector<float> patch;
  for (int y = 0; y < 200; ++y)
    for (int x = 0; x < 200; ++x) patch.push_back(a.at(0, y, x));
  const auto mid = patch.begin() + patch.size() / 2;
  std::nth_element(patch.begin(), mid, patch.end());
  const float med = *mid;
  for (float& p : patch) p = std::abs(p - med);
  std::nth_element(patch.begin(), mid, patch.end());
  EXPECT_NEAR(1.4826 * *mid, 0.0133, 0.0013);
  EXPECT_GT(a.at(0, 1024, 1024), 2.4f);  // the bright extended source (2.5) in the centre
}

}  // namespace
