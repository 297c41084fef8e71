// The live-processing pipeline: ordered operations on one slice (or a slab around it), timed per
// stage.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compute/backend.h"

namespace stacklens::compute {

// Stages in the order they run. Statistics and segmentation read the image the earlier stages made.
enum class Stage { Outliers, Median, Blur, Deconvolution, Statistics, Segmentation };
const char* stageName(Stage stage);  // "outliers", "median", "blur", ...

// Each operation has an enable flag and the parameters of compute/params.h.
struct Pipeline {
  struct {
    bool enabled = false;
    OutlierParams params;
  } outliers;
  struct {
    bool enabled = false;
    int size = 3;
  } median;
  struct {
    bool enabled = false;
    BlurParams params;  // sigmaZ > 0 blurs across the slab (see slabHalfWidth)
  } blur;
  struct {
    bool enabled = false;
    DeconvolveParams params;  // params.threeD: RL on the slab, keeping its centre slice
    // The boundary chosen from the PSF as compute/auto_boundary.h says, as the CLI's default
    // (params.boundary is then not read): deconvolutionParams() gives the one that runs.
    bool autoBoundary = true;
    int slabHalfWidth = 4;  // 3D only: slices on each side of the current one
    Image psf;              // host, 2D or 3D, e.g. read from a file; empty: the Gaussian below
    double psfSigmaZ = 2.0, psfSigmaY = 1.5, psfSigmaX = 1.5;  // pixels
  } deconvolution;
  struct {
    bool enabled = false;
    ClipParams params;
  } statistics;
  struct {
    bool enabled = false;
    SegmentParams params;
  } segmentation;

  bool anyEnabled() const;
  // Slices needed on each side of the current one (0 unless a stage works in 3D).
  int slabHalfWidth() const;
  // Throws InvalidArgument naming the parameter when the settings cannot run.
  void validate() const;
  // Text that differs whenever the result could differ (cache keys): describe()'s text with every
  // digit of each number and a checksum of a given PSF.
  std::string fingerprint() const;
  // The enabled stages and their parameters in one line, each stage's as compute/params_text.h
  // describes it ("blur sigma=0,1,1 truncate=4 -> segmentation nsigma=5 ..."), for HISTORY cards
  // and dialogs.
  std::string describe() const;
};

// "astronomy sources": a small blur, sigma-clipped background, 5σ segmentation.
// "microscopy deconvolution": Richardson–Lucy, 20 iterations (3D on ±4 slices when the PSF is
// 3D or none is given, else 2D), with psf (empty: a Gaussian of σ = 2, 1.5, 1.5 pixels).
std::vector<std::string> presetNames();
Pipeline preset(const std::string& name, Image psf = {});  // throws InvalidArgument when unknown

// The PSF the deconvolution stage uses: the given one, else the Gaussian of its σ (2D for 2D RL).
Image pipelinePsf(const Pipeline& pipeline);
// The deconvolution's parameters as they run: with autoBoundary, the boundary autoBoundary
// chooses for pipelinePsf (psf: that PSF when the caller has it already).
DeconvolveParams deconvolutionParams(const Pipeline& pipeline, const Image& psf = {});

// One stage's measured times. All are wall-clock ms around calls followed by synchronize().
struct StageTiming {
  Stage stage = Stage::Outliers;
  double computeMs = 0;         // the operation alone, its input already where the backend computes
  double deviceMs = -1;         // the backend's own device time (e.g. CUDA events); < 0: none
  double withTransfersMs = -1;  // upload of the input + operation + download of the result;
                                // < 0: not measured (RunOptions::measureTransfers off)
  int threads = 1;              // CPU threads of the backend
};

struct RunOptions {
  // Each stage uploads its input from the host and downloads its result, so that per-stage
  // times include transfers and per-stage host results are kept (Compare mode). Off for live
  // scrubbing: data then stays on the backend between stages.
  bool measureTransfers = false;
  // Leave the final image where the backend computes (Location::Cuda for CUDA): no download.
  // The live GPU path writes it straight into the view's texture. Ignored with measureTransfers.
  bool resultOnBackend = false;
};

struct PipelineResult {
  Image image;  // the processed centre slice (z == 1): on the host, or where the backend
                // computes with RunOptions::resultOnBackend
  std::optional<ClipStats> statistics;
  std::optional<Segmentation> segmentation;  // labels on the host
  std::vector<StageTiming> timings;          // enabled stages, in order
  double readMs = 0;                         // waiting for the file (live processing only)
  double uploadMs = 0, downloadMs = 0;       // of the slab and of the final image
  double totalMs = 0;                        // everything above, end to end
  std::string backend, device;
  int threads = 1;
  // With RunOptions::measureTransfers: each image stage's host result (centre slice).
  std::vector<std::pair<Stage, Image>> stageImages;
};

// Runs the enabled stages on slab (z ≥ 1 slices, on the host or already where the backend
// computes) whose current slice is centreIndex.
// 2D stages only see the centre slice; 3D stages see the slab and keep its centre slice.
// Throws Cancelled when job is cancelled, InvalidArgument for bad settings.
PipelineResult runPipeline(Backend& backend, const Image& slab, int64_t centreIndex,
                           const Pipeline& pipeline, const Job& job = {},
                           const RunOptions& options = {});

// How far apart the two backends' results are at one stage.
struct StageDifference {
  Stage stage = Stage::Outliers;
  double maxAbs = 0;     // max |A − B| over the stage's output
  double relL2 = 0;      // ‖A − B‖₂ / ‖A‖₂ (0 when both are zero)
  std::string compared;  // what was compared ("image", "clipped median/std/mean", "source mask")
};

struct Comparison {
  PipelineResult a, b;  // e.g. CPU and GPU, both with per-stage transfers measured
  std::vector<StageDifference> differences;
};

// Runs the pipeline on both backends and compares every stage's output.
Comparison compareBackends(Backend& a, Backend& b, const Image& slab, int64_t centreIndex,
                           const Pipeline& pipeline, const Job& job = {});

// Differences of two host images of the same shape (NaN where both are NaN counts as equal).
StageDifference imageDifference(const Image& a, const Image& b);
// The same over the pixels where both give a number (a projection's or a rendered view's edges
// may be NaN in one only), relative to the reference b: ‖a − b‖₂ / ‖b‖₂ (‖a − b‖₂ when b is 0).
StageDifference overlapDifference(const Image& a, const Image& b);

// Benchmark: one warm-up run, then repeats runs; per-stage medians of each time.
PipelineResult benchmarkPipeline(Backend& backend, const Image& slab, int64_t centreIndex,
                                 const Pipeline& pipeline, int repeats, const Job& job = {},
                                 const RunOptions& options = {});

// A view of slice z of image (any location) sharing its storage: no copy.
Image sliceView(const Image& image, int64_t z);

}  // namespace stacklens::compute
