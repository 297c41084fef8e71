// A process-wide cache of FFTW plans keyed by shape and thread count, with wisdom on disk.
#include "compute/cpu/fft_plan_cache.h"

#include <unistd.h>
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
  bool initialised = false;
  std::string wisdom;
  // At exit: plans and FFTW's own planner state are released (keeps leak checkers quiet).
  ~Cache() {
    for (auto& [key, p] : plans) {
      fftwf_destroy_plan(p.forward);
      fftwf_destroy_plan(p.backward);
    }
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

const FftPlans& plansFor(int64_t z, int64_t y, int64_t x, int threads, bool cosine) {
  std::lock_guard lock(plannerMutex());
  static Cache cache;
  if (!cache.initialised) {
    fftwf_init_threads();
    cache.wisdom = wisdomPath();
    if (!cache.wisdom.empty()) fftwf_import_wisdom_from_filename(cache.wisdom.c_str());
    cache.initialised = true;
  }
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
    if (cosine) {
      plans.forward = fftwf_plan_r2r(rank, dims, real.get(), real.get(), dct2, flags);
      plans.backward = fftwf_plan_r2r(rank, dims, real.get(), real.get(), dct3, flags);
      return;
    }
    plans.forward = fftwf_plan_dft_r2c(rank, dims, real.get(), spectrum.get(), flags);
    plans.backward = fftwf_plan_dft_c2r(rank, dims, spectrum.get(), real.get(), flags);
  };
  make(FFTW_MEASURE | FFTW_WISDOM_ONLY);
  if (!plans.forward || !plans.backward) {
    if (plans.forward) fftwf_destroy_plan(plans.forward);
    if (plans.backward) fftwf_destroy_plan(plans.backward);
    const bool measure = measureRequested() || plans.realCount() <= kMeasureLimit;
    make(measure ? FFTW_MEASURE : FFTW_ESTIMATE);
    if (measure) saveWisdom(cache.wisdom);
  }
  if (!plans.forward || !plans.backward)
    throw std::runtime_error("FFTW could not plan a transform");
  return cache.plans.emplace(key, plans).first->second;
}

}  // namespace

const FftPlans& fftPlans(int64_t z, int64_t y, int64_t x, int threads) {
  return plansFor(z, y, x, threads, /*cosine=*/false);
}

const FftPlans& cosinePlans(int64_t z, int64_t y, int64_t x, int threads) {
  return plansFor(z, y, x, threads, /*cosine=*/true);
}

}  // namespace stacklens::compute::cpu
