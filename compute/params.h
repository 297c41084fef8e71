// Parameters and results of the operations; shared by both backends so they mean the same thing.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "compute/image.h"

namespace stacklens::compute {

// Thrown for parameters that an operation cannot honour (σ ≤ 0, even median size, ...).
class InvalidArgument : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// An InvalidArgument about one parameter of the structs below: parameter() is its field name
// ("sigmaY", "size", "clip.kappaLower"), so that a caller can name its own option for it.
class InvalidParameter : public InvalidArgument {
 public:
  InvalidParameter(std::string parameter, const std::string& message)
      : InvalidArgument(message), parameter_(std::move(parameter)) {}
  const std::string& parameter() const { return parameter_; }

 private:
  std::string parameter_;
};

// The GPU cannot hold what an operation needs, and the backend was told not to fall back to
// the CPU (Backend::setCpuFallback), or the caller allocates on the device itself.
class OutOfDeviceMemory : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Gaussian blur. sigma is (z, y, x) in pixels; sigma.z == 0 blurs each slice in 2D.
struct BlurParams {
  double sigmaZ = 0.0;
  double sigmaY = 1.0;
  double sigmaX = 1.0;
  double truncate = 4.0;  // kernel radius = int(truncate * sigma + 0.5), as SciPy
  bool nanAware = false;  // normalised convolution that ignores NaN and keeps NaN where it was
};
// The rules of each struct, checked here once for every backend, the pipeline and the CLI: each
// validate throws InvalidParameter naming the parameter, the rule and the value.
// σy, σx finite and > 0; σz finite and ≥ 0 (0: 2D); truncate finite and > 0; truncate · σ (the
// kernel radius) below 10^6 pixels.
void validate(const BlurParams& p);
// The Gaussian kernel's radius in pixels, as SciPy's gaussian_filter: int(truncate · σ + 0.5),
// 0 for σ = 0. The one rule for every backend, the pipeline's slab and the CLI's reach; a
// radius past what an int64_t holds (or NaN) saturates, so that a check can refuse it.
int64_t blurRadius(double sigma, double truncate);

// σ per axis from the "S or SZ,SY,SX" a user gives for a blur or a Gaussian PSF.
struct Sigmas {
  double z = 0, y = 0, x = 0;
};
// What one value S means: σy = σx = S with σz = 0 (a blur of each slice in 2D), or S on every
// axis (an isotropic PSF).
enum class OneSigma { PerSlice, EveryAxis };
// One value or three (z, y, x); InvalidArgument "expected S or SZ,SY,SX, got N values" else.
// The values are not checked further (validate and gaussianPsf do that).
Sigmas sigmasFromList(const std::vector<double>& values, OneSigma one);

// The median filter's window (and the outlier removal's): odd, 1 to kLargestMedianWindow. A
// larger window takes over a million values per pixel: hours, never what was meant.
inline constexpr int kLargestMedianWindow = 1001;
void validateMedianSize(int size);

// Reflect: the data mirrored past the edges once, in a padded frame (compute/rl_frame.h).
// ReflectExact: every convolution sees the data mirrored past the edges (half-sample symmetric,
// as Reflect), which is diagonal in the DCT basis: no padding, but the PSF must be symmetric on
// every axis (compute/cuda/reflect_exact.cuh). Not yet in the blocked whole-stack runs.
enum class Boundary { Reflect, Periodic, Zero, ReflectExact };

// Richardson–Lucy deconvolution.
struct DeconvolveParams {
  int iterations = 20;
  bool threeD = false;  // false: each slice on its own with a 2D PSF (the PSF's centre slice)
  Boundary boundary = Boundary::Reflect;
  double tvLambda = 0.0;    // total-variation regularisation; 0 = off
  bool accelerate = false;  // Biggs–Andrews vector extrapolation
  float epsilon = 1e-12f;   // guards the ratio image / (PSF ⊛ estimate)
};
// iterations ≥ 1; tvLambda finite and ≥ 0 (0 with ReflectExact); epsilon finite and > 0; boundary
// one of the four.
void validate(const DeconvolveParams& p);

// astropy sigma_clip semantics: median centre, population std, inclusive bounds.
struct ClipParams {
  double kappaLower = 3.0;
  double kappaUpper = 3.0;
  int maxIterations = 10;  // ≤ 0: iterate until nothing changes (astropy: maxiters=0 is None)
};
// κ lower and upper finite and ≥ 0 (κ = 0 keeps the values equal to the median).
void validate(const ClipParams& p);

struct SummaryStats {
  int64_t n = 0;
  double mean = 0, median = 0, std = 0, min = 0, max = 0;
};

struct ClipStats {
  SummaryStats all;      // finite values before clipping
  SummaryStats clipped;  // values kept after clipping
  int iterations = 0;
};

struct SegmentParams {
  std::optional<double> absoluteThreshold;  // when set, nSigma is ignored
  double nSigma = 5.0;                      // threshold = clipped median + nSigma · clipped std
  int connectivity = 8;                     // 4 or 8
  int64_t minPixels = 1;
  ClipParams clip;
  // Background statistics already computed for this image (e.g. by the pipeline's statistics
  // stage): when set they are used as they are and `clip` is ignored, so the image is not
  // clipped a second time.
  std::optional<ClipStats> background;
};
// connectivity 4 or 8; minPixels ≥ 1; the absolute threshold finite, else nSigma finite and > 0;
// clip as validate(ClipParams) unless background is given.
void validate(const SegmentParams& p);

struct Source {
  int32_t label = 0;
  int64_t npix = 0;
  double flux = 0;                      // Σ (value − background median)
  double centroidX = 0, centroidY = 0;  // flux-weighted, 0-based pixel coordinates
  float peak = 0;
  int64_t peakX = 0, peakY = 0;
  int64_t xMin = 0, xMax = 0, yMin = 0, yMax = 0;  // inclusive bounding box
  int64_t z = 0;                                   // the slice (a 3D stack is segmented per slice)
};

struct Segmentation {
  LabelImage labels;  // 0 = background, 1..n numbered as scipy.ndimage.label
  std::vector<Source> sources;
  double threshold = 0;
  ClipStats background;
};

enum class OutlierMode { Bright, Dark, Both };

struct OutlierParams {
  int size = 3;  // odd window size of the local median
  double threshold = 0;
  OutlierMode mode = OutlierMode::Both;
};
// size as validateMedianSize; threshold finite and ≥ 0; mode one of the three.
void validate(const OutlierParams& p);

struct ResampleParams {
  double zoomZ = 1.0, zoomY = 1.0, zoomX = 1.0;  // output shape = round(n · zoom)
  int order = 3;                                 // 1 (linear) or 3 (cubic B-spline)
};
// Each zoom finite and > 0; order 1 or 3. (The output's shape is checked with the image.)
void validate(const ResampleParams& p);
// The shape resampling gives: round-half-to-even(n · zoom) per axis, as SciPy. Throws
// InvalidArgument for p that validate refuses and for an axis whose output length would be 0 or
// more than 10^9.
Shape resampledShape(Shape in, const ResampleParams& p);

// Projections along z (Fiji's Z Project, numpy's nan-functions over axis 0) of the slices
// [first, last] (inclusive; last < 0: to the last slice). NaN voxels are left out; a pixel with
// none left is NaN. Std is the population standard deviation (numpy's ddof=0); the median of an
// even count is the mean of the two middle values.
enum class Projection { Max, Min, Mean, Sum, Std, Median };

struct ProjectParams {
  Projection op = Projection::Max;
  int64_t first = 0;
  int64_t last = -1;
};

// Spectral moments along z (CASA's immoments, CARTA's moments) over slices [first, last]:
// 0: Σ I·Δv (integrated intensity), 1: Σ I·v / Σ I (intensity-weighted coordinate),
// 2: sqrt(Σ I·(v − M1)² / Σ I) (intensity-weighted dispersion). v is each slice's world
// coordinate (`coordinate`, one value per slice of the whole stack; empty: the slice index) and
// Δv its channel width (|the coordinate's step|, central differences inside the axis). Voxels
// below clip and NaN voxels are left out; a pixel with none left, or with Σ I = 0 for orders 1
// and 2, is NaN (so is a negative weighted variance, possible with negative intensities).
struct MomentParams {
  int order = 0;
  int64_t first = 0;
  int64_t last = -1;
  double clip = -std::numeric_limits<double>::infinity();
  std::vector<double> coordinate;
};
// order 0, 1 or 2; clip not NaN. (The range and the coordinates are checked with the stack.)
void validate(const MomentParams& p);

// Volume rendering (compute/volume_render.h): the stack seen from any direction, drawn into a
// width × height image of values in the data's units, so that the view's colormap and limits
// apply as to a slice. Orthographic rays; rays that miss the volume (or find nothing) are NaN.
//  Mip: the largest value along the ray. Average: the mean. AttenuatedMip (napari's): each
//  value, less its excess over `low`, is weighted by exp(−attenuation · max(S − 1, 0)) where S
//  sums the values in front of it (and its own) scaled to 0..1 by [low, high] per voxel of
//  path, so what lies behind bright matter fades. IsoSurface: the first crossing of isoLevel,
//  shaded by a light from the viewer (0.2 ambient + 0.8 |n · view|) and mapped onto [low, high].
enum class VolumeMode { Mip, AttenuatedMip, Average, IsoSurface };

struct VolumeRenderParams {
  VolumeMode mode = VolumeMode::Mip;
  int width = 512, height = 512;  // the output image
  // The view's axes in the volume's (x along a row, y down the rows, z through the slices), as
  // rows of a row-major rotation matrix: identity looks along +z at slice 0 first, x to the
  // right and y down, as the slice view shows a slice (compute/volume_render.h: orbitRotation).
  double rotation[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  double zoom = 1.0;          // 1: the volume's bounding sphere spans the output's shorter side
  double low = 0, high = 1;   // the display limits (attenuation and iso shading use them)
  double attenuation = 0.05;  // per voxel of path, for AttenuatedMip
  double isoLevel = 0.5;
  double stepScale = 1.0;  // samples every stepScale of the smallest voxel side (≤ 1: finer)
};

}  // namespace stacklens::compute
