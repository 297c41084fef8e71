// ZarrStackWriter: layout and checks, level 0 as boxes arrive, the pyramid and the rename at
// commit.
#include "io/zarr_stack_writer.h"

#include <algorithm>
#include <filesystem>

#include "io/file_checks.h"
#include "io/io_error.h"
#include "io/parallel_tasks.h"
#include "io/zarr_array_writer.h"
#include "io/zarr_pyramid.h"
#include "io/zarr_reader.h"

namespace stacklens::io {

namespace {

// The most levels asked for: 2^31 pixels halved 31 times is one pixel.
constexpr int kMaxLevels = 32;
// Chunk layers of a whole stack written at once (writeZarrStack): encoding dominates.
constexpr int kWriteThreads = 4;

std::string nameOf(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return std::filesystem::path(p).filename().string();
}

std::string joined(const std::array<int64_t, 3>& v) {
  return std::to_string(v[0]) + "," + std::to_string(v[1]) + "," + std::to_string(v[2]);
}

// Shards as the sharding_indexed codec needs them (a whole number of chunks along each axis; a
// shard of the shape or more is clipped to the shape's whole chunks, as the chunks are to the
// shape) and as the writer can hold them: a shard is gathered whole in memory before it is
// encoded, and its index must be one the reader accepts.
void checkShards(const std::string& path, const std::array<int64_t, 3>& shards,
                 OmeZarrLayout& layout, const std::array<int64_t, 3>& shape, int64_t cap) {
  if (layout.omeVersion != "0.5")
    throw IoError(path, "shards are Zarr v3: OME-Zarr 0.5 only, not " + layout.omeVersion);
  int64_t samples = 1, inner = 1;
  for (size_t a = 0; a < 3; ++a) {
    const int64_t c = std::min(layout.chunks[a], shape[a]);
    const int64_t whole = (shape[a] + c - 1) / c * c;
    if (shards[a] < 1 || (shards[a] < whole && shards[a] % layout.chunks[a] != 0))
      throw IoError(path, "shards of " + joined(shards) + " are not whole numbers of the chunks " +
                              joined(layout.chunks));
    const int64_t s = std::min(shards[a], whole);
    samples *= s;
    inner *= s / c;
  }
  if (samples * 4 > cap)
    throw IoError(path, "shards of " + std::to_string(samples * 4 >> 20) +
                            " MiB are more than the " + std::to_string(cap >> 20) +
                            " MiB StackLens gathers at once");
  if (inner > (int64_t(1) << 24))
    throw IoError(path, "shards of " + joined(shards) + " hold more than 2^24 chunks of " +
                            joined(layout.chunks));
  layout.shards = shards;
}

OmeZarrLayout layoutFor(const std::string& path, int64_t z, int64_t y, int64_t x, bool int32,
                        const ZarrWriteOptions& o) {
  if (o.omeVersion != "0.4" && o.omeVersion != "0.5")
    throw IoError(path, "OME-Zarr version \"" + o.omeVersion + "\" is not written (0.4 or 0.5 is)");
  if (o.levels < 1 || o.levels > kMaxLevels)
    throw IoError(path, "levels must be 1 to " + std::to_string(kMaxLevels) + ", not " +
                            std::to_string(o.levels));
  if (int32 && o.levels > 1)
    throw IoError(path, "labels are written with one level: the mean of labels is no label");
  if (o.levels > 1 && (int64_t(1) << (o.levels - 2)) >= std::max(y, x))
    throw IoError(path, std::to_string(o.levels) + " levels of a " + std::to_string(y) + " x " +
                            std::to_string(x) + " image: level " + std::to_string(o.levels - 2) +
                            " is already one pixel");
  OmeZarrLayout layout;
  layout.omeVersion = o.omeVersion;
  layout.int32 = int32;
  layout.name = nameOf(path);
  const std::array<int64_t, 3> fallback = defaultZarrChunks(z, y, x);
  int64_t samples = 1;
  for (size_t a = 0; a < 3; ++a) {
    if (o.chunks[a] < 0) throw IoError(path, "a chunk size below 1");
    layout.chunks[a] = o.chunks[a] > 0 ? o.chunks[a] : fallback[a];
    samples *= std::min(layout.chunks[a], std::array<int64_t, 3>{z, y, x}[a]);
  }
  // What the reader decodes at once (io/zarr_metadata.cpp): what is written must read back.
  const int64_t cap = std::min<int64_t>(int64_t(allocationCap() / 8), int64_t(1) << 31);
  if (samples * 4 > cap)
    throw IoError(path, "chunks of " + std::to_string(samples * 4 >> 20) +
                            " MiB are more than the " + std::to_string(cap >> 20) +
                            " MiB StackLens decodes at once");
  std::array<int64_t, 3> shape{z, y, x};
  if (o.shards != std::array<int64_t, 3>{0, 0, 0}) checkShards(path, o.shards, layout, shape, cap);
  for (int level = 0; level < o.levels; ++level) {
    layout.shapes.push_back(shape);
    shape[1] = (shape[1] + 1) / 2;
    shape[2] = (shape[2] + 1) / 2;
  }
  return layout;
}

}  // namespace

std::array<int64_t, 3> defaultZarrChunks(int64_t z, int64_t y, int64_t x) {
  if (z <= 1) return {1, std::min<int64_t>(y, 512), std::min<int64_t>(x, 512)};
  return {std::min<int64_t>(z, 16), std::min<int64_t>(y, 256), std::min<int64_t>(x, 256)};
}

ZarrStackWriter::ZarrStackWriter(const std::string& path, int64_t z, int64_t y, int64_t x,
                                 bool int32, const WriteOptions& options)
    : path_(path),
      layout_(layoutFor(path, z, y, x, int32, options.zarr)),
      pendingBytes_(options.zarr.pendingBytes),
      folder_(path, options.sourcePath) {
  writeOmeZarrMetadata(folder_.tempPath(), path_, layout_, options);
  level0_ = std::make_unique<ZarrArrayWriter>(folder_.tempPath(), folder_.scratchPath(), path_,
                                              layout_, 0, pendingBytes_);
}

ZarrStackWriter::~ZarrStackWriter() = default;

void ZarrStackWriter::writeBox(int64_t z0, int64_t z1, int64_t y0, int64_t y1, int64_t x0,
                               int64_t x1, const void* data) {
  if (committed_) throw IoError(path_, "the output is already finished");
  level0_->writeBox(z0, z1, y0, y1, x0, x1, data);
}

int64_t ZarrStackWriter::spills() const { return level0_->spills(); }

void ZarrStackWriter::commit() {
  if (committed_) throw IoError(path_, "the output is already finished");
  level0_->finish();
  for (size_t level = 1; level < layout_.shapes.size(); ++level) {
    OpenOptions open;
    open.hdu = int(level - 1);
    const ZarrReader from(localZarrStore(), folder_.tempPath(), open);
    ZarrArrayWriter to(folder_.tempPath(), folder_.scratchPath(), path_, layout_, level,
                       pendingBytes_);
    writeHalvedLevel(from, to, path_);
    to.finish();
  }
  folder_.commit();
  committed_ = true;
}

void writeZarrStack(const std::string& path, const void* data, bool int32, int64_t z, int64_t y,
                    int64_t x, const WriteOptions& options) {
  ZarrStackWriter writer(path, z, y, x, int32, options);
  const auto* bytes = static_cast<const char*>(data);
  // Whole layers of stored objects (chunks, or shards) are contiguous in data; with one slice per
  // layer, so are bands of their rows, which keeps a single image on several threads too.
  const std::array<int64_t, 3> objects = writer.layout().levelObjects(0);
  const int64_t depth = std::min(z, objects[0]), layers = (z + depth - 1) / depth;
  const int64_t band = depth == 1 ? std::min(y, objects[1]) : y;
  const int64_t bands = (y + band - 1) / band;
  runTasks(layers * bands, kWriteThreads, [&](int64_t task) {
    const int64_t z0 = task / bands * depth, z1 = std::min(z, z0 + depth);
    const int64_t y0 = task % bands * band, y1 = std::min(y, y0 + band);
    writer.writeBox(z0, z1, y0, y1, 0, x, bytes + (z0 * y + y0) * x * 4);
  });
  writer.commit();
}

}  // namespace stacklens::io
