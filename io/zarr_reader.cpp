// ZarrReader: axis roles, plane choice, spacing and the chunk-by-chunk box reads.
#include "io/zarr_reader.h"

#include <algorithm>

#include "compute/log.h"
#include "io/file_checks.h"
#include "io/io_error.h"
#include "io/parallel_tasks.h"
#include "io/zarr_chunk_source.h"
#include "io/zarr_dtype.h"
#include "io/zarr_metadata.h"

namespace stacklens::io {

namespace {

// Decoded chunks kept per open array: enough for the chunks of many slices of a typical layout
// (e.g. 64 × 256 × 256 float32 chunks are 16 MiB) while staying a small part of memory.
int64_t cacheBytes() { return std::min<int64_t>(256ll << 20, int64_t(allocationCap() / 8)); }

int findAxis(const std::vector<OmeAxis>& axes, const std::string& name, const std::string& type) {
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i].name == name) return int(i);
  for (size_t i = 0; i < axes.size(); ++i)
    if (!type.empty() && axes[i].type == type) return int(i);
  return -1;
}

}  // namespace

ZarrReader::ZarrReader(std::shared_ptr<const ZarrStore> store, const std::string& folder,
                       const OpenOptions& options)
    : image_(findZarrImage(*store, folder)) {
  const int level = options.hdu < 0 ? 0 : options.hdu;
  if (level >= int(image_.levels.size()))
    throw IoError(folder, "level " + std::to_string(level) + " asked for; the image has " +
                              std::to_string(image_.levels.size()));
  ZarrArrayMeta meta = readZarrArrayMeta(*store, image_.levels[size_t(level)]);
  if (!image_.axes.empty() && image_.axes.size() != meta.shape.size())
    throw IoError(meta.metadataFile, "the array has " + std::to_string(meta.shape.size()) +
                                         " axes, the OME metadata names " +
                                         std::to_string(image_.axes.size()));
  info_.path = store->reopenable(folder);
  info_.format = "zarr";
  info_.dtype = meta.dtype.stackType();
  info_.hdu = level;
  info_.header = image_.describe;
  if (level != 0 || image_.levels.size() > 1)
    info_.header.push_back({"ARRAY", image_.levels[size_t(level)].substr(folder.size()), "level"});
  for (const HeaderCard& c : meta.describe) info_.header.push_back(c);
  const std::vector<int64_t> shape = meta.shape;
  const std::vector<double> scale = image_.scales[size_t(level)];
  source_ = std::make_unique<ZarrChunkSource>(std::move(store), std::move(meta), cacheBytes());
  chooseAxes(shape, options.plane);
  if (!scale.empty() && scale.size() == shape.size()) {
    info_.spacingKnown = true;
    const int roles[3] = {zAxis_, yAxis_, xAxis_};
    for (int k = 0; k < 3; ++k)
      if (roles[k] >= 0) {
        info_.spacing[size_t(k)] = scale[size_t(roles[k])];
        if (!image_.axes.empty())
          info_.units[size_t(k)] = stackUnit(image_.axes[size_t(roles[k])].unit);
      }
  }
  // A plane larger than memory still opens (a sky mosaic of 100000² mostly unwritten chunks):
  // it is read by boxes and display levels; only a whole-slice read is refused (readSlice).
  describeLevels(level);
}

ZarrReader::~ZarrReader() = default;

void ZarrReader::chooseAxes(const std::vector<int64_t>& shape, int plane) {
  const int n = int(shape.size());
  const auto& axes = image_.axes;
  if (!axes.empty()) {
    xAxis_ = findAxis(axes, "x", "");
    yAxis_ = findAxis(axes, "y", "");
    std::vector<int> space;
    for (int i = 0; i < n; ++i)
      if (axes[size_t(i)].type == "space" && axes[size_t(i)].name != "z") space.push_back(i);
    if (xAxis_ < 0 && !space.empty()) xAxis_ = space.back();
    if (yAxis_ < 0 && space.size() >= 2) yAxis_ = space[space.size() - 2];
    if (xAxis_ < 0) xAxis_ = n - 1;
    if (yAxis_ < 0 && n >= 2) yAxis_ = xAxis_ == n - 1 ? n - 2 : n - 1;
    const int z = findAxis(axes, "z", ""), t = findAxis(axes, "t", "time"),
              c = findAxis(axes, "c", "channel");
    for (const int candidate : {z, t, c})
      if (candidate >= 0 && candidate != xAxis_ && candidate != yAxis_ &&
          shape[size_t(candidate)] > 1) {
        zAxis_ = candidate;
        break;
      }
    if (zAxis_ < 0 && z >= 0 && z != xAxis_ && z != yAxis_) zAxis_ = z;
  } else {
    xAxis_ = n - 1;
    yAxis_ = n >= 2 ? n - 2 : -1;
    zAxis_ = n >= 3 ? n - 3 : -1;
  }
  // The planes: channel first, then the remaining axes from the last to the first.
  std::vector<int> planeAxes;
  for (int i = n - 1; i >= 0; --i)
    if (i != xAxis_ && i != yAxis_ && i != zAxis_) planeAxes.push_back(i);
  std::stable_partition(planeAxes.begin(), planeAxes.end(),
                        [&](int a) { return !axes.empty() && axes[size_t(a)].type == "channel"; });
  int64_t planes = 1;
  for (const int a : planeAxes) planes *= shape[size_t(a)];  // ≤ the element count: no overflow
  if (plane < 0 || plane >= planes)
    throw IoError(info_.path, "plane " + std::to_string(plane) + " asked for; the image has " +
                                  std::to_string(planes));
  fixed_.assign(size_t(n), 0);
  int64_t rest = plane;
  for (const int a : planeAxes) {
    fixed_[size_t(a)] = rest % shape[size_t(a)];
    rest /= shape[size_t(a)];
  }
  info_.planes = planes;
  info_.plane = plane;
  info_.x = shape[size_t(xAxis_)];
  info_.y = yAxis_ >= 0 ? shape[size_t(yAxis_)] : 1;
  info_.z = zAxis_ >= 0 ? shape[size_t(zAxis_)] : 1;
  const std::vector<int64_t>& chunk = source_->meta().coding.shape;
  auto along = [&](int axis) { return axis >= 0 ? chunk[size_t(axis)] : int64_t(1); };
  info_.readUnit = {along(zAxis_), along(yAxis_), along(xAxis_)};
}

// The levels, listed as the HDUs are for FITS: each with its shape (x first), "unreadable" when
// its metadata cannot be read (the level opened has been read already).
void ZarrReader::describeLevels(int level) {
  for (size_t i = 0; i < image_.levels.size(); ++i) {
    HduInfo h;
    h.index = int(i);
    h.name = image_.levels[i].substr(std::min(image_.folder.size() + 1, image_.levels[i].size()));
    if (h.name.empty()) h.name = "array";
    try {
      const std::vector<int64_t> shape =
          int(i) == level ? source_->meta().shape
                          : readZarrArrayMeta(source_->store(), image_.levels[i]).shape;
      h.type = i == 0 ? "zarr array" : "zarr array (level " + std::to_string(i) + ")";
      h.axes.assign(shape.rbegin(), shape.rend());
    } catch (const IoError& e) {
      h.type = "unreadable: " + e.reason();
    }
    info_.hdus.push_back(h);
  }
}

void ZarrReader::readSlice(int64_t z, float* out) const {
  if (info_.y * info_.x > int64_t(allocationCap() / sizeof(float)))
    throw IoError(info_.path, "slices of " + std::to_string(info_.y) + " × " +
                                  std::to_string(info_.x) +
                                  " are more than StackLens can hold whole (read them by boxes)");
  readBox(z, 0, info_.y, 0, info_.x, out);
}

void ZarrReader::readRows(int64_t z, int64_t y0, int64_t y1, float* out) const {
  readBox(z, y0, y1, 0, info_.x, out);
}

void ZarrReader::readBox(int64_t z, int64_t y0, int64_t y1, int64_t x0, int64_t x1,
                         float* out) const {
  if (z < 0 || z >= info_.z)
    throw IoError(info_.path,
                  "slice " + std::to_string(z) + " is outside 0.." + std::to_string(info_.z - 1));
  if (y0 < 0 || y1 > info_.y || y0 >= y1 || x0 < 0 || x1 > info_.x || x0 >= x1)
    throw IoError(info_.path, "box rows " + std::to_string(y0) + ".." + std::to_string(y1) +
                                  ", columns " + std::to_string(x0) + ".." + std::to_string(x1) +
                                  " is outside the slice");
  const ZarrChunkSource& source = *source_;
  const std::vector<int64_t>& chunk = source.meta().coding.shape;
  const std::vector<int64_t>& strides = source.strides();
  std::vector<int64_t> index = fixed_;
  if (zAxis_ >= 0) index[size_t(zAxis_)] = z;
  // Offset inside each chunk of the fixed axes, and the chunk they lie in.
  std::vector<int64_t> grid(index.size());
  int64_t base = 0;
  for (size_t d = 0; d < index.size(); ++d) {
    grid[d] = index[d] / chunk[d];
    base += (index[d] % chunk[d]) * strides[d];
  }
  const int64_t cy = yAxis_ >= 0 ? chunk[size_t(yAxis_)] : 1, cx = chunk[size_t(xAxis_)];
  const int64_t sy = yAxis_ >= 0 ? strides[size_t(yAxis_)] : 0, sx = strides[size_t(xAxis_)];
  const int64_t gy0 = y0 / cy, gy1 = (y1 - 1) / cy, gx0 = x0 / cx, gx1 = (x1 - 1) / cx;
  const int64_t tasks = (gy1 - gy0 + 1) * (gx1 - gx0 + 1), width = x1 - x0;
  const float fill = static_cast<float>(source.meta().fillValue);
  const ZarrDataType& type = source.meta().dtype;

  const auto copyChunk = [&](int64_t task) {
    const int64_t gy = gy0 + task / (gx1 - gx0 + 1), gx = gx0 + task % (gx1 - gx0 + 1);
    std::vector<int64_t> at = grid;
    if (yAxis_ >= 0) at[size_t(yAxis_)] = gy;
    at[size_t(xAxis_)] = gx;
    const auto bytes = source.chunk(at);
    const int64_t ya = std::max(y0, gy * cy), yb = std::min(y1, (gy + 1) * cy);
    const int64_t xa = std::max(x0, gx * cx), xb = std::min(x1, (gx + 1) * cx);
    for (int64_t y = ya; y < yb; ++y) {
      float* row = out + (y - y0) * width + (xa - x0);
      if (bytes->empty()) {
        std::fill(row, row + (xb - xa), fill);
        continue;
      }
      const int64_t first = base + (y - gy * cy) * sy + (xa - gx * cx) * sx;
      convertZarrElements(bytes->data() + first * type.bytes, xb - xa, sx, type, row);
    }
  };
  if (tasks == 1)
    copyChunk(0);
  else
    runTasks(tasks, source.store().parallelReads(), copyChunk);
  reportForbiddenChunks();
}

// Once per open: chunks read as the fill value because the server answered 403 for them.
void ZarrReader::reportForbiddenChunks() const {
  const int64_t n = source_->store().forbiddenAsAbsent();
  if (n == 0 || forbiddenReported_.exchange(true)) return;
  compute::logMessage(compute::LogLevel::Warning,
                      image_.folder + ": " + std::to_string(n) + (n == 1 ? " chunk" : " chunks") +
                          " answered 403 Forbidden and read as the fill value (an object store "
                          "hides absent keys this way; if the data should be there, check the "
                          "URL's credentials)");
}

}  // namespace stacklens::io
