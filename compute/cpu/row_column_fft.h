// A 2D real FFT done as its FFTW row and column passes, so that element-wise work rides along in
// the same sweeps over memory: Richardson–Lucy's multiplications by the OTF happen between each
// column's forward and inverse transforms while the columns are in cache, and its ratio and update
// between each row's inverse and forward transforms.
#pragma once

#include <cstdint>
#include <functional>

#include "compute/cpu/fft_plan_cache.h"
#include "compute/cpu/thread_pool.h"

namespace stacklens::compute::cpu {

class RowColumnFft {
 public:
  // For a y × x real frame, whose half-spectrum is y rows of x/2 + 1 complex values.
  RowColumnFft(int64_t y, int64_t x, ThreadPool& pool);

  // The complex values of a multiplier for filterColumns(): the half-spectrum's layout
  // rearranged into the blocks of columns filterColumns() works on.
  size_t blockedCount() const;
  void toColumnBlocks(const fftwf_complex* spectrum, fftwf_complex* blocked) const;

  // For each row i (in parallel): with `inverse`, the c2r of spectrum row i into `row` (x floats
  // of scratch), then f(i, row), then with `forward` the r2c of `row` back into spectrum row i.
  // Neither transform is normalised, as fftPlans' 2D transforms.
  void rows(fftwf_complex* spectrum, bool inverse, bool forward,
            const std::function<void(int64_t, float*)>& f) const;

  // Every column of the half-spectrum: transformed forward along y, multiplied by the blocked
  // multiplier (its conjugate with `conjugate`), transformed back (unnormalised).
  void filterColumns(fftwf_complex* spectrum, const fftwf_complex* blocked, bool conjugate) const;

 private:
  int64_t y_, x_, xc_, width_, blocks_;
  const RowColumnPlans* plans_;
  ThreadPool& pool_;
};

}  // namespace stacklens::compute::cpu
