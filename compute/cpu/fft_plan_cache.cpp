// A process-wide cache of FFTW plans keyed by shape and thread count, with wisdom on disk.
#include "compute/cpu/fft_plan_cache.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <tuple>

namespace stacklens::compute::cpu {
namespace {

std::mutex& plannerMutex() {
  static std::mutex m;
  return m;
}

std::string wisdomPath() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  std::string base;
  if (xdg && *xdg) {
    base = xdg;
  } else {
    const char* home = std::getenv("HOME");
    if (!home || !*home) return {};
    base = std::string(home) + "/.cache";
  }
  return base + "/stacklens/fftw-wisdom";
}

// A measured plan makes each transform much faster than an estimated one, so for 2D frames the
// planning pays for itself within the first deconvolution (figures in compute/BENCHMARKS.md).
// Measuring large 3D shapes takes so long that it pays only over several deconvolutions, so above
// this size only explicit requests measure.
constexpr size_t kMeasureLimit = size_t{1} << 23;

bool measureRequested() {
  const char* v = std::getenv("STACKLENS_FFTW_MEASURE");
  return v && std::string(v) == "1";
}

// Writes the wisdom next to its final place and renames it, so a reader never sees half a file.
void saveWisdom(const std::string& path) {
  if (path.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  if (fftwf_export_wisdom_to_filename(tmp.c_str())) {
    std::filesystem::rename(tmp, path, ec);
    if (ec) std::filesystem::remove(tmp, ec);
  }
}

struct Cache {
  std::map<std::tuple<int64_t, int64_t, int64_t, int, bool>, FftPlans> plans;
  std::map<std::tuple<int64_t, int64_t, int64_t, int64_t>, SlabColumnPlans> slabColumn;
  bool initialised = false;
  std::string wisdom;
  // At exit: plans and FFTW's own planner state are released (keeps leak checkers quiet).
  ~Cache() {
    for (auto& [key, p] : plans) {
      fftwf_destroy_plan(p.forward);
      fftwf_destroy_plan(p.backward);
    }
    for (auto& [key, p] : slabColumn)
      for (fftwf_plan plan : {p.slabForward, p.slabBackward, p.columnForward, p.columnBackward})
        fftwf_destroy_plan(plan);
    if (initialised) fftwf_cleanup_threads();
  }
};

}  // namespace

FftwFloats allocFloats(size_t n) {
  auto* p = static_cast<float*>(fftwf_malloc(sizeof(float) * std::max<size_t>(n, 1)));
  if (!p) throw std::bad_alloc();
  return FftwFloats(p);
}

FftwComplex allocComplex(size_t n) {
  auto* p =
      static_cast<fftwf_complex*>(fftwf_malloc(sizeof(fftwf_complex) * std::max<size_t>(n, 1)));
  if (!p) throw std::bad_alloc();
  return FftwComplex(p);
}

namespace {

Cache& cacheLocked() {
  static Cache cache;
  if (!cache.initialised) {
    fftwf_init_threads();
    cache.wisdom = wisdomPath();
    if (!cache.wisdom.empty()) fftwf_import_wisdom_from_filename(cache.wisdom.c_str());
    cache.initialised = true;
  }
  return cache;
}

// Plans with `make(flags)`: from the wisdom if it has them, else measured up to kMeasureLimit
// values (or when asked) and estimated above. make returns false when a plan is missing.
template <class Make>
void planWithWisdom(const Cache& cache, size_t values, const Make& make) {
  if (make(FFTW_MEASURE | FFTW_WISDOM_ONLY)) return;
  const bool measure = measureRequested() || values <= kMeasureLimit;
  if (!make(measure ? FFTW_MEASURE : FFTW_ESTIMATE))
    throw std::runtime_error("FFTW could not plan a transform");
  if (measure) saveWisdom(cache.wisdom);
}

const FftPlans& plansFor(int64_t z, int64_t y, int64_t x, int threads, bool cosine) {
  std::lock_guard lock(plannerMutex());
  Cache& cache = cacheLocked();
  auto key = std::make_tuple(z, y, x, threads, cosine);
  auto found = cache.plans.find(key);
  if (found != cache.plans.end()) return found->second;

  FftPlans plans;
  plans.z = z;
  plans.y = y;
  plans.x = x;
  // Planning with FFTW_MEASURE overwrites the arrays, so plan on scratch buffers.
  FftwFloats real = allocFloats(plans.realCount());
  FftwComplex spectrum = allocComplex(plans.complexCount());
  const int dims3[3] = {static_cast<int>(z), static_cast<int>(y), static_cast<int>(x)};
  const int rank = z == 1 ? 2 : 3;
  const int* dims = z == 1 ? dims3 + 1 : dims3;
  fftwf_plan_with_nthreads(threads);
  const fftwf_r2r_kind dct2[3] = {FFTW_REDFT10, FFTW_REDFT10, FFTW_REDFT10},
                       dct3[3] = {FFTW_REDFT01, FFTW_REDFT01, FFTW_REDFT01};
  auto make = [&](unsigned flags) {
    if (plans.forward) fftwf_destroy_plan(plans.forward);
    if (plans.backward) fftwf_destroy_plan(plans.backward);
    if (cosine) {
      plans.forward = fftwf_plan_r2r(rank, dims, real.get(), real.get(), dct2, flags);
      plans.backward = fftwf_plan_r2r(rank, dims, real.get(), real.get(), dct3, flags);
    } else {
      plans.forward = fftwf_plan_dft_r2c(rank, dims, real.get(), spectrum.get(), flags);
      plans.backward = fftwf_plan_dft_c2r(rank, dims, spectrum.get(), real.get(), flags);
    }
    return plans.forward && plans.backward;
  };
  planWithWisdom(cache, plans.realCount(), make);
  return cache.plans.emplace(key, plans).first->second;
}

}  // namespace

const FftPlans& fftPlans(int64_t z, int64_t y, int64_t x, int threads) {
  return plansFor(z, y, x, threads, /*cosine=*/false);
}

const FftPlans& cosinePlans(int64_t z, int64_t y, int64_t x, int threads) {
  return plansFor(z, y, x, threads, /*cosine=*/true);
}

const SlabColumnPlans& slabColumnPlans(int64_t z, int64_t y, int64_t x, int64_t width) {
  std::lock_guard lock(plannerMutex());
  Cache& cache = cacheLocked();
  auto key = std::make_tuple(z, y, x, width);
  auto found = cache.slabColumn.find(key);
  if (found != cache.slabColumn.end()) return found->second;

  const bool twoD = z == 1;
  const int64_t slabReal = twoD ? x : y * x, columns = (twoD ? 1 : y) * (x / 2 + 1);
  const int64_t length = twoD ? y : z;
  FftwFloats slab = allocFloats(size_t(slabReal));
  FftwComplex half = allocComplex(size_t(columns)), block = allocComplex(size_t(length * width));
  const int dims[2] = {static_cast<int>(y), static_cast<int>(x)};
  const int rank = twoD ? 1 : 2;
  const int* slabDims = twoD ? dims + 1 : dims;
  const int n = static_cast<int>(length), w = static_cast<int>(width);
  fftwf_plan_with_nthreads(1);
  SlabColumnPlans plans;
  auto make = [&](unsigned flags) {
    for (fftwf_plan p :
         {plans.slabForward, plans.slabBackward, plans.columnForward, plans.columnBackward})
      if (p) fftwf_destroy_plan(p);
    plans.slabForward = fftwf_plan_dft_r2c(rank, slabDims, slab.get(), half.get(), flags);
    plans.slabBackward = fftwf_plan_dft_c2r(rank, slabDims, half.get(), slab.get(), flags);
    plans.columnForward = fftwf_plan_many_dft(1, &n, w, block.get(), nullptr, w, 1, block.get(),
                                              nullptr, w, 1, FFTW_FORWARD, flags);
    plans.columnBackward = fftwf_plan_many_dft(1, &n, w, block.get(), nullptr, w, 1, block.get(),
                                               nullptr, w, 1, FFTW_BACKWARD, flags);
    return plans.slabForward && plans.slabBackward && plans.columnForward && plans.columnBackward;
  };
  planWithWisdom(cache, size_t(std::max(slabReal, length * width)), make);  // the largest plan
  return cache.slabColumn.emplace(key, plans).first->second;
}

}  // namespace stacklens::compute::cpu
