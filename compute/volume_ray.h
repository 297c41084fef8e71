// One ray of the volume renderer (semantics in compute/params.h, VolumeRenderParams), shared by
// the CPU twin (compute/cpu/volume_render.cpp) and the CUDA kernel
// (compute/cuda/cuda_volume_render.cu) so that both march the same samples; only the sampler
// differs (trilinear by hand, or the texture unit). render/gl_volume_sink.cpp's shader follows
// the same steps in GLSL: keep the three in step.
#pragma once

#include <cmath>

#if defined(__CUDACC__)
#define SL_HD __host__ __device__ __forceinline__
#else
#define SL_HD inline
#endif

namespace stacklens::compute {

// Everything a ray needs, in float (what the GPU computes in), made once per frame on the host
// by volumeGeometry() (compute/volume_render.h). Model units: the volume is a box centred on
// the origin whose longest physical side is 1.
struct VolumeGeometry {
  float rotation[9];  // view ← model, row-major
  float half[3];      // the box's half sides along x, y, z
  float toIndex[3];   // voxels per model unit along x, y, z
  int size[3];        // voxels along x, y, z
  int width, height;  // output pixels
  float pixel;        // model units per output pixel
  float step;         // model units between samples at most
  float voxelStep;    // the smallest voxel side (attenuation is per voxel of path)
  int mode;           // VolumeMode
  float low, high, attenuation, isoLevel;
};

struct VolumeRay {
  float origin[3], direction[3];  // model units
  float t0 = 0, t1 = 0;           // where it enters and leaves the box
  bool hits = false;
};

// The ray through the centre of output pixel (i, j); row j = 0 is the top of the image.
SL_HD VolumeRay volumeRay(const VolumeGeometry& g, int i, int j) {
  VolumeRay ray;
  const float u = (float(i) + 0.5f - 0.5f * float(g.width)) * g.pixel;
  const float v = (float(j) + 0.5f - 0.5f * float(g.height)) * g.pixel;
  const float* r = g.rotation;
  // model = rotationᵀ · view; the view looks along its +z, starting in the plane through the
  // box's centre (the slab test below takes t negative for the box's near half).
  for (int a = 0; a < 3; ++a) {
    ray.origin[a] = r[a] * u + r[3 + a] * v;
    ray.direction[a] = r[6 + a];
  }
  float t0 = -1e30f, t1 = 1e30f;
  for (int a = 0; a < 3; ++a) {
    const float o = ray.origin[a], d = ray.direction[a], h = g.half[a];
    if (fabsf(d) < 1e-12f) {
      if (o < -h || o > h) return ray;
      continue;
    }
    float ta = (-h - o) / d, tb = (h - o) / d;
    if (ta > tb) {
      const float s = ta;
      ta = tb, tb = s;
    }
    t0 = fmaxf(t0, ta), t1 = fminf(t1, tb);
  }
  ray.t0 = t0, ray.t1 = t1;
  ray.hits = t1 > t0;
  return ray;
}

// The samples along a hitting ray: count of them, dt apart, the first dt / 2 inside the box (so a
// ray along an axis samples every voxel centre when the step is one voxel).
SL_HD int volumeSampleCount(const VolumeGeometry& g, const VolumeRay& ray, float* dt) {
  const float length = ray.t1 - ray.t0;
  int n = int(ceilf(length / g.step - 1e-3f));
  if (n < 1) n = 1;
  *dt = length / float(n);
  return n;
}

// Continuous voxel index (voxel centres at integers) of the point at t.
SL_HD void volumeIndexAt(const VolumeGeometry& g, const VolumeRay& ray, float t, float* index) {
  for (int a = 0; a < 3; ++a)
    index[a] = (ray.origin[a] + t * ray.direction[a] + g.half[a]) * g.toIndex[a] - 0.5f;
}

// The shade of the iso-surface where the ray crosses it at index: the normal from central
// differences of the sampler, in model units, against the viewing direction.
template <class Sampler>
SL_HD float volumeIsoShade(const VolumeGeometry& g, const VolumeRay& ray, const float* p,
                           const Sampler& sample) {
  float grad[3];
  for (int a = 0; a < 3; ++a) {
    float lo[3] = {p[0], p[1], p[2]}, hi[3] = {p[0], p[1], p[2]};
    lo[a] -= 1.0f, hi[a] += 1.0f;
    grad[a] = (sample(hi[0], hi[1], hi[2]) - sample(lo[0], lo[1], lo[2])) * 0.5f * g.toIndex[a];
  }
  const float norm = sqrtf(grad[0] * grad[0] + grad[1] * grad[1] + grad[2] * grad[2]);
  if (!(norm > 0.0f)) return 1.0f;
  const float facing =
      (grad[0] * ray.direction[0] + grad[1] * ray.direction[1] + grad[2] * ray.direction[2]) / norm;
  return 0.2f + 0.8f * fabsf(facing);
}

// The value of output pixel (i, j). sample(x, y, z) returns the volume trilinearly interpolated
// at a continuous voxel index, clamped to the edge voxels.
template <class Sampler>
SL_HD float marchVolumeRay(const VolumeGeometry& g, int i, int j, const Sampler& sample) {
  const float nan = NAN;
  const VolumeRay ray = volumeRay(g, i, j);
  if (!ray.hits) return nan;
  float dt = 0;
  const int n = volumeSampleCount(g, ray, &dt);
  float p[3];
  const float range = g.high - g.low;
  if (g.mode == 3) {  // IsoSurface
    float before = nan;
    for (int k = 0; k < n; ++k) {
      const float t = ray.t0 + (float(k) + 0.5f) * dt;
      volumeIndexAt(g, ray, t, p);
      const float v = sample(p[0], p[1], p[2]);
      if (v >= g.isoLevel) {
        float th = t;
        if (before == before && v > before) th = t - dt + (g.isoLevel - before) / (v - before) * dt;
        volumeIndexAt(g, ray, th, p);
        return g.low + volumeIsoShade(g, ray, p, sample) * range;
      }
      before = v;
    }
    return nan;
  }
  float best = -INFINITY, sum = 0.0f, seen = 0.0f;
  int count = 0;
  const float perVoxel = dt / g.voxelStep;
  for (int k = 0; k < n; ++k) {
    volumeIndexAt(g, ray, ray.t0 + (float(k) + 0.5f) * dt, p);
    const float v = sample(p[0], p[1], p[2]);
    if (!(v == v)) continue;
    ++count;
    if (g.mode == 0) {  // Mip
      best = fmaxf(best, v);
    } else if (g.mode == 2) {  // Average
      sum += v;
    } else {  // AttenuatedMip
      seen += fminf(fmaxf((v - g.low) / range, 0.0f), 1.0f) * perVoxel;
      const float weight = expf(-g.attenuation * fmaxf(seen - 1.0f, 0.0f));
      best = fmaxf(best, g.low + (v - g.low) * weight);
    }
  }
  if (count == 0) return nan;
  return g.mode == 2 ? sum / float(count) : best;
}

}  // namespace stacklens::compute
