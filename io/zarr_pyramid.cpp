// writeHalvedLevel: 2 × 2 means in y and x, band by band.
#include "io/zarr_pyramid.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "io/parallel_tasks.h"
#include "io/write_stop.h"

namespace stacklens::io {

namespace {

// Slices halved at once: the reader decodes chunks on threads of its own too, and the machines
// StackLens runs on have at least two cores.
constexpr int kThreads = 2;

}  // namespace

void writeHalvedLevel(const StackReader& from, ZarrArrayWriter& to, const std::string& target) {
  const StackInfo& in = from.info();
  const int64_t oy = to.shape()[1], ox = to.shape()[2];
  const int64_t band = to.chunks()[1];
  const int64_t bands = (oy + band - 1) / band;
  // Band by band, each through every slice: the chunks a band reads hold several slices, and
  // the reader's cache keeps those of one band (not those of a whole slice) until every slice
  // has used them.
  runTasks(in.z * bands, kThreads, [&](int64_t task) {
    throwIfWritesStopped(target);
    const int64_t z = task % in.z, oy0 = task / in.z * band, oy1 = std::min(oy, oy0 + band);
    const int64_t y0 = 2 * oy0, y1 = std::min(in.y, 2 * oy1);
    std::vector<float> rows(size_t((y1 - y0) * in.x));
    from.readRows(z, y0, y1, rows.data());
    std::vector<float> out(size_t((oy1 - oy0) * ox));
    for (int64_t r = oy0; r < oy1; ++r)
      for (int64_t c = 0; c < ox; ++c) {
        double sum = 0;
        int n = 0;
        for (int64_t y = 2 * r; y < std::min(in.y, 2 * r + 2); ++y)
          for (int64_t x = 2 * c; x < std::min(in.x, 2 * c + 2); ++x) {
            const float v = rows[size_t((y - y0) * in.x + x)];
            if (std::isnan(v)) continue;
            sum += v;
            ++n;
          }
        out[size_t((r - oy0) * ox + c)] =
            n ? static_cast<float>(sum / n) : std::numeric_limits<float>::quiet_NaN();
      }
    to.writeBox(z, z + 1, oy0, oy1, 0, ox, out.data());
  });
}

}  // namespace stacklens::io
