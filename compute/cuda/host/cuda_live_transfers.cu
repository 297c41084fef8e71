// Transfers for live slices: page-locking host buffers, queued uploads and direct downloads.
#include <cuda_runtime.h>

#include <cstring>

#include "compute/cuda/host/cuda_context.cuh"
#include "compute/cuda/host/cuda_live_transfers.cuh"
#include "compute/device_control.h"

namespace stacklens::compute::cuda {
bool pinHostMemory(void* p, size_t bytes) {
  if (!p || bytes == 0) return false;
  if (cudaHostRegister(p, bytes, cudaHostRegisterPortable) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return true;
}

void unpinHostMemory(void* p) {
  if (p && cudaHostUnregister(p) != cudaSuccess) cudaGetLastError();
}

Image uploadAsync(const ContextPtr& ctx, const Image& in) {
  if (!in.onHost() || in.empty() || !pageLocked(in.data())) return onDevice(ctx, in);
  Image out = deviceBuffer<float>(ctx, in.shape());
  // On the compute stream, after the allocation and before whatever reads it: no staging copy
  // and no host wait.
  SL_CUDA(
      cudaMemcpyAsync(out.data(), in.data(), in.bytes(), cudaMemcpyHostToDevice, ctx->stream()));
  // The device image keeps the source alive until it is released itself.
  float* device = out.data();
  std::shared_ptr<float> storage(device, [keepDevice = out, keepHost = in](float*) {});
  Image result(in.shape(), Location::Cuda, std::move(storage));
  result.spacing = in.spacing;
  return result;
}

void downloadInto(const ContextPtr& ctx, const Image& in, Image& host) {
  if (!host.onHost() || !(host.shape() == in.shape()))
    throw InvalidArgument("download: the host buffer must have the image's shape");
  host.spacing = in.spacing;
  if (in.empty()) return;
  if (in.onHost()) {
    std::memcpy(host.data(), in.data(), in.bytes());
    return;
  }
  if (pageLocked(host.data())) {
    SL_CUDA(
        cudaMemcpyAsync(host.data(), in.data(), in.bytes(), cudaMemcpyDeviceToHost, ctx->stream()));
    SL_CUDA(cudaStreamSynchronize(ctx->stream()));
  } else {
    ctx->download(host.data(), in.data(), in.bytes());
  }
}

Image stackSlices(const ContextPtr& ctx, const std::vector<Image>& slices) {
  Image out = deviceBuffer<float>(ctx, stackedShape(slices));
  out.spacing = slices.front().spacing;
  // Device slices (the store's uploads) are copied on the device; a host slice is uploaded, in
  // one DMA when page-locked (then, as every copy here, queued on the compute stream).
  for (size_t k = 0; k < slices.size(); ++k) {
    const Image& slice = slices[k];
    float* to = out.slice(static_cast<int64_t>(k));
    if (!slice.onHost())
      SL_CUDA(cudaMemcpyAsync(to, slice.data(), slice.bytes(), cudaMemcpyDeviceToDevice,
                              ctx->stream()));
    else if (pageLocked(slice.data()))
      SL_CUDA(
          cudaMemcpyAsync(to, slice.data(), slice.bytes(), cudaMemcpyHostToDevice, ctx->stream()));
    else
      ctx->upload(to, slice.data(), slice.bytes());
  }
  return out;
}

Image downloadRows(const ContextPtr& ctx, const Image& in, int64_t z, int64_t step) {
  const Shape s = in.shape();
  if (z < 0 || z >= s.z || step < 1) throw InvalidArgument("download rows: bad slice or step");
  const int64_t rows = (s.y + step - 1) / step;
  Image out = Image::hostUninitialized({1, rows, s.x});
  out.spacing = in.spacing;
  if (out.empty()) return out;
  const size_t rowBytes = static_cast<size_t>(s.x) * sizeof(float);
  SL_CUDA(cudaMemcpy2DAsync(out.data(), rowBytes, in.slice(z), rowBytes * static_cast<size_t>(step),
                            rowBytes, static_cast<size_t>(rows),
                            in.onHost() ? cudaMemcpyHostToHost : cudaMemcpyDeviceToHost,
                            ctx->stream()));
  SL_CUDA(cudaStreamSynchronize(ctx->stream()));
  return out;
}

}  // namespace stacklens::compute::cuda
