// Real-to-complex FFTW (single precision, threaded) plans made once per shape and reused.
#pragma once

#include <fftw3.h>

#include <cstddef>
#include <cstdint>
#include <memory>

namespace stacklens::compute::cpu {

// A float buffer from fftwf_malloc, so that every buffer has the alignment the plans were made
// for (plans are executed on other arrays with fftwf_execute_dft_r2c / _c2r).
struct FftwFree {
  void operator()(void* p) const { fftwf_free(p); }
};
using FftwFloats = std::unique_ptr<float[], FftwFree>;
using FftwComplex = std::unique_ptr<fftwf_complex[], FftwFree>;
FftwFloats allocFloats(size_t n);
FftwComplex allocComplex(size_t n);

// The pair of plans for one real shape (z, y, x), z == 1 meaning 2D. The complex half-spectrum
// has z · y · (x/2 + 1) elements. Neither transform is normalised: c2r(r2c(a)) = a · count.
struct FftPlans {
  fftwf_plan forward = nullptr;   // real → complex
  fftwf_plan backward = nullptr;  // complex → real (overwrites its input)
  int64_t z = 1, y = 0, x = 0;
  size_t realCount() const { return static_cast<size_t>(z * y * x); }
  size_t complexCount() const { return static_cast<size_t>(z * y * (x / 2 + 1)); }
  void r2c(float* in, fftwf_complex* out) const { fftwf_execute_dft_r2c(forward, in, out); }
  void c2r(fftwf_complex* in, float* out) const { fftwf_execute_dft_c2r(backward, in, out); }
  // cosinePlans' transforms, in place: DCT-II (REDFT10) and DCT-III (REDFT01) on every axis;
  // dct3(dct2(a)) = a · Π 2n.
  void dct2(float* values) const { fftwf_execute_r2r(forward, values, values); }
  void dct3(float* values) const { fftwf_execute_r2r(backward, values, values); }
};

// Returns the cached plans for (z, y, x) on `threads` threads, making them on first use.
// Thread-safe (FFTW planning is not: a process-wide mutex guards it). Plans live until exit.
//
// Planning effort: a plan already in the wisdom file is used as measured (FFTW_WISDOM_ONLY
// makes that nearly free). Otherwise shapes up to 2^23 values (2D images up to ~2900²) are
// planned with FFTW_MEASURE, which pays for itself within one 20-iteration deconvolution, and
// larger ones with FFTW_ESTIMATE unless STACKLENS_FFTW_MEASURE=1 is set in the environment.
// Measured plans are saved to $XDG_CACHE_HOME/stacklens/fftw-wisdom (or
// ~/.cache/stacklens/fftw-wisdom); failing to read or write that file is harmless.
const FftPlans& fftPlans(int64_t z, int64_t y, int64_t x, int threads);
// The same for the cosine transforms (in place on real arrays), cached and planned alike.
const FftPlans& cosinePlans(int64_t z, int64_t y, int64_t x, int threads);

// fftPlans(z, y, x)'s transform split into its passes (compute/cpu/slab_column_fft.h), each plan
// on one thread: the caller runs them in parallel and fuses its own work in. Slabs (rows of x
// when z == 1, else planes of y × x): r2c and c2r, out of place. Columns across the slabs (of
// length y when z == 1, else z): complex forward and backward transforms of `width` interleaved
// columns (value i of column c at i · width + c), in place. Executed on other arrays of
// fftwf_malloc's alignment; cached and planned as above.
struct SlabColumnPlans {
  fftwf_plan slabForward = nullptr, slabBackward = nullptr;
  fftwf_plan columnForward = nullptr, columnBackward = nullptr;
};
const SlabColumnPlans& slabColumnPlans(int64_t z, int64_t y, int64_t x, int64_t width);

}  // namespace stacklens::compute::cpu
