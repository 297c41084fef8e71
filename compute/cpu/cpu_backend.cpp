// The CPU backend: host buffers, a thread pool, and the operations in compute/cpu/.
#include <fstream>
#include <memory>

#include "compute/backend.h"
#include "compute/cpu/operations.h"
#include "compute/cpu/resident_frames.h"

namespace stacklens::compute {
namespace {

std::string cpuModelName() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown CPU";
}

const Image& requireHost(const Image& image) {
  if (!image.onHost()) throw InvalidArgument("the CPU backend needs host images; download first");
  return image;
}

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(int threads) : pool_(threads) {}

  std::string name() const override { return "cpu"; }
  std::string deviceName() const override { return cpuModelName(); }
  int threads() const override { return pool_.size(); }

  Image upload(const Image& image) override { return requireHost(image); }
  Image download(const Image& image) override { return requireHost(image); }
  LabelImage download(const LabelImage& labels) override {
    if (!labels.onHost()) throw InvalidArgument("the CPU backend cannot read device labels");
    return labels;
  }
  void synchronize() override {}

  Image gaussianBlur(const Image& in, const BlurParams& p, const Job& job) override {
    return cpu::gaussianBlur(requireHost(in), p, job, pool_);
  }
  Image richardsonLucy(const Image& in, const Image& psf, const DeconvolveParams& p,
                       const Job& job) override {
    return cpu::richardsonLucy(requireHost(in), requireHost(psf), p, job, pool_);
  }
  std::unique_ptr<ResidentRlFrames> residentRlFrames(const ResidentLayout& layout, const Image& psf,
                                                     const DeconvolveParams& p) override {
    return std::make_unique<cpu::ResidentFrames>(layout, requireHost(psf), p, pool_);
  }
  ClipStats sigmaClip(const Image& in, const ClipParams& p, const Job& job) override {
    return cpu::sigmaClip(requireHost(in), p, job, pool_);
  }
  Segmentation segment(const Image& in, const SegmentParams& p, const Job& job) override {
    return cpu::segment(requireHost(in), p, job, pool_);
  }
  Image medianFilter(const Image& in, int size, const Job& job) override {
    return cpu::medianFilter(requireHost(in), size, job, pool_);
  }
  Image removeOutliers(const Image& in, const OutlierParams& p, const Job& job) override {
    return cpu::removeOutliers(requireHost(in), p, job, pool_);
  }
  Image resample(const Image& in, const ResampleParams& p, const Job& job) override {
    return cpu::resample(requireHost(in), p, job, pool_);
  }
  Image project(const Image& in, const ProjectParams& p, const Job& job) override {
    return cpu::project(requireHost(in), p, job, pool_);
  }
  Image moment(const Image& in, const MomentParams& p, const Job& job) override {
    return cpu::moment(requireHost(in), p, job, pool_);
  }
  Image renderVolume(const Image& in, const VolumeRenderParams& p, const Job& job) override {
    return cpu::renderVolume(requireHost(in), p, job, pool_);
  }

 private:
  cpu::ThreadPool pool_;
};

}  // namespace

std::unique_ptr<Backend> makeCpuBackend(int threads) {
  return std::make_unique<CpuBackend>(threads);
}

}  // namespace stacklens::compute
