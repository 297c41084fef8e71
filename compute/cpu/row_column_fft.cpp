// A 2D real FFT as row and column passes with work fused into them (see row_column_fft.h).
#include "compute/cpu/row_column_fft.h"

#include <algorithm>
#include <cstring>

#include "compute/cpu/rl_kernels.h"

namespace stacklens::compute::cpu {
namespace {

// A block of columns stays in the core's L2 cache from its forward transform to its inverse.
constexpr int64_t kColumnBlockBytes = int64_t{256} << 10;
// More columns than this gain nothing: 16 complex values are two cache lines of each row.
constexpr int64_t kMaxColumnBlock = 16;

// Scratch of each thread of the pool, aligned as FFTW's planning arrays (fftwf_malloc), kept for
// the thread's life so that no pass allocates.
struct Scratch {
  FftwFloats real;
  FftwComplex complex;
  size_t realCount = 0, complexCount = 0;
};

float* scratchReal(size_t n) {
  thread_local Scratch s;
  if (s.realCount < n) {
    s.real = allocFloats(n);
    s.realCount = n;
  }
  return s.real.get();
}

fftwf_complex* scratchComplex(size_t n) {
  thread_local Scratch s;
  if (s.complexCount < n) {
    s.complex = allocComplex(n);
    s.complexCount = n;
  }
  return s.complex.get();
}

int64_t columnBlockWidth(int64_t y) {
  int64_t w = 1;
  while (w < kMaxColumnBlock && 2 * w * y * int64_t(sizeof(fftwf_complex)) <= kColumnBlockBytes)
    w *= 2;
  return w;
}

}  // namespace

RowColumnFft::RowColumnFft(int64_t y, int64_t x, ThreadPool& pool)
    : y_(y),
      x_(x),
      xc_(x / 2 + 1),
      width_(columnBlockWidth(y)),
      blocks_((xc_ + width_ - 1) / width_),
      plans_(&rowColumnPlans(y, x, width_)),
      pool_(pool) {}

size_t RowColumnFft::blockedCount() const { return size_t(blocks_ * y_ * width_); }

// Block b holds columns b · width … as y rows of width values; a last, narrower block is padded
// with zeros.
void RowColumnFft::toColumnBlocks(const fftwf_complex* spectrum, fftwf_complex* blocked) const {
  for (int64_t b = 0; b < blocks_; ++b) {
    const int64_t c0 = b * width_, w = std::min(width_, xc_ - c0);
    for (int64_t i = 0; i < y_; ++i) {
      fftwf_complex* to = blocked + (b * y_ + i) * width_;
      std::memcpy(to, spectrum + i * xc_ + c0, size_t(w) * sizeof(fftwf_complex));
      float* values = reinterpret_cast<float*>(to);
      std::fill(values + 2 * w, values + 2 * width_, 0.f);
    }
  }
}

void RowColumnFft::rows(fftwf_complex* spectrum, bool inverse, bool forward,
                        const std::function<void(int64_t, float*)>& f) const {
  pool_.parallelFor(y_, [&](int64_t r0, int64_t r1) {
    float* row = scratchReal(size_t(x_));
    fftwf_complex* half = scratchComplex(size_t(xc_));
    for (int64_t i = r0; i < r1; ++i) {
      fftwf_complex* line = spectrum + i * xc_;
      if (inverse) {
        std::memcpy(half, line, size_t(xc_) * sizeof(fftwf_complex));
        fftwf_execute_dft_c2r(plans_->rowBackward, half, row);
      }
      f(i, row);
      if (forward) {
        fftwf_execute_dft_r2c(plans_->rowForward, row, half);
        std::memcpy(line, half, size_t(xc_) * sizeof(fftwf_complex));
      }
    }
  });
}

void RowColumnFft::filterColumns(fftwf_complex* spectrum, const fftwf_complex* blocked,
                                 bool conjugate) const {
  pool_.parallelFor(blocks_, [&](int64_t b0, int64_t b1) {
    fftwf_complex* block = scratchComplex(size_t(y_ * width_));
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t c0 = b * width_, w = std::min(width_, xc_ - c0);
      for (int64_t i = 0; i < y_; ++i) {
        std::memcpy(block + i * width_, spectrum + i * xc_ + c0, size_t(w) * sizeof(fftwf_complex));
        float* values = reinterpret_cast<float*>(block + i * width_);
        if (w < width_) std::fill(values + 2 * w, values + 2 * width_, 0.f);
      }
      fftwf_execute_dft(plans_->columnForward, block, block);
      rl::multiplySpectrum(reinterpret_cast<float*>(block),
                           reinterpret_cast<const float*>(blocked + b * y_ * width_),
                           size_t(y_ * width_), conjugate);
      fftwf_execute_dft(plans_->columnBackward, block, block);
      for (int64_t i = 0; i < y_; ++i)
        std::memcpy(spectrum + i * xc_ + c0, block + i * width_, size_t(w) * sizeof(fftwf_complex));
    }
  });
}

}  // namespace stacklens::compute::cpu
