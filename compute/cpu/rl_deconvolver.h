// Richardson–Lucy on one frame on the CPU: its padded domain, buffers, OTF and FFT plans, and
// the iteration (compute/cpu/richardson_lucy.cpp states the semantics). The unblocked run
// deconvolves a whole frame with run(); blocked runs that exchange halos every iteration
// (compute/blocked/exchange_run.h) fill a periodic frame themselves and step it one iteration
// at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "compute/cpu/fft_plan_cache.h"
#include "compute/cpu/slab_column_fft.h"
#include "compute/cpu/thread_pool.h"
#include "compute/image.h"
#include "compute/job.h"
#include "compute/params.h"

namespace stacklens::compute::cpu {

// One axis of a frame: `padded` samples, the data after `before` when padded.
struct FrameAxis {
  int64_t n = 1;                // data length
  int64_t padded = 1;           // transform length
  int64_t before = 0;           // data offset inside the padded axis
  std::vector<int64_t> source;  // padded index → data index, −1 for zero padding
};

class Deconvolver {
 public:
  // The transforms executed: r2c (DCT-II) and c2r (DCT-III) runs of the frame's cached plans.
  struct TransformCount {
    int64_t forward = 0, backward = 0;
    bool operator==(const TransformCount&) const = default;
  };

  // The frame a deconvolver of `data` with a PSF of shape `psf` transforms (its padded lengths).
  static Shape frameOf(Shape data, Shape psf, const DeconvolveParams& p);
  // That frame's cached plans on `threads` threads: the FFT's, or ReflectExact's cosine plans.
  static const FftPlans& plansOf(Shape frame, const DeconvolveParams& p, int threads);

  // data: the shape deconvolved (a slice in 2D mode, the stack in 3D mode); its frame is padded
  // as p.boundary says (Periodic: the frame is `data`). psf: as rlPsf gives it. p and pool must
  // outlive the deconvolver.
  Deconvolver(Shape data, const Image& psf, const DeconvolveParams& p, ThreadPool& pool);

  // Deconvolves one block of data into out (p.iterations, from estimate = image).
  void run(const float* in, float* out, const Job& job, double progressBase, double progressSpan);

  // For callers that fill the frame themselves: its observed image and
  // estimate (C order, finite values), one iteration on them, and with p.accelerate what that
  // iteration changed (new − old estimate). Extrapolation is the caller's.
  float* image() { return image_.get(); }
  float* estimate() { return estimate_.get(); }
  const float* change() const { return change_.get(); }
  void step(const Job& job);

  // The OTF's forward transform (none for ReflectExact), then per iteration two forward and two
  // backward, one pair for each convolution; the benchmark's FFTW-only yardstick runs the same.
  TransformCount transformsExecuted() const { return executed_; }

 private:
  void makeOtf(const Image& psf);
  void makeTransfer(const Image& psf);
  void convolve(const float* src, float* dst);
  void fillPadded(const float* in);
  void crop(const float* in, float* out);
  void computeDivergence();
  // One iteration with the element-wise work inside the FFT's slab and column passes. ready:
  // spectrum_ already holds the estimate's slab transforms; prepareNext: leave the new
  // estimate's there for the next iteration.
  void stepInPasses(const Job& job, bool ready, bool prepareNext);
  void updateSlab(float* estimate, const float* correction, int64_t offset, size_t n);

  const DeconvolveParams& p_;
  ThreadPool& pool_;
  FrameAxis z_, y_, x_;
  const FftPlans* plans_ = nullptr;
  size_t n_ = 0, nc_ = 0;
  bool reflectExact_ = false;
  FftwFloats image_, estimate_, work_, divergence_, previous_, change_, changePrevious_;
  FftwFloats transfer_;  // ReflectExact's eigenvalues (makeTransfer)
  FftwComplex spectrum_, otf_;
  TransformCount executed_;
  // Not ReflectExact: the FFT's passes, and the OTF laid out for their column blocks.
  std::unique_ptr<SlabColumnFft> passes_;
  FftwComplex otfColumns_;
};

}  // namespace stacklens::compute::cpu
