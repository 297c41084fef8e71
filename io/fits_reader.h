// FITS stacks through cfitsio: HDU choice, degenerate axes, scaling, BLANK, compressed files.
#pragma once

#include <fitsio.h>

#include <array>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "io/stack.h"

namespace stacklens::io {

class FitsReader : public StackReader {
 public:
  FitsReader(const std::string& path, const OpenOptions& options);
  ~FitsReader() override;
  const StackInfo& info() const override { return info_; }
  void readSlice(int64_t z, float* out) const override;
  const Wcs* wcs() const override { return wcs_.get(); }

 private:
  StackInfo info_;
  std::unique_ptr<Wcs> wcs_;
  // One cfitsio handle: cfitsio shares a file's buffers between handles opened on the same
  // path, so a second handle would not make reads independent. The lock serialises reads.
  mutable std::mutex mutex_;
  fitsfile* file_ = nullptr;
  std::vector<LONGLONG> firstPixel_;  // 1-based, per file axis; the z axis is set per read
  int zAxis_ = -1;                    // the file axis that is z, or -1 for a single image
};

}  // namespace stacklens::io
