#include "compute/blocked/along_z.h"

#include <algorithm>
#include <chrono>
#include <future>
#include <vector>

#include "compute/projection.h"

namespace stacklens::compute {
namespace {

double secondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Rows [y0, y1) of slices [z0, z0 + band.z) into band, by a few threads at once (file reads
// overlap and decompress in parallel).
void readBand(const RowsRead& read, int64_t z0, int64_t y0, int64_t y1, Image& band) {
  const int64_t count = band.shape().z, threads = std::min<int64_t>(8, count);
  std::vector<std::future<void>> parts;
  for (int64_t t = 0; t < threads; ++t)
    parts.push_back(std::async(std::launch::async, [&, t] {
      for (int64_t k = t; k < count; k += threads) read(z0 + k, y0, y1, band.slice(k));
    }));
  for (auto& p : parts) p.get();
}

}  // namespace

Image collapseAlongZ(Backend& backend, Shape volume, const Spacing& spacing, int64_t first,
                     int64_t last, int64_t context, size_t hostBudget, const RowsRead& read,
                     const Collapse& collapse, const Job& job, AlongZTimes* times) {
  sliceRange(volume.z, first, last);  // checks the range
  const int64_t z0 = std::max<int64_t>(0, first - context);
  const int64_t z1 = std::min<int64_t>(volume.z, last + 1 + context);
  // The band, its copy on the device and the output share the budget.
  const int64_t rowBytes = std::max<int64_t>(1, (z1 - z0) * volume.x * int64_t(sizeof(float)));
  const int64_t rows =
      std::clamp<int64_t>(int64_t(hostBudget / 3) / rowBytes, 1, std::max<int64_t>(1, volume.y));
  Image out = Image::host({1, volume.y, volume.x});
  out.spacing = spacing;
  AlongZTimes t;
  for (int64_t y0 = 0; y0 < volume.y; y0 += rows, ++t.bands) {
    job.checkCancelled();
    const int64_t y1 = std::min(volume.y, y0 + rows);
    ZBand band{Image::hostUninitialized({z1 - z0, y1 - y0, volume.x}), z0, first - z0, last - z0};
    band.slices.spacing = spacing;
    auto start = std::chrono::steady_clock::now();
    readBand(read, z0, y0, y1, band.slices);
    t.readSeconds += secondsSince(start);
    start = std::chrono::steady_clock::now();
    const Image part = backend.download(collapse(backend, band));
    t.computeSeconds += secondsSince(start);
    std::copy_n(part.data(), part.shape().count(), out.data() + y0 * volume.x);
    job.report(double(y1) / double(volume.y));
  }
  if (times) *times = t;
  return out;
}

}  // namespace stacklens::compute
