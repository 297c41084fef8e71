// Richardson–Lucy's fused FFT passes for frames whose sides are powers of two or mixed lengths of
// compute/cuda/kernels/block_fft.cuh (see cuda_rl_fused.cuh).
// The spectrum is kept as depth × height rows of width/2 + 1 complex values (pitch rounded up for
// aligned column accesses, tuning/rl_fused.cuh); the 1/N normalisation is in the OTF. A
// point-symmetric PSF's OTF is real: only that is kept, blocked by column group (ColumnArgs).
// The launch shapes are data in tuning/rl_fused.cuh.
#include <atomic>
#include <cmath>
#include <map>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>

#include "compute/cuda/cuda_rl_fused.cuh"
#include "compute/cuda/kernels/block_fft.cuh"
#include "compute/cuda/reflect_exact.cuh"
#include "compute/cuda/tuning/rl_fused.cuh"

namespace stacklens::compute::cuda {
namespace {

using blockfft::kValuesPerThread;
using blockfft::stagePosition;
using Policy = tuning::RlFusedPolicy;

enum class RowMode { Forward, Ratio, Update };
// ConvolveReal: forward, ·OTF, inverse with a real OTF (a point-symmetric PSF, where
// convolution and correlation are the same); ForwardScaledReal makes that OTF.
enum class ColumnMode {
  Convolve,
  Correlate,
  ConvolveReal,
  ForwardScaled,
  ForwardScaledReal,
  Forward,
  Inverse
};

struct RowArgs {
  float2* spectrum;
  int64_t pitch;
  const float2* roots;  // width-point roots
  const float* source;  // Forward: the real frame
  const float* observed;
  float epsilon;  // Ratio
  float* estimate;
  const float* divergence;
  float lambda;
  float* change;
  bool forwardAfter;  // Update
};

struct ColumnArgs {
  const float2* in;
  float2* out;
  const float2* otf;
  float* realOtf;       // blocked: column group, position along the column, column in the group
  int64_t pitch;        // values from one element of a column to the next
  int64_t columns;      // columns per plane
  int64_t planeStride;  // values from one plane (blockIdx.y) to the next
  const float2* roots;  // L-point roots
  float scale;          // ForwardScaled
};

// Complex values per thread in a row pass: wide for long rows, so that a transform needs one
// shared-memory exchange fewer (Policy::rowWideFromLength).
template <int L>
constexpr int rowValues() {
  return blockfft::valuesFor < L,
         L >= Policy::rowWideFromLength ? Policy::wideValues : Policy::narrowValues > ();
}
// Rows of real length 2L per block: a row is L/V threads, a block Policy::rowBlockThreads; mixed
// lengths take the most rows, a power of two, within that many threads, so that the row count of
// every supported frame (a multiple of 16) is a multiple of it.
template <int L>
constexpr int rowsPerBlock() {
  constexpr int T = L / rowValues<L>(), threads = Policy::rowBlockThreads;
  if constexpr (blockfft::isPowerOfTwo(L)) {
    return T >= threads ? 1 : threads / T;
  } else {
    int lines = 1;
    while (lines < 16 && 2 * lines * T <= threads) lines *= 2;
    return lines;
  }
}
// Whether a row's threads are whole warps or a part of one, so that they can wait for each other
// alone; otherwise (mixed lengths, 24 · 2^k threads) the block waits together.
template <int L>
constexpr bool rowsOwnTheirWarps() {
  constexpr int T = L / rowValues<L>();
  return T % 32 == 0 || 32 % T == 0;
}
// Columns per block (Policy::columnsPerBlock): adjacent columns make the global accesses of a row
// segment contiguous.
template <int L>
constexpr int columnsPerBlock() {
  return Policy::columnsPerBlock(L, blockfft::isPowerOfTwo(L));
}

// Complex values per thread in a column pass: wide for long columns (Policy::columnWideFromLength).
template <int L>
constexpr int columnValues() {
  return blockfft::valuesFor < L,
         L >= Policy::columnWideFromLength ? Policy::wideValues : Policy::narrowValues > ();
}

// Blocks of `threads` per SM the register allocation must allow for `residentThreads` resident
// threads (Policy::*ResidentThreads*), since the passes wait on memory between their compute
// phases and more resident warps hide that.
constexpr int minBlocks(int threads, int residentThreads) {
  return threads >= residentThreads ? 1 : residentThreads / threads;
}

template <int V = kValuesPerThread>
__device__ __forceinline__ blockfft::Line<V> lineAt(float2* shared, int index, int length) {
  return blockfft::Line<V>{shared + index * blockfft::lineValues<V>(length), 0, 0};
}

// One row y of the frame (real length 2L, spectrum L + 1 values). Forward: the real row → its
// half spectrum. Ratio/Update: the half spectrum → the real row (inverse real FFT), the
// element-wise step, and (Ratio always, Update when asked) the forward transform of the result.
// A real FFT of length 2L is a complex FFT of length L of z[n] = u[2n] + i·u[2n+1] with a
// pre/post step pairing the values k and L − k.
template <int L, RowMode Mode>
__global__ void __launch_bounds__(rowsPerBlock<L>() * (L / rowValues<L>()),
                                  minBlocks(rowsPerBlock<L>() * (L / rowValues<L>()),
                                            rowValues<L>() >= 24
                                                ? Policy::rowResidentThreadsWide
                                                : Policy::rowResidentThreadsNarrow))
    rowPass(RowArgs a) {
  extern __shared__ float2 shared[];
  constexpr int V = rowValues<L>(), T = L / V;
  const int t = threadIdx.x % T;
  const int64_t y = int64_t(blockIdx.x) * rowsPerBlock<L>() + threadIdx.x / T;
  // A row's threads are contiguous: they wait for each other only (their warp, or named
  // barrier 1 + row; 15 is the highest), when they own their warps.
  static_assert(!rowsOwnTheirWarps<L>() || T <= 32 || rowsPerBlock<L>() <= 15);
  blockfft::Line<V> line = lineAt<V>(shared, threadIdx.x / T, L);
  if constexpr (rowsOwnTheirWarps<L>()) {
    line.barrier = 1 + threadIdx.x / T;
    line.threads = T;
  }
  float2* row = a.spectrum + y * a.pitch;
  float2 v[V];
  if constexpr (Mode == RowMode::Forward) {
    const float2* src = reinterpret_cast<const float2*>(a.source + y * 2 * L);
#pragma unroll
    for (int r = 0; r < V; ++r) v[r] = src[stagePosition<L, V, V>(t, 0, r)];
  } else {
    // Z[n] = E + i·O, E = X[n] + conj(X[L−n]), O = (X[n] − conj(X[L−n]))·e^(+2πi n / 2L).
    // The row is parked in shared memory and X[L−n] read from there (the transform's first
    // stage waits for every thread before it overwrites the line): as fast as a second read from
    // global memory, with fewer registers.
    constexpr int R0 = blockfft::lastForwardRadix<L, V>();
#pragma unroll 4
    for (int m = 0; m < V; ++m) line.store(t + m * T, row[t + m * T]);
    if (t == 0) line.store(L, row[L]);
    line.sync();
#pragma unroll
    for (int b = 0; b < V / R0; ++b)
#pragma unroll
      for (int r = 0; r < R0; ++r) {
        const int n = stagePosition<L, R0, V>(t, b, r);
        const float2 xk = line.load(n), xm = line.load(L - n);
        const float2 e = make_float2(xk.x + xm.x, xk.y - xm.y);
        const float2 o =
            blockfft::cmulConj(make_float2(xk.x - xm.x, xk.y + xm.y), __ldg(&a.roots[n]));
        v[b * R0 + r] = make_float2(e.x - o.y, e.y + o.x);
      }
    blockfft::transform<L, true>(v, t, line, a.roots, 2);
    // v[r] = (u[2n], u[2n+1]) at n = stagePosition<L, V, V>(t, 0, r) = t + r·T: pairs of floats
    // at constant offsets from this thread's first one (fewer address registers).
    const int64_t first = y * L + t;
    const float2* observed = reinterpret_cast<const float2*>(a.observed) + first;
    float2* estimate = reinterpret_cast<float2*>(a.estimate) + first;
    const float2* divergence = reinterpret_cast<const float2*>(a.divergence) + first;
    float2* change = reinterpret_cast<float2*>(a.change) + first;
#pragma unroll
    for (int r = 0; r < V; ++r) {
      if constexpr (Mode == RowMode::Ratio) {
        const float2 o = observed[r * T];
        v[r] = make_float2(__fdividef(o.x, fmaxf(v[r].x, a.epsilon)),
                           __fdividef(o.y, fmaxf(v[r].y, a.epsilon)));
      } else {
        const float2 old = estimate[r * T];
        float2 next = make_float2(old.x * v[r].x, old.y * v[r].y);
        if (a.divergence) {
          const float2 d = divergence[r * T];
          next.x = __fdividef(next.x, fmaxf(1.f - a.lambda * d.x, 1e-3f));
          next.y = __fdividef(next.y, fmaxf(1.f - a.lambda * d.y, 1e-3f));
        }
        next = make_float2(fmaxf(next.x, 0.f), fmaxf(next.y, 0.f));
        if (a.change) change[r * T] = make_float2(next.x - old.x, next.y - old.y);
        estimate[r * T] = next;
        v[r] = next;
      }
    }
    if constexpr (Mode == RowMode::Update) {
      if (!a.forwardAfter) return;  // the same for the whole grid
    }
  }
  blockfft::transform<L, false>(v, t, line, a.roots, 2);
  // X[k] = A + e^(−2πi k / 2L)·B, A = (Z[k] + conj(Z[L−k])) / 2, B = (Z[k] − conj(Z[L−k])) / 2i.
  constexpr int RL = blockfft::lastForwardRadix<L, V>();
  line.sync();
#pragma unroll
  for (int b = 0; b < V / RL; ++b)
#pragma unroll
    for (int r = 0; r < RL; ++r) line.store(stagePosition<L, RL, V>(t, b, r), v[b * RL + r]);
  line.sync();
#pragma unroll 1
  for (int m = 0; m < V; ++m) {
    const int k = t + m * T;
    const float2 zk = line.load(k), zm = line.load(k == 0 ? 0 : L - k);
    const float2 sum = make_float2(0.5f * (zk.x + zm.x), 0.5f * (zk.y - zm.y));
    const float2 half = make_float2(0.5f * (zk.y + zm.y), -0.5f * (zk.x - zm.x));
    const float2 w = __ldg(&a.roots[k]);
    row[k] = blockfft::operator+(sum, blockfft::cmul(w, half));
  }
  if (t == 0) {
    const float2 z0 = line.load(0);
    row[L] = make_float2(z0.x - z0.y, 0.f);
  }
}

// Columns blockIdx.x·C … of plane blockIdx.y of the spectrum, transformed along their length L
// (y, or z in 3D): Forward; Inverse; forward, ·OTF or ·conj(OTF), inverse (Convolve, Correlate);
// forward and ·scale into `out` (ForwardScaled: making the OTF).
template <int L, ColumnMode Mode>
__global__ void __launch_bounds__(columnsPerBlock<L>() * (L / columnValues<L>()),
                                  minBlocks(columnsPerBlock<L>() * (L / columnValues<L>()),
                                            columnValues<L>() >= 24
                                                ? Policy::columnResidentThreadsWide
                                                : Policy::columnResidentThreadsNarrow))
    columnPass(ColumnArgs a) {
  extern __shared__ float2 shared[];
  constexpr int C = columnsPerBlock<L>(), V = columnValues<L>();
  constexpr int RL = blockfft::lastForwardRadix<L, V>();
  const int c = threadIdx.x % C, t = threadIdx.x / C;
  const int64_t k = int64_t(blockIdx.x) * C + c;
  const bool valid = k < a.columns;
  const int64_t base = blockIdx.y * a.planeStride + k;
  const blockfft::Line<V> line = lineAt<V>(shared, c, L);
  float2 v[V];
  const float2 zero = make_float2(0.f, 0.f);
  if constexpr (Mode == ColumnMode::Inverse) {
#pragma unroll
    for (int b = 0; b < V / RL; ++b)
#pragma unroll
      for (int r = 0; r < RL; ++r)
        v[b * RL + r] = valid ? a.in[base + stagePosition<L, RL, V>(t, b, r) * a.pitch] : zero;
  } else {
#pragma unroll
    for (int r = 0; r < V; ++r)
      v[r] = valid ? a.in[base + stagePosition<L, V, V>(t, 0, r) * a.pitch] : zero;
    blockfft::transform<L, false>(v, t, line, a.roots, 1);
    // The blocked real OTF: a warp's values of one (b, r) are consecutive positions of adjacent
    // columns, so contiguous.
    float* realOtf = a.realOtf + (int64_t(blockIdx.x) * L + t) * C + c;
#pragma unroll
    for (int b = 0; b < V / RL; ++b)
#pragma unroll
      for (int r = 0; r < RL; ++r) {
        const int64_t at = base + stagePosition<L, RL, V>(t, b, r) * a.pitch;
        float2& x = v[b * RL + r];
        const int realAt = stagePosition<L, RL, V>(0, b, r) * C;  // a constant from `realOtf`
        if constexpr (Mode == ColumnMode::ForwardScaled) {
          if (valid) a.out[at] = make_float2(x.x * a.scale, x.y * a.scale);
        } else if constexpr (Mode == ColumnMode::ForwardScaledReal) {
          realOtf[realAt] = valid ? x.x * a.scale : 0.f;
        } else if constexpr (Mode == ColumnMode::ConvolveReal) {
          const float o = realOtf[realAt];
          x = make_float2(x.x * o, x.y * o);
        } else if constexpr (Mode == ColumnMode::Forward) {
          if (valid) a.out[at] = x;
        } else {
          const float2 o = valid ? a.otf[at] : zero;
          x = Mode == ColumnMode::Correlate ? blockfft::cmulConj(x, o) : blockfft::cmul(x, o);
        }
      }
  }
  if constexpr (Mode == ColumnMode::Convolve || Mode == ColumnMode::Correlate ||
                Mode == ColumnMode::ConvolveReal || Mode == ColumnMode::Inverse) {
    blockfft::transform<L, true>(v, t, line, a.roots, 1);
#pragma unroll
    for (int r = 0; r < V; ++r)
      if (valid) a.out[base + stagePosition<L, V, V>(t, 0, r) * a.pitch] = v[r];
  }
}

// Boundary::ReflectExact's convolution along the last axis (reflect_exact.cuh): forward, the
// groups of mirrored frequencies mixed, ·H and unmixed in shared memory, inverse. In 2D a column
// kx holds its groups {ky, height − ky}. In 3D a group also needs the column at height − ky: a
// block takes C/2 adjacent columns of row ky and the same columns of row height − ky (twice the
// same row when ky is 0 or height/2, harmlessly), and the pair's threads share its groups.
struct ReflectExactArgs {
  float2* spectrum;
  const float2* pairs;  // the transfer pairs, in the spectrum's layout
  int64_t pitch, height, width;
  const float2* roots;  // L-point roots
  // reflect_exact::twiddle of each x, of each y (3D) and along the column.
  const float2 *xTwiddles, *yTwiddles, *twiddles;
};

template <int L, bool ThreeD>
__global__ void __launch_bounds__(columnsPerBlock<L>() * (L / columnValues<L>()),
                                  minBlocks(columnsPerBlock<L>() * (L / columnValues<L>()),
                                            columnValues<L>() >= 24
                                                ? Policy::columnResidentThreadsWide
                                                : Policy::columnResidentThreadsNarrow))
    reflectExactPass(ReflectExactArgs a) {
  extern __shared__ float2 shared[];
  constexpr int C = columnsPerBlock<L>(), V = columnValues<L>(), T = L / V, half = C / 2;
  constexpr int RL = blockfft::lastForwardRadix<L, V>();
  static_assert(!ThreeD || C >= 2);
  const int c = threadIdx.x % C, t = threadIdx.x / C;
  int64_t ky = 0, row = 0, kx;
  if constexpr (ThreeD) {
    const int64_t groupsPerRow = (a.width / 2 + half) / half;
    ky = blockIdx.x / groupsPerRow;
    row = c < half ? ky : (a.height - ky) % a.height;
    kx = (blockIdx.x % groupsPerRow) * half + c % half;
  } else {
    kx = int64_t(blockIdx.x) * C + c;
  }
  const bool valid = kx <= a.width / 2;
  // In 2D the column runs along y (pitch apart); in 3D along z (a plane apart).
  const int64_t step = ThreeD ? a.height * a.pitch : a.pitch, base = row * a.pitch + kx;
  const blockfft::Line<V> line = lineAt<V>(shared, c, L);
  float2 v[V];
  const float2 zero = make_float2(0.f, 0.f);
#pragma unroll
  for (int r = 0; r < V; ++r)
    v[r] = valid ? a.spectrum[base + stagePosition<L, V, V>(t, 0, r) * step] : zero;
  blockfft::transform<L, false>(v, t, line, a.roots, 1);
  __syncthreads();
#pragma unroll
  for (int b = 0; b < V / RL; ++b)
#pragma unroll
    for (int r = 0; r < RL; ++r) line.store(stagePosition<L, RL, V>(t, b, r), v[b * RL + r]);
  __syncthreads();
  // The groups: in 2D each column's threads take its own. In 3D the pairs of columns' groups are
  // shared by all the block's threads, a warp taking P adjacent pairs at 32 / P consecutive
  // positions, so that its shared-memory accesses fall in distinct banks and its reads of the
  // transfer pairs are whole 32-byte sectors (in 2D that mapping measured slower).
  constexpr int P = half < 4 ? half : 4, G = L / 2 + 1;
  for (int w = ThreeD ? threadIdx.x : t; w < (ThreeD ? half * G : G); w += ThreeD ? C * T : T) {
    const int q = ThreeD ? w % P + (w / P) / G * P : c, k1 = ThreeD ? (w / P) % G : w;
    const int k2 = (L - k1) % L;
    const int64_t x = ThreeD ? (blockIdx.x % ((a.width / 2 + half) / half)) * half + q
                             : int64_t(blockIdx.x) * C + q;
    if (x > a.width / 2) continue;
    const blockfft::Line<V> lineA = lineAt<V>(shared, q, L);
    const float2 wx = __ldg(&a.xTwiddles[x]), wk = __ldg(&a.twiddles[k1]);
    if constexpr (ThreeD) {
      const blockfft::Line<V> lineB = lineAt<V>(shared, q + half, L);
      const int64_t atA = ky * a.pitch + x, atB = (a.height - ky) % a.height * a.pitch + x;
      float2 s[2][2] = {{lineA.load(k1), lineA.load(k2)}, {lineB.load(k1), lineB.load(k2)}};
      const float2 h[2][2] = {{a.pairs[atA + k1 * step], a.pairs[atA + k2 * step]},
                              {a.pairs[atB + k1 * step], a.pairs[atB + k2 * step]}};
      reflect_exact::convolveGroup(s, h, wx, __ldg(&a.yTwiddles[ky]), wk);
      lineA.store(k1, s[0][0]);
      lineA.store(k2, s[0][1]);
      lineB.store(k1, s[1][0]);
      lineB.store(k2, s[1][1]);
    } else {
      float2 s[2] = {lineA.load(k1), lineA.load(k2)};
      const float2 h[2] = {a.pairs[k1 * step + x], a.pairs[k2 * step + x]};
      reflect_exact::convolveGroup(s, h, wx, wk);
      lineA.store(k1, s[0]);
      lineA.store(k2, s[1]);
    }
  }
  __syncthreads();
#pragma unroll
  for (int b = 0; b < V / RL; ++b)
#pragma unroll
    for (int r = 0; r < RL; ++r) v[b * RL + r] = line.load(stagePosition<L, RL, V>(t, b, r));
  blockfft::transform<L, true>(v, t, line, a.roots, 1);
  if (valid)
#pragma unroll
    for (int r = 0; r < V; ++r) a.spectrum[base + stagePosition<L, V, V>(t, 0, r) * step] = v[r];
}

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
