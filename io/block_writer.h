// Writing a float32 stack box by box, never holding it whole (whole-stack processing in blocks).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "io/prepared_block_file.h"
#include "io/stack_writer.h"

namespace stacklens::io {

// Who writes the boxes: this writer (writeBox, from several threads), or writers in other
// processes that the writer hands the prepared file to (prepared(), io/prepared_block_file.h),
// while it only commits once they are all done.
enum class BoxWriters { ThisWriter, OtherProcesses };

// The header is written first (FITS .fits/.fit/.fts: the header cards; TIFF .tif/.tiff: every
// page's directory, io/tiff_layout.h, BigTIFF when large), then each box goes straight to its
// place in the file, in any order, from several threads at once: FITS big-endian float32 in the
// data unit, TIFF little-endian float32 (or uint16, WriteOptions::tiffUInt16) after the
// directories. Where the file system can reserve the file's blocks the boxes are written into the
// file mapped in memory, else by pwrite (STACKLENS_WRITE_WITHOUT_MAPPING=1 forces pwrite); a
// single FITS image goes through cfitsio. The TIFF's ImageJ description has no display range
// (the values are not known when it is written). Boxes must not overlap; samples no box covered
// are zero. The file appears at path on commit(); until then it is a temporary file in the same
// folder, removed when the writer goes uncommitted (an error, a cancelled run). Throws IoError
// naming path. For BoxWriters::OtherProcesses the file is laid out the same way (a single FITS
// image too) and its blocks reserved, but not mapped here; boxes written here go in as the other
// processes' do.
//
// A Zarr path (.zarr) writes an OME-Zarr image instead (io/zarr_stack_writer.h): each box's
// samples go into the chunks it touches, a chunk is written once all its samples are in, and the
// levels of WriteOptions::zarr are made at commit; samples no box covered read as NaN. Boxes from
// other processes must cover whole chunks (io/prepared_block_file.h).
class StackBlockWriter {
 public:
  StackBlockWriter(const std::string& path, int64_t z, int64_t y, int64_t x,
                   const WriteOptions& options, BoxWriters writers = BoxWriters::ThisWriter);
  ~StackBlockWriter();
  StackBlockWriter(const StackBlockWriter&) = delete;
  StackBlockWriter& operator=(const StackBlockWriter&) = delete;

  static bool supports(const std::string& path);  // by the extension
  // Box [z0, z1) × [y0, y1) × [x0, x1) inside the stack, C order (x fastest). Safe to call from
  // several threads at once.
  void writeBox(int64_t z0, int64_t z1, int64_t y0, int64_t y1, int64_t x0, int64_t x1,
                const float* data);
  // What a writer in another process needs to write boxes into the temporary file (or Zarr
  // folder). Throws for a single FITS image of BoxWriters::ThisWriter (cfitsio writes it) and once
  // committed.
  PreparedBlockFile prepared() const;
  // Flushes the file (the boxes of other processes of this host too: they share its page
  // cache) and renames it into place.
  void commit();

 private:
  struct State;
  static void openForBoxes(State& s);
  static void sizeForBoxes(State& s, int64_t fileBytes);
  static void mapWhenReserved(State& s, int64_t fileBytes);
  static void reserveForOthers(State& s, int64_t fileBytes);
  static void waitUntilReserved(State& s);
  std::unique_ptr<State> state_;
};

}  // namespace stacklens::io
