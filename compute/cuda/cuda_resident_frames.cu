// Resident Richardson–Lucy frames on the GPU (compute/resident_frames.h): every block's observed
// image and estimate in device memory, one set of our fused FFT passes (cuda_rl_fused.cuh) and one
// OTF shared by all of them. A step transforms its frame's estimate first (the passes cannot
// carry the spectrum over from the last step, whose frame was another's or whose halo has
// changed since); the exchange is one kernel per frame that copies each halo voxel from the
// estimate of the block whose interior owns it (kernels/resident_frames.cuh).
#include <memory>
#include <vector>

#include "compute/cuda/cuda_rl_fused.cuh"
#include "compute/cuda/host/cuda_context.cuh"
#include "compute/cuda/kernels/resident_frames.cuh"
#include "compute/cuda/psf_symmetry.h"
#include "compute/resident_frames.h"

namespace stacklens::compute::cuda {
namespace {

constexpr int kThreads = 256;

class ResidentFrames final : public ResidentRlFrames {
 public:
  ResidentFrames(const ContextPtr& ctx, const ResidentLayout& layout, const Image& psf,
                 const DeconvolveParams& p)
      : ctx_(ctx),
        f_{layout.frame.z, layout.frame.y, layout.frame.x},
        counts_{layout.counts.z, layout.counts.y, layout.counts.x},
        n_(layout.frame.count()),
        epsilon_(p.epsilon) {
    const int64_t blocks = layout.count();
    for (int64_t b = 0; b < blocks; ++b) {
      observed_.emplace_back(ctx, size_t(n_));
      estimates_.emplace_back(ctx, size_t(n_));
    }
    cudaStream_t st = ctx->stream();
    // The tables, all frames' in one array.
    std::vector<int32_t> tables;
    for (const auto& axes : layout.blocks)
      for (const ResidentLayout::Axis& a : axes) {
        tables.insert(tables.end(), a.ownerBlock.begin(), a.ownerBlock.end());
        tables.insert(tables.end(), a.ownerIndex.begin(), a.ownerIndex.end());
      }
    tables_ = DeviceArray<int32_t>(ctx, tables.size());
    SL_CUDA(cudaMemcpyAsync(tables_.get(), tables.data(), tables.size() * sizeof(int32_t),
                            cudaMemcpyHostToDevice, st));
    const int32_t* at = tables_.get();
    for (const auto& axes : layout.blocks) {
      FrameTables t{};
      const int32_t** pairs[3][2] = {
          {&t.blockZ, &t.indexZ}, {&t.blockY, &t.indexY}, {&t.blockX, &t.indexX}};
      for (int a = 0; a < 3; ++a) {
        const size_t length = axes[size_t(a)].ownerBlock.size();
        *pairs[a][0] = at;
        *pairs[a][1] = at + length;
        at += 2 * length;
        t.from[a] = axes[size_t(a)].interiorFrom;
        t.to[a] = axes[size_t(a)].interiorTo;
      }
      frameTables_.push_back(t);
    }
    std::vector<float*> pointers;
    for (const DeviceArray<float>& e : estimates_) pointers.push_back(e.get());
    pointers_ = DeviceArray<float*>(ctx, pointers.size());
    SL_CUDA(cudaMemcpyAsync(pointers_.get(), pointers.data(), pointers.size() * sizeof(float*),
                            cudaMemcpyHostToDevice, st));
    // The OTF from the PSF placed in the first frame's estimate, which load() fills later.
    const std::vector<float> values(psf.data(), psf.data() + psf.shape().count());
    const Shape ps = psf.shape();
    const bool realOtf = isPointSymmetric(values, ps.z, ps.y, ps.x);
    otf_ = DeviceArray<float>(ctx, FusedRlTransforms::otfFloats(f_.z, f_.y, f_.x, realOtf));
    DeviceArray<float> psfOnDevice(ctx, values.size());
    SL_CUDA(cudaMemcpyAsync(psfOnDevice.get(), values.data(), values.size() * sizeof(float),
                            cudaMemcpyHostToDevice, st));
    float* placed = estimates_.front().get();
    SL_CUDA(cudaMemsetAsync(placed, 0, size_t(n_) * sizeof(float), st));
    placePsf<<<blocksFor(ps.count(), kThreads), kThreads, 0, st>>>(psfOnDevice.get(),
                                                                   {ps.z, ps.y, ps.x}, placed, f_);
    SL_LAUNCHED();
    fused_ = std::make_unique<FusedRlTransforms>(ctx, f_.z, f_.y, f_.x, otf_.get(), realOtf);
    fused_->makeOtf(placed);
    SL_CUDA(cudaStreamSynchronize(st));  // the PSF's and tables' host copies go out of scope
  }

  void load(int64_t b, int64_t z, int64_t planes, const float* values) override {
    const size_t offset = size_t(z * f_.y * f_.x), bytes = size_t(planes * f_.y * f_.x) * 4;
    float* observed = observed_[size_t(b)].get() + offset;
    ctx_->upload(observed, values, bytes);
    SL_CUDA(cudaMemcpyAsync(estimates_[size_t(b)].get() + offset, observed, bytes,
                            cudaMemcpyDeviceToDevice, ctx_->stream()));
  }

  void step(int64_t b) override {
    float* estimate = estimates_[size_t(b)].get();
    fused_->forward(estimate);
    fused_->blurAndRatio(observed_[size_t(b)].get(), epsilon_);
    fused_->correlateAndUpdate(estimate, nullptr, 0.f, nullptr, /*forwardNext=*/false);
  }

  // Synchronises: the caller checks for cancellation between iterations, so at most one
  // iteration is queued ahead of the GPU.
  void exchange() override {
    cudaStream_t st = ctx_->stream();
    for (size_t b = 0; b < estimates_.size(); ++b) {
      fillHalo<<<blocksFor(n_, kThreads), kThreads, 0, st>>>(pointers_.get(), estimates_[b].get(),
                                                             f_, counts_, frameTables_[b]);
      SL_LAUNCHED();
    }
    ctx_->waitFor(st);
  }

  void read(int64_t b, Shape origin, Shape extent, float* out) override {
    const float* estimate = estimates_[size_t(b)].get();
    for (int64_t z = 0; z < extent.z; ++z)
      SL_CUDA(cudaMemcpy2DAsync(out + z * extent.y * extent.x, size_t(extent.x) * 4,
                                estimate + ((origin.z + z) * f_.y + origin.y) * f_.x + origin.x,
                                size_t(f_.x) * 4, size_t(extent.x) * 4, size_t(extent.y),
                                cudaMemcpyDeviceToHost, ctx_->stream()));
    ctx_->waitFor(ctx_->stream());
  }

 private:
  ContextPtr ctx_;
  Extent f_, counts_;
  int64_t n_;
  float epsilon_;
  std::vector<DeviceArray<float>> observed_, estimates_;
  DeviceArray<int32_t> tables_;
  DeviceArray<float*> pointers_;
  std::vector<FrameTables> frameTables_;
  DeviceArray<float> otf_;
  std::unique_ptr<FusedRlTransforms> fused_;
};

}  // namespace

std::unique_ptr<ResidentRlFrames> residentFrames(const ContextPtr& ctx,
                                                 const ResidentLayout& layout, const Image& psf,
                                                 const DeconvolveParams& p) {
  const Shape f = layout.frame;
  if (p.tvLambda > 0 || p.accelerate || !psf.onHost() ||
      !FusedRlTransforms::supports(f.z, f.y, f.x))
    return nullptr;
  return std::make_unique<ResidentFrames>(ctx, layout, psf, p);
}

}  // namespace stacklens::compute::cuda
