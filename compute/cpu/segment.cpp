// Segmentation on the CPU: threshold, connected-component labelling on runs, per-source measures.
//
// Semantics (the CUDA backend must match them):
//  * Background: sigma-clipped statistics (cpu::sigmaClip with p.clip) over the whole input,
//    or p.background when the caller already has them.
//  * Threshold: p.absoluteThreshold when set, else clipped median + nSigma · clipped std.
//    A pixel is foreground when value > threshold (strictly, like `image > threshold` in NumPy);
//    NaN is never foreground.
//  * Components: connectivity 4 (edges) or 8 (edges and corners) within one slice. A 3D stack is
//    segmented slice by slice (no connection along z); the labels are numbered consecutively
//    over the whole stack, which equals scipy.ndimage.label with a structure that has no z
//    neighbours: components numbered 1, 2, ... in C (raster) order of their first pixel.
//  * Components with fewer than minPixels pixels are removed (set to 0) and the remaining ones
//    renumbered consecutively, keeping their order.
//  * Per source: npix; flux = Σ (value − clipped median); centroid weighted by
//    (value − clipped median), 0-based pixel coordinates (falls back to the unweighted mean
//    position when the weights sum to ≤ 0, which only happens for an absolute threshold at or
//    below the background); peak = largest value, its position the first in raster order on
//    ties; inclusive bounding box; z = the slice.
//
// How: rows are scanned in parallel into runs of foreground pixels; runs of adjacent rows that
// touch are united (union–find that links to the smaller index, so a component's root is its
// first run in raster order); labels are then given in run order.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "compute/cpu/operations.h"
#include "compute/segment_threshold.h"

namespace stacklens::compute::cpu {
namespace {

struct Run {
  int64_t row;
  int64_t start, end;  // [start, end)
};

int64_t findRoot(std::vector<int64_t>& parent, int64_t i) {
  while (parent[i] != i) {
    parent[i] = parent[parent[i]];  // path halving
    i = parent[i];
  }
  return i;
}

void unite(std::vector<int64_t>& parent, int64_t a, int64_t b) {
  a = findRoot(parent, a);
  b = findRoot(parent, b);
  if (a == b) return;
  if (a < b) std::swap(a, b);
  parent[a] = b;  // the smaller index (earlier in raster order) stays the root
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define STACKLENS_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define STACKLENS_CLONES
#endif

// Appends the foreground runs of one row. Background dominates (sources cover a few per cent of
// a sky), so blocks of 32 pixels with nothing above the threshold are skipped with one
// vectorised test each; the runs themselves are short and found pixel by pixel.
STACKLENS_CLONES void appendRowRuns(const float* __restrict row, int64_t cols, float threshold,
                                    int64_t y, std::vector<Run>& out) {
  constexpr int64_t kBlock = 32;
  int64_t x = 0;
  while (x < cols) {
    while (x + kBlock <= cols) {
      unsigned any = 0;
#pragma omp simd reduction(| : any)
      for (int64_t j = 0; j < kBlock; ++j) any |= row[x + j] > threshold;
      if (any) break;
      x += kBlock;
    }
    while (x < cols && !(row[x] > threshold)) ++x;  // NaN is never foreground
    if (x == cols) break;
    const int64_t start = x;
    while (x < cols && row[x] > threshold) ++x;
    out.push_back({y, start, x});
  }
}

// Foreground runs of one slice in raster order, scanned in parallel over row blocks. The same
// pass zeroes the slice's label rows (the label image is allocated without a zero fill, which
// would be one more serial pass over it).
std::vector<Run> findRuns(const float* slice, int64_t rows, int64_t cols, float threshold,
                          int32_t* labels, ThreadPool& pool) {
  const int64_t blocks = std::min<int64_t>(rows, pool.size() * 8);
  std::vector<std::vector<Run>> parts(blocks);
  pool.parallelFor(blocks, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      auto& out = parts[b];
      for (int64_t y = b * rows / blocks; y < (b + 1) * rows / blocks; ++y) {
        std::fill(labels + y * cols, labels + (y + 1) * cols, 0);
        appendRowRuns(slice + y * cols, cols, threshold, y, out);
      }
    }
  });
  std::vector<Run> runs;
  size_t total = 0;
  for (auto& part : parts) total += part.size();
  runs.reserve(total);
  for (auto& part : parts) runs.insert(runs.end(), part.begin(), part.end());
  return runs;
}

// Unites touching runs of consecutive rows; returns each run's component root.
std::vector<int64_t> connectRuns(const std::vector<Run>& runs, int connectivity) {
  std::vector<int64_t> parent(runs.size());
  std::iota(parent.begin(), parent.end(), 0);
  // 8-connectivity also joins runs that only touch at a corner: widen by one pixel.
  const int64_t reach = connectivity == 8 ? 1 : 0;
  size_t prevBegin = 0, prevEnd = 0;  // runs of the previous row
  size_t i = 0;
  while (i < runs.size()) {
    const int64_t row = runs[i].row;
    size_t rowEnd = i;
    while (rowEnd < runs.size() && runs[rowEnd].row == row) ++rowEnd;
    const bool adjacent = prevEnd > prevBegin && runs[prevBegin].row == row - 1;
    if (adjacent) {
      size_t j = prevBegin;
      for (size_t k = i; k < rowEnd; ++k) {
        // Skip previous-row runs that end before this one can touch them.
        while (j < prevEnd && runs[j].end + reach <= runs[k].start) ++j;
        for (size_t m = j; m < prevEnd && runs[m].start < runs[k].end + reach; ++m)
          unite(parent, static_cast<int64_t>(k), static_cast<int64_t>(m));
      }
    }
    prevBegin = i;
    prevEnd = rowEnd;
    i = rowEnd;
  }
  for (size_t k = 0; k < runs.size(); ++k) parent[k] = findRoot(parent, static_cast<int64_t>(k));
  return parent;
}

// The background statistics and the threshold above them (see the semantics above); returns the
// clipped median that fluxes and centroid weights are measured from.
double setBackgroundAndThreshold(const Image& in, const SegmentParams& p, const Job& job,
                                 ThreadPool& pool, Segmentation& out) {
  out.background = p.background ? *p.background : sigmaClip(in, p.clip, job, pool);
  if (out.background.clipped.n == 0 && !p.absoluteThreshold)
    throw InvalidArgument("segment: the image has no finite values to estimate the background");
  const double median = out.background.clipped.n > 0 ? out.background.clipped.median : 0.0;
  out.threshold =
      p.absoluteThreshold ? *p.absoluteThreshold : median + p.nSigma * out.background.clipped.std;
  return median;
}

// Every row is zeroed by findRuns before its labels are painted, so no zero fill here.
LabelImage unfilledLabels(const Shape& shape) {
  return LabelImage(shape, Location::Host,
                    std::shared_ptr<int32_t>(new int32_t[static_cast<size_t>(shape.count())],
                                             std::default_delete<int32_t[]>()));
}

// Labels for the roots whose components keep at least minPixels pixels, numbered on from
// nextLabel in order of the roots (their first run), with a Source begun for each; 0 for the
// rest and for runs that are not roots.
std::vector<int32_t> labelComponents(const std::vector<Run>& runs, const std::vector<int64_t>& root,
                                     int64_t minPixels, int64_t z, const Shape& shape,
                                     int32_t& nextLabel, std::vector<Source>& sources) {
  std::vector<int64_t> npix(runs.size(), 0);
  for (size_t k = 0; k < runs.size(); ++k) npix[root[k]] += runs[k].end - runs[k].start;
  std::vector<int32_t> labelOfRoot(runs.size(), 0);
  for (size_t k = 0; k < runs.size(); ++k) {
    if (root[k] != static_cast<int64_t>(k) || npix[k] < minPixels) continue;
    if (nextLabel == std::numeric_limits<int32_t>::max())
      throw InvalidArgument("segment: more than 2^31 − 1 components");
    labelOfRoot[k] = ++nextLabel;
    Source s;
    s.label = nextLabel;
    s.z = z;
    s.peak = -std::numeric_limits<float>::infinity();
    s.xMin = shape.x;
    s.yMin = shape.y;
    s.xMax = s.yMax = -1;
    sources.push_back(s);
  }
  return labelOfRoot;
}

// Measures the sources from firstSource on: runs are visited in raster order, so the first
// maximum found is the raster-first.
void measureSources(const std::vector<Run>& runs, const std::vector<int64_t>& root,
                    const std::vector<int32_t>& labelOfRoot, const float* slice, int64_t cols,
                    double median, size_t firstSource, std::vector<Source>& sources) {
  std::vector<double> sumW(sources.size() - firstSource, 0.0), sumWX(sumW.size(), 0.0),
      sumWY(sumW.size(), 0.0), sumX(sumW.size(), 0.0), sumY(sumW.size(), 0.0);
  for (size_t k = 0; k < runs.size(); ++k) {
    const int32_t label = labelOfRoot[root[k]];
    if (label == 0) continue;
    const size_t idx = static_cast<size_t>(label - 1) - firstSource;
    Source& s = sources[firstSource + idx];
    const Run& r = runs[k];
    const float* row = slice + r.row * cols;
    double w = 0, wx = 0, sx = 0;
    for (int64_t x = r.start; x < r.end; ++x) {
      const double d = static_cast<double>(row[x]) - median;
      w += d;
      wx += d * static_cast<double>(x);
      sx += static_cast<double>(x);
      if (row[x] > s.peak) {
        s.peak = row[x];
        s.peakX = x;
        s.peakY = r.row;
      }
    }
    s.npix += r.end - r.start;
    s.flux += w;
    sumW[idx] += w;
    sumWX[idx] += wx;
    sumWY[idx] += w * static_cast<double>(r.row);
    sumX[idx] += sx;
    sumY[idx] += static_cast<double>(r.row) * static_cast<double>(r.end - r.start);
    s.xMin = std::min(s.xMin, r.start);
    s.xMax = std::max(s.xMax, r.end - 1);
    s.yMin = std::min(s.yMin, r.row);
    s.yMax = std::max(s.yMax, r.row);
  }
  for (size_t idx = 0; idx < sumW.size(); ++idx) {
    Source& s = sources[firstSource + idx];
    if (sumW[idx] > 0) {
      s.centroidX = sumWX[idx] / sumW[idx];
      s.centroidY = sumWY[idx] / sumW[idx];
    } else {
      s.centroidX = sumX[idx] / static_cast<double>(s.npix);
      s.centroidY = sumY[idx] / static_cast<double>(s.npix);
    }
  }
}

// Paints the label image (zeroed by findRuns) run by run, in parallel over runs.
void paintLabels(const std::vector<Run>& runs, const std::vector<int64_t>& root,
                 const std::vector<int32_t>& labelOfRoot, int64_t cols, int32_t* labels,
                 ThreadPool& pool) {
  pool.parallelFor(
      static_cast<int64_t>(runs.size()),
      [&](int64_t k0, int64_t k1) {
        for (int64_t k = k0; k < k1; ++k) {
          const int32_t label = labelOfRoot[root[k]];
          if (label == 0) continue;
          std::fill(labels + runs[k].row * cols + runs[k].start,
                    labels + runs[k].row * cols + runs[k].end, label);
        }
      },
      1024);
}

// One slice: its runs, their components, the sources they make and its label rows.
void segmentSlice(const float* slice, int64_t z, const Shape& shape, float threshold, double median,
                  const SegmentParams& p, ThreadPool& pool, int32_t* labels, int32_t& nextLabel,
                  std::vector<Source>& sources) {
  std::vector<Run> runs = findRuns(slice, shape.y, shape.x, threshold, labels, pool);
  std::vector<int64_t> root = connectRuns(runs, p.connectivity);
  const size_t firstSource = sources.size();
  const std::vector<int32_t> labelOfRoot =
      labelComponents(runs, root, p.minPixels, z, shape, nextLabel, sources);
  measureSources(runs, root, labelOfRoot, slice, shape.x, median, firstSource, sources);
  paintLabels(runs, root, labelOfRoot, shape.x, labels, pool);
}

}  // namespace

Segmentation segment(const Image& in, const SegmentParams& p, const Job& job, ThreadPool& pool) {
  if (in.empty()) throw InvalidArgument("segment: the image is empty");
  validate(p);
  const Shape shape = in.shape();
  if (shape.x > (int64_t{1} << 31) || shape.y > (int64_t{1} << 31))
    throw InvalidArgument("segment: the image is too large");

  Segmentation out;
  const double median = setBackgroundAndThreshold(in, p, job, pool, out);
  const float fthreshold = floatThreshold(out.threshold);
  out.labels = unfilledLabels(shape);
  out.labels.spacing = in.spacing;
  int32_t nextLabel = 0;
  for (int64_t z = 0; z < shape.z; ++z) {
    job.checkCancelled();
    segmentSlice(in.slice(z), z, shape, fthreshold, median, p, pool, out.labels.slice(z), nextLabel,
                 out.sources);
    job.report(static_cast<double>(z + 1) / static_cast<double>(shape.z));
  }
  return out;
}

}  // namespace stacklens::compute::cpu
