// deconvolveResident: the layout's tables, the frames filled from the domain slab by slab, the
// steps and exchanges, then each block's interior written.
#include "compute/blocked/resident_run.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "compute/cpu/reflect_index.h"
#include "compute/cpu/thread_pool.h"
#include "compute/rl_psf.h"

namespace stacklens::compute {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

int64_t along(const Shape& s, int a) { return a == 0 ? s.z : a == 1 ? s.y : s.x; }
int64_t from(const Box& b, int a) { return a == 0 ? b.z0 : a == 1 ? b.y0 : b.x0; }
int64_t to(const Box& b, int a) { return a == 0 ? b.z1 : a == 1 ? b.y1 : b.x1; }

// The block's grid position along axis a.
int64_t gridIndex(const BlockPlan& plan, size_t b, int a) {
  const Shape c = plan.counts;
  const int64_t i = int64_t(b);
  return a == 0 ? i / (c.y * c.x) : a == 1 ? (i / c.x) % c.y : i % c.x;
}

// The domain coordinate a frame coordinate reads along axis a: round the domain where it wraps
// (the unblocked run's FFT is periodic over it), mirrored at the volume's faces for
// reflect-exact (its cosine transforms see the data so).
int64_t sourceOf(const BlockPlan& plan, int a, int64_t g) {
  const int64_t d0 = from(plan.domain, a), n = to(plan.domain, a) - d0;
  if (plan.boundary == Boundary::ReflectExact) return cpu::reflectIndex(g, along(plan.volume, a));
  return d0 + ((g - d0) % n + n) % n;
}

// Per block and axis, the domain coordinate of each frame index.
std::vector<std::array<std::vector<int64_t>, 3>> sourcesOf(const BlockPlan& plan) {
  std::vector<std::array<std::vector<int64_t>, 3>> s(plan.blocks.size());
  for (size_t b = 0; b < plan.blocks.size(); ++b)
    for (int a = 0; a < 3; ++a)
      for (int64_t g = from(plan.blocks[b].frame, a); g < to(plan.blocks[b].frame, a); ++g)
        s[b][size_t(a)].push_back(sourceOf(plan, a, g));
  return s;
}

}  // namespace

ResidentLayout residentLayout(const BlockPlan& plan) {
  ResidentLayout layout;
  layout.frame = plan.frame;
  layout.counts = plan.counts;
  const auto sources = sourcesOf(plan);
  // Along each axis, the blocks of grid position j: interior bounds and frame start.
  std::array<std::vector<int64_t>, 3> interiorFrom, interiorTo, frameFrom;
  for (int a = 0; a < 3; ++a)
    for (size_t b = 0; b < plan.blocks.size(); ++b)
      if (gridIndex(plan, b, (a + 1) % 3) == 0 && gridIndex(plan, b, (a + 2) % 3) == 0) {
        interiorFrom[size_t(a)].push_back(from(plan.blocks[b].interior, a));
        interiorTo[size_t(a)].push_back(to(plan.blocks[b].interior, a));
        frameFrom[size_t(a)].push_back(from(plan.blocks[b].frame, a));
      }
  for (size_t b = 0; b < plan.blocks.size(); ++b) {
    std::array<ResidentLayout::Axis, 3> axes;
    for (int a = 0; a < 3; ++a) {
      ResidentLayout::Axis& axis = axes[size_t(a)];
      const Box& frame = plan.blocks[b].frame;
      axis.interiorFrom = from(plan.blocks[b].interior, a) - from(frame, a);
      axis.interiorTo = to(plan.blocks[b].interior, a) - from(frame, a);
      const std::vector<int64_t>& lo = interiorFrom[size_t(a)];
      const std::vector<int64_t>& hi = interiorTo[size_t(a)];
      for (int64_t c : sources[b][size_t(a)]) {
        size_t j = 0;
        while (j + 1 < lo.size() && c >= hi[j]) ++j;
        if (c < lo[j] || c >= hi[j])
          throw InvalidArgument("blocked deconvolution: the resident plan's interiors leave a gap");
        axis.ownerBlock.push_back(int32_t(j));
        axis.ownerIndex.push_back(int32_t(c - frameFrom[size_t(a)][j]));
      }
    }
    layout.blocks.push_back(std::move(axes));
  }
  return layout;
}

BlockedRunReport deconvolveResident(Backend& backend, const BoxReader& read, const BoxWriter& write,
                                    const Image& psf, const DeconvolveParams& p,
                                    const BlockPlan& plan, const Job& job) {
  if (plan.scheme != BlockScheme::Resident)
    throw InvalidArgument("blocked deconvolution: the plan's frames are not resident");
  validate(p);
  const auto started = Clock::now();
  BlockedRunReport report;
  report.blocks = int(plan.count());
  report.workers.resize(1);
  WorkerReport& worker = report.workers[0];
  worker.device = backend.deviceName();
  DeconvolveParams frameParams = p;
  frameParams.boundary = Boundary::Periodic;
  const ResidentLayout layout = residentLayout(plan);
  backend.device().bindToThisThread();
  std::unique_ptr<ResidentRlFrames> frames =
      backend.residentRlFrames(layout, rlPsf(psf, p), frameParams);
  if (!frames)
    throw InvalidArgument("blocked deconvolution: the " + backend.name() +
                          " backend keeps no resident frames of " + plan.frames());
  cpu::ThreadPool pool(0);

  // Fill: each domain plane is read once; every frame plane that reads it is filled from it.
  auto t = Clock::now();
  const auto sources = sourcesOf(plan);
  const Box& d = plan.domain;
  const Shape ds = d.shape(), f = plan.frame;
  const int64_t slab = std::max<int64_t>(1, plan.slabSlices);
  std::vector<float> planes(size_t(slab * ds.y * ds.x)), framePlane(size_t(f.y * f.x));
  const int64_t firstPlane = plan.boundary == Boundary::ReflectExact ? 0 : d.z0;
  const int64_t lastPlane = plan.boundary == Boundary::ReflectExact ? plan.volume.z : d.z1;
  for (int64_t c0 = firstPlane; c0 < lastPlane; c0 += slab) {
    job.checkCancelled();
    const int64_t c1 = std::min(lastPlane, c0 + slab);
    const Box box{c0, c1, d.y0, d.y1, d.x0, d.x1};
    readWithBoundary(read, plan.volume, plan.boundary, box, planes.data());
    for (float& v : planes)
      if (!std::isfinite(v)) v = 0.f;
    for (size_t b = 0; b < plan.blocks.size(); ++b) {
      const auto& s = sources[b];
      for (int64_t z = 0; z < f.z; ++z) {
        const int64_t c = s[0][size_t(z)];
        if (c < c0 || c >= c1) continue;
        const float* plane = planes.data() + (c - c0) * ds.y * ds.x;
        pool.parallelFor(f.y, [&](int64_t y0, int64_t y1) {
          for (int64_t y = y0; y < y1; ++y) {
            const float* row = plane + (s[1][size_t(y)] - d.y0) * ds.x - d.x0;
            float* out = framePlane.data() + y * f.x;
            for (int64_t x = 0; x < f.x; ++x) out[x] = row[s[2][size_t(x)]];
          }
        });
        frames->load(int64_t(b), z, 1, framePlane.data());
      }
    }
  }
  report.readSeconds = worker.readSeconds = secondsSince(t);

  // Iterate: every block steps, then the halos are brought up to date.
  t = Clock::now();
  const int64_t blocks = plan.count();
  for (int k = 0; k < p.iterations; ++k) {
    for (int64_t b = 0; b < blocks; ++b) {
      job.checkCancelled();
      frames->step(b);
      job.report((double(k) + double(b + 1) / double(blocks)) / p.iterations);
    }
    if (k + 1 < p.iterations) frames->exchange();
  }
  report.computeSeconds = worker.computeSeconds = secondsSince(t);

  // Write: each block's interior within the volume, slab by slab, where the input is finite.
  t = Clock::now();
  for (size_t b = 0; b < plan.blocks.size(); ++b) {
    const Block& block = plan.blocks[b];
    const Box& in = block.interior;
    const Box part{std::max<int64_t>(in.z0, 0), std::min(in.z1, plan.volume.z),
                   std::max<int64_t>(in.y0, 0), std::min(in.y1, plan.volume.y),
                   std::max<int64_t>(in.x0, 0), std::min(in.x1, plan.volume.x)};
    if (part.z0 >= part.z1 || part.y0 >= part.y1 || part.x0 >= part.x1) continue;
    const Shape e = part.shape();
    std::vector<float> result(size_t(std::min(slab, e.z) * e.y * e.x)), input(result.size());
    for (int64_t z = part.z0; z < part.z1; z += slab) {
      job.checkCancelled();
      const Box piece{z, std::min(part.z1, z + slab), part.y0, part.y1, part.x0, part.x1};
      const Shape pe = piece.shape();
      frames->read(
          int64_t(b),
          {piece.z0 - block.frame.z0, piece.y0 - block.frame.y0, piece.x0 - block.frame.x0}, pe,
          result.data());
      read(piece, input.data());
      const int64_t n = pe.count();
      for (int64_t i = 0; i < n; ++i)
        if (!std::isfinite(input[size_t(i)])) result[size_t(i)] = input[size_t(i)];
      write(piece, result.data());
    }
    ++worker.blocks;
  }
  report.writeSeconds = worker.writeSeconds = secondsSince(t);
  worker.finishedAt = report.releasedAt = secondsSince(started);
  return report;
}

}  // namespace stacklens::compute
