// Segmentation on the GPU: threshold and connected components by a block-based lock-free union–
// find (each tile labelled in shared memory, then joined to its labelled neighbours across their
// borders with atomicMin in the same launch, so a component's root is its smallest raster
// index), the roots numbered in raster order (SciPy's) from per-segment root bits and a scan of
// their counts, and the relabelling fused with the per-source measurements. Background dominates a
// sky: the thresholding writes each 32-pixel segment's foreground bits and the labels of the
// segments without foreground, and lists the strips with some, so that the later passes leave the
// rest alone. The host waits once, at the end: the table entries are published into mapped host
// memory. Components below the minimum size are dropped after they are measured. Kernels:
// kernels/segment.cuh (labelling), segment_measure.cuh (relabelling and measuring),
// segment_sources.cuh (the table); scratch: host/segment_scratch.cuh; launch shapes:
// tuning/segment.cuh.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <vector>

#include "compute/cuda/host/cuda_context.cuh"
#include "compute/cuda/host/dependent_launch.cuh"
#include "compute/cuda/host/segment_scratch.cuh"
#include "compute/cuda/kernels/segment.cuh"
#include "compute/cuda/kernels/segment_measure.cuh"
#include "compute/cuda/kernels/segment_sources.cuh"
#include "compute/cuda/tuning/segment.cuh"
#include "compute/segment_threshold.h"

namespace stacklens::compute::cuda {
namespace {

// What fluxes are measured from: the clipped median, or 0 where no values were kept (given
// statistics of nothing), as on the CPU.
double measuredFrom(const ClipStats& background) {
  return background.clipped.n > 0 ? background.clipped.median : 0.0;
}

// The background statistics (given, or clipped here) and the threshold above them.
void setBackgroundAndThreshold(const ContextPtr& ctx, const Image& in, const SegmentParams& p,
                               const Job& job, Segmentation& out) {
  out.background = p.background ? *p.background
                                : sigmaClipValues(ctx, in.data(), in.shape().count(), p.clip, job);
  if (out.background.clipped.n == 0 && !p.absoluteThreshold)
    throw InvalidArgument("segment: the image has no finite values to estimate the background");
  out.threshold = p.absoluteThreshold
                      ? *p.absoluteThreshold
                      : measuredFrom(out.background) + p.nSigma * out.background.clipped.std;
  if (!std::isfinite(out.threshold)) throw InvalidArgument("segment: the threshold is not finite");
}

// One segmentation's input, parameters and arrays, as every step takes them.
struct SegmentRun {
  const float* in;
  float threshold;  // floatThreshold(the threshold), as every backend compares
  bool eight;
  double background;
  const SegmentGrid& g;
  SegmentScratch& w;
  int32_t* labels;
};

// Thresholds and labels the components (a root: a component's first pixel in raster order), the
// tiles joined as they finish, and writes the background segments' final labels; clears the
// first sources' sums. Launched in bands of tile rows: at once (labelComponents), or as an
// upload lands the input's rows (segment), so that the tiles label while the rest goes up. A
// tile joins its neighbours that are done, whichever launch they were in.
class TileLabelling {
 public:
  TileLabelling(const ContextPtr& ctx, const SegmentRun& r)
      : ctx_(ctx),
        r_(r),
        state_(segmentTileState(ctx)),
        turn_(state_.next(r.g.tiles, r.g.rows)),
        out_(r.w.tileOutputs(r.labels, turn_)),
        tilesY_(int64_t(blocksFor(r.g.s.y, kTileH))) {}

  // Launches the tiles not yet launched whose rows all lie in the stack's first `rows` rows
  // (slice after slice).
  void upToRow(int64_t rows) {
    const int64_t ny = r_.g.s.y, tileRows = r_.g.s.z * tilesY_;
    int64_t end = nextTileRow_;
    while (end < tileRows &&
           end / tilesY_ * ny + std::min((end % tilesY_ + 1) * kTileH, ny) <= rows)
      ++end;
    constexpr int64_t kMax = SegmentGrid::kMaxLaunched;
    while (nextTileRow_ < end) {
      const int64_t z = nextTileRow_ / tilesY_, y = nextTileRow_ % tilesY_;
      const int64_t wholeSlices = y == 0 && tilesY_ <= kMax ? (end - nextTileRow_) / tilesY_ : 0;
      if (wholeSlices > 0) {
        const int64_t slices = std::min(wholeSlices, kMax);
        launch(z, slices, 0, tilesY_);
        nextTileRow_ += slices * tilesY_;
      } else {
        const int64_t band = std::min({tilesY_ - y, end - nextTileRow_, kMax});
        launch(z, 1, y, band);
        nextTileRow_ += band;
      }
    }
  }

 private:
  void launch(int64_t z0, int64_t slices, int64_t tileY0, int64_t bandRows) {
    const bool first = nextTileRow_ == 0;
    const SegmentGrid& g = r_.g;
    const dim3 grid(unsigned(g.segmentsPerRow), unsigned(bandRows), unsigned(slices));
    labelTiles<<<grid, dim3(kTileW, kTileThreadRows), 0, ctx_->stream()>>>(
        r_.in, out_, int(g.s.y), int(g.s.x), int(z0), int(tileY0), int(tilesY_), r_.threshold,
        r_.eight, r_.w.sums, first ? r_.w.capacity : 0, turn_.nextCounters,
        first ? turn_.nextToClear : 0);
    SL_LAUNCHED();
    // The first launch uses this turn's counters and clears the others: recorded now, so that
    // a labelling left unfinished (a failed upload) leaves the state as it left the counters.
    if (first) state_.launched(turn_, g.rows);
  }

  const ContextPtr& ctx_;
  const SegmentRun& r_;
  SegmentTileState& state_;
  const SegmentTileState::Turn turn_;
  const TileOutputs out_;
  const int64_t tilesY_;
  int64_t nextTileRow_ = 0;  // over the stack: slice · tilesY_ + the tile row
};

// The labelling of every tile row at once.
void labelComponents(const ContextPtr& ctx, const SegmentRun& r) {
  TileLabelling(ctx, r).upToRow(r.g.rows);
}

// Numbers the roots in raster order (rootEnds: the roots up to each segment, from each row's
// count and its segments' root bits) and writes the foreground segments' labels, measuring the
// sources numbered up to w.capacity.
void relabelAndMeasureAll(const ContextPtr& ctx, const SegmentRun& r) {
  SegmentScratch& w = r.w;
  const int64_t rows = r.g.rows;
  if (w.rowStarts)
    SL_CUDA(cub::DeviceScan::ExclusiveSum(w.scanTemp, w.scanBytes, w.rowRoots, w.rowStarts, rows,
                                          ctx->stream()));
  launchAfterPrevious(ctx, endRootSegments, blocksFor(rows, kPixelThreads / 32 * kNumberingRows),
                      kPixelThreads, 0, w.rootMasks, w.rowRoots, w.rowStarts, int(rows),
                      int(r.g.segmentsPerRow), w.rootEnds);
  launchAfterPrevious(ctx, relabelAndMeasure, ctx->smCount() * kRelabelBlocksPerSm,
                      dim3(kTileW, kTileThreadRows), 0, r.in, w.parent, w.fgMasks, w.rootMasks,
                      w.rootEnds, w.fgStrips, w.fgStripCount, r.labels, w.sums, w.capacity,
                      int(r.g.s.y), int(r.g.s.x), r.background);
}

// The table entries of the first min(*found, limit) sources into `to`, and *found into `count`
// unless it is null; each group's flag in groupsDone (unless null) set once it is written.
void publishTable(const ContextPtr& ctx, const SourceSums* sums, const int32_t* found,
                  int64_t limit, const Shape& s, long long* count, Source* to,
                  volatile int* groupsDone = nullptr) {
  launchAfterPrevious(ctx, publishSources, std::max<unsigned>(1, blocksFor(limit, kPublishGroup)),
                      kPublishThreads, 0, sums, found, limit, s.y, s.x, count, to, groupsDone);
}

// Numbers and measures the labelled components (the first w.capacity sources), and publishes
// the first min(n, tableLimit) table entries into `table` (n into `count`, each group's flag in
// groupsDone set once it is written) unless count is null. Returns where the device keeps n.
const int32_t* measureAndPublish(const ContextPtr& ctx, const SegmentRun& r, long long* count,
                                 Source* table, int64_t tableLimit,
                                 volatile int* groupsDone = nullptr) {
  SegmentScratch& w = r.w;
  relabelAndMeasureAll(ctx, r);
  const int32_t* found = w.rootEnds + r.g.segments - 1;
  if (count) publishTable(ctx, w.sums, found, tableLimit, r.g.s, count, table, groupsDone);
  return found;
}

// Copies the first n published entries into `to` (room for n), each group as soon as its flag is
// set (group 0's is), so that the copy of the first groups overlaps the publishing of the last;
// waits for the stream instead if a flag takes longer than the polling.
void copyPublished(const ContextPtr& ctx, const PublishedSources& published, int64_t n,
                   Source* to) {
  bool polling = true;
  for (int64_t first = 0; first < n; first += kPublishGroup) {
    const volatile int* done = published.groupDone(first / kPublishGroup);
    if (first > 0 && polling && !*done && !pollMappedFlag(done)) {
      ctx->waitFor(ctx->stream());
      polling = false;
    }
    std::atomic_thread_fence(std::memory_order_acquire);  // the entries read after the flag
    const int64_t last = std::min(n, first + kPublishGroup);
    std::copy(published.sources() + first, published.sources() + last, to + first);
  }
}

// All n sources' table entries, read back from the device.
std::vector<Source> readTable(const ContextPtr& ctx, const SourceSums* sums, const int32_t* found,
                              int64_t n, const Shape& s) {
  std::vector<Source> table(n);
  if (n == 0) return table;
  DeviceArray<Source> entries(ctx, n);
  publishTable(ctx, sums, found, n, s, nullptr, entries.get());
  readBack(ctx, table.data(), entries.get(), n);
  return table;
}

// Drops the sources below minPixels (their labels to 0) and renumbers the rest in order; returns
// the kept sources' table.
std::vector<Source> keepLargeSources(const ContextPtr& ctx, const SourceSums* sums, int64_t n,
                                     int64_t minPixels, int32_t* labels, const Shape& s) {
  cudaStream_t st = ctx->stream();
  DeviceArray<int32_t> kept(ctx, n), keptEnds(ctx, n);
  DeviceArray<SourceSums> keptSums(ctx, n);
  const unsigned sourceBlocks = blocksFor(n, kPixelThreads);
  markKeptSources<<<sourceBlocks, kPixelThreads, 0, st>>>(sums, kept.get(), n, minPixels);
  inclusiveSum(ctx, kept.get(), keptEnds.get(), n);
  renumberKept<<<blocksFor(s.count(), kPixelThreads), kPixelThreads, 0, st>>>(
      labels, kept.get(), keptEnds.get(), s.count());
  compactKept<<<sourceBlocks, kPixelThreads, 0, st>>>(sums, keptSums.get(), kept.get(),
                                                      keptEnds.get(), n);
  SL_LAUNCHED();
  int32_t keptCount = 0;
  readBack(ctx, &keptCount, keptEnds.get() + n - 1, 1);
  return readTable(ctx, keptSums.get(), keptEnds.get() + n - 1, keptCount, s);
}

}  // namespace

Segmentation segment(const ContextPtr& ctx, const Image& input, const SegmentParams& p,
                     const Job& job) {
  validate(p);
  if (input.empty()) throw InvalidArgument("segment: the image is empty");
  if (input.shape().count() >= INT32_MAX)
    throw InvalidArgument("segment: images of 2^31 pixels or more are not supported");
  // With the background given, the threshold is known before the pixels are: a host image is
  // then labelled as its upload lands it.
  const bool labelAsLanded = input.onHost() && p.background.has_value();
  Image in = labelAsLanded ? deviceBuffer<float>(ctx, input.shape()) : onDevice(ctx, input);
  in.spacing = input.spacing;
  const Shape s = in.shape();
  Segmentation out;
  setBackgroundAndThreshold(ctx, in, p, job, out);
  job.checkCancelled();

  out.labels = deviceBuffer<int32_t>(ctx, s);
  out.labels.spacing = in.spacing;
  int32_t* labels = out.labels.data();
  PublishedSources& published = publishedSources(ctx);
  const SegmentGrid grid(s);
  SegmentScratch w(ctx, grid);
  const SegmentRun run{in.data(),
                       floatThreshold(out.threshold),
                       p.connectivity == 8,
                       measuredFrom(out.background),
                       grid,
                       w,
                       labels};
  const int64_t limit = std::min(w.capacity, published.capacity());
  published.clearGroups(blocksFor(limit, kPublishGroup));
  if (labelAsLanded) {
    TileLabelling labelling(ctx, run);
    ctx->upload(in.data(), input.data(), input.bytes(), [&](size_t bytes) {
      labelling.upToRow(int64_t(bytes / (size_t(s.x) * sizeof(float))));
    });
    labelling.upToRow(grid.rows);
  } else {
    labelComponents(ctx, run);
  }
  const int32_t* found =
      measureAndPublish(ctx, run, published.deviceCount(), published.deviceSources(), limit,
                        published.deviceGroupsDone());
  // The table's vector is made, and its pages touched, while the device works: as long as the
  // last table published here, which the next is most often like.
  if (p.minPixels <= 1) out.sources.resize(std::min(published.lastCount, limit));
  // The count is there once the first group's flag is set; the stream ends a little later.
  if (!pollMappedFlag(published.groupDone(0))) ctx->waitFor(ctx->stream());
  const int64_t n = *published.count();
  published.lastCount = n;
  if (n > w.capacity) {  // measured again with room for every source
    w.capacity = n;
    w.moreSums = DeviceArray<SourceSums>(ctx, n);
    w.sums = w.moreSums.get();
    labelComponents(ctx, run);
    measureAndPublish(ctx, run, nullptr, nullptr, 0);
  }
  if (n > 0 && p.minPixels > 1) {
    out.sources = keepLargeSources(ctx, w.sums, n, p.minPixels, labels, s);
  } else if (n > limit) {
    out.sources = readTable(ctx, w.sums, found, n, s);
    published.reserve(n);  // for the next image like this one
  } else {
    out.sources.resize(n);
    copyPublished(ctx, published, n, out.sources.data());
  }
  return out;
}

}  // namespace stacklens::compute::cuda
