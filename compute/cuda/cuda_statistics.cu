// Sigma-clipped statistics on the GPU with astropy's sigma_clip semantics. The kept set is always
// the finite values inside [lower, upper] (the intersection of every iteration's bounds). Values
// that fit in the SMs' shared memory are clipped by one cooperative kernel that holds them there
// for the whole loop (kernels/sigma_clip_resident.cuh). Larger inputs stream from device memory
// and each iteration is: moments (count, sum, sum of squares, min, max) fused with the first digit
// of an exact radix selection of the median's two middle ranks, then two more digit passes. The
// first digit is guessed from the last iteration's median: on a hit the moments pass also collects
// that bin's values and the later digit passes read only those. The last block of the last pass
// computes the next bounds on the device, and the evaluations run in a CUDA graph's WHILE loop
// that this block ends, so the host reads the state back once, at the end. Nothing is sorted.
// Kernels: kernels/statistics.cuh; launch shapes and buffer sizes: tuning/statistics.cuh.
#include <cub/device/device_select.cuh>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "compute/cuda/host/cuda_context.cuh"
#include "compute/cuda/kernels/sigma_clip_resident.cuh"
#include "compute/cuda/kernels/statistics.cuh"
#include "compute/cuda/tuning/statistics.cuh"

#if CUDART_VERSION < 12040
#error "conditional graph nodes set from device code need CUDA 12.4"
#endif

namespace stacklens::compute::cuda {
namespace {

struct IsFinite {
  __device__ bool operator()(float v) const { return isfinite(v); }
};

// One evaluation (statistics of the values inside the control's bounds, then advance()), run
// by the graph only while the loop is not done: pass 2 sets `loop` to whether another is needed.
void enqueueEvaluation(cudaStream_t st, unsigned grid, Workspace* ws,
                       cudaGraphConditionalHandle loop) {
  countPass<0><<<grid, kThreads, 0, st>>>(ws, loop);
  digit0Fallback<<<grid, kThreads, 0, st>>>(ws);
  countPass<1><<<grid, kThreads, 0, st>>>(ws, loop);
  countPass<2><<<grid, kThreads, 0, st>>>(ws, loop);
  SL_LAUNCHED();
}

// A context's clipping state, made once: the workspace, the candidates, and per grid size the
// graph of the loop. The buffers live as long as the context and its graphs, so they come from
// cudaMalloc, not the stream-ordered pool (compute-sanitizer's memcheck also gave wrong results
// with pool memory in a conditional graph).
struct ClipLoop : Context::Extension {
  // The resident workspace is zeroed on the context's stream (which does not wait for the legacy
  // default stream), so that the first loop launched there sees it cleared.
  ClipLoop(int blocks, cudaStream_t stream) {
    if (cudaMalloc(&ws, sizeof(Workspace)) != cudaSuccess ||
        cudaMalloc(&candidates, kCandidates * sizeof(float)) != cudaSuccess ||
        cudaMalloc(&resident, sizeof(ResidentWorkspace)) != cudaSuccess ||
        cudaMalloc(&buffers.slots, 3 * blocks * sizeof(BlockSums)) != cudaSuccess ||
        cudaMalloc(&buffers.windowValues, windowValueCount() * sizeof(float)) != cudaSuccess ||
        cudaMemsetAsync(resident, 0, sizeof(ResidentWorkspace), stream) != cudaSuccess) {
      cudaGetLastError();  // not sticky: clear it
      release();
      throw DeviceOutOfMemory("sigma clipping: no device memory for its workspace");
    }
    // Without page-locked memory the result is read back from the workspace.
    constexpr unsigned kMapped = cudaHostAllocMapped | cudaHostAllocPortable;
    if (cudaHostAlloc(&hostControl, sizeof(Control), kMapped) != cudaSuccess ||
        cudaHostGetDevicePointer(&deviceControl, hostControl, 0) != cudaSuccess) {
      cudaGetLastError();
      cudaFreeHost(hostControl);
      hostControl = nullptr;
      deviceControl = &resident->control;
    }
  }
  ~ClipLoop() override {
    for (auto& [grid, exec] : graphs) cudaGraphExecDestroy(exec);
    release();
  }
  void release() {
    cudaFreeHost(hostControl);
    cudaFree(buffers.windowValues);
    cudaFree(buffers.slots);
    cudaFree(resident);
    cudaFree(candidates);
    cudaFree(ws);
  }
  Workspace* ws = nullptr;
  float* candidates = nullptr;
  std::map<unsigned, cudaGraphExec_t> graphs;
  ResidentWorkspace* resident = nullptr;
  ResidentBuffers buffers{};  // the resident kernel's, for one block per SM
  // Where the resident kernel leaves its result: mapped page-locked memory (hostControl, as the
  // device sees it), else the workspace.
  Control* hostControl = nullptr;
  Control* deviceControl = nullptr;
  std::optional<size_t> residentSharedBytes;  // dynamic shared memory a resident block may have
  size_t residentFitsBytes = 0;  // the most dynamic shared memory found to leave a block per SM
};

ClipLoop& clipLoop(const ContextPtr& ctx) {
  std::unique_ptr<Context::Extension>& slot = ctx->extension("sigma_clip.loop");
  if (!slot) slot = std::make_unique<ClipLoop>(ctx->smCount(), ctx->stream());
  return static_cast<ClipLoop&>(*slot);
}

// The dynamic shared memory one resident block may have on this device (beside the kernel's own),
// allowed for the kernel once per context; 0 where the device cannot launch cooperatively.
size_t residentSharedBytes(const ContextPtr& ctx, ClipLoop& state) {
  if (!state.residentSharedBytes) {
    int cooperative = 0, optIn = 0;
    SL_CUDA(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, ctx->device()));
    if (!cooperative) return *(state.residentSharedBytes = 0);
    SL_CUDA(cudaDeviceGetAttribute(&optIn, cudaDevAttrMaxSharedMemoryPerBlockOptin, ctx->device()));
    cudaFuncAttributes attributes{};
    SL_CUDA(cudaFuncGetAttributes(&attributes, clipResident));
    const size_t bytes = size_t(optIn) - attributes.sharedSizeBytes;
    SL_CUDA(cudaFuncSetAttribute(clipResident, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 int(bytes)));
    state.residentSharedBytes = bytes;
  }
  return *state.residentSharedBytes;
}

// The whole loop in one cooperative launch, when every block's share of the n values fits in its
// shared memory and one block per SM (at most kMostResidentBlocks SMs) can be resident; false
// (nothing launched) otherwise.
bool clipOnChip(const ContextPtr& ctx, ClipLoop& state, const float* values, int64_t n,
                const Control& control) {
  static const bool disabled = [] {
    const char* v = std::getenv("STACKLENS_CLIP_ON_CHIP");
    return v && std::string(v) == "0";
  }();
  const unsigned grid = static_cast<unsigned>(ctx->smCount());
  const size_t bytes = size_t(residentSharedFloats(n, grid)) * sizeof(float);
  if (disabled || grid > unsigned(kMostResidentBlocks) || bytes > residentSharedBytes(ctx, state))
    return false;
  if (state.residentFitsBytes < bytes) {  // asked once per larger size
    int perSm = 0;
    SL_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, clipResident, kResidentThreads,
                                                          bytes));
    if (perSm < 1) return false;
    state.residentFitsBytes = bytes;
  }
  long long count = n;
  ResidentWorkspace* ws = state.resident;
  ResidentBuffers buffers = state.buffers;
  Control initial = control;
  Control* result = state.deviceControl;
  void* args[] = {&values, &count, &ws, &buffers, &initial, &result};
  SL_CUDA(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(clipResident), dim3(grid),
                                      dim3(kResidentThreads), args, bytes, ctx->stream()));
  return true;
}

// While the workspace's loop is not done: one evaluation (its last block sets the condition).
cudaGraphExec_t loopGraph(const ContextPtr& ctx, ClipLoop& state, unsigned grid) {
  auto found = state.graphs.find(grid);
  if (found != state.graphs.end()) return found->second;
  cudaGraph_t graph = nullptr;
  SL_CUDA(cudaGraphCreate(&graph, 0));
  cudaGraphExec_t exec = nullptr;
  try {
    cudaGraphConditionalHandle handle;
    SL_CUDA(cudaGraphConditionalHandleCreate(&handle, graph, 1, cudaGraphCondAssignDefault));
    cudaGraphNodeParams params{};
    params.type = cudaGraphNodeTypeConditional;
    params.conditional.handle = handle;
    params.conditional.type = cudaGraphCondTypeWhile;
    params.conditional.size = 1;
    cudaGraphNode_t node;
#if CUDART_VERSION >= 13000
    SL_CUDA(cudaGraphAddNode(&node, graph, nullptr, nullptr, 0, &params));
#else
    SL_CUDA(cudaGraphAddNode(&node, graph, nullptr, 0, &params));
#endif
    // The body: the evaluation's launches, captured from the (idle at the host) stream.
    cudaGraph_t body = params.conditional.phGraph_out[0];
    cudaStream_t st = ctx->stream();
    SL_CUDA(cudaStreamBeginCaptureToGraph(st, body, nullptr, nullptr, 0,
                                          cudaStreamCaptureModeThreadLocal));
    try {
      enqueueEvaluation(st, grid, state.ws, handle);
    } catch (...) {
      cudaStreamEndCapture(st, &body);  // leaves the stream usable
      throw;
    }
    SL_CUDA(cudaStreamEndCapture(st, &body));
    SL_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  } catch (...) {
    cudaGraphDestroy(graph);
    throw;
  }
  cudaGraphDestroy(graph);
  state.graphs[grid] = exec;
  return exec;
}

SummaryStats summary(const StatsResult& r) {
  SummaryStats s;
  s.n = r.n;
  s.mean = r.mean;
  s.std = r.std;
  s.median = r.median;
  s.min = r.min;
  s.max = r.max;
  return s;
}

// The host's view of the loop's final state.
ClipStats clipStats(const Control& control) {
  ClipStats out;
  out.iterations = control.iterations;
  out.all = summary(control.all);
  out.clipped = summary(control.current);
  // An empty set has NaN statistics (as the CPU backend).
  for (SummaryStats* st : {&out.all, &out.clipped})
    if (st->n == 0) st->mean = st->median = st->std = st->min = st->max = std::nan("");
  return out;
}

}  // namespace

ClipStats sigmaClipValues(const ContextPtr& ctx, const float* values, int64_t n,
                          const ClipParams& p, const Job& job) {
  validate(p);
  ClipLoop& state = clipLoop(ctx);
  const double inf = std::numeric_limits<double>::infinity();
  Control control{};
  control.lower = -inf;
  control.upper = inf;
  control.kappaLower = p.kappaLower;
  control.kappaUpper = p.kappaUpper;
  control.maxIterations = p.maxIterations;
  // The loop runs on the device. Cancellation is looked at before it: a whole loop is short.
  job.checkCancelled();
  if (state.hostControl) state.hostControl->done = 0;  // set again by the kernel, last
  if (clipOnChip(ctx, state, values, n, control)) {
    if (state.hostControl) {
      if (!pollMappedFlag(&state.hostControl->done)) ctx->waitFor(ctx->stream());
      control = *state.hostControl;
    } else {
      readBack(ctx, &control, &state.resident->control, 1);
    }
    return clipStats(control);
  }
  // The passes skip non-finite values themselves and read the input where it is (a compacted
  // copy costs more than it saves unless about a fifth of the values are NaN or infinite); a
  // view that is not 16-byte aligned, which their vector loads need, gets the finite values
  // compacted into a fresh array, whose count stays on the device.
  DeviceArray<long long> selected;
  DeviceArray<float> finite;
  if (reinterpret_cast<uintptr_t>(values) % 16 != 0) {
    selected = DeviceArray<long long>(ctx, 1);
    finite = DeviceArray<float>(ctx, n);
    size_t tempBytes = 0;
    SL_CUDA(cub::DeviceSelect::If(nullptr, tempBytes, values, finite.get(), selected.get(), n,
                                  IsFinite{}, ctx->stream()));
    DeviceArray<unsigned char> temp(ctx, tempBytes);
    SL_CUDA(cub::DeviceSelect::If(temp.get(), tempBytes, values, finite.get(), selected.get(), n,
                                  IsFinite{}, ctx->stream()));
    values = finite.get();
  }
  Workspace* ws = state.ws;
  static const bool matchAny = [] {
    const char* v = std::getenv("STACKLENS_CLIP_BINNING");
    return v ? std::string(v) == "match" : tuning::SigmaClipPolicy::matchAnyBinning;
  }();
  control.matchAny = matchAny;
  constexpr int resetThreads = tuning::SigmaClipPolicy::resetThreads;
  resetWorkspace<<<blocksFor(2 * kBins, resetThreads), resetThreads, 0, ctx->stream()>>>(
      ws, control, values, selected.get(), n, state.candidates);
  SL_LAUNCHED();
  // A few blocks per SM (tuning::SigmaClipPolicy::blocksPerSm) keep the per-block histogram
  // flushes (global atomics) few.
  unsigned grid = static_cast<unsigned>(std::min<int64_t>(
      blocksFor(n, kThreads), int64_t(ctx->smCount()) * tuning::SigmaClipPolicy::blocksPerSm));
  if (grid == 0) grid = 1;
  SL_CUDA(cudaGraphLaunch(loopGraph(ctx, state, grid), ctx->stream()));
  readBack(ctx, &control, &ws->control, 1);
  return clipStats(control);
}

ClipStats sigmaClip(const ContextPtr& ctx, const Image& input, const ClipParams& p,
                    const Job& job) {
  if (input.empty()) throw InvalidArgument("sigma_clip: the image is empty");
  Image in = onDevice(ctx, input);
  return sigmaClipValues(ctx, in.data(), in.shape().count(), p, job);
}

}  // namespace stacklens::compute::cuda
