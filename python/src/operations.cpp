// Filters and measurements: the CLI's operations on arrays, with its defaults.
#include <pybind11/stl.h>

#include <array>
#include <string>
#include <vector>

#include "compute/params.h"
#include "compute/projection.h"
#include "python/src/arrays.h"
#include "python/src/backends.h"
#include "python/src/operations.h"

namespace stacklens::python {
namespace {

using compute::Image;
using namespace pybind11::literals;

std::vector<double> numbers(const py::handle& v) {
  if (py::isinstance<py::float_>(v) || py::isinstance<py::int_>(v)) return {v.cast<double>()};
  return v.cast<std::vector<double>>();
}

// (z, y, x) from V (y and x), (Vy, Vx) or (Vz, Vy, Vx); z is `z` unless given.
std::array<double, 3> perAxis(const py::handle& v, double z, const char* what) {
  const std::vector<double> n = numbers(v);
  if (n.size() == 1) return {z, n[0], n[0]};
  if (n.size() == 2) return {z, n[0], n[1]};
  if (n.size() == 3) return {n[0], n[1], n[2]};
  throw compute::InvalidArgument(std::string(what) + ": expected one value, (y, x) or (z, y, x)");
}

compute::OutlierMode outlierMode(const std::string& mode) {
  if (mode == "bright") return compute::OutlierMode::Bright;
  if (mode == "dark") return compute::OutlierMode::Dark;
  if (mode == "both") return compute::OutlierMode::Both;
  throw compute::InvalidArgument("mode: expected 'bright', 'dark' or 'both', got '" + mode + "'");
}

py::dict statsDict(const compute::SummaryStats& s) {
  py::dict d;
  d["n"] = s.n;
  d["mean"] = s.mean;
  d["median"] = s.median;
  d["std"] = s.std;
  d["min"] = s.min;
  d["max"] = s.max;
  return d;
}

py::dict clipDict(const compute::ClipStats& c) {
  py::dict d = statsDict(c.clipped);
  d["iterations"] = c.iterations;
  d["all"] = statsDict(c.all);
  return d;
}

// The source table as a dict of NumPy columns (names as the CLI's --sources CSV).
py::dict sourceTable(const std::vector<compute::Source>& sources) {
  auto column = [&](auto get) {
    using T = decltype(get(compute::Source{}));
    const std::vector<py::ssize_t> n{static_cast<py::ssize_t>(sources.size())};
    py::array_t<T> a(n, stridesOf(n, sizeof(T)));
    T* w = a.mutable_data();
    for (size_t i = 0; i < sources.size(); ++i) w[i] = get(sources[i]);
    return a;
  };
  py::dict t;
  t["label"] = column([](const compute::Source& s) { return s.label; });
  t["z"] = column([](const compute::Source& s) { return s.z; });
  t["npix"] = column([](const compute::Source& s) { return s.npix; });
  t["flux"] = column([](const compute::Source& s) { return s.flux; });
  t["x_centroid"] = column([](const compute::Source& s) { return s.centroidX; });
  t["y_centroid"] = column([](const compute::Source& s) { return s.centroidY; });
  t["peak"] = column([](const compute::Source& s) { return s.peak; });
  t["x_peak"] = column([](const compute::Source& s) { return s.peakX; });
  t["y_peak"] = column([](const compute::Source& s) { return s.peakY; });
  t["x_min"] = column([](const compute::Source& s) { return s.xMin; });
  t["x_max"] = column([](const compute::Source& s) { return s.xMax; });
  t["y_min"] = column([](const compute::Source& s) { return s.yMin; });
  t["y_max"] = column([](const compute::Source& s) { return s.yMax; });
  return t;
}

// blur and median: the per-slice smoothing filters, as scipy.ndimage's with mode='reflect'.
void addSmoothing(py::module_& m) {
  m.def(
      "blur",
      [](const py::handle& image, const py::handle& sigma, double truncate, bool nanAware,
         const std::string& backend) {
        const Image in = imageFrom(image, "image");
        const auto [sz, sy, sx] = perAxis(sigma, 0.0, "sigma");
        compute::BlurParams p;
        p.sigmaZ = sz;
        p.sigmaY = sy;
        p.sigmaX = sx;
        p.truncate = truncate;
        p.nanAware = nanAware;
        return arrayFrom(run(backend, in,
                             [&](compute::Backend& b, const compute::Job& job) {
                               return b.gaussianBlur(in, p, job);
                             }),
                         isTwoD(image));
      },
      "image"_a, "sigma"_a, py::kw_only(), "truncate"_a = 4.0, "nan_aware"_a = false,
      "backend"_a = "auto",
      R"(Gaussian blur, as scipy.ndimage.gaussian_filter with mode='reflect'.

sigma: S (each slice in 2D), (Sy, Sx), or (Sz, Sy, Sx) in pixels (Sz > 0 blurs in 3D).
truncate: the kernel's radius in sigmas. nan_aware: NaN are ignored (normalised convolution)
and stay NaN. backend: 'auto' (CUDA when usable), 'cpu' or 'cuda'. Returns float32.)");

  m.def(
      "median",
      [](const py::handle& image, int size, const std::string& backend) {
        compute::validateMedianSize(size);
        const Image in = imageFrom(image, "image");
        return arrayFrom(run(backend, in,
                             [&](compute::Backend& b, const compute::Job& job) {
                               return b.medianFilter(in, size, job);
                             }),
                         isTwoD(image));
      },
      "image"_a, "size"_a, py::kw_only(), "backend"_a = "auto",
      R"(Median filter of each slice over a size x size window (odd size), edges reflected as
scipy.ndimage.median_filter(mode='reflect'). Returns float32.)");
}

// project and moment: a stack reduced along z to one image, as the CLI's project and moments.
void addProjections(py::module_& m) {
  m.def(
      "project",
      [](const py::handle& image, const std::string& op, int64_t first, const py::handle& last,
         const std::string& backend) {
        compute::ProjectParams p;
        p.op = compute::parseProjection(op);
        p.first = first;
        p.last = last.is_none() ? -1 : last.cast<int64_t>();
        if (!last.is_none() && p.last < 0) throw compute::InvalidArgument("last: expected >= 0");
        const Image in = imageFrom(image, "image");
        return arrayFrom(run(backend, in,
                             [&](compute::Backend& b, const compute::Job& job) {
                               return b.project(in, p, job);
                             }),
                         true);
      },
      "image"_a, "op"_a = "max", py::kw_only(), "first"_a = 0, "last"_a = py::none(),
      "backend"_a = "auto",
      R"(Projection of a (z, y, x) stack along z over slices first..last (inclusive; default all)
into a (y, x) image, as stacklens-cli project: op 'max', 'min', 'mean', 'sum', 'std' (ddof=0) or
'median', NaN voxels left out (numpy's nanmax etc. over axis 0; an all-NaN column gives NaN).)");

  m.def(
      "moment",
      [](const py::handle& image, int order, const py::handle& coordinate, int64_t first,
         const py::handle& last, const py::handle& clip, const std::string& backend) {
        compute::MomentParams p;
        p.order = order;
        p.first = first;
        p.last = last.is_none() ? -1 : last.cast<int64_t>();
        if (!last.is_none() && p.last < 0) throw compute::InvalidArgument("last: expected >= 0");
        if (!clip.is_none()) p.clip = clip.cast<double>();
        if (!coordinate.is_none()) p.coordinate = coordinate.cast<std::vector<double>>();
        const Image in = imageFrom(image, "image");
        return arrayFrom(
            run(backend, in,
                [&](compute::Backend& b, const compute::Job& job) { return b.moment(in, p, job); }),
            true);
      },
      "image"_a, "order"_a, py::kw_only(), "coordinate"_a = py::none(), "first"_a = 0,
      "last"_a = py::none(), "clip"_a = py::none(), "backend"_a = "auto",
      R"(Spectral moment of a (z, y, x) cube along z over slices first..last, as stacklens-cli
moments (CASA's immoments): 0: sum(I * dv), 1: sum(I * v) / sum(I), 2: sqrt(sum(I * (v - M1)**2) /
sum(I)). coordinate: each slice's world value v (default the slice index); dv is its channel
width from the neighbouring slices. Voxels below clip and NaN voxels are left out.)");
}

// remove_outliers: hot and cold pixels replaced by the local median, as Fiji's Remove Outliers.
void addOutlierRemoval(py::module_& m) {
  m.def(
      "remove_outliers",
      [](const py::handle& image, int size, double threshold, const std::string& mode,
         const std::string& backend) {
        compute::OutlierParams p;
        p.size = size;
        p.threshold = threshold;
        p.mode = outlierMode(mode);
        compute::validate(p);
        const Image in = imageFrom(image, "image");
        return arrayFrom(run(backend, in,
                             [&](compute::Backend& b, const compute::Job& job) {
                               return b.removeOutliers(in, p, job);
                             }),
                         isTwoD(image));
      },
      "image"_a, "size"_a, "threshold"_a, py::kw_only(), "mode"_a = "both", "backend"_a = "auto",
      R"(Replaces pixels that differ from the local median (odd size x size window) by more than
threshold with that median, as Fiji's Remove Outliers; mode: 'bright', 'dark' or 'both'.)");
}

// resample: spline zoom, as scipy.ndimage.zoom, so that a stack can be brought to a new grid.
void addResampling(py::module_& m) {
  m.def(
      "resample",
      [](const py::handle& image, const py::handle& zoom, int order, const std::string& backend) {
        const auto [fz, fy, fx] = perAxis(zoom, 1.0, "zoom");
        compute::ResampleParams p;
        p.zoomZ = fz;
        p.zoomY = fy;
        p.zoomX = fx;
        p.order = order;
        compute::validate(p);
        const Image in = imageFrom(image, "image");
        return arrayFrom(run(backend, in,
                             [&](compute::Backend& b, const compute::Job& job) {
                               return b.resample(in, p, job);
                             }),
                         isTwoD(image));
      },
      "image"_a, "zoom"_a, py::kw_only(), "order"_a = 3, "backend"_a = "auto",
      R"(Spline resampling as scipy.ndimage.zoom(grid_mode=False, mode='mirror'): the output
shape is round(n * zoom) per axis; zoom F scales y and x, (Fz, Fy, Fx) all three; order 1
(linear) or 3 (cubic B-spline).)");
}

}  // namespace

void addFilters(py::module_& m) {
  addSmoothing(m);
  addProjections(m);
  addOutlierRemoval(m);
  addResampling(m);
}

void addMeasurements(py::module_& m) {
  using namespace pybind11::literals;
  m.def(
      "sigma_clipped_stats",
      [](const py::handle& image, double kappa, std::optional<double> kappaLower,
         std::optional<double> kappaUpper, int maxIterations, const std::string& backend) {
        compute::ClipParams p;
        p.kappaLower = kappaLower.value_or(kappa);
        p.kappaUpper = kappaUpper.value_or(kappa);
        p.maxIterations = maxIterations;
        const Image in = imageFrom(image, "image");
        const std::string chosen = backendFor(backend, in);
        compute::ClipStats s;
        {
          py::gil_scoped_release release;
          BackendUse use = useBackend(chosen);
          s = use.backend.sigmaClip(in, p);
        }
        return clipDict(s);
      },
      "image"_a, py::kw_only(), "kappa"_a = 3.0, "kappa_lower"_a = py::none(),
      "kappa_upper"_a = py::none(), "max_iterations"_a = 10, "backend"_a = "auto",
      R"(Kappa-sigma clipped statistics as astropy.stats.sigma_clipped_stats (median centre,
population std, inclusive bounds; max_iterations <= 0 iterates until nothing changes).
Returns a dict: n, mean, median, std, min, max of the kept values, iterations, and 'all' with
the same for every finite value.)");

  m.def(
      "segment",
      [](const py::handle& image, std::optional<double> threshold, double nsigma, int connectivity,
         int64_t minPixels, double kappa, const std::string& backend) {
        compute::SegmentParams p;
        if (threshold) p.absoluteThreshold = *threshold;
        p.nSigma = nsigma;
        p.connectivity = connectivity;
        p.minPixels = minPixels;
        p.clip.kappaLower = p.clip.kappaUpper = kappa;
        compute::validate(p);
        const Image in = imageFrom(image, "image");
        const std::string chosen = backendFor(backend, in);
        compute::Segmentation s;
        {
          py::gil_scoped_release release;
          BackendUse use = useBackend(chosen);
          s = use.backend.segment(in, p);
          // The labels come back on the host (a small int32 image), whatever the input.
          if (!s.labels.onHost()) s.labels = use.backend.download(s.labels);
        }
        py::dict out;
        out["labels"] = arrayFrom(s.labels, isTwoD(image));
        out["sources"] = sourceTable(s.sources);
        out["threshold"] = s.threshold;
        out["background"] = clipDict(s.background);
        return out;
      },
      "image"_a, py::kw_only(), "threshold"_a = py::none(), "nsigma"_a = 5.0, "connectivity"_a = 8,
      "min_pixels"_a = 1, "kappa"_a = 3.0, "backend"_a = "auto",
      R"(Segmentation of each slice: pixels above threshold (or, without it, the clipped
median + nsigma x the clipped std), connected components (connectivity 4 or 8, numbered as
scipy.ndimage.label), components of fewer than min_pixels dropped. Returns a dict: labels
(int32), sources (a dict of NumPy columns: label, z, npix, flux, x_centroid, y_centroid, peak,
x_peak, y_peak, x_min, x_max, y_min, y_max), threshold, background (clipped statistics).)");
}

}  // namespace stacklens::python
