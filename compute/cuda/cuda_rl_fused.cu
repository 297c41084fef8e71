// Richardson–Lucy's fused FFT passes for frames whose sides are powers of two or mixed lengths of
// compute/cuda/kernels/block_fft.cuh (see cuda_rl_fused.cuh).
// The spectrum is kept as depth × height rows of width/2 + 1 complex values (pitch rounded up for
// aligned column accesses, tuning/rl_fused.cuh); the 1/N normalisation is in the OTF. A
// point-symmetric PSF's OTF is real: only that is kept, blocked by column group (ColumnArgs).
// The kernels are in kernels/rl_fused.cuh; the launch shapes are data in tuning/rl_fused.cuh.
#include <atomic>
#include <cmath>
#include <map>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>

#include "compute/cuda/cuda_rl_fused.cuh"
#include "compute/cuda/kernels/block_fft.cuh"
#include "compute/cuda/kernels/rl_fused.cuh"
#include "compute/cuda/reflect_exact.cuh"
#include "compute/cuda/tuning/rl_fused.cuh"

namespace stacklens::compute::cuda {
namespace {

// Calls f(std::integral_constant<int, L>) for the supported length n.
template <class F>
void withLength(int64_t n, F&& f) {
  switch (n) {
    case 64:
      return f(std::integral_constant<int, 64>{});
    case 128:
      return f(std::integral_constant<int, 128>{});
    case 256:
      return f(std::integral_constant<int, 256>{});
    case 512:
      return f(std::integral_constant<int, 512>{});
    case 1024:
      return f(std::integral_constant<int, 1024>{});
    case 2048:
      return f(std::integral_constant<int, 2048>{});
    case 4096:
      return f(std::integral_constant<int, 4096>{});
    // Mixed lengths (block_fft.cuh) for reflect- and zero-padded frames.
    case 144:
      return f(std::integral_constant<int, 144>{});
    case 288:
      return f(std::integral_constant<int, 288>{});
    case 576:
      return f(std::integral_constant<int, 576>{});
    case 1152:
      return f(std::integral_constant<int, 1152>{});
    case 1728:
      return f(std::integral_constant<int, 1728>{});
    case 2304:
      return f(std::integral_constant<int, 2304>{});
    case 3456:
      return f(std::integral_constant<int, 3456>{});
    default:
      throw CudaError("fused FFT: unsupported length " + std::to_string(n));
  }
}

// Launches a kernel with `sharedBytes` of dynamic shared memory; `raised` is the caller's
// per-kernel record of the devices on which the 48 KiB default limit was lifted (bit d: device
// d). The limit is a property of the kernel on each device: lifted on one GPU, a launch on
// another with more shared memory fails.
template <class Kernel, class Args>
void launch(Kernel kernel, dim3 blocks, unsigned threads, size_t sharedBytes, cudaStream_t stream,
            const Args& args, std::atomic<uint64_t>& raised) {
  if (sharedBytes > (48u << 10)) {
    int device = 0;
    SL_CUDA(cudaGetDevice(&device));
    const uint64_t bit = device < 64 ? uint64_t(1) << device : 0;
    if (!bit || !(raised.load() & bit)) {
      SL_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   static_cast<int>(sharedBytes)));
      raised |= bit;
    }
  }
  kernel<<<blocks, threads, sharedBytes, stream>>>(args);
  SL_LAUNCHED();
}

template <RowMode Mode>
void runRows(int64_t rows, int64_t width, const RowArgs& args, cudaStream_t stream) {
  withLength(width / 2, [&](auto length) {
    constexpr int L = decltype(length)::value;
    constexpr int lines = rowsPerBlock<L>();
    static std::atomic<uint64_t> raised{0};  // per instantiation
    constexpr int V = rowValues<L>();
    launch(rowPass<L, Mode>, dim3(static_cast<unsigned>(rows / lines)), lines * (L / V),
           size_t(lines) * blockfft::lineValues<V>(L) * sizeof(float2), stream, args, raised);
  });
}

template <ColumnMode Mode>
void runColumns(int64_t length, int64_t planes, const ColumnArgs& args, cudaStream_t stream) {
  withLength(length, [&](auto constant) {
    constexpr int L = decltype(constant)::value;
    constexpr int C = columnsPerBlock<L>();
    static std::atomic<uint64_t> raised{0};  // per instantiation
    const dim3 grid(static_cast<unsigned>((args.columns + C - 1) / C),
                    static_cast<unsigned>(planes));
    constexpr int V = columnValues<L>();
    launch(columnPass<L, Mode>, grid, C * (L / V),
           size_t(C) * blockfft::lineValues<V>(L) * sizeof(float2), stream, args, raised);
  });
}

const float2* complexAt(const float* p) { return reinterpret_cast<const float2*>(p); }

template <bool ThreeD>
void runReflectExact(const FusedRlTransforms::Layout& f, cudaStream_t stream) {
  const int64_t length = ThreeD ? f.depth : f.height;
  withLength(length, [&](auto constant) {
    constexpr int L = decltype(constant)::value;
    constexpr int C = columnsPerBlock<L>(), V = columnValues<L>();
    static std::atomic<uint64_t> raised{0};  // per instantiation
    const int64_t columns = f.width / 2 + 1;
    const int64_t blocks =
        ThreeD ? (f.height / 2 + 1) * ((columns + C / 2 - 1) / (C / 2)) : (columns + C - 1) / C;
    const ReflectExactArgs args{reinterpret_cast<float2*>(f.spectrum),
                                reinterpret_cast<const float2*>(f.otf),
                                f.pitch,
                                f.height,
                                f.width,
                                complexAt(ThreeD ? f.depthRoots : f.columnRoots),
                                complexAt(f.twiddles[2]),
                                complexAt(f.twiddles[1]),
                                complexAt(f.twiddles[ThreeD ? 0 : 1])};
    launch(reflectExactPass<L, ThreeD>, dim3(static_cast<unsigned>(blocks)), C * (L / V),
           size_t(C) * blockfft::lineValues<V>(L) * sizeof(float2), stream, args, raised);
  });
}

// e^(−2πi j / n), j < n, as interleaved (cos, sin), computed in double once per length: made
// afresh they cost more host time than a 2048² iteration takes on the GPU.
const std::vector<float>& unitRoots(int64_t n) {
  static std::mutex mutex;
  static std::map<int64_t, std::vector<float>> tables;  // a few lengths
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, made] = tables.try_emplace(n);
  if (made) {
    std::vector<float>& roots = it->second;
    roots.resize(2 * n);
    for (int64_t j = 0; j < n; ++j) {
      const double angle = -2.0 * M_PI * double(j) / double(n);
      roots[2 * j] = static_cast<float>(std::cos(angle));
      roots[2 * j + 1] = static_cast<float>(std::sin(angle));
    }
  }
  return it->second;
}

using Layout = FusedRlTransforms::Layout;

float2* complexAt(float* p) { return reinterpret_cast<float2*>(p); }
const float2* rootsAt(const float* p) { return reinterpret_cast<const float2*>(p); }

// The y transforms: columns of width/2 + 1 values per plane, one plane per z.
ColumnArgs yAxis(const Layout& f) {
  return ColumnArgs{
      complexAt(f.spectrum), complexAt(f.spectrum), complexAt(f.otf),       f.otf, f.pitch,
      f.width / 2 + 1,       f.height * f.pitch,    rootsAt(f.columnRoots), 1.f};
}

template <ColumnMode Mode>
void runYAxis(const Layout& f, cudaStream_t stream) {
  runColumns<Mode>(f.height, f.depth, yAxis(f), stream);
}

// The transforms along the last axis (y in 2D, z in 3D) with their output in `out`; in 3D every
// (y, x) position of a plane, pitch padding included, is one column of length depth.
template <ColumnMode Mode>
void runLastAxis(const Layout& f, float* out, float scale, cudaStream_t stream) {
  ColumnArgs c = yAxis(f);
  c.out = complexAt(out);
  c.scale = scale;
  if (f.depth == 1) return runColumns<Mode>(f.height, 1, c, stream);
  c.pitch = c.columns = f.height * f.pitch;
  c.planeStride = 0;
  c.roots = rootsAt(f.depthRoots);
  runColumns<Mode>(f.depth, 1, c, stream);
}

RowArgs rowArgs(const Layout& f) {
  RowArgs r{};
  r.spectrum = complexAt(f.spectrum);
  r.pitch = f.pitch;
  r.roots = rootsAt(f.rowRoots);
  return r;
}

}  // namespace

namespace {
// Lengths with kernels (withLength): every supported power of two and these mixed ones.
bool hasKernels(int64_t n) {
  if (blockfft::isPowerOfTwo(n)) return blockfft::isSupportedLength(n);
  for (int64_t m : {144, 288, 576, 1152, 1728, 2304, 3456})
    if (n == m) return true;
  return false;
}
}  // namespace

bool FusedRlTransforms::supports(int64_t depth, int64_t height, int64_t width) {
  if (!((depth == 1 || hasKernels(depth)) && hasKernels(height) && width % 2 == 0 &&
        hasKernels(width / 2)))
    return false;
  int lines = 1;  // the row passes take whole blocks of rows
  withLength(width / 2, [&](auto l) { lines = rowsPerBlock<decltype(l)::value>(); });
  return (depth * height) % lines == 0;
}

namespace {
// Rows padded to Policy::spectrumPitchValues complex values.
int64_t pitchFor(int64_t width) {
  constexpr int64_t m = Policy::spectrumPitchValues;
  return (width / 2 + 1 + m - 1) / m * m;
}
}  // namespace

size_t FusedRlTransforms::otfFloats(int64_t depth, int64_t height, int64_t width, bool realOtf) {
  if (!realOtf) return size_t(2) * depth * height * pitchFor(width);
  // Whole column groups of the last axis (see ColumnArgs::realOtf).
  const int64_t length = depth > 1 ? depth : height;
  const int64_t columns = depth > 1 ? height * pitchFor(width) : width / 2 + 1;
  int64_t group = 1;
  withLength(length, [&](auto l) { group = columnsPerBlock<decltype(l)::value>(); });
  return size_t((columns + group - 1) / group * group * length);
}

FusedRlTransforms::FusedRlTransforms(const ContextPtr& ctx, int64_t depth, int64_t height,
                                     int64_t width, float* otf, bool realOtf, bool reflectExact)
    : ctx_(ctx), reflectExact_(reflectExact) {
  if (!supports(depth, height, width))
    throw CudaError("fused FFT: unsupported frame " + std::to_string(depth) + "x" +
                    std::to_string(height) + "x" + std::to_string(width));
  // The spectrum has the complex OTF's layout.
  const size_t floats = otfFloats(depth, height, width, /*realOtf=*/false);
  spectrum_ = DeviceArray<float>(ctx, floats);
  layout_ = Layout{depth,
                   height,
                   width,
                   pitchFor(width),
                   spectrum_.get(),
                   otf,
                   realOtf,
                   ctx->constants(unitRoots(width)),
                   ctx->constants(unitRoots(height)),
                   depth > 1 ? ctx->constants(unitRoots(depth)) : nullptr};
  if (reflectExact)
    for (int a = 0; a < 3; ++a) {
      const int64_t n = a == 0 ? depth : a == 1 ? height : width;
      layout_.twiddles[a] = n > 1 ? ctx->constants(reflect_exact::twiddles(n)) : nullptr;
    }
  // The pitch's padding columns are never written by the row passes but are transformed along
  // z in 3D: zeros keep them finite.
  SL_CUDA(cudaMemsetAsync(spectrum_.get(), 0, floats * sizeof(float), ctx->stream()));
}

void FusedRlTransforms::makeOtf(const float* placedPsf) {
  const Layout& f = layout_;
  forward(placedPsf);
  const float scale = static_cast<float>(1.0 / (double(f.depth) * double(f.height) * f.width));
  if (f.realOtf)
    runLastAxis<ColumnMode::ForwardScaledReal>(f, f.otf, scale, ctx_->stream());
  else
    runLastAxis<ColumnMode::ForwardScaled>(f, f.otf, scale, ctx_->stream());
}

void FusedRlTransforms::makeReflectExactOtf(const float* psf, int64_t psfDepth, int64_t psfHeight,
                                            int64_t psfWidth) {
  const Layout& f = layout_;
  const float scale = static_cast<float>(1.0 / (double(f.depth) * double(f.height) * f.width));
  reflect_exact::makeTransfer(ctx_, psf, psfDepth, psfHeight, psfWidth, f.depth, f.height, f.width,
                              f.pitch, scale, reinterpret_cast<float2*>(f.otf));
}

void FusedRlTransforms::convolveLastAxis(bool correlate, cudaStream_t st) {
  const Layout& f = layout_;
  if (reflectExact_) {  // a symmetric PSF: convolution and correlation are the same
    if (f.depth > 1)
      runReflectExact<true>(f, st);
    else
      runReflectExact<false>(f, st);
  } else if (f.realOtf) {  // a real OTF's conjugate is itself
    runLastAxis<ColumnMode::ConvolveReal>(f, f.spectrum, 1.f, st);
  } else if (correlate) {
    runLastAxis<ColumnMode::Correlate>(f, f.spectrum, 1.f, st);
  } else {
    runLastAxis<ColumnMode::Convolve>(f, f.spectrum, 1.f, st);
  }
}

void FusedRlTransforms::forward(const float* estimate) {
  const Layout& f = layout_;
  RowArgs r = rowArgs(f);
  r.source = estimate;
  runRows<RowMode::Forward>(f.depth * f.height, f.width, r, ctx_->stream());
  if (f.depth > 1) runYAxis<ColumnMode::Forward>(f, ctx_->stream());
}

void FusedRlTransforms::blurAndRatio(const float* observed, float epsilon) {
  const Layout& f = layout_;
  cudaStream_t st = ctx_->stream();
  convolveLastAxis(/*correlate=*/false, st);
  if (f.depth > 1) runYAxis<ColumnMode::Inverse>(f, st);
  RowArgs r = rowArgs(f);
  r.observed = observed;
  r.epsilon = epsilon;
  runRows<RowMode::Ratio>(f.depth * f.height, f.width, r, st);
  if (f.depth > 1) runYAxis<ColumnMode::Forward>(f, st);
}

void FusedRlTransforms::correlateAndUpdate(float* estimate, const float* divergence, float lambda,
                                           float* change, bool forwardNext) {
  const Layout& f = layout_;
  cudaStream_t st = ctx_->stream();
  convolveLastAxis(/*correlate=*/true, st);
  if (f.depth > 1) runYAxis<ColumnMode::Inverse>(f, st);
  RowArgs r = rowArgs(f);
  r.estimate = estimate;
  r.divergence = divergence;
  r.lambda = lambda;
  r.change = change;
  r.forwardAfter = forwardNext;
  runRows<RowMode::Update>(f.depth * f.height, f.width, r, st);
  if (f.depth > 1 && forwardNext) runYAxis<ColumnMode::Forward>(f, st);
}

}  // namespace stacklens::compute::cuda
