// FITS stacks through cfitsio: HDU choice, degenerate axes, scaling, BLANK, compressed files.
#pragma once

#include <fitsio.h>

#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "io/fits_support.h"
#include "io/gzip_inflation.h"
#include "io/stack.h"
#include "io/unique_fd.h"

namespace stacklens::io {

struct FitsAxisRoles;  // io/fits_axes.h

class FitsReader : public StackReader {
 public:
  // memory: the file's first bytes, read there and not from the file: a copy in which the
  // headers of the HDUs our header pass rejected (unreadable, 0-based, with the reason) are
  // harmless (io/fits_prescan.h). inflated: where a .gz file was inflated, read there instead of
  // path (which names the file in messages).
  FitsReader(const std::string& path, const OpenOptions& options,
             std::shared_ptr<std::vector<char>> memory = nullptr,
             std::map<int, std::string> unreadable = {},
             std::shared_ptr<const InflatedFile> inflated = nullptr);
  ~FitsReader() override;

  const StackInfo& info() const override { return info_; }
  void readSlice(int64_t z, float* out) const override;
  // Reads only the rows' bytes from an uncompressed file (else the whole slice).
  void readRows(int64_t z, int64_t y0, int64_t y1, float* out) const override;
  void readBox(int64_t z, int64_t y0, int64_t y1, int64_t x0, int64_t x1,
               float* out) const override;
  const Wcs* wcs() const override { return wcs_.get(); }
  // Whether the samples are read straight from the file (not tile-compressed; a .gz from where it
  // was inflated).
  bool readsPlain() const { return plainFd_.get() >= 0; }
  // Plain files only: every step-th sample from x0 of every step-th row from y0 of the box
  // [y0, y1) × [x0, x1) of slice z (io/strided_read.h), reading only the sampled rows.
  void readStridedPlain(int64_t z, int64_t y0, int64_t y1, int64_t x0, int64_t x1, int64_t step,
                        float* out) const;

 private:
  // The constructor's steps, in order.
  void openFile(const std::string& readPath);
  void moveToHdu(int index);
  void setShape(const FitsAxisRoles& roles, int plane);
  bool checkDataUnit(const std::vector<int64_t>& axes, const std::string& where);
  void checkDataInMemory(const std::string& where);
  void checkDataInFile(int64_t dataBytes, const std::string& where, FitsStatus& status);
  std::string readHeader(int& count);
  void setUpReads(const FitsAxisRoles& roles, UniqueFd plainFd);
  void readWcs(const std::string& cards, int count, const FitsAxisRoles& roles);

  StackInfo info_;
  std::unique_ptr<Wcs> wcs_;
  // The bytes in memory and the pointer and size cfitsio keeps the addresses of, and an inflated
  // .gz file: declared before file_, so that they outlive it.
  std::shared_ptr<std::vector<char>> memory_;
  std::shared_ptr<const InflatedFile> inflated_;
  void* memoryPointer_ = nullptr;
  size_t memorySize_ = 0;
  // One cfitsio handle: cfitsio shares a file's buffers between handles opened on the same
  // path, so a second handle would not make reads independent. The lock serialises reads.
  mutable std::mutex mutex_;
  FitsHandle file_;
  std::vector<LONGLONG> firstPixel_;  // 1-based, per file axis; the z axis is set per read
  int zAxis_ = -1;                    // the file axis that is z, or -1 for a single image

  // Plain (not tile-compressed, not in memory) images are read with pread() and converted here: no
  // lock, so slices are read in parallel, and about twice as fast as going through cfitsio's
  // buffers. Samples [x0, x1) of rows [y0, y1), read in one pread and converted column range by
  // range.
  void readPlainRows(int64_t z, int64_t y0, int64_t y1, float* out, int64_t x0 = 0,
                     int64_t x1 = -1) const;
  // Rows [y0, y1) of slice z through cfitsio (compressed files or bytes in memory): one run,
  // so a tile-compressed file decompresses only the tiles of those rows.
  void readCfitsioRows(int64_t z, int64_t y0, int64_t y1, float* out) const;
  // into.size() bytes of the file from offset (for slice z's error message).
  void readPlainBytes(int64_t z, int64_t offset, std::vector<unsigned char>& into) const;
  UniqueFd plainFd_;  // the file, for pread(); -1 when cfitsio must do the reading
  int bitpix_ = 0;
  int64_t dataStart_ = 0;      // byte offset of the data unit
  int64_t planeElements_ = 0;  // elements before the chosen plane
  int64_t zStride_ = 0;        // elements between consecutive slices
};

}  // namespace stacklens::io
