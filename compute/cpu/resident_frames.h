// The CPU's resident frames (compute/resident_frames.h): one deconvolver per block, each with
// its own arrays (host memory is the CPU's own; the planner weighs the CPU's exchanging blocks
// with whole-domain arrays instead, compute/blocked/exchange_run.h). They serve the resident
// scheme's tests, which check on any machine what the GPU's frames do.
#pragma once

#include <memory>
#include <vector>

#include "compute/cpu/rl_deconvolver.h"
#include "compute/cpu/thread_pool.h"
#include "compute/resident_frames.h"

namespace stacklens::compute::cpu {

class ResidentFrames final : public ResidentRlFrames {
 public:
  // psf: as rlPsf gives it; p: the frames' own parameters (periodic). pool outlives this.
  ResidentFrames(const ResidentLayout& layout, const Image& psf, const DeconvolveParams& p,
                 ThreadPool& pool);
  void load(int64_t b, int64_t z, int64_t planes, const float* values) override;
  void step(int64_t b) override;
  void exchange() override;
  void read(int64_t b, Shape origin, Shape extent, float* out) override;

 private:
  const ResidentLayout layout_;
  const DeconvolveParams p_;
  ThreadPool& pool_;
  std::vector<std::unique_ptr<Deconvolver>> frames_;
};

}  // namespace stacklens::compute::cpu
