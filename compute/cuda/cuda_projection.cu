// Projections and spectral moments along z on the GPU (semantics in compute/params.h; the CPU
// twin is compute/cpu/projection.cpp). One thread per pixel walks its column in slice order, so
// each step of a warp reads consecutive x; sums are in double in the same order as the CPU's.
// The median is an exact radix selection of the two middle ranks on order-preserving keys: 32
// passes over the column, each counting the values under a bit, nothing sorted or stored.
// Kernels: kernels/projection.cuh; launch shape: tuning/projection.cuh.
#include <cmath>
#include <limits>
#include <vector>

#include "compute/cuda/host/cuda_context.cuh"
#include "compute/cuda/kernels/projection.cuh"
#include "compute/cuda/tuning/projection.cuh"
#include "compute/projection.h"

namespace stacklens::compute::cuda {
namespace {

constexpr int kThreads = tuning::ProjectionPolicy::threads;

Image flatOutput(const ContextPtr& ctx, const Image& in) {
  Image out = deviceBuffer<float>(ctx, {1, in.shape().y, in.shape().x});
  out.spacing = in.spacing;
  return out;
}

}  // namespace

Image project(const ContextPtr& ctx, const Image& input, const ProjectParams& p, const Job& job) {
  const SliceRange r = sliceRange(input.shape().z, p.first, p.last);
  job.checkCancelled();
  Image in = onDevice(ctx, input);
  Image out = flatOutput(ctx, in);
  const int64_t plane = in.shape().y * in.shape().x;
  if (plane == 0) return out;
  if (p.op == Projection::Median)
    medianColumns<<<blocksFor(plane, kThreads), kThreads, 0, ctx->stream()>>>(
        in.data(), out.data(), plane, r.begin, r.count());
  else
    projectColumns<<<blocksFor(plane, kThreads), kThreads, 0, ctx->stream()>>>(
        in.data(), out.data(), plane, r.begin, r.count(), p.op);
  SL_LAUNCHED();
  job.report(1.0);
  return out;
}

Image moment(const ContextPtr& ctx, const Image& input, const MomentParams& p, const Job& job) {
  const MomentAxis axis = momentAxis(input.shape().z, p);
  const SliceRange r = sliceRange(input.shape().z, p.first, p.last);
  job.checkCancelled();
  Image in = onDevice(ctx, input);
  Image out = flatOutput(ctx, in);
  const int64_t plane = in.shape().y * in.shape().x;
  if (plane == 0) return out;
  auto onDevice = [&](const std::vector<double>& host) {
    DeviceArray<double> d(ctx, host.size());
    SL_CUDA(cudaMemcpyAsync(d.get(), host.data(), host.size() * sizeof(double),
                            cudaMemcpyHostToDevice, ctx->stream()));
    return d;
  };
  const DeviceArray<double> value = onDevice(axis.value), width = onDevice(axis.width);
  momentColumns<<<blocksFor(plane, kThreads), kThreads, 0, ctx->stream()>>>(
      in.data(), out.data(), plane, r.begin, r.count(), value.get(), width.get(), p.order, p.clip);
  SL_LAUNCHED();
  // The coordinates' host vectors go out of scope: wait until the copies have read them.
  ctx->waitFor(ctx->stream());
  job.report(1.0);
  return out;
}

}  // namespace stacklens::compute::cuda
