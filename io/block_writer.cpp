// StackBlockWriter: FITS boxes at their place (fits_write_subset) or TIFF pages in order as
// they fill; the temporary file is renamed into place at the end.
#include "io/block_writer.h"

#include <cstring>
#include <map>
#include <vector>

#include "io/file_checks.h"
#include "io/fits_support.h"
#include "io/writers.h"

namespace stacklens::io {

struct StackBlockWriter::State {
  State(const std::string& p, const std::string& source) : path(p), out(p, source) {}
  std::string path;
  AtomicOutput out;  // removes the temporary file unless committed
  // Closed before the temporary file is removed. FITS: boxes go to their place at once.
  std::unique_ptr<FitsHandle> file;
  // TIFF: pages in order; a slice waits here until boxes have covered all of it.
  std::unique_ptr<TiffPageWriter> pages;
  std::map<int64_t, std::pair<std::vector<float>, int64_t>> waiting;  // z → (pixels, covered)
  int64_t nextPage = 0;
  int64_t z = 0, y = 0, x = 0;
};

bool StackBlockWriter::supports(const std::string& path) {
  return outputFormat(path) != OutputFormat::Unknown;
}

StackBlockWriter::StackBlockWriter(const std::string& path, int64_t z, int64_t y, int64_t x,
                                   const WriteOptions& options) {
  if (!supports(path))
    throw IoError(path, "unknown output format (use .fits, .fit, .fts, .tif or .tiff)");
  if (z < 1 || y < 1 || x < 1) throw IoError(path, "cannot write an empty or negative shape");
  state_ = std::make_unique<State>(path, options.sourcePath);
  state_->z = z;
  state_->y = y;
  state_->x = x;
  if (outputFormat(path) == OutputFormat::Tiff) {
    state_->pages =
        std::make_unique<TiffPageWriter>(state_->out.tempPath(), path, SampleKind::Float32, z, y, x,
                                         options, tiffDescription(z, options));
    return;
  }
  fitsfile* f =
      createFitsImage(state_->out.tempPath(), path, SampleKind::Float32, z, y, x, options);
  state_->file = std::make_unique<FitsHandle>(f);
}

StackBlockWriter::~StackBlockWriter() = default;

void StackBlockWriter::writeBox(int64_t z0, int64_t z1, int64_t y0, int64_t y1, int64_t x0,
                                int64_t x1, const float* data) {
  State& s = *state_;
  if ((!s.file || !s.file->get()) && !s.pages)
    throw IoError(s.path, "the file is already finished");
  if (z0 < 0 || y0 < 0 || x0 < 0 || z1 > s.z || y1 > s.y || x1 > s.x || z0 >= z1 || y0 >= y1 ||
      x0 >= x1)
    throw IoError(s.path, "a block outside the stack");
  if (s.pages) {
    const int64_t by = y1 - y0, bx = x1 - x0;
    for (int64_t k = z0; k < z1; ++k) {
      if (k < s.nextPage) throw IoError(s.path, "a block over a page already written");
      auto& [pixels, covered] = s.waiting[k];
      if (pixels.empty()) pixels.resize(static_cast<size_t>(s.y * s.x));
      for (int64_t r = 0; r < by; ++r)
        std::memcpy(pixels.data() + (y0 + r) * s.x + x0, data + ((k - z0) * by + r) * bx,
                    static_cast<size_t>(bx) * sizeof(float));
      covered += by * bx;
    }
    // Pages go out in order, as soon as every box has covered them.
    for (auto it = s.waiting.find(s.nextPage);
         it != s.waiting.end() && it->second.second >= s.y * s.x; it = s.waiting.find(s.nextPage)) {
      s.pages->writePage(it->second.first.data());
      s.waiting.erase(it);
      ++s.nextPage;
    }
    return;
  }
  FitsStatus status(s.path);
  // FITS pixels are 1-based, axis 1 = x.
  long first[3] = {static_cast<long>(x0 + 1), static_cast<long>(y0 + 1), static_cast<long>(z0 + 1)};
  long last[3] = {static_cast<long>(x1), static_cast<long>(y1), static_cast<long>(z1)};
  fits_write_subset(s.file->get(), TFLOAT, first, last, const_cast<float*>(data), status.ptr());
  status.check("cannot write a block");
}

void StackBlockWriter::commit() {
  State& s = *state_;
  if (s.pages) {
    s.pages->finish();  // throws unless every page is in
    s.pages.reset();
    s.out.commit();
    return;
  }
  FitsStatus status(s.path);
  if (!s.file) throw IoError(s.path, "the file is already finished");
  s.file->close(status);
  status.check("cannot finish the file");
  s.out.commit();
}

}  // namespace stacklens::io
