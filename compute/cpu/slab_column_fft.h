// A real FFT done as FFTW's passes over the frame, so that element-wise work rides along in the
// same sweeps over memory. The frame is a stack of slabs along its first transformed axis (a 2D
// frame's rows, a 3D frame's planes); a pass either transforms each slab on its own (r2c/c2r of
// rank 1 or 2) or transforms the columns across the slabs (complex, one column per value of a
// slab's half-spectrum). Richardson–Lucy multiplies by the OTF between each block of columns'
// forward and inverse transforms, while the block is in cache, and takes its ratio and update
// between each slab's c2r and r2c.
#pragma once

#include <cstdint>
#include <functional>

#include "compute/cpu/fft_plan_cache.h"
#include "compute/cpu/thread_pool.h"

namespace stacklens::compute::cpu {

class SlabColumnFft {
 public:
  // For a z × y × x real frame (z == 1: 2D), whose half-spectrum is z · y · (x/2 + 1) complex
  // values in C order, as fftPlans(z, y, x) makes it.
  SlabColumnFft(int64_t z, int64_t y, int64_t x, ThreadPool& pool);

  int64_t slabCount() const { return slabs_; }
  int64_t slabValues() const { return slabReal_; }  // real values per slab

  // The complex values of a multiplier for filterColumns(): the half-spectrum's layout
  // rearranged into the blocks of columns filterColumns() works on.
  size_t blockedCount() const;
  void toColumnBlocks(const fftwf_complex* spectrum, fftwf_complex* blocked) const;

  // For each slab s (in parallel): with `inverse`, the c2r of its part of the spectrum (whose
  // columns are already transformed back) into `values` (slabValues() floats of scratch), then
  // f(s, values), then with `forward` the r2c of `values` back into the spectrum. Neither
  // transform is normalised, as fftPlans'.
  void slabs(fftwf_complex* spectrum, bool inverse, bool forward,
             const std::function<void(int64_t, float*)>& f) const;

  // Every column across the slabs: transformed forward, multiplied by the blocked multiplier (its
  // conjugate with `conjugate`), transformed back (unnormalised).
  void filterColumns(fftwf_complex* spectrum, const fftwf_complex* blocked, bool conjugate) const;

 private:
  int64_t slabs_, slabReal_, columns_, width_, blocks_;
  const SlabColumnPlans* plans_;
  ThreadPool& pool_;
};

}  // namespace stacklens::compute::cpu
