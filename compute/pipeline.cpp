// The live-processing pipeline: stage order, slab handling, per-stage timing, backend comparison.
#include "compute/pipeline.h"
#include "compute/auto_boundary.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

#include "compute/params_text.h"

namespace stacklens::compute {
namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// FNV-1a over the PSF bytes: two PSFs with the same shape but different values give
// different cache keys.
uint64_t checksum(const Image& image) {
  uint64_t h = 1469598103934665603ull;
  if (image.empty()) return h;
  const auto* bytes = reinterpret_cast<const unsigned char*>(image.data());
  for (size_t i = 0; i < image.bytes(); ++i) {
    h ^= bytes[i];
    h *= 1099511628211ull;
  }
  return h;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

const char* stageName(Stage stage) {
  switch (stage) {
    case Stage::Outliers:
      return "outliers";
    case Stage::Median:
      return "median";
    case Stage::Blur:
      return "blur";
    case Stage::Deconvolution:
      return "deconvolution";
    case Stage::Statistics:
      return "statistics";
    case Stage::Segmentation:
      return "segmentation";
  }
  return "?";
}

bool Pipeline::anyEnabled() const {
  return outliers.enabled || median.enabled || blur.enabled || deconvolution.enabled ||
         statistics.enabled || segmentation.enabled;
}

int Pipeline::slabHalfWidth() const {
  int half = 0;
  if (deconvolution.enabled && deconvolution.params.threeD)
    half = std::max(half, deconvolution.slabHalfWidth);
  // A 3D blur needs its kernel radius of neighbours, as SciPy computes it.
  if (blur.enabled && blur.params.sigmaZ > 0)
    half = std::max(half, static_cast<int>(blurRadius(blur.params.sigmaZ, blur.params.truncate)));
  return half;
}

void Pipeline::validate() const {
  // The operations' own rules (compute/params.h), then what only the pipeline adds.
  if (outliers.enabled) compute::validate(outliers.params);
  if (median.enabled) validateMedianSize(median.size);
  if (blur.enabled) {
    const auto& b = blur.params;
    compute::validate(b);
    if (b.sigmaZ * b.truncate > 64)
      throw InvalidArgument("blur: σz · truncate must be ≤ 64 slices for live processing");
  }
  if (deconvolution.enabled) {
    const auto& d = deconvolution;
    compute::validate(d.autoBoundary ? deconvolutionParams(*this) : d.params);
    if (d.params.threeD && (d.slabHalfWidth < 1 || d.slabHalfWidth > 64))
      throw InvalidArgument("deconvolution: 3D slab half-width must be 1 to 64 slices, got " +
                            std::to_string(d.slabHalfWidth));
    if (d.psf.empty()) {
      if (!(d.psfSigmaY > 0) || !(d.psfSigmaX > 0) || (d.params.threeD && !(d.psfSigmaZ > 0)))
        throw InvalidArgument("deconvolution: Gaussian PSF σ must be positive");
    } else if (!d.psf.onHost()) {
      throw InvalidArgument("deconvolution: the PSF must be a host image");
    }
  }
  if (statistics.enabled) compute::validate(statistics.params);
  if (segmentation.enabled) compute::validate(segmentation.params);
}

namespace {

// The enabled stages and their parameters, one text for both the cache key (Exact, with the
// PSF's checksum) and the HISTORY line (Readable).
std::string pipelineText(const Pipeline& p, Digits digits, bool psfChecksum) {
  std::vector<std::string> stages;
  if (p.outliers.enabled) stages.push_back("outliers " + describe(p.outliers.params, digits));
  if (p.median.enabled) stages.push_back("median " + describeMedianSize(p.median.size));
  if (p.blur.enabled) stages.push_back("blur " + describe(p.blur.params, digits));
  if (p.deconvolution.enabled) {
    const auto& d = p.deconvolution;
    std::string text = "richardson-lucy " + describe(deconvolutionParams(p), digits);
    if (d.autoBoundary) text += " (auto)";
    if (d.params.threeD) text += " slab=+-" + std::to_string(d.slabHalfWidth);
    if (d.psf.empty()) {
      text += " psf=gaussian(" + describeNumber(d.params.threeD ? d.psfSigmaZ : 0.0, digits) + "," +
              describeNumber(d.psfSigmaY, digits) + "," + describeNumber(d.psfSigmaX, digits) + ")";
    } else {
      const Shape s = d.psf.shape();
      text += " psf=" + std::to_string(s.z) + "x" + std::to_string(s.y) + "x" + std::to_string(s.x);
      if (psfChecksum) text += "#" + std::to_string(checksum(d.psf));
    }
    stages.push_back(text);
  }
  if (p.statistics.enabled) stages.push_back("statistics " + describe(p.statistics.params, digits));
  if (p.segmentation.enabled)
    stages.push_back("segmentation " + describe(p.segmentation.params, digits));
  std::string out;
  for (const auto& stage : stages) out += (out.empty() ? "" : " -> ") + stage;
  return out;
}

}  // namespace

std::string Pipeline::fingerprint() const { return pipelineText(*this, Digits::Exact, true); }

std::string Pipeline::describe() const { return pipelineText(*this, Digits::Readable, false); }

std::vector<std::string> presetNames() { return {"astronomy sources", "microscopy deconvolution"}; }

Pipeline preset(const std::string& name, Image psf) {
  Pipeline p;
  if (name == "astronomy sources") {
    p.blur.enabled = true;
    p.blur.params.sigmaY = p.blur.params.sigmaX = 1.0;
    p.statistics.enabled = true;
    p.segmentation.enabled = true;
    p.segmentation.params.nSigma = 5.0;
    p.segmentation.params.minPixels = 5;
    return p;
  }
  if (name == "microscopy deconvolution") {
    p.deconvolution.enabled = true;
    p.deconvolution.params.iterations = 20;
    p.deconvolution.params.threeD = psf.empty() || psf.shape().z > 1;
    p.deconvolution.psf = std::move(psf);
    return p;
  }
  throw InvalidArgument("unknown preset '" + name +
                        "' (expected 'astronomy sources' or 'microscopy deconvolution')");
}

Image pipelinePsf(const Pipeline& pipeline) {
  const auto& d = pipeline.deconvolution;
  if (!d.psf.empty()) return d.psf;
  return gaussianPsf(d.params.threeD ? d.psfSigmaZ : 0.0, d.psfSigmaY, d.psfSigmaX);
}

DeconvolveParams deconvolutionParams(const Pipeline& pipeline, const Image& psf) {
  DeconvolveParams p = pipeline.deconvolution.params;
  const auto& d = pipeline.deconvolution;
  if (!d.autoBoundary) return p;
  if (psf.empty() && d.psf.empty()) {
    // The Gaussian is checked against its limits, not built: see autoBoundaryForGaussian.
    gaussianPsfShape(p.threeD ? d.psfSigmaZ : 0.0, d.psfSigmaY, d.psfSigmaX);
    p.boundary = autoBoundaryForGaussian(p).boundary;
    return p;
  }
  const Image& kernel = psf.empty() ? d.psf : psf;
  if (!kernel.onHost() || kernel.empty()) return p;
  p.boundary = autoBoundary(kernel, p).boundary;
  return p;
}

Image sliceView(const Image& image, int64_t z) {
  if (z < 0 || z >= image.shape().z)
    throw InvalidArgument("slice " + std::to_string(z) + " is outside the image's " +
                          std::to_string(image.shape().z) + " slices");
  if (image.shape().z == 1) return image;
  // The view's deleter holds a copy of the parent, which keeps the storage alive.
  float* first = const_cast<float*>(image.slice(z));
  std::shared_ptr<float> storage(first, [keep = image](float*) {});
  Image view({1, image.shape().y, image.shape().x}, image.location(), std::move(storage));
  view.spacing = image.spacing;
  return view;
}

PipelineResult runPipeline(Backend& backend, const Image& slab, int64_t centreIndex,
                           const Pipeline& pipeline, const Job& job, const RunOptions& options) {
  pipeline.validate();
  if (slab.empty()) throw InvalidArgument("pipeline: the input slab is empty");
  if (options.measureTransfers && !slab.onHost())
    throw InvalidArgument("pipeline: measuring transfers needs the input slab on the host");
  if (centreIndex < 0 || centreIndex >= slab.shape().z)
    throw InvalidArgument("pipeline: centre index " + std::to_string(centreIndex) +
                          " is outside the slab's " + std::to_string(slab.shape().z) + " slices");

  const Clock::time_point runStart = Clock::now();
  PipelineResult result;
  result.backend = backend.name();
  result.device = backend.deviceName();
  result.threads = backend.threads();
  const bool transfers = options.measureTransfers;

  const auto& p = pipeline;
  const bool blur3D = p.blur.enabled && p.blur.params.sigmaZ > 0;
  const bool rl3D = p.deconvolution.enabled && p.deconvolution.params.threeD;
  // 2D work sees only the current slice; 3D stages (and the 2D ones before them) the slab.
  Image cur = (blur3D || rl3D) ? slab : sliceView(slab, centreIndex);
  int64_t centre = (blur3D || rl3D) ? centreIndex : 0;

  Image psf;
  DeconvolveParams rlParams;
  if (p.deconvolution.enabled) {
    psf = pipelinePsf(p);
    rlParams = deconvolutionParams(p, psf);
  }

  backend.device().timeOperations(true);  // each stage's device time, for the timing panel
  if (!transfers) {
    const auto t = Clock::now();
    cur = backend.upload(cur);
    if (p.deconvolution.enabled) psf = backend.upload(psf);
    backend.synchronize();
    result.uploadMs = msSince(t);
  }

  std::vector<Stage> stages;
  if (p.outliers.enabled) stages.push_back(Stage::Outliers);
  if (p.median.enabled) stages.push_back(Stage::Median);
  if (p.blur.enabled) stages.push_back(Stage::Blur);
  if (p.deconvolution.enabled) stages.push_back(Stage::Deconvolution);
  if (p.statistics.enabled) stages.push_back(Stage::Statistics);
  if (p.segmentation.enabled) stages.push_back(Stage::Segmentation);
  const double stageCount = static_cast<double>(stages.size());

  for (size_t i = 0; i < stages.size(); ++i) {
    job.checkCancelled();
    const Stage stage = stages[i];
    const Job sub(job.cancelFlag(), [&job, i, stageCount](double f) {
      job.report((static_cast<double>(i) + std::clamp(f, 0.0, 1.0)) / stageCount);
    });
    StageTiming timing;
    timing.stage = stage;
    timing.threads = backend.threads();

    const Clock::time_point stageStart = Clock::now();
    Image input = cur;
    Image stagePsf = psf;
    if (transfers) {
      input = backend.upload(cur);
      if (stage == Stage::Deconvolution) stagePsf = backend.upload(psf);
      backend.synchronize();
    }
    const Clock::time_point computeStart = Clock::now();
    Image output;
    switch (stage) {
      case Stage::Outliers:
        output = backend.removeOutliers(input, p.outliers.params, sub);
        break;
      case Stage::Median:
        output = backend.medianFilter(input, p.median.size, sub);
        break;
      case Stage::Blur:
        output = backend.gaussianBlur(input, p.blur.params, sub);
        break;
      case Stage::Deconvolution:
        output = backend.richardsonLucy(input, stagePsf, rlParams, sub);
        break;
      case Stage::Statistics:
        result.statistics = backend.sigmaClip(input, p.statistics.params, sub);
        break;
      case Stage::Segmentation: {
        SegmentParams params = p.segmentation.params;
        // The statistics stage clipped this same image with the same settings: reuse its
        // background instead of clipping a second time.
        const ClipParams& a = p.statistics.params;
        const ClipParams& b = params.clip;
        if (result.statistics && a.kappaLower == b.kappaLower && a.kappaUpper == b.kappaUpper &&
            a.maxIterations == b.maxIterations)
          params.background = result.statistics;
        result.segmentation = backend.segment(input, params, sub);
        break;
      }
    }
    backend.synchronize();
    timing.computeMs = msSince(computeStart);
    timing.deviceMs = backend.device().lastDeviceMs();

    if (result.segmentation && stage == Stage::Segmentation &&
        !result.segmentation->labels.onHost())
      result.segmentation->labels = backend.download(result.segmentation->labels);
    if (!output.empty()) {
      // Past the last 3D stage only the current slice matters.
      const bool stillNeed3D = (stage == Stage::Outliers || stage == Stage::Median) ? true
                               : stage == Stage::Blur                               ? rl3D
                                                                                    : false;
      if (!stillNeed3D && output.shape().z > 1) {
        output = sliceView(output, centre);
        centre = 0;
      }
      if (transfers) {
        output = backend.download(output);
        result.stageImages.emplace_back(stage, sliceView(output, centre));
      }
      cur = output;
    }
    if (transfers) {
      backend.synchronize();
      timing.withTransfersMs = msSince(stageStart);
    }
    result.timings.push_back(timing);
    job.report((static_cast<double>(i) + 1.0) / stageCount);
  }

  if (cur.shape().z > 1) cur = sliceView(cur, centre);
  if (options.resultOnBackend && !transfers) {
    result.image = cur;  // no download: downloadMs stays 0
    backend.synchronize();
  } else {
    const auto t = Clock::now();
    result.image = backend.download(cur);
    backend.synchronize();
    if (!transfers) result.downloadMs = msSince(t);
  }
  result.totalMs = msSince(runStart);
  return result;
}

StageDifference overlapDifference(const Image& a, const Image& b) {
  if (!(a.shape() == b.shape()))
    throw InvalidArgument("compare: the two results have different shapes");
  if (!a.onHost() || !b.onHost()) throw InvalidArgument("compare: results must be on the host");
  StageDifference d;
  d.compared = "image";
  double num = 0, den = 0;
  for (int64_t i = 0; i < a.shape().count(); ++i) {
    const double x = a.data()[i], y = b.data()[i];
    if (std::isnan(x) || std::isnan(y)) continue;
    num += (x - y) * (x - y), den += y * y;
    d.maxAbs = std::max(d.maxAbs, std::fabs(x - y));
  }
  d.relL2 = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  return d;
}

StageDifference imageDifference(const Image& a, const Image& b) {
  if (!(a.shape() == b.shape()))
    throw InvalidArgument("compare: the two results have different shapes");
  if (!a.onHost() || !b.onHost()) throw InvalidArgument("compare: results must be on the host");
  StageDifference d;
  d.compared = "image";
  double diff2 = 0, ref2 = 0;
  for (int64_t i = 0; i < a.shape().count(); ++i) {
    const double x = a.data()[i], y = b.data()[i];
    if (std::isnan(x) && std::isnan(y)) continue;
    if (!std::isfinite(x) || !std::isfinite(y)) {
      if (x == y) continue;  // the same infinity
      d.maxAbs = std::numeric_limits<double>::infinity();
      diff2 = std::numeric_limits<double>::infinity();
      continue;
    }
    const double e = x - y;
    d.maxAbs = std::max(d.maxAbs, std::abs(e));
    diff2 += e * e;
    ref2 += x * x;
  }
  d.relL2 = diff2 == 0 ? 0.0
            : ref2 > 0 ? std::sqrt(diff2 / ref2)
                       : std::numeric_limits<double>::infinity();
  return d;
}

Comparison compareBackends(Backend& a, Backend& b, const Image& slab, int64_t centreIndex,
                           const Pipeline& pipeline, const Job& job) {
  RunOptions options;
  options.measureTransfers = true;
  Comparison c;
  const Job first(job.cancelFlag(), [&job](double f) { job.report(0.5 * f); });
  const Job second(job.cancelFlag(), [&job](double f) { job.report(0.5 + 0.5 * f); });
  c.a = runPipeline(a, slab, centreIndex, pipeline, first, options);
  c.b = runPipeline(b, slab, centreIndex, pipeline, second, options);

  for (size_t i = 0; i < c.a.stageImages.size() && i < c.b.stageImages.size(); ++i) {
    StageDifference d = imageDifference(c.a.stageImages[i].second, c.b.stageImages[i].second);
    d.stage = c.a.stageImages[i].first;
    c.differences.push_back(d);
  }
  if (c.a.statistics && c.b.statistics) {
    const auto& x = c.a.statistics->clipped;
    const auto& y = c.b.statistics->clipped;
    StageDifference d;
    d.stage = Stage::Statistics;
    d.compared = "clipped median, std, mean";
    const double e[3] = {x.median - y.median, x.std - y.std, x.mean - y.mean};
    const double r[3] = {x.median, x.std, x.mean};
    double diff2 = 0, ref2 = 0;
    for (int k = 0; k < 3; ++k) {
      d.maxAbs = std::max(d.maxAbs, std::abs(e[k]));
      diff2 += e[k] * e[k];
      ref2 += r[k] * r[k];
    }
    d.relL2 = diff2 == 0 ? 0.0 : ref2 > 0 ? std::sqrt(diff2 / ref2) : 1.0;
    c.differences.push_back(d);
  }
  if (c.a.segmentation && c.b.segmentation) {
    const auto& x = c.a.segmentation->labels;
    const auto& y = c.b.segmentation->labels;
    StageDifference d;
    d.stage = Stage::Segmentation;
    d.compared = "source mask (" + std::to_string(c.a.segmentation->sources.size()) + " vs " +
                 std::to_string(c.b.segmentation->sources.size()) + " sources)";
    if (!(x.shape() == y.shape())) throw InvalidArgument("compare: label images differ in shape");
    int64_t differ = 0, foreground = 0;
    for (int64_t i = 0; i < x.shape().count(); ++i) {
      const bool fx = x.data()[i] != 0, fy = y.data()[i] != 0;
      foreground += fx;
      differ += fx != fy;
    }
    d.maxAbs = differ ? 1.0 : 0.0;
    d.relL2 = differ == 0 ? 0.0
              : foreground > 0
                  ? std::sqrt(static_cast<double>(differ) / static_cast<double>(foreground))
                  : 1.0;
    c.differences.push_back(d);
  }
  return c;
}

PipelineResult benchmarkPipeline(Backend& backend, const Image& slab, int64_t centreIndex,
                                 const Pipeline& pipeline, int repeats, const Job& job,
                                 const RunOptions& options) {
  if (repeats < 1)
    throw InvalidArgument("benchmark: repeats must be at least 1, got " + std::to_string(repeats));
  (void)runPipeline(backend, slab, centreIndex, pipeline, job, options);  // warm-up: plans, caches
  std::vector<PipelineResult> runs;
  for (int r = 0; r < repeats; ++r)
    runs.push_back(runPipeline(backend, slab, centreIndex, pipeline, job, options));
  PipelineResult out = runs.back();
  auto med = [&](const std::function<double(const PipelineResult&)>& get) {
    std::vector<double> v;
    for (const auto& run : runs) v.push_back(get(run));
    return median(std::move(v));
  };
  out.uploadMs = med([](const PipelineResult& r) { return r.uploadMs; });
  out.downloadMs = med([](const PipelineResult& r) { return r.downloadMs; });
  out.totalMs = med([](const PipelineResult& r) { return r.totalMs; });
  for (size_t s = 0; s < out.timings.size(); ++s) {
    out.timings[s].computeMs = med([s](const PipelineResult& r) { return r.timings[s].computeMs; });
    out.timings[s].deviceMs = med([s](const PipelineResult& r) { return r.timings[s].deviceMs; });
    out.timings[s].withTransfersMs =
        med([s](const PipelineResult& r) { return r.timings[s].withTransfersMs; });
  }
  return out;
}

}  // namespace stacklens::compute
