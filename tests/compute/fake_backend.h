// A compute::Backend with trivial, known operations, call records and adjustable delays, so that
// pipeline, cancellation, caching and timing tests do not depend on the real operations' speed.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "compute/backend.h"

namespace stacklens::testing {

using compute::Image;

// Operations (per pixel, so results are easy to predict in a test):
//   removeOutliers: v + 1     medianFilter: 2 v     gaussianBlur: v + 10 + blurOffset
//   richardsonLucy: v + 1000 · z (slice index within its input), one cancel check per iteration
//   sigmaClip: mean of all values as median, mean; population std
//   segment: label 1 where v > threshold (absolute), one source
// With onDevice, upload() marks buffers Location::Cuda (still host memory) and every operation
// requires device input, as a GPU backend would.
class FakeBackend : public compute::Backend, public compute::DeviceControl {
 public:
  explicit FakeBackend(bool onDevice = false, int threads = 1)
      : onDevice_(onDevice), threads_(threads) {}

  std::string name() const override { return onDevice_ ? "fake-gpu" : "fake-cpu"; }
  std::string deviceName() const override { return onDevice_ ? "Fake GPU" : "Fake CPU"; }
  int threads() const override { return threads_; }

  Image upload(const Image& image) override {
    sleepMs(uploadSleepMs);
    if (image.onHost()) {
      std::lock_guard lock(mutex_);
      uploadedShapes.push_back(image.shape());
    }
    return toDevice(image);
  }
  Image toDevice(const Image& image) const {
    if (!onDevice_ || !image.onHost()) return image;
    Image copy = compute::cloneHost(image);
    Image device(copy.shape(), compute::Location::Cuda,
                 std::shared_ptr<float>(copy.data(), [copy](float*) {}));
    device.spacing = image.spacing;
    return device;
  }
  Image download(const Image& image) override {
    sleepMs(downloadSleepMs);
    if (image.onHost()) return image;
    Image host = Image::host(image.shape());
    std::copy(image.data(), image.data() + image.shape().count(), host.data());
    host.spacing = image.spacing;
    return host;
  }
  compute::LabelImage download(const compute::LabelImage& labels) override {
    if (labels.onHost()) return labels;
    compute::LabelImage host = compute::LabelImage::host(labels.shape());
    std::copy(labels.data(), labels.data() + labels.shape().count(), host.data());
    return host;
  }
  void synchronize() override { ++synchronizeCalls; }
  compute::DeviceControl& device() override { return *this; }
  double lastDeviceMs() const override { return reportedDeviceMs; }
  // Transfers through upload() and download(), so that device images stay marked as such.
  Image uploadAsync(const Image& image) override { return upload(image); }
  // On the "device" when the slices are (as a GPU backend stacks its uploads there).
  Image stackSlices(const std::vector<Image>& slices) override {
    stacks.fetch_add(1);
    std::vector<Image> host;
    for (const Image& s : slices) host.push_back(s.onHost() ? s : compute::cloneHost(asHost(s)));
    return toDevice(DeviceControl::stackSlices(host));
  }
  void downloadInto(const Image& image, Image& host) override {
    DeviceControl::downloadInto(download(image), host);
  }
  Image downloadRows(const Image& image, int64_t z, int64_t step) override {
    return DeviceControl::downloadRows(download(image), z, step);
  }
  // With canPin, records the host buffers it was asked to page-lock (and still holds).
  bool pinHostMemory(void* p, size_t) override {
    if (!canPin) return false;
    std::lock_guard lock(mutex_);
    pinned.insert(p);
    ++pins;
    return true;
  }
  void unpinHostMemory(void* p) override {
    std::lock_guard lock(mutex_);
    pinned.erase(p);
    ++unpins;
  }

  Image gaussianBlur(const Image& in, const compute::BlurParams&, const compute::Job&) override {
    record("blur", in);
    return map(in, [this](float v, int64_t) { return v + 10.f + blurOffset; });
  }
  Image richardsonLucy(const Image& in, const Image& psf, const compute::DeconvolveParams& p,
                       const compute::Job& job) override {
    record("deconvolution", in);
    {
      std::lock_guard lock(mutex_);
      psfShapes.push_back(psf.shape());
    }
    for (int i = 0; i < p.iterations; ++i) {
      job.checkCancelled();
      iterationsRun.fetch_add(1);
      sleepMs(iterationSleepMs);
      job.report(double(i + 1) / p.iterations);
    }
    return map(in, [](float v, int64_t z) { return v + 1000.f * static_cast<float>(z); });
  }
  compute::ClipStats sigmaClip(const Image& in, const compute::ClipParams&,
                               const compute::Job&) override {
    record("statistics", in);
    requireWhere(in);
    double sum = 0, sum2 = 0;
    const int64_t n = in.shape().count();
    for (int64_t i = 0; i < n; ++i) sum += in.data()[i];
    const double mean = sum / double(n);
    for (int64_t i = 0; i < n; ++i) sum2 += (in.data()[i] - mean) * (in.data()[i] - mean);
    compute::ClipStats s;
    s.all.n = s.clipped.n = n;
    s.all.mean = s.clipped.mean = s.all.median = s.clipped.median = mean;
    s.all.std = s.clipped.std = std::sqrt(sum2 / double(n));
    s.iterations = 1;
    return s;
  }
  compute::Segmentation segment(const Image& in, const compute::SegmentParams& p,
                                const compute::Job&) override {
    record("segmentation", in);
    requireWhere(in);
    segmentBackground = p.background;
    compute::Segmentation seg;
    seg.threshold = p.absoluteThreshold.value_or(0.0);
    seg.labels = compute::LabelImage::host(in.shape());
    compute::Source source;
    source.label = 1;
    for (int64_t i = 0; i < in.shape().count(); ++i)
      if (in.data()[i] > seg.threshold) {
        seg.labels.data()[i] = 1;
        ++source.npix;
        source.flux += in.data()[i];
      }
    if (source.npix) seg.sources.push_back(source);
    return seg;
  }
  Image medianFilter(const Image& in, int, const compute::Job&) override {
    record("median", in);
    return map(in, [](float v, int64_t) { return 2.f * v; });
  }
  Image removeOutliers(const Image& in, const compute::OutlierParams&,
                       const compute::Job&) override {
    record("outliers", in);
    return map(in, [](float v, int64_t) { return v + 1.f; });
  }
  Image resample(const Image&, const compute::ResampleParams&, const compute::Job&) override {
    throw compute::InvalidArgument("resample is not part of the fake");
  }
  Image project(const Image&, const compute::ProjectParams&, const compute::Job&) override {
    throw compute::InvalidArgument("project is not part of the fake");
  }
  Image moment(const Image&, const compute::MomentParams&, const compute::Job&) override {
    throw compute::InvalidArgument("moment is not part of the fake");
  }
  Image renderVolume(const Image&, const compute::VolumeRenderParams&,
                     const compute::Job&) override {
    throw compute::InvalidArgument("renderVolume is not part of the fake");
  }

  struct Call {
    std::string op;
    compute::Shape shape;
  };
  std::vector<Call> calls() const {
    std::lock_guard lock(mutex_);
    return calls_;
  }

  std::atomic<int> iterationsRun{0};
  std::optional<compute::ClipStats> segmentBackground;  // as the last segment() got it
  std::atomic<int> opCalls{0};
  std::atomic<int> synchronizeCalls{0};
  std::atomic<int> stacks{0};  // stackSlices calls
  // Of the host images upload() was given, in order.
  std::vector<compute::Shape> uploadedShapes;
  int uploadsOf(compute::Shape shape) const {
    std::lock_guard lock(mutex_);
    return static_cast<int>(std::count(uploadedShapes.begin(), uploadedShapes.end(), shape));
  }
  std::vector<compute::Shape> psfShapes;
  double iterationSleepMs = 0, uploadSleepMs = 0, downloadSleepMs = 0;
  double reportedDeviceMs = -1;
  float blurOffset = 0;
  bool canPin = false;
  std::set<void*> pinned;
  int pins = 0, unpins = 0;

 private:
  // A "device" image's memory as a host image (it is host memory), without download()'s delay.
  static Image asHost(const Image& image) {
    Image view(image.shape(), compute::Location::Host,
               std::shared_ptr<float>(const_cast<float*>(image.data()), [image](float*) {}));
    view.spacing = image.spacing;
    return view;
  }
  static void sleepMs(double ms) {
    if (ms > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms));
  }
  void requireWhere(const Image& in) const {
    if (onDevice_ && in.onHost()) throw compute::InvalidArgument("fake GPU given a host image");
  }
  void record(const std::string& op, const Image& in) {
    opCalls.fetch_add(1);
    std::lock_guard lock(mutex_);
    calls_.push_back({op, in.shape()});
  }
  template <class F>
  Image map(const Image& in, F f) {
    requireWhere(in);
    Image out = Image::host(in.shape());
    const int64_t slice = in.shape().sliceCount();
    for (int64_t i = 0; i < in.shape().count(); ++i) out.data()[i] = f(in.data()[i], i / slice);
    out.spacing = in.spacing;
    return toDevice(out);  // results live where the backend computes
  }

  bool onDevice_;
  int threads_;
  mutable std::mutex mutex_;
  std::vector<Call> calls_;
};

// A host slab whose value at (z, y, x) is 100 z + 10 y + x (distinct per slice).
inline Image rampSlab(int64_t z, int64_t y, int64_t x) {
  Image slab = Image::host({z, y, x});
  for (int64_t k = 0; k < z; ++k)
    for (int64_t j = 0; j < y; ++j)
      for (int64_t i = 0; i < x; ++i) slab.at(k, j, i) = float(100 * k + 10 * j + i);
  return slab;
}

}  // namespace stacklens::testing
