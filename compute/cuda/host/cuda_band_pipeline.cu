// The band pipeline: one host image through a local filter, band by band (row_bands.h).
#include <vector>

#include "compute/cuda/host/cuda_band_pipeline.cuh"
#include "compute/cuda/host/host_result_memory.cuh"
#include "compute/cuda/host/row_bands.h"

namespace stacklens::compute::cuda {
namespace {

constexpr size_t kBandBytes = tuning::TransferPolicy::bandBytes;

std::vector<RowBand> bandsOf(const Image& in, int64_t halo) {
  const Shape s = in.shape();
  if (s.z != 1 || s.y < 1 || s.x < 1 || halo < 0) return {};
  return planRowBands(s.y, size_t(s.x) * sizeof(float), halo, kBandBytes);
}

// The view of input rows [first, end) of the image uploaded to `whole` (which outlives it).
Image rowsOf(float* whole, const Image& in, int64_t first, int64_t end) {
  Image view(Shape{1, end - first, in.shape().x}, Location::Cuda,
             std::shared_ptr<float>(std::shared_ptr<float>(), whole + first * in.shape().x));
  view.spacing = in.spacing;
  return view;
}

}  // namespace

bool bandsPay(const Context& ctx, const Image& in, int64_t halo, SliceWork work) {
  if (!in.onHost() || in.empty() || !pageLocked(in.data()) || bandsOf(in, halo).size() < 2)
    return false;
  const size_t voxels = size_t(in.shape().count());
  // The whole input, every band's result (kept until its download ends) and the filter's work.
  return 2 * voxels * sizeof(float) + voxels * work.bytesPerVoxel + work.fixedBytes <= ctx.budget();
}

PipelineRun pipelineRowBands(const ContextPtr& ctx, const Image& in, int64_t halo,
                             const SliceOp& op, const Job& job) {
  const std::vector<RowBand> bands = bandsOf(in, halo);
  if (bands.empty()) throw InvalidArgument("band pipeline: expected one host slice");
  const Shape s = in.shape();
  const int64_t x = s.x;
  PipelineRun run;
  run.chunkSlices = 1;
  Image out = hostResult<float>(s);
  out.spacing = in.spacing;
  const bool outputLocked = pageLocked(out.data());

  DeviceArray<float> input(ctx, size_t(s.count()));
  std::vector<Image> results;  // each band's, kept until the downloads are done
  cudaEvent_t computed = nullptr;
  SL_CUDA(cudaEventCreateWithFlags(&computed, cudaEventDisableTiming));
  struct EventGone {
    cudaEvent_t e;
    ~EventGone() { cudaEventDestroy(e); }
  } eventGone{computed};
  // Destroyed first: no buffer above is released while a copy may still use it.
  DrainOnExit drainFirst{*ctx};
  cudaStream_t down = ctx->downloadStream();

  int64_t uploaded = 0;  // input rows [0, uploaded) are queued for the device
  for (const RowBand& band : bands) {
    job.checkCancelled();
    // Only the rows the earlier bands did not need go up: the halos overlap.
    if (band.needEnd > uploaded) {
      ctx->upload(input.get() + uploaded * x, in.data() + uploaded * x,
                  size_t(band.needEnd - uploaded) * size_t(x) * sizeof(float));
      uploaded = band.needEnd;
    }
    Job sub(job.cancelFlag(), [&job, &band, rows = s.y](double f) {
      job.report((double(band.first) + f * double(band.end - band.first)) / double(rows));
    });
    Image r = op(rowsOf(input.get(), in, band.needFirst, band.needEnd), sub);
    if (r.onHost() || r.shape() != Shape{1, band.needEnd - band.needFirst, x})
      throw CudaError("band pipeline: the operation did not return its band's rows");
    const float* own = r.data() + (band.first - band.needFirst) * x;
    float* to = out.data() + band.first * x;
    const size_t bytes = size_t(band.end - band.first) * size_t(x) * sizeof(float);
    if (outputLocked) {
      SL_CUDA(cudaEventRecord(computed, ctx->stream()));
      SL_CUDA(cudaStreamWaitEvent(down, computed));
      SL_CUDA(cudaMemcpyAsync(to, own, bytes, cudaMemcpyDeviceToHost, down));
    } else {
      ctx->download(to, own, bytes);  // through the staging, before the next band goes up
    }
    results.push_back(std::move(r));
    ++run.chunks;
  }
  // The result is complete when this returns (and so whatever is queued after it, the backend's
  // timing event included, comes after the downloads).
  ctx->waitFor(down);
  run.result = std::move(out);
  return run;
}

}  // namespace stacklens::compute::cuda
