// A real FFT as slab and column passes with work fused into them (see slab_column_fft.h).
#include "compute/cpu/slab_column_fft.h"

#include <algorithm>
#include <cstring>

#include "compute/cpu/rl_kernels.h"

namespace stacklens::compute::cpu {
namespace {

// A block of columns stays in the core's L2 cache from its forward transform to its inverse.
constexpr int64_t kColumnBlockBytes = int64_t{256} << 10;
// More columns than this gain nothing: 16 complex values are two cache lines of each slab.
constexpr int64_t kMaxColumnBlock = 16;

// Scratch of each thread of the pool, aligned as FFTW's planning arrays (fftwf_malloc), kept for
// the thread's life so that no pass allocates: at least n values of what allocate(n) returns.
template <auto allocate>
auto* threadScratch(size_t n) {
  thread_local decltype(allocate(0)) buffer;
  thread_local size_t count = 0;
  if (count < n) {
    buffer = allocate(n);
    count = n;
  }
  return buffer.get();
}

float* scratchReal(size_t n) { return threadScratch<allocFloats>(n); }
fftwf_complex* scratchComplex(size_t n) { return threadScratch<allocComplex>(n); }

int64_t columnBlockWidth(int64_t length) {
  int64_t w = 1;
  while (w < kMaxColumnBlock &&
         2 * w * length * int64_t(sizeof(fftwf_complex)) <= kColumnBlockBytes)
    w *= 2;
  return w;
}

// The columns [c0, c0 + w) of the spectrum (`slabs` rows of `columns` values) into a block of
// `width` interleaved columns, the rest of the block zero; and back.
void gather(const fftwf_complex* spectrum, int64_t slabs, int64_t columns, int64_t c0, int64_t w,
            int64_t width, fftwf_complex* block) {
  for (int64_t s = 0; s < slabs; ++s) {
    fftwf_complex* to = block + s * width;
    std::memcpy(to, spectrum + s * columns + c0, size_t(w) * sizeof(fftwf_complex));
    float* values = reinterpret_cast<float*>(to);
    std::fill(values + 2 * w, values + 2 * width, 0.f);
  }
}

void scatter(const fftwf_complex* block, int64_t slabs, int64_t columns, int64_t c0, int64_t w,
             int64_t width, fftwf_complex* spectrum) {
  for (int64_t s = 0; s < slabs; ++s)
    std::memcpy(spectrum + s * columns + c0, block + s * width, size_t(w) * sizeof(fftwf_complex));
}

}  // namespace

SlabColumnFft::SlabColumnFft(int64_t z, int64_t y, int64_t x, ThreadPool& pool)
    : slabs_(z == 1 ? y : z),
      slabReal_(z == 1 ? x : y * x),
      columns_(z == 1 ? x / 2 + 1 : y * (x / 2 + 1)),
      width_(columnBlockWidth(slabs_)),
      blocks_((columns_ + width_ - 1) / width_),
      plans_(&slabColumnPlans(z, y, x, width_)),
      pool_(pool) {}

size_t SlabColumnFft::blockedCount() const { return size_t(blocks_ * slabs_ * width_); }

void SlabColumnFft::toColumnBlocks(const fftwf_complex* spectrum, fftwf_complex* blocked) const {
  for (int64_t b = 0; b < blocks_; ++b) {
    const int64_t c0 = b * width_;
    gather(spectrum, slabs_, columns_, c0, std::min(width_, columns_ - c0), width_,
           blocked + b * slabs_ * width_);
  }
}

void SlabColumnFft::slabs(fftwf_complex* spectrum, bool inverse, bool forward,
                          const std::function<void(int64_t, float*)>& f) const {
  pool_.parallelFor(slabs_, [&](int64_t s0, int64_t s1) {
    float* values = scratchReal(size_t(slabReal_));
    fftwf_complex* half = scratchComplex(size_t(columns_));
    for (int64_t s = s0; s < s1; ++s) {
      fftwf_complex* part = spectrum + s * columns_;
      if (inverse) {
        std::memcpy(half, part, size_t(columns_) * sizeof(fftwf_complex));
        fftwf_execute_dft_c2r(plans_->slabBackward, half, values);
      }
      f(s, values);
      if (forward) {
        fftwf_execute_dft_r2c(plans_->slabForward, values, half);
        std::memcpy(part, half, size_t(columns_) * sizeof(fftwf_complex));
      }
    }
  });
}

void SlabColumnFft::filterColumns(fftwf_complex* spectrum, const fftwf_complex* blocked,
                                  bool conjugate) const {
  pool_.parallelFor(blocks_, [&](int64_t b0, int64_t b1) {
    fftwf_complex* block = scratchComplex(size_t(slabs_ * width_));
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t c0 = b * width_, w = std::min(width_, columns_ - c0);
      gather(spectrum, slabs_, columns_, c0, w, width_, block);
      fftwf_execute_dft(plans_->columnForward, block, block);
      rl::multiplySpectrum(reinterpret_cast<float*>(block),
                           reinterpret_cast<const float*>(blocked + b * slabs_ * width_),
                           size_t(slabs_ * width_), conjugate);
      fftwf_execute_dft(plans_->columnBackward, block, block);
      scatter(block, slabs_, columns_, c0, w, width_, spectrum);
    }
  });
}

}  // namespace stacklens::compute::cpu
