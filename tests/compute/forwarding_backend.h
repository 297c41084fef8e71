// A Backend that hands every operation to a CPU backend: tests derive from it to make one
// operation misbehave (run out of "device memory", fail like a broken device) and keep the rest.
#pragma once

#include <memory>
#include <string>

#include "compute/backend.h"

namespace stacklens::testing {

class ForwardingBackend : public compute::Backend {
 public:
  ForwardingBackend() : cpu_(compute::makeCpuBackend(2)) {}
  std::string name() const override { return "forwarding"; }
  std::string deviceName() const override { return "test"; }
  int threads() const override { return 2; }
  compute::Image upload(const compute::Image& i) override { return cpu_->upload(i); }
  compute::Image download(const compute::Image& i) override { return cpu_->download(i); }
  compute::LabelImage download(const compute::LabelImage& l) override { return cpu_->download(l); }
  void synchronize() override {}
  compute::Image gaussianBlur(const compute::Image& in, const compute::BlurParams& p,
                              const compute::Job& j) override {
    return cpu_->gaussianBlur(in, p, j);
  }
  compute::Image richardsonLucy(const compute::Image& in, const compute::Image& psf,
                                const compute::DeconvolveParams& p,
                                const compute::Job& j) override {
    return cpu_->richardsonLucy(in, psf, p, j);
  }
  compute::ClipStats sigmaClip(const compute::Image& in, const compute::ClipParams& p,
                               const compute::Job& j) override {
    return cpu_->sigmaClip(in, p, j);
  }
  compute::Segmentation segment(const compute::Image& in, const compute::SegmentParams& p,
                                const compute::Job& j) override {
    return cpu_->segment(in, p, j);
  }
  compute::Image medianFilter(const compute::Image& in, int size, const compute::Job& j) override {
    return cpu_->medianFilter(in, size, j);
  }
  compute::Image removeOutliers(const compute::Image& in, const compute::OutlierParams& p,
                                const compute::Job& j) override {
    return cpu_->removeOutliers(in, p, j);
  }
  compute::Image resample(const compute::Image& in, const compute::ResampleParams& p,
                          const compute::Job& j) override {
    return cpu_->resample(in, p, j);
  }
  compute::Image project(const compute::Image& in, const compute::ProjectParams& p,
                         const compute::Job& j) override {
    return cpu_->project(in, p, j);
  }
  compute::Image moment(const compute::Image& in, const compute::MomentParams& p,
                        const compute::Job& j) override {
    return cpu_->moment(in, p, j);
  }
  compute::Image renderVolume(const compute::Image& in, const compute::VolumeRenderParams& p,
                              const compute::Job& j) override {
    return cpu_->renderVolume(in, p, j);
  }

 private:
  std::unique_ptr<compute::Backend> cpu_;
};

}  // namespace stacklens::testing
