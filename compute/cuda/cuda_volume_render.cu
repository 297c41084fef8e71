// The volume renderer on the GPU (semantics in compute/params.h; the rays in
// compute/volume_ray.h, shared with the CPU twin). The volume lives in a 3D texture: the texture
// unit does the trilinear interpolation and the edge clamping in one fetch, and its cache serves
// neighbouring rays. One thread per output pixel (kernels/volume_render.cuh), in square tiles
// (tuning/volume_render.cuh) so that neighbouring rays share cached texels. The texture is kept (a
// context extension) for the last volume given, so a view that turns uploads nothing.
#include <memory>
#include <string>

#include "compute/cuda/host/cuda_context.cuh"
#include "compute/cuda/kernels/volume_render.cuh"
#include "compute/cuda/tuning/volume_render.cuh"
#include "compute/volume_render.h"

namespace stacklens::compute::cuda {
namespace {

struct VolumeTexture : Context::Extension {
  Image source;  // kept alive, so that its storage's address names it
  cudaArray_t array = nullptr;
  cudaTextureObject_t texture = 0;
  ~VolumeTexture() override {
    if (texture) cudaDestroyTextureObject(texture);
    if (array) cudaFreeArray(array);
  }
};

bool sameVolume(const Image& a, const Image& b) {
  return a.data() == b.data() && a.shape() == b.shape() && a.location() == b.location();
}

// The texture of volume, made (and the last one freed) unless it is the one kept.
cudaTextureObject_t textureOf(const ContextPtr& ctx, const Image& volume) {
  std::unique_ptr<Context::Extension>& slot = ctx->extension("volume texture");
  if (auto* kept = dynamic_cast<VolumeTexture*>(slot.get());
      kept && sameVolume(kept->source, volume))
    return kept->texture;
  slot.reset();
  const Shape s = volume.shape();
  int most = 0;
  SL_CUDA(cudaDeviceGetAttribute(&most, cudaDevAttrMaxTexture3DWidth, ctx->device()));
  if (s.x > most || s.y > most || s.z > most)
    throw InvalidArgument("a volume of " + std::to_string(s.z) + " × " + std::to_string(s.y) +
                          " × " + std::to_string(s.x) + " exceeds the GPU's 3D textures (" +
                          std::to_string(most) + " a side): draw a downsampled copy");
  const size_t bytes = size_t(s.count()) * sizeof(float);
  if (bytes > ctx->budget())
    throw DeviceOutOfMemory("the volume's texture needs " + std::to_string(bytes >> 20) +
                            " MiB, more than the GPU budget (" +
                            std::to_string(ctx->budget() >> 20) + " MiB)");
  auto made = std::make_unique<VolumeTexture>();
  const cudaChannelFormatDesc format = cudaCreateChannelDesc<float>();
  const cudaExtent extent = make_cudaExtent(size_t(s.x), size_t(s.y), size_t(s.z));
  if (cudaError_t err = cudaMalloc3DArray(&made->array, &format, extent); err != cudaSuccess) {
    cudaGetLastError();
    if (err == cudaErrorMemoryAllocation)
      throw DeviceOutOfMemory("no room on the GPU for the volume's texture (" +
                              std::to_string(bytes >> 20) + " MiB)");
    SL_CUDA(err);
  }
  cudaMemcpy3DParms copy{};
  copy.srcPtr = make_cudaPitchedPtr(const_cast<float*>(volume.data()), size_t(s.x) * sizeof(float),
                                    size_t(s.x), size_t(s.y));
  copy.dstArray = made->array;
  copy.extent = extent;
  copy.kind =
      volume.location() == Location::Cuda ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice;
  SL_CUDA(cudaMemcpy3DAsync(&copy, ctx->stream()));
  cudaResourceDesc resource{};
  resource.resType = cudaResourceTypeArray;
  resource.res.array.array = made->array;
  cudaTextureDesc sampling{};
  for (auto& mode : sampling.addressMode) mode = cudaAddressModeClamp;
  sampling.filterMode = cudaFilterModeLinear;
  sampling.readMode = cudaReadModeElementType;
  sampling.normalizedCoords = 0;
  SL_CUDA(cudaCreateTextureObject(&made->texture, &resource, &sampling, nullptr));
  made->source = volume;
  const cudaTextureObject_t texture = made->texture;
  slot = std::move(made);
  return texture;
}

}  // namespace

Image renderVolume(const ContextPtr& ctx, const Image& volume, const VolumeRenderParams& p,
                   const Job& job) {
  const VolumeGeometry g = volumeGeometry(volume.shape(), volume.spacing, p);
  job.checkCancelled();
  const cudaTextureObject_t texture = textureOf(ctx, volume);
  Image out = deviceBuffer<float>(ctx, {1, p.height, p.width});
  const dim3 block(kTile, kTile);
  const dim3 grid(blocksFor(p.width, kTile), blocksFor(p.height, kTile));
  marchRays<<<grid, block, 0, ctx->stream()>>>(g, texture, out.data());
  SL_LAUNCHED();
  job.report(1.0);
  return out;
}

}  // namespace stacklens::compute::cuda
