// StackBlockWriter: a FITS header now, boxes as they come (fits_write_subset), rename at the end.
#include "io/block_writer.h"

#include <cctype>

#include "io/file_checks.h"
#include "io/fits_support.h"
#include "io/writers.h"

namespace stacklens::io {

struct StackBlockWriter::State {
  State(const std::string& p, const std::string& source) : path(p), out(p, source) {}
  std::string path;
  AtomicOutput out;                  // removes the temporary file unless committed
  std::unique_ptr<FitsHandle> file;  // closed before the temporary file is removed
  int64_t z = 0, y = 0, x = 0;
};

bool StackBlockWriter::supports(const std::string& path) {
  auto ends = [&](const std::string& e) {
    if (path.size() < e.size()) return false;
    std::string tail = path.substr(path.size() - e.size());
    for (char& c : tail) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return tail == e;
  };
  return ends(".fits") || ends(".fit") || ends(".fts");
}

StackBlockWriter::StackBlockWriter(const std::string& path, int64_t z, int64_t y, int64_t x,
                                   const WriteOptions& options) {
  if (!supports(path))
    throw IoError(path, "writing in blocks needs a FITS file (.fits, .fit, .fts)");
  if (z < 1 || y < 1 || x < 1) throw IoError(path, "cannot write an empty or negative shape");
  state_ = std::make_unique<State>(path, options.sourcePath);
  state_->z = z;
  state_->y = y;
  state_->x = x;
  fitsfile* f =
      createFitsImage(state_->out.tempPath(), path, SampleKind::Float32, z, y, x, options);
  state_->file = std::make_unique<FitsHandle>(f);
}

StackBlockWriter::~StackBlockWriter() = default;

void StackBlockWriter::writeBox(int64_t z0, int64_t z1, int64_t y0, int64_t y1, int64_t x0,
                                int64_t x1, const float* data) {
  State& s = *state_;
  if (!s.file || !s.file->get()) throw IoError(s.path, "the file is already finished");
  if (z0 < 0 || y0 < 0 || x0 < 0 || z1 > s.z || y1 > s.y || x1 > s.x || z0 >= z1 || y0 >= y1 ||
      x0 >= x1)
    throw IoError(s.path, "a block outside the stack");
  FitsStatus status(s.path);
  // FITS pixels are 1-based, axis 1 = x.
  long first[3] = {static_cast<long>(x0 + 1), static_cast<long>(y0 + 1), static_cast<long>(z0 + 1)};
  long last[3] = {static_cast<long>(x1), static_cast<long>(y1), static_cast<long>(z1)};
  fits_write_subset(s.file->get(), TFLOAT, first, last, const_cast<float*>(data), status.ptr());
  status.check("cannot write a block");
}

void StackBlockWriter::commit() {
  State& s = *state_;
  FitsStatus status(s.path);
  if (!s.file) throw IoError(s.path, "the file is already finished");
  s.file->close(status);
  status.check("cannot finish the file");
  s.out.commit();
}

}  // namespace stacklens::io
