// The copies of whole-stack runs on the GPU: streams of their own (the compute stream keeps
// deconvolving), page-locked staging, one DMA per copy.
#include <cuda_runtime.h>

#include <cstring>

#include "compute/cuda/host/cuda_block_transfers.cuh"
#include "compute/cuda/host/cuda_context.cuh"
#include "compute/cuda/host/page_locked_buffer.cuh"

namespace stacklens::compute::cuda {
namespace {

class CudaBlockTransfers final : public BlockTransfers {
 public:
  explicit CudaBlockTransfers(ContextPtr ctx) : ctx_(std::move(ctx)) {
    SL_CUDA(cudaSetDevice(ctx_->device()));
    SL_CUDA(cudaStreamCreateWithFlags(&putStream_, cudaStreamNonBlocking));
    SL_CUDA(cudaStreamCreateWithFlags(&getStream_, cudaStreamNonBlocking));
  }
  ~CudaBlockTransfers() override {
    cudaStreamSynchronize(putStream_);
    cudaStreamSynchronize(getStream_);
    cudaStreamDestroy(putStream_);
    cudaStreamDestroy(getStream_);
  }

  Image allocate(Shape shape) override {
    Image out = deviceBuffer<float>(ctx_, shape);
    // Stream-ordered memory: ready for the copy streams once the compute stream has it.
    ctx_->waitFor(ctx_->stream());
    return out;
  }

  float* staging(int slot, size_t floats) override {
    slot &= 3;
    staging_[slot].reserve(floats * sizeof(float), ctx_->device());
    return static_cast<float*>(staging_[slot].data());
  }

  void put(Image& image, int64_t z, int64_t count, const float* src) override {
    const Shape s = image.shape();
    if (z < 0 || count < 0 || z + count > s.z) throw InvalidArgument("put: slices out of range");
    const size_t bytes = size_t(count * s.y * s.x) * sizeof(float);
    if (image.onHost()) {
      std::memcpy(image.slice(z), src, bytes);
      return;
    }
    SL_CUDA(cudaSetDevice(ctx_->device()));
    SL_CUDA(cudaMemcpyAsync(image.slice(z), src, bytes, cudaMemcpyHostToDevice, putStream_));
    ctx_->waitFor(putStream_);
  }

  void get(const Image& image, Shape origin, Shape extent, float* dst) override {
    const Shape s = image.shape();
    if (origin.z < 0 || origin.y < 0 || origin.x < 0 || origin.z + extent.z > s.z ||
        origin.y + extent.y > s.y || origin.x + extent.x > s.x)
      throw InvalidArgument("get: box out of range");
    if (extent.empty()) return;
    SL_CUDA(cudaSetDevice(ctx_->device()));
    cudaMemcpy3DParms m{};
    m.srcPtr = make_cudaPitchedPtr(const_cast<float*>(image.data()), size_t(s.x) * sizeof(float),
                                   size_t(s.x), size_t(s.y));
    m.srcPos = make_cudaPos(size_t(origin.x) * sizeof(float), size_t(origin.y), size_t(origin.z));
    m.dstPtr = make_cudaPitchedPtr(dst, size_t(extent.x) * sizeof(float), size_t(extent.x),
                                   size_t(extent.y));
    m.extent =
        make_cudaExtent(size_t(extent.x) * sizeof(float), size_t(extent.y), size_t(extent.z));
    m.kind = image.onHost() ? cudaMemcpyHostToHost : cudaMemcpyDeviceToHost;
    SL_CUDA(cudaMemcpy3DAsync(&m, getStream_));
    ctx_->waitFor(getStream_);
  }

 private:
  ContextPtr ctx_;
  cudaStream_t putStream_ = nullptr, getStream_ = nullptr;
  PageLockedBuffer staging_[4];
};

}  // namespace

std::unique_ptr<BlockTransfers> makeBlockTransfers(const ContextPtr& ctx) {
  return std::make_unique<CudaBlockTransfers>(ctx);
}

}  // namespace stacklens::compute::cuda
