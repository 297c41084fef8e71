// TIFF stacks through libtiff: multi-page z-stacks, ImageJ hyperstacks and basic OME-TIFF.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "io/stack.h"

namespace stacklens::io {

struct TiffDimensions;  // io/tiff_metadata.h
struct TiffLevels;      // io/tiff_pages.h
struct TiffPage;        // io/tiff_pages.h
struct TiffResolution;  // io/tiff_metadata.h

// Which pages are the slices:
// - Plain multi-page TIFF: every page of the first run of pages with page 0's size and type is one
//   z-slice (reduced-resolution pages are skipped). Later pages of another size are left out with
//   a "warning" header card; a broken page chain (truncated file) is an error.
// - ImageJ hyperstacks (channels C, slices Z, frames T; pages stored channel fastest) and OME-TIFF
//   (SizeC/SizeZ/SizeT in DimensionOrder): the z axis is Z; when Z = 1 it is T; when both are 1
//   it is C. The remaining axes form the planes, chosen by OpenOptions::plane with the channel
//   varying fastest (plane = c + C·t for a Z stack).
// - Pixels of several samples (RGB, or any SamplesPerPixel > 1, chunky or planar): each sample is
//   a plane too, varying fastest of all (plane = sample + samples·(c + C·t)).
// Samples of 1, 2 or 4 bits are unpacked to their stored values (uint8); 16-bit floats are
// widened to float32 exactly.
// Spacing: ImageJ "spacing"/"unit" plus XResolution/YResolution (ResolutionUnit none); OME
// PhysicalSizeX/Y/Z (µm unless a unit is given); otherwise only a centimetre ResolutionUnit is
// trusted (inch values are usually print DPI).
// Pyramids (stored as SubIFDs of the slices' pages, as in OME-TIFF, or for a single image as
// reduced-resolution pages after it) are listed as HDUs 1, 2, ... after the image, as OME-Zarr
// levels are: OpenOptions::hdu opens one.
class TiffReader : public StackReader {
 public:
  TiffReader(const std::string& path, const OpenOptions& options, uint64_t fileSize);
  ~TiffReader() override;
  const StackInfo& info() const override { return info_; }
  void readSlice(int64_t z, float* out) const override;
  // Decodes only the strips or tiles that hold the rows (YCbCr and old-style JPEG: the page).
  void readRows(int64_t z, int64_t y0, int64_t y1, float* out) const override;
  const Wcs* wcs() const override { return nullptr; }

  // How every page of the series is laid out (checked equal for all pages at open).
  struct Layout {
    uint32_t width = 0, height = 0;
    uint16_t bits = 0, format = 1, samples = 1, planar = 1;
    bool tiled = false;
  };

 private:
  struct Handle;
  std::unique_ptr<Handle> openHandle(const std::string& failure) const;
  std::unique_ptr<Handle> acquire() const;
  void readPageRows(int64_t z, int64_t y0, int64_t y1, float* out) const;
  void release(std::unique_ptr<Handle> handle) const;

  // The constructor's steps after the pages are found.
  TiffDimensions readStackOrder(const std::string& description, long long pageCount,
                                const TiffResolution& resolution);
  // The pages shown as the slices, in z order.
  std::vector<const TiffPage*> choosePlane(const TiffDimensions& dims, int plane,
                                           const std::vector<TiffPage>& pages);
  void chooseLevel(const TiffLevels& levels, int hdu, const std::vector<const TiffPage*>& slices);

  StackInfo info_;
  Layout layout_;
  std::vector<uint64_t> sliceOffsets_;  // IFD offset of the page shown as each z
  uint16_t sample_ = 0;                 // the sample of each pixel shown (the plane's)
  // libtiff handles are not thread-safe: each read borrows a handle of its own from this pool
  // (opened on demand), so concurrent reads of different slices run in parallel.
  mutable std::mutex poolMutex_;
  mutable std::vector<std::unique_ptr<Handle>> idle_;
};

}  // namespace stacklens::io
