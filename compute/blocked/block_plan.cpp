// planBlocks: interior sizes from the memory budget, halos from the PSF.
#include "compute/blocked/block_plan.h"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <sstream>

namespace stacklens::compute {
namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The blocks along one axis: n pieces of ceil(length / n) or one less.
std::vector<std::pair<int64_t, int64_t>> cuts(int64_t length, int64_t n) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (int64_t i = 0; i < n; ++i) out.push_back({length * i / n, length * (i + 1) / n});
  return out;
}

}  // namespace

size_t defaultHostBudget() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(page) / 2
                               : size_t(4) << 30;
}

size_t frameBytesPerVoxel(const std::string& backend, const DeconvolveParams& p) {
  // Image, estimate, work (4 B each), spectrum and OTF (about 4 B each per real voxel), plus for
  // CUDA cuFFT's work area (about 8); acceleration keeps three more arrays, TV one.
  size_t b = 4 * 3 + 4 * 2 + (backend == "cuda" ? 8 : 0);
  if (p.tvLambda > 0) b += 4;
  if (p.accelerate) b += 4 * 3;
  return b;
}

size_t blockBytes(Shape read, Shape psf, const DeconvolveParams& p, size_t bytesPerFrameVoxel) {
  // The frame pads each axis by the PSF (half on each side) and rounds up to an FFT-friendly
  // length: about 10 % more.
  const bool periodic = p.boundary == Boundary::Periodic;
  auto frame = [&](int64_t n, int64_t k) {
    return periodic ? double(n) : std::ceil((n + k) * 1.1);
  };
  const double frameVoxels = frame(read.z, psf.z) * frame(read.y, psf.y) * frame(read.x, psf.x);
  const double data = 2.0 * 4.0 * double(read.count());  // the block in and its result out
  return static_cast<size_t>(frameVoxels * double(bytesPerFrameVoxel) + data);
}

double BlockPlan::work(int iterations) const {
  double total = 0;
  for (const Block& b : blocks) {
    const Shape r = b.read.shape();
    total += double(r.z + psf.z) * double(r.y + psf.y) * double(r.x + psf.x);
  }
  return total * iterations;
}

std::string BlockPlan::describe(int iterations) const {
  std::ostringstream o;
  const double unblocked =
      double(volume.z + psf.z) * double(volume.y + psf.y) * double(volume.x + psf.x) * iterations;
  o << "volume " << volume.z << " x " << volume.y << " x " << volume.x << ", PSF " << psf.z << " x "
    << psf.y << " x " << psf.x << ", halo " << halo.z << " x " << halo.y << " x " << halo.x << "\n"
    << "blocks " << count() << " (" << counts.z << " x " << counts.y << " x " << counts.x
    << "), interior up to " << interior.z << " x " << interior.y << " x " << interior.x << "\n"
    << "memory per block about " << (bytesPerBlock >> 20) << " MiB of a budget of "
    << (budget >> 20) << " MiB\n";
  if (hostBytesPerBlock) {
    o << "host memory per block about " << (hostBytesPerBlock >> 20) << " MiB";
    if (wholeSlices) o << " (" << slabSlices << " slices kept)";
    o << "\n";
  }
  o << "work " << work(iterations) / unblocked << " x the unblocked run's (halos and padding)\n";
  return o.str();
}

BlockPlan planBlocks(Shape volume, Shape psf, const DeconvolveParams& p, size_t budgetBytes,
                     size_t bytesPerFrameVoxel, Shape halo, Shape maxInterior, size_t slabBytes,
                     bool wholeSlices) {
  if (volume.empty()) throw InvalidArgument("blocked deconvolution: the volume is empty");
  if (psf.empty()) throw InvalidArgument("blocked deconvolution: the PSF is empty");
  BlockPlan plan;
  plan.volume = volume;
  plan.psf = psf;
  plan.budget = budgetBytes;
  plan.wholeSlices = wholeSlices;
  // At least half the PSF on each side by default: every interior voxel's blurred value then
  // comes from real data.
  plan.halo = {halo.z < 0 ? ceilDiv(psf.z, 2) : halo.z, halo.y < 0 ? ceilDiv(psf.y, 2) : halo.y,
               halo.x < 0 ? ceilDiv(psf.x, 2) : halo.x};
  const Shape h = plan.halo;
  const bool periodic = p.boundary == Boundary::Periodic;
  // Reading, the host holds per block three copies of its box (its input, the next block's read
  // ahead, its result) and the whole slices it reads (slab reader) or one band of its rows (row
  // reader): hostNeed must fit slabBytes.
  const int64_t sliceBytes = volume.y * volume.x * int64_t(sizeof(float));
  auto hostNeed = [&](Shape read) {
    const size_t reading = wholeSlices ? size_t(read.z) * size_t(sliceBytes)
                                       : size_t(read.y * volume.x) * sizeof(float);
    return reading + 3 * size_t(read.count()) * sizeof(float);
  };
  const Shape start{maxInterior.z > 0 ? ceilDiv(volume.z, maxInterior.z) : 1,
                    maxInterior.y > 0 ? ceilDiv(volume.y, maxInterior.y) : 1,
                    maxInterior.x > 0 ? ceilDiv(volume.x, maxInterior.x) : 1};
  // The whole volume in one piece: the unblocked run itself, with the boundary rule everywhere.
  const size_t whole = blockBytes(volume, psf, p, bytesPerFrameVoxel);
  if (start.count() == 1 && whole <= budgetBytes && (!slabBytes || hostNeed(volume) <= slabBytes)) {
    const Box all{0, volume.z, 0, volume.y, 0, volume.x};
    plan.interior = volume;
    plan.bytesPerBlock = whole;
    plan.hostBytesPerBlock = slabBytes ? hostNeed(volume) : 0;
    plan.slabSlices = volume.z;
    plan.blocks.push_back({all, all});
    return plan;
  }
  // Blocks of a periodic run read wrapped halos and reflect past them.
  DeconvolveParams blockParams = p;
  if (periodic) blockParams.boundary = Boundary::Reflect;
  auto readLength = [&](int64_t interior, int64_t n, int64_t haloLength, int64_t pieces) {
    // One piece has no halo (a face at the volume's edge takes the boundary rule); else two.
    if (periodic) return interior + 2 * haloLength;
    if (pieces == 1) return n;
    return std::min<int64_t>(interior + 2 * haloLength, n);
  };
  Shape counts = start;
  for (;;) {
    const Shape in{ceilDiv(volume.z, counts.z), ceilDiv(volume.y, counts.y),
                   ceilDiv(volume.x, counts.x)};
    const Shape read{readLength(in.z, volume.z, h.z, counts.z),
                     readLength(in.y, volume.y, h.y, counts.y),
                     readLength(in.x, volume.x, h.x, counts.x)};
    const size_t need = blockBytes(read, psf, blockParams, bytesPerFrameVoxel);
    const bool hostFits = !slabBytes || hostNeed(read) <= slabBytes;
    if (need <= budgetBytes && hostFits) {
      plan.counts = counts;
      plan.interior = in;
      plan.bytesPerBlock = need;
      plan.hostBytesPerBlock = slabBytes ? hostNeed(read) : 0;
      plan.slabSlices = read.z;
      break;
    }
    // Cut the axis whose block is longest (with its halo) into one more piece; when only the
    // host memory is short, z first (it shrinks the slices held as well as the box).
    int64_t* axis = nullptr;
    int64_t longest = 0;
    const bool zFirst = need <= budgetBytes && in.z > 1;
    const int64_t lengths[3] = {in.z > 1 ? (zFirst ? INT64_MAX : read.z) : 0, in.y > 1 ? read.y : 0,
                                in.x > 1 ? read.x : 0};
    int64_t* counters[3] = {&counts.z, &counts.y, &counts.x};
    for (int a = 0; a < 3; ++a)
      if (lengths[a] > longest) {
        longest = lengths[a];
        axis = counters[a];
      }
    if (!axis) {
      const Shape smallest{readLength(1, volume.z, h.z, 2), readLength(1, volume.y, h.y, 2),
                           readLength(1, volume.x, h.x, 2)};
      if (need > budgetBytes)
        throw InvalidArgument(
            "blocked deconvolution: a memory budget of " + std::to_string(budgetBytes >> 20) +
            " MiB cannot hold one block (the smallest, with its halo and the PSF's padding, "
            "needs " +
            std::to_string(blockBytes(smallest, psf, blockParams, bytesPerFrameVoxel) >> 20) +
            " MiB)");
      throw InvalidArgument("blocked deconvolution: " + std::to_string(slabBytes >> 20) +
                            " MiB of host memory cannot hold the slices one block reads (" +
                            std::to_string(read.z) + " of " + std::to_string(sliceBytes >> 20) +
                            " MiB) and its copies: " + std::to_string(hostNeed(read) >> 20) +
                            " MiB");
    }
    ++*axis;
  }
  const auto zs = cuts(volume.z, plan.counts.z), ys = cuts(volume.y, plan.counts.y),
             xs = cuts(volume.x, plan.counts.x);
  // Every block reads a box of the same shape (one FFT plan and one OTF for the whole run): at a
  // volume face the box keeps its length by reaching further inwards (more real data on that
  // side); a periodic box is centred on its interior and wraps.
  auto grow = [&](int64_t a, int64_t n, int64_t interior, int64_t haloLength, int64_t pieces) {
    const int64_t length = readLength(interior, n, haloLength, pieces);
    const int64_t start =
        periodic ? a - haloLength : std::clamp<int64_t>(a - haloLength, 0, n - length);
    return std::pair<int64_t, int64_t>{start, start + length};
  };
  for (const auto& [z0, z1] : zs)
    for (const auto& [y0, y1] : ys)
      for (const auto& [x0, x1] : xs) {
        Block b;
        b.interior = {z0, z1, y0, y1, x0, x1};
        const auto [rz0, rz1] = grow(z0, volume.z, plan.interior.z, h.z, plan.counts.z);
        const auto [ry0, ry1] = grow(y0, volume.y, plan.interior.y, h.y, plan.counts.y);
        const auto [rx0, rx1] = grow(x0, volume.x, plan.interior.x, h.x, plan.counts.x);
        b.read = {rz0, rz1, ry0, ry1, rx0, rx1};
        plan.blocks.push_back(b);
      }
  return plan;
}

}  // namespace stacklens::compute
