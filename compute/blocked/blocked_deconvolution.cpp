// Block by block: read (with wrapped halos for periodic runs), deconvolve, keep the interior.
#include "compute/blocked/blocked_deconvolution.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <future>
#include <vector>

namespace stacklens::compute {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

int64_t wrap(int64_t i, int64_t n) { return ((i % n) + n) % n; }

// The pieces of [a, b) on an axis of length n, each inside the volume: (volume start, length,
// offset in the box).
struct Piece {
  int64_t start, length, offset;
};
std::vector<Piece> pieces(int64_t a, int64_t b, int64_t n) {
  std::vector<Piece> out;
  for (int64_t i = a; i < b;) {
    const int64_t start = wrap(i, n);
    const int64_t length = std::min(b - i, n - start);
    out.push_back({start, length, i - a});
    i += length;
  }
  return out;
}

// Reads a box that may reach past the volume's faces (periodic halos) as up to eight boxes inside.
Image readBlock(const BoxReader& read, const Box& box, Shape volume) {
  const Shape s = box.shape();
  Image out = Image::hostUninitialized(s);
  const bool inside = box.z0 >= 0 && box.y0 >= 0 && box.x0 >= 0 && box.z1 <= volume.z &&
                      box.y1 <= volume.y && box.x1 <= volume.x;
  if (inside) {
    read(box, out.data());
    return out;
  }
  for (const Piece& pz : pieces(box.z0, box.z1, volume.z))
    for (const Piece& py : pieces(box.y0, box.y1, volume.y))
      for (const Piece& px : pieces(box.x0, box.x1, volume.x)) {
        const Box part{pz.start, pz.start + pz.length, py.start, py.start + py.length,
                       px.start, px.start + px.length};
        std::vector<float> tmp(static_cast<size_t>(part.shape().count()));
        read(part, tmp.data());
        for (int64_t z = 0; z < pz.length; ++z)
          for (int64_t y = 0; y < py.length; ++y)
            std::memcpy(out.data() + ((pz.offset + z) * s.y + py.offset + y) * s.x + px.offset,
                        tmp.data() + (z * py.length + y) * px.length,
                        static_cast<size_t>(px.length) * sizeof(float));
      }
  return out;
}

}  // namespace

BlockedRunReport deconvolveBlocked(Backend& backend, const BoxReader& read, const BoxWriter& write,
                                   const Image& psf, const DeconvolveParams& p,
                                   const BlockPlan& plan, const Job& job) {
  if (!p.threeD) throw InvalidArgument("blocked deconvolution is 3D: set threeD");
  if (plan.blocks.empty()) throw InvalidArgument("blocked deconvolution: the plan has no blocks");
  DeconvolveParams blockParams = p;
  // Wrapped halos carry a periodic run's continuity; past them the block's frame reflects.
  if (plan.count() > 1 && p.boundary == Boundary::Periodic)
    blockParams.boundary = Boundary::Reflect;
  BlockedRunReport report;
  const size_t n = plan.blocks.size();
  auto readAt = [&](size_t k) {
    const auto t = Clock::now();
    Image block = readBlock(read, plan.blocks[k].read, plan.volume);
    return std::make_pair(std::move(block), secondsSince(t));
  };
  std::future<std::pair<Image, double>> next = std::async(std::launch::async, readAt, 0);
  for (size_t k = 0; k < n; ++k) {
    job.checkCancelled();
    auto [input, readSeconds] = next.get();
    report.readSeconds += readSeconds;
    if (k + 1 < n) next = std::async(std::launch::async, readAt, k + 1);
    const Block& b = plan.blocks[k];
    const auto t = Clock::now();
    const Job blockJob(job.cancelFlag(), [&](double f) { job.report((double(k) + f) / n); });
    const Image result =
        backend.download(backend.richardsonLucy(backend.upload(input), psf, blockParams, blockJob));
    report.computeSeconds += secondsSince(t);
    // Keep the interior: the rows of the result that lie inside it.
    const auto w = Clock::now();
    const Shape r = b.read.shape(), in = b.interior.shape();
    std::vector<float> interior(static_cast<size_t>(in.count()));
    for (int64_t z = 0; z < in.z; ++z)
      for (int64_t y = 0; y < in.y; ++y)
        std::memcpy(
            interior.data() + (z * in.y + y) * in.x,
            result.data() +
                ((z + b.interior.z0 - b.read.z0) * r.y + y + b.interior.y0 - b.read.y0) * r.x +
                (b.interior.x0 - b.read.x0),
            static_cast<size_t>(in.x) * sizeof(float));
    write(b.interior, interior.data());
    report.writeSeconds += secondsSince(w);
    ++report.blocks;
    job.report(double(k + 1) / n);
  }
  return report;
}

BoxReader boxReader(const Image& volume) {
  if (!volume.onHost())
    throw InvalidArgument("blocked deconvolution: the volume must be on the host");
  return [&volume](const Box& box, float* out) {
    const Shape s = volume.shape(), b = box.shape();
    for (int64_t z = 0; z < b.z; ++z)
      for (int64_t y = 0; y < b.y; ++y)
        std::memcpy(out + (z * b.y + y) * b.x,
                    volume.data() + ((box.z0 + z) * s.y + box.y0 + y) * s.x + box.x0,
                    static_cast<size_t>(b.x) * sizeof(float));
  };
}

Image deconvolveBlocked(Backend& backend, const Image& volume, const Image& psf,
                        const DeconvolveParams& p, const BlockPlan& plan, const Job& job,
                        BlockedRunReport* report) {
  if (!volume.onHost())
    throw InvalidArgument("blocked deconvolution: the volume must be on the host");
  const Shape s = volume.shape();
  if (!(s == plan.volume))
    throw InvalidArgument("blocked deconvolution: the plan is for another volume");
  Image out = Image::hostUninitialized(s);
  out.spacing = volume.spacing;
  // Each interior into its place in the output volume.
  auto write = [&](const Box& box, const float* data) {
    const Shape b = box.shape();
    for (int64_t z = 0; z < b.z; ++z)
      for (int64_t y = 0; y < b.y; ++y)
        std::memcpy(out.data() + ((box.z0 + z) * s.y + box.y0 + y) * s.x + box.x0,
                    data + (z * b.y + y) * b.x, static_cast<size_t>(b.x) * sizeof(float));
  };
  const BlockedRunReport r =
      deconvolveBlocked(backend, boxReader(volume), write, psf, p, plan, job);
  if (report) *report = r;
  return out;
}

}  // namespace stacklens::compute
