// deconvolveExchanging: the domain arrays, then per iteration every block's frame filled, stepped
// once and its interior kept; acceleration between iterations; the result written at the end.
#include "compute/blocked/exchange_run.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "compute/cpu/fft_plan_cache.h"
#include "compute/cpu/reflect_index.h"
#include "compute/cpu/rl_deconvolver.h"
#include "compute/cpu/rl_extrapolation.h"
#include "compute/cpu/thread_pool.h"
#include "compute/rl_psf.h"

namespace stacklens::compute {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Where each sample of a frame reads the domain, per axis.
struct FrameSources {
  std::vector<int64_t> z, y, x;
};

class ExchangeRun {
 public:
  ExchangeRun(Backend& cpu, const BoxReader& read, const BoxWriter& write, const Image& psf,
              const DeconvolveParams& p, const BlockPlan& plan, const Job& job)
      : read_(read),
        write_(write),
        p_(p),
        plan_(plan),
        job_(job),
        pool_(cpu.threads()),
        psf_(rlPsf(psf, p)),
        domain_(plan.domain.shape()),
        count_(size_t(domain_.count())) {
    // The frames wrap (or mirror) round themselves: each step is periodic over its frame.
    frameParams_ = p;
    frameParams_.boundary = Boundary::Periodic;
    report_.blocks = int(plan.count());
    report_.workers.resize(1);
    report_.workers[0].device = cpu.deviceName();
  }

  BlockedRunReport run() {
    const auto started = Clock::now();
    allocate();
    auto t = Clock::now();
    readImage();
    report_.readSeconds = secondsSince(t);
    t = Clock::now();
    iterate();
    report_.computeSeconds = secondsSince(t);
    t = Clock::now();
    writeResult();
    report_.writeSeconds = secondsSince(t);
    WorkerReport& w = report_.workers[0];
    w.blocks = report_.blocks;
    w.readSeconds = report_.readSeconds;
    w.computeSeconds = report_.computeSeconds;
    w.writeSeconds = report_.writeSeconds;
    w.finishedAt = report_.releasedAt = secondsSince(started);
    return report_;
  }

 private:
  void allocate() {
    image_ = cpu::allocFloats(count_);
    estimate_ = cpu::allocFloats(count_);
    next_ = cpu::allocFloats(count_);
    if (p_.accelerate) {
      previous_ = cpu::allocFloats(count_);
      change_ = cpu::allocFloats(count_);
      changePrevious_ = cpu::allocFloats(count_);
    }
  }

  int64_t slab() const { return std::max<int64_t>(1, plan_.slabSlices); }

  // The observed image over the domain, slab by slab: outside the volume by the boundary rule
  // (as the unblocked run pads its frame), non-finite values as 0.
  void readImage() {
    const Box& d = plan_.domain;
    const int64_t plane = domain_.y * domain_.x;
    for (int64_t z = 0; z < domain_.z; z += slab()) {
      job_.checkCancelled();
      const int64_t slices = std::min(slab(), domain_.z - z);
      pool_.parallelFor(slices, [&](int64_t s0, int64_t s1) {
        for (int64_t s = s0; s < s1; ++s) {
          const Box part{d.z0 + z + s, d.z0 + z + s + 1, d.y0, d.y1, d.x0, d.x1};
          float* slice = image_.get() + (z + s) * plane;
          readWithBoundary(read_, plan_.volume, plan_.boundary, part, slice);
          for (int64_t i = 0; i < plane; ++i)
            if (!std::isfinite(slice[i])) slice[i] = 0.f;
        }
      });
    }
    std::memcpy(estimate_.get(), image_.get(), count_ * sizeof(float));
    if (p_.accelerate) std::memcpy(previous_.get(), image_.get(), count_ * sizeof(float));
  }

  // The domain index each frame sample reads along one axis: round the domain where it wraps
  // (the unblocked run's FFT is periodic over it), mirrored at the volume's faces for
  // reflect-exact (its cosine transforms see the data so).
  std::vector<int64_t> axisSources(int64_t from, int64_t to, int64_t domainStart, int64_t length,
                                   int64_t n) const {
    std::vector<int64_t> s;
    for (int64_t i = from; i < to; ++i)
      s.push_back(plan_.boundary == Boundary::ReflectExact
                      ? cpu::reflectIndex(i, n)
                      : ((i - domainStart) % length + length) % length);
    return s;
  }

  FrameSources sourcesOf(const Block& b) const {
    const Box& d = plan_.domain;
    const Shape v = plan_.volume;
    return {axisSources(b.frame.z0, b.frame.z1, d.z0, domain_.z, v.z),
            axisSources(b.frame.y0, b.frame.y1, d.y0, domain_.y, v.y),
            axisSources(b.frame.x0, b.frame.x1, d.x0, domain_.x, v.x)};
  }

  // frame ← the domain array at the frame's samples.
  void gather(const float* from, const FrameSources& s, float* frame) {
    const int64_t fy = int64_t(s.y.size()), fx = int64_t(s.x.size());
    pool_.parallelFor(int64_t(s.z.size()) * fy, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const float* row =
            from + (s.z[size_t(r / fy)] * domain_.y + s.y[size_t(r % fy)]) * domain_.x;
        float* out = frame + r * fx;
        for (int64_t x = 0; x < fx; ++x) out[x] = row[s.x[size_t(x)]];
      }
    });
  }

  // The block's interior of the frame → the domain array.
  void scatter(const float* frame, const Block& b, float* to) {
    const Box& d = plan_.domain;
    const Shape f = b.frame.shape(), in = b.interior.shape();
    pool_.parallelFor(in.z * in.y, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t z = b.interior.z0 + r / in.y, y = b.interior.y0 + r % in.y;
        const float* src = frame + ((z - b.frame.z0) * f.y + (y - b.frame.y0)) * f.x +
                           (b.interior.x0 - b.frame.x0);
        float* dst =
            to + ((z - d.z0) * domain_.y + (y - d.y0)) * domain_.x + (b.interior.x0 - d.x0);
        std::memcpy(dst, src, size_t(in.x) * sizeof(float));
      }
    });
  }

  // One deconvolver for each frame shape (its OTF and plans are made once).
  cpu::Deconvolver& deconvolverFor(Shape f) {
    auto& d = deconvolvers_[{f.z, f.y, f.x}];
    if (!d) d = std::make_unique<cpu::Deconvolver>(f, psf_, frameParams_, pool_);
    return *d;
  }

  void iterate() {
    std::vector<FrameSources> sources;
    for (const Block& b : plan_.blocks) sources.push_back(sourcesOf(b));
    const size_t blocks = plan_.blocks.size();
    cpu::Extrapolation extrapolation(count_, pool_);
    for (int k = 0; k < p_.iterations; ++k) {
      for (size_t i = 0; i < blocks; ++i) {
        job_.checkCancelled();
        const Block& b = plan_.blocks[i];
        cpu::Deconvolver& d = deconvolverFor(b.frame.shape());
        gather(image_.get(), sources[i], d.image());
        gather(estimate_.get(), sources[i], d.estimate());
        d.step(job_);
        scatter(d.estimate(), b, next_.get());
        if (p_.accelerate) scatter(d.change(), b, change_.get());
        job_.report((double(k) + double(i + 1) / double(blocks)) / p_.iterations);
      }
      std::swap(estimate_, next_);
      if (p_.accelerate && k + 1 < p_.iterations) {
        extrapolation.apply(estimate_.get(), previous_.get(), change_.get(), changePrevious_.get());
        std::swap(change_, changePrevious_);
      }
    }
  }

  // The volume's part of the estimate, slab by slab; where the input is not finite, the input.
  void writeResult() {
    const Shape v = plan_.volume;
    const Box& d = plan_.domain;
    std::vector<float> out(size_t(slab() * v.y * v.x));
    for (int64_t z = 0; z < v.z; z += slab()) {
      job_.checkCancelled();
      const Box part{z, std::min(v.z, z + slab()), 0, v.y, 0, v.x};
      read_(part, out.data());
      const Shape s = part.shape();
      pool_.parallelFor(s.z * s.y, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
          const int64_t zz = z + r / s.y, y = r % s.y;
          const float* est =
              estimate_.get() + ((zz - d.z0) * domain_.y + (y - d.y0)) * domain_.x - d.x0;
          float* row = out.data() + r * s.x;
          for (int64_t x = 0; x < s.x; ++x)
            if (std::isfinite(row[x])) row[x] = est[x];
        }
      });
      write_(part, out.data());
    }
  }

  const BoxReader& read_;
  const BoxWriter& write_;
  const DeconvolveParams& p_;
  DeconvolveParams frameParams_;
  const BlockPlan& plan_;
  const Job& job_;
  cpu::ThreadPool pool_;
  const Image psf_;
  const Shape domain_;
  const size_t count_;
  cpu::FftwFloats image_, estimate_, next_, previous_, change_, changePrevious_;
  std::map<std::tuple<int64_t, int64_t, int64_t>, std::unique_ptr<cpu::Deconvolver>> deconvolvers_;
  BlockedRunReport report_;
};

}  // namespace

BlockedRunReport deconvolveExchanging(Backend& cpu, const BoxReader& read, const BoxWriter& write,
                                      const Image& psf, const DeconvolveParams& p,
                                      const BlockPlan& plan, const Job& job) {
  if (plan.scheme != BlockScheme::Exchange)
    throw InvalidArgument("blocked deconvolution: the plan's blocks do not exchange halos");
  if (cpu.name() != "cpu")
    throw InvalidArgument("blocked deconvolution: blocks that exchange halos run on the CPU");
  validate(p);
  const Shape k = plan.psf, v = plan.volume;
  if (p.boundary == Boundary::Periodic && (k.z > v.z || k.y > v.y || k.x > v.x))
    throw InvalidArgument(
        "blocked deconvolution: the PSF is larger than the volume for periodic "
        "boundaries");
  return ExchangeRun(cpu, read, write, psf, p, plan, job).run();
}

}  // namespace stacklens::compute
