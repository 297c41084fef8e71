// Display levels: stored levels (OME-Zarr, TIFF SubIFDs) first, then strided ones of the coarsest.
#include "io/display_levels.h"

#include <algorithm>
#include <string>

#include "io/strided_read.h"

namespace stacklens::io {

namespace {

// The stored levels (OME-Zarr, TIFF SubIFDs) coarser than the one opened, each opened on the same
// plane; a level that cannot be opened, or is not coarser than the last, ends the list (the strided
// levels of the last one take over).
std::vector<std::shared_ptr<const StackReader>> storedLevels(
    const std::shared_ptr<const StackReader>& full) {
  std::vector<std::shared_ptr<const StackReader>> sources{full};
  const StackInfo& info = full->info();
  if (info.format != "zarr" && info.format != "tiff") return sources;
  for (size_t k = size_t(info.hdu) + 1; k < info.hdus.size(); ++k) {
    const StackInfo& last = sources.back()->info();
    try {
      OpenOptions options;
      options.hdu = int(k);
      options.plane = info.plane;
      std::shared_ptr<const StackReader> level = openStack(info.path, options);
      const StackInfo& l = level->info();
      if (l.x <= 0 || l.y <= 0 || l.z <= 0 || l.x > last.x || l.y > last.y ||
          (l.x == last.x && l.y == last.y))
        break;
      sources.push_back(std::move(level));
    } catch (const IoError&) {
      break;
    }
  }
  return sources;
}

}  // namespace

std::shared_ptr<const DisplayLevels> DisplayLevels::of(std::shared_ptr<const StackReader> full,
                                                       int64_t coarsestSide) {
  auto levels = std::make_shared<DisplayLevels>();
  levels->sources_ = storedLevels(full);
  const StackInfo& f = full->info();
  for (size_t s = 0; s < levels->sources_.size(); ++s) {
    const StackInfo& i = levels->sources_[s]->info();
    DisplayLevel level{i.x, i.y, double(f.x) / double(i.x), double(f.y) / double(i.y), int(s), 1};
    levels->levels_.push_back(level);
  }
  // Halve the coarsest source until it fits.
  DisplayLevel last = levels->levels_.back();
  const StackInfo& base = levels->sources_.back()->info();
  while (std::max(last.width, last.height) > std::max<int64_t>(coarsestSide, 1)) {
    last.step *= 2;
    last.width = stridedCount(0, base.x, last.step);
    last.height = stridedCount(0, base.y, last.step);
    last.scaleX = double(f.x) / double(base.x) * double(last.step);
    last.scaleY = double(f.y) / double(base.y) * double(last.step);
    levels->levels_.push_back(last);
  }
  return levels;
}

int DisplayLevels::levelForZoom(double zoom) const {
  if (!(zoom > 0)) return coarsest();
  const double largest = 1.0 / zoom * (1.0 + 1e-9);
  int best = 0;
  for (int i = 0; i < int(levels_.size()); ++i) {
    const DisplayLevel& l = levels_[size_t(i)];
    if (std::max(l.scaleX, l.scaleY) <= largest) best = i;
  }
  return best;
}

void DisplayLevels::read(int level, int64_t z, int64_t y0, int64_t y1, int64_t x0, int64_t x1,
                         float* out) const {
  const DisplayLevel& l = levels_.at(size_t(level));
  const StackReader& r = *sources_[size_t(l.source)];
  const StackInfo& i = r.info();
  if (y0 < 0 || x0 < 0 || y1 > l.height || x1 > l.width || y0 >= y1 || x0 >= x1)
    throw IoError(i.path, "box " + std::to_string(y0) + ".." + std::to_string(y1) + " × " +
                              std::to_string(x0) + ".." + std::to_string(x1) +
                              " is outside level " + std::to_string(level));
  const int64_t fullZ = sources_[0]->info().z;
  const int64_t zs = fullZ == i.z ? z : std::min(i.z - 1, z * i.z / std::max<int64_t>(1, fullZ));
  // Strided even at step 1: readBox may read whole rows of the plane between the box's first
  // and last sample in one buffer, where readStrided reads a row's span (or a band) at a time.
  readStrided(r, zs, y0 * l.step, std::min(y1 * l.step, i.y), x0 * l.step,
              std::min(x1 * l.step, i.x), l.step, out);
}

}  // namespace stacklens::io
