// readWithBoundary: each axis of the box is cut into runs that map to consecutive voxels of the
// volume (forwards, or backwards where reflected) or to zeros; each combination of runs is one
// read inside the volume.
#include "compute/blocked/frame_fill.h"

#include <cstring>
#include <vector>

#include "compute/cpu/reflect_index.h"

namespace stacklens::compute {
namespace {

struct Run {
  int64_t offset = 0, length = 0;  // in the box
  int64_t first = -1;              // the volume index of the run's first voxel; −1: zeros
  int step = 1;                    // +1 forwards, −1 backwards (reflected)
  int64_t low() const { return step > 0 ? first : first - length + 1; }
};

int64_t sourceOf(int64_t i, int64_t n, Boundary b) {
  if (i >= 0 && i < n) return i;
  if (b == Boundary::Zero) return -1;
  if (b == Boundary::Periodic) return ((i % n) + n) % n;
  return cpu::reflectIndex(i, n);
}

std::vector<Run> runsOf(int64_t a, int64_t b, int64_t n, Boundary boundary) {
  std::vector<Run> out;
  for (int64_t i = a; i < b; ++i) {
    const int64_t s = sourceOf(i, n, boundary);
    if (!out.empty()) {
      Run& r = out.back();
      const int64_t last = r.first < 0 ? -1 : r.first + r.step * (r.length - 1);
      if (s < 0 && r.first < 0) {
        ++r.length;
        continue;
      }
      if (s >= 0 && r.first >= 0) {
        if (r.length == 1 && (s == last + 1 || s == last - 1)) {
          r.step = s == last + 1 ? 1 : -1;
          ++r.length;
          continue;
        }
        if (s == last + r.step) {
          ++r.length;
          continue;
        }
      }
    }
    out.push_back(Run{i - a, 1, s, 1});
  }
  return out;
}

}  // namespace

void readWithBoundary(const BoxReader& read, Shape volume, Boundary boundary, const Box& box,
                      float* out) {
  const Shape s = box.shape();
  if (s.empty()) return;
  if (box.z0 >= 0 && box.y0 >= 0 && box.x0 >= 0 && box.z1 <= volume.z && box.y1 <= volume.y &&
      box.x1 <= volume.x) {
    read(box, out);
    return;
  }
  const std::vector<Run> zs = runsOf(box.z0, box.z1, volume.z, boundary),
                         ys = runsOf(box.y0, box.y1, volume.y, boundary),
                         xs = runsOf(box.x0, box.x1, volume.x, boundary);
  if (boundary == Boundary::Zero) std::memset(out, 0, size_t(s.count()) * sizeof(float));
  std::vector<float> part;
  for (const Run& rz : zs)
    for (const Run& ry : ys)
      for (const Run& rx : xs) {
        if (rz.first < 0 || ry.first < 0 || rx.first < 0) continue;
        const Box inside{rz.low(), rz.low() + rz.length, ry.low(), ry.low() + ry.length,
                         rx.low(), rx.low() + rx.length};
        part.resize(size_t(inside.shape().count()));
        read(inside, part.data());
        for (int64_t z = 0; z < rz.length; ++z) {
          const int64_t pz = rz.step > 0 ? z : rz.length - 1 - z;
          for (int64_t y = 0; y < ry.length; ++y) {
            const int64_t py = ry.step > 0 ? y : ry.length - 1 - y;
            const float* from = part.data() + (pz * ry.length + py) * rx.length;
            float* to = out + ((rz.offset + z) * s.y + ry.offset + y) * s.x + rx.offset;
            if (rx.step > 0)
              std::memcpy(to, from, size_t(rx.length) * sizeof(float));
            else
              for (int64_t x = 0; x < rx.length; ++x) to[x] = from[rx.length - 1 - x];
          }
        }
      }
}

}  // namespace stacklens::compute
