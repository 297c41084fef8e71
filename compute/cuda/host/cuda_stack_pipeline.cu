// The chunked, overlapped host → device → host pipeline for the per-slice operations.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "compute/cuda/host/cuda_stack_pipeline.cuh"
#include "compute/cuda/host/host_copy.cuh"
#include "compute/cuda/host/host_result_memory.cuh"
#include "compute/log.h"

namespace stacklens::compute::cuda {
namespace {

constexpr size_t kUploadPieceBytes = tuning::TransferPolicy::uploadPieceBytes;

// Events for the two halves of the double buffer: chunk uploaded, chunk computed (its input
// buffer free again), chunk downloaded (its staging readable).
class PipelineEvents {
 public:
  PipelineEvents() {
    for (cudaEvent_t& e : all_) {
      // Blocking: past Context::waitFor's polling, the host sleeps through a long chunk.
      cudaError_t err =
          cudaEventCreateWithFlags(&e, cudaEventDisableTiming | cudaEventBlockingSync);
      if (err != cudaSuccess) {
        destroy();
        SL_CUDA(err);
      }
    }
  }
  ~PipelineEvents() { destroy(); }
  PipelineEvents(const PipelineEvents&) = delete;
  PipelineEvents& operator=(const PipelineEvents&) = delete;
  cudaEvent_t uploaded(int b) const { return all_[b]; }
  cudaEvent_t computed(int b) const { return all_[2 + b]; }
  cudaEvent_t downloaded(int b) const { return all_[4 + b]; }

 private:
  void destroy() {
    for (cudaEvent_t& e : all_)
      if (e) cudaEventDestroy(e), e = nullptr;
  }
  cudaEvent_t all_[6] = {};
};

// Processes slices [*done, in.z) in chunks of g slices; *done advances as chunks land on the host.
void runChunks(const ContextPtr& ctx, const Image& in, int64_t g, const SliceOp& op, const Job& job,
               Image& out, int64_t* done, int* chunks) {
  const Shape s = in.shape();
  const int64_t sliceVoxels = s.sliceCount();
  const int64_t first = *done;
  const int64_t n = (s.z - first + g - 1) / g;
  auto chunkStart = [&](int64_t k) { return first + k * g; };
  auto chunkLength = [&](int64_t k) { return std::min(g, s.z - chunkStart(k)); };
  const size_t inBytes = size_t(g) * size_t(sliceVoxels) * sizeof(float);

  DeviceArray<float> input[2] = {DeviceArray<float>(ctx, size_t(g) * sliceVoxels),
                                 DeviceArray<float>(ctx, size_t(g) * sliceVoxels)};
  float* stagedIn[2] = {ctx->pinnedStaging(0, inBytes), ctx->pinnedStaging(1, inBytes)};
  float* stagedOut[2] = {nullptr, nullptr};
  int64_t outSliceVoxels = 0;
  PipelineEvents ev;
  Image result[2];
  // Destroyed first: no buffer above is released while a copy may still use it.
  DrainOnExit drainFirst{*ctx};
  cudaStream_t compute = ctx->stream(), up = ctx->uploadStream(), down = ctx->downloadStream();
  // The input buffers were allocated on the compute stream: uploads start after that.
  for (int b = 0; b < 2; ++b) SL_CUDA(cudaEventRecord(ev.computed(b), compute));

  // Page-locked input (the viewer's slices) and output (hostResult's memory) are read and written
  // by the DMA itself; else through the staging buffers, with a host copy each.
  const bool inputLocked = pageLocked(in.data());
  bool outputLocked = false;
  auto stage = [&](int64_t k) {
    const int b = int(k % 2);
    const size_t bytes = size_t(chunkLength(k)) * size_t(sliceVoxels) * sizeof(float);
    const float* from = in.data() + chunkStart(k) * sliceVoxels;
    SL_CUDA(cudaStreamWaitEvent(up, ev.computed(b)));  // chunk k−2 no longer reads input[b]
    if (inputLocked) {
      SL_CUDA(cudaMemcpyAsync(input[b].get(), from, bytes, cudaMemcpyHostToDevice, up));
    } else {
      ctx->waitFor(ev.uploaded(b));  // its staging's previous DMA has finished
      // The chunk goes up piece by piece as the copy threads stage it.
      DmaPieces pieces;
      pieces.pieceBytes = kUploadPieceBytes;
      pieces.slots = int64_t((bytes + kUploadPieceBytes - 1) / kUploadPieceBytes);
      char* staging = reinterpret_cast<char*>(stagedIn[b]);
      char* to = reinterpret_cast<char*>(input[b].get());
      pieces.staging = [&](int64_t slot) { return staging + size_t(slot) * kUploadPieceBytes; };
      pieces.waitUntilRead = [](int64_t) {};  // the whole staging was waited for above
      pieces.send = [&](int64_t piece, int64_t, const char* staged, size_t n) {
        const ScopedDevice on(ctx->device());  // sent from a copy thread
        SL_CUDA(cudaMemcpyAsync(to + size_t(piece) * kUploadPieceBytes, staged, n,
                                cudaMemcpyHostToDevice, up));
      };
      copyForDmaInPieces(from, bytes, pieces);
    }
    SL_CUDA(cudaEventRecord(ev.uploaded(b), up));
  };
  auto finish = [&](int64_t k) {
    const int b = int(k % 2);
    ctx->waitFor(ev.downloaded(b));
    const size_t count = size_t(chunkLength(k)) * size_t(outSliceVoxels);
    if (!outputLocked)
      copyParallel(out.data() + chunkStart(k) * outSliceVoxels, stagedOut[b],
                   count * sizeof(float));
    result[b] = Image();  // freed on the compute stream, after its download
    *done = chunkStart(k) + chunkLength(k);
  };

  stage(0);
  for (int64_t k = 0; k < n; ++k) {
    const int b = int(k % 2);
    const int64_t z0 = chunkStart(k), len = chunkLength(k);
    job.checkCancelled();
    SL_CUDA(cudaStreamWaitEvent(compute, ev.uploaded(b)));
    // A view of the uploaded chunk (owned by input[b], which outlives every use of it).
    Image chunk(Shape{len, s.y, s.x}, Location::Cuda,
                std::shared_ptr<float>(std::shared_ptr<float>(), input[b].get()));
    chunk.spacing = in.spacing;
    Job sub(job.cancelFlag(), [&job, z0, len, total = s.z](double f) {
      job.report((double(z0) + f * double(len)) / double(total));
    });
    Image r = op(chunk, sub);
    SL_CUDA(cudaEventRecord(ev.computed(b), compute));
    if (r.onHost() || r.shape().z != len)
      throw CudaError("stack pipeline: the operation did not return one device slice per slice");
    if (out.empty()) {
      out = hostResult<float>(Shape{s.z, r.shape().y, r.shape().x});
      out.spacing = r.spacing;
    }
    if (outSliceVoxels == 0) {
      outputLocked = pageLocked(out.data());
      outSliceVoxels = r.shape().sliceCount();
      const size_t outBytes = size_t(g) * size_t(outSliceVoxels) * sizeof(float);
      stagedOut[0] = ctx->pinnedStaging(2, outBytes);
      stagedOut[1] = ctx->pinnedStaging(3, outBytes);
    }
    if (r.shape().y != out.shape().y || r.shape().x != out.shape().x)
      throw CudaError("stack pipeline: chunks gave slices of different sizes");
    SL_CUDA(cudaStreamWaitEvent(down, ev.computed(b)));
    float* to = outputLocked ? out.data() + z0 * outSliceVoxels : stagedOut[b];
    SL_CUDA(cudaMemcpyAsync(to, r.data(), r.bytes(), cudaMemcpyDeviceToHost, down));
    SL_CUDA(cudaEventRecord(ev.downloaded(b), down));
    result[b] = std::move(r);
    ++*chunks;
    // The host copies of the neighbouring chunks overlap this chunk's compute and download.
    if (k + 1 < n) stage(k + 1);
    if (k >= 1) finish(k - 1);
  }
  finish(n - 1);
  // Later work on the compute stream (and the backend's timing event) comes after the downloads.
  SL_CUDA(cudaStreamWaitEvent(compute, ev.downloaded(int((n - 1) % 2))));
}

}  // namespace

void drain(const Context& ctx) {
  cudaStreamSynchronize(ctx.uploadStream());
  cudaStreamSynchronize(ctx.downloadStream());
  cudaStreamSynchronize(ctx.stream());
  cudaGetLastError();
}

int64_t planChunkSlices(size_t budget, Shape shape, SliceWork work) {
  const size_t voxels = size_t(shape.sliceCount());
  if (shape.z <= 0 || voxels == 0) return std::max<int64_t>(shape.z, 0);
  const size_t perSlice = 2 * voxels * sizeof(float) + 2 * voxels * work.bytesPerVoxel;
  if (budget <= work.fixedBytes) return 0;
  const int64_t fit = int64_t((budget - work.fixedBytes) / perSlice);
  const int64_t target =
      std::max<int64_t>(1, int64_t(kTargetChunkBytes / (voxels * sizeof(float))));
  return std::min({fit, target, shape.z});
}

bool pipelineEnabled() {
  const char* v = std::getenv("STACKLENS_CUDA_PIPELINE");
  return !(v && std::strcmp(v, "0") == 0);
}

PipelineRun pipelineSlices(const ContextPtr& ctx, const char* what, const Image& in, SliceWork work,
                           const SliceOp& op, const Job& job) {
  if (!in.onHost()) throw InvalidArgument("stack pipeline: the input must be on the host");
  PipelineRun run;
  if (in.empty()) {
    run.result = op(in, job);  // the operation's own message about the empty image
    return run;
  }
  const Shape s = in.shape();
  int64_t g = planChunkSlices(ctx->budget(), s, work);
  if (g < 1)
    throw DeviceOutOfMemory(
        "one " + std::to_string(s.y) + "×" + std::to_string(s.x) + " slice needs about " +
        std::to_string((work.fixedBytes + 4 * size_t(s.sliceCount()) * (4 + work.bytesPerVoxel)) >>
                       10) +
        " KiB of GPU memory; the budget is " + std::to_string(ctx->budget() >> 10) + " KiB");
  if (g < s.z && g < planChunkSlices(size_t(-1), s, work))
    logMessage(LogLevel::Info,
               std::string(what) + " does not fit the GPU memory budget (" +
                   std::to_string(ctx->budget() >> 20) +
                   " MiB) in one piece; processing the stack in groups of slices (" +
                   std::to_string(g) + " per chunk)");
  int64_t done = 0;
  for (;;) {
    try {
      runChunks(ctx, in, g, op, job, run.result, &done, &run.chunks);
      break;
    } catch (const DeviceOutOfMemory& e) {
      drain(*ctx);
      if (g == 1) throw;
      const int64_t was = g;
      g = (g + 1) / 2;
      logMessage(LogLevel::Info, std::string(what) + ": out of GPU memory with chunks of " +
                                     std::to_string(was) + " slices (" + e.what() +
                                     "); going on in chunks of " + std::to_string(g));
    }
  }
  run.chunkSlices = g;
  return run;
}

}  // namespace stacklens::compute::cuda
