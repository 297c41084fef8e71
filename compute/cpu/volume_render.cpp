// The volume renderer on the CPU: the twin of the CUDA kernel (same rays, same samples,
// compute/volume_ray.h), trilinear interpolation by hand where the GPU uses its texture unit.
// Output rows are shared among the threads.
#include <algorithm>
#include <cmath>

#include "compute/cpu/operations.h"
#include "compute/volume_render.h"

namespace stacklens::compute::cpu {
namespace {

// The volume at a continuous voxel index, clamped to the edge voxels as the texture unit does.
struct TrilinearSampler {
  const float* data;
  int nx, ny, nz;

  static void corner(float c, int n, int* lo, int* hi, float* f) {
    c = std::clamp(c, 0.0f, float(n - 1));
    *lo = std::min(int(c), n - 1);
    *hi = std::min(*lo + 1, n - 1);
    *f = c - float(*lo);
  }
  float operator()(float x, float y, float z) const {
    int x0, x1, y0, y1, z0, z1;
    float fx, fy, fz;
    corner(x, nx, &x0, &x1, &fx);
    corner(y, ny, &y0, &y1, &fy);
    corner(z, nz, &z0, &z1, &fz);
    auto at = [&](int zz, int yy, int xx) { return data[(int64_t(zz) * ny + yy) * nx + xx]; };
    auto row = [&](int zz, int yy) {
      const float a = at(zz, yy, x0);
      return a + fx * (at(zz, yy, x1) - a);
    };
    auto plane = [&](int zz) {
      const float a = row(zz, y0);
      return a + fy * (row(zz, y1) - a);
    };
    const float a = plane(z0);
    return a + fz * (plane(z1) - a);
  }
};

}  // namespace

Image renderVolume(const Image& in, const VolumeRenderParams& p, const Job& job, ThreadPool& pool) {
  const VolumeGeometry g = volumeGeometry(in.shape(), in.spacing, p);
  Image out = Image::hostUninitialized({1, p.height, p.width});
  const TrilinearSampler sample{in.data(), g.size[0], g.size[1], g.size[2]};
  pool.parallelFor(
      p.height,
      [&](int64_t j0, int64_t j1) {
        for (int64_t j = j0; j < j1; ++j) {
          job.checkCancelled();
          float* row = out.data() + j * p.width;
          for (int i = 0; i < p.width; ++i) row[i] = marchVolumeRay(g, i, int(j), sample);
        }
      },
      1);
  job.report(1.0);
  return out;
}

}  // namespace stacklens::compute::cpu
