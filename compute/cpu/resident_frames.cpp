// cpu::ResidentFrames: a deconvolver per block; the exchange copies each halo voxel from the
// interior that owns it.
#include "compute/cpu/resident_frames.h"

#include <cstring>

namespace stacklens::compute::cpu {

ResidentFrames::ResidentFrames(const ResidentLayout& layout, const Image& psf,
                               const DeconvolveParams& p, ThreadPool& pool)
    : layout_(layout), p_(p), pool_(pool) {
  for (int64_t b = 0; b < layout_.count(); ++b)
    frames_.push_back(std::make_unique<Deconvolver>(layout_.frame, psf, p_, pool_));
}

void ResidentFrames::load(int64_t b, int64_t z, int64_t planes, const float* values) {
  Deconvolver& d = *frames_[size_t(b)];
  const size_t plane = size_t(layout_.frame.y * layout_.frame.x);
  std::memcpy(d.image() + size_t(z) * plane, values, size_t(planes) * plane * sizeof(float));
  std::memcpy(d.estimate() + size_t(z) * plane, values, size_t(planes) * plane * sizeof(float));
}

void ResidentFrames::step(int64_t b) { frames_[size_t(b)]->step(Job()); }

void ResidentFrames::exchange() {
  const Shape f = layout_.frame, c = layout_.counts;
  for (int64_t b = 0; b < layout_.count(); ++b) {
    const auto& axes = layout_.blocks[size_t(b)];
    float* to = frames_[size_t(b)]->estimate();
    auto inside = [&](int a, int64_t i) {
      return i >= axes[size_t(a)].interiorFrom && i < axes[size_t(a)].interiorTo;
    };
    pool_.parallelFor(f.z * f.y, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t z = r / f.y, y = r % f.y;
        const bool rowInside = inside(0, z) && inside(1, y);
        const int64_t bz = axes[0].ownerBlock[size_t(z)], by = axes[1].ownerBlock[size_t(y)];
        const int64_t iz = axes[0].ownerIndex[size_t(z)], iy = axes[1].ownerIndex[size_t(y)];
        for (int64_t x = 0; x < f.x; ++x) {
          if (rowInside && inside(2, x)) continue;
          const int64_t owner = (bz * c.y + by) * c.x + axes[2].ownerBlock[size_t(x)];
          const float* from = frames_[size_t(owner)]->estimate();
          to[(z * f.y + y) * f.x + x] = from[(iz * f.y + iy) * f.x + axes[2].ownerIndex[size_t(x)]];
        }
      }
    });
  }
}

void ResidentFrames::read(int64_t b, Shape origin, Shape extent, float* out) {
  const Shape f = layout_.frame;
  const float* from = frames_[size_t(b)]->estimate();
  for (int64_t z = 0; z < extent.z; ++z)
    for (int64_t y = 0; y < extent.y; ++y)
      std::memcpy(out + (z * extent.y + y) * extent.x,
                  from + ((origin.z + z) * f.y + origin.y + y) * f.x + origin.x,
                  size_t(extent.x) * sizeof(float));
}

}  // namespace stacklens::compute::cpu
