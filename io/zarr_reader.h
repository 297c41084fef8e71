// Zarr v2/v3 arrays and OME-Zarr images as stacks: the finest level by default (OpenOptions::hdu
// picks another; the levels are listed as the HDUs), read chunk by chunk on demand.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "io/ome_zarr.h"
#include "io/stack.h"
#include "io/zarr_store.h"

namespace stacklens::io {

class ZarrChunkSource;  // io/zarr_chunk_source.h

// Which axes are shown:
// - x and y: the axes named "x" and "y" (else the last two space axes, else the last two axes).
// - z: the "z" axis; when it has length 1, the time axis; when that has length 1 too, the channel
//   axis (as the TIFF reader does with hyperstacks). A plain array: the third axis from the end.
// - Every other axis is a plane (OpenOptions::plane), the channel varying fastest, then the
//   other axes from the last to the first (plane = c + C·t for a czyx... tczyx image).
// Spacing and units come from the level's "scale" transformations and the axes' units.
// readSlice/readBox read only the chunks the box touches, several at once on a few threads, and
// keep decoded chunks in a bounded cache; a chunk never written reads as the fill value (one
// that an HTTP server answered 403 for too, said once through compute/log.h). The folder is a
// local path or an HTTP(S) URL without its query; the store reads it (io/zarr_store.h).
class ZarrReader : public StackReader {
 public:
  ZarrReader(std::shared_ptr<const ZarrStore> store, const std::string& folder,
             const OpenOptions& options);
  ~ZarrReader() override;
  const StackInfo& info() const override { return info_; }
  void readSlice(int64_t z, float* out) const override;
  void readRows(int64_t z, int64_t y0, int64_t y1, float* out) const override;
  void readBox(int64_t z, int64_t y0, int64_t y1, int64_t x0, int64_t x1,
               float* out) const override;
  const Wcs* wcs() const override { return nullptr; }

  // The omero display hints (colour, window, label) of the image's channels, in channel order.
  // TODO(viewer): use them as the initial display; StackInfo has no place for them yet.
  const std::vector<OmeChannel>& channels() const { return image_.channels; }

 private:
  void chooseAxes(const std::vector<int64_t>& shape, int plane);
  void describeLevels(int level);
  void reportForbiddenChunks() const;

  ZarrImage image_;
  std::unique_ptr<ZarrChunkSource> source_;
  int xAxis_ = -1, yAxis_ = -1, zAxis_ = -1;
  std::vector<int64_t> fixed_;  // the index along every axis for the chosen plane (z, y, x: 0)
  StackInfo info_;
  mutable std::atomic<bool> forbiddenReported_{false};
};

}  // namespace stacklens::io
