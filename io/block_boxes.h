// Boxes of float32 samples into a block file (io/block_writer.h, io/prepared_block_file.h): where
// each sample goes, how the file stores it, and the copies into a mapping or through pwrite.
// Internal to stacklens_io.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "io/prepared_block_file.h"

namespace stacklens::io {

// How the file stores samples: bytes per sample, and a run of float32 values converted into them.
struct SampleEncoding {
  int64_t bytes;
  void (*encode)(const float* in, int64_t count, char* out);
};

SampleEncoding encodingOf(BlockSamples samples);

// Where samples go: the stack's rows and columns, the first sample's offset (in the file, or in
// a mapping of part of it) and how samples are stored.
struct Placement {
  int64_t dataStart, sy, sx;
  SampleEncoding encoding;
  int64_t offset(int64_t k, int64_t j, int64_t i) const {
    return dataStart + ((k * sy + j) * sx + i) * encoding.bytes;
  }
};

// A box: [z0, z1) × [y0, y1) × [x0, x1).
struct Box {
  int64_t z0, z1, y0, y1, x0, x1;
};

// A box's values in memory: each row contiguous, rows and slices at any distance (in floats),
// e.g. the interior of a larger block, written without a copy.
struct BoxValues {
  const float* data;
  int64_t rowStride, sliceStride;
  static BoxValues contiguous(const Box& b, const float* data) {
    return {data, b.x1 - b.x0, (b.y1 - b.y0) * (b.x1 - b.x0)};
  }
  // Row r of slice k, both counted from the box's first.
  const float* row(int64_t k, int64_t r) const { return data + k * sliceStride + r * rowStride; }
};

// All of [offset, offset + bytes) through pwrite or pread, resuming after short transfers; throws
// IoError naming path.
void writeAll(int fd, const void* data, size_t bytes, int64_t offset, const std::string& path);
void readAll(int fd, void* data, size_t bytes, int64_t offset, const std::string& path);

// A box's rows through pwrite, each slice in one write of whole rows: a box narrower than the
// stack reads its band of rows back and merges into it. One box at a time.
void writeBoxRows(int fd, const Placement& p, const Box& b, const float* data,
                  const std::string& path);
// The same with nothing read back: a box as wide as the stack in one write per slice, else one
// per row. Boxes sharing rows may be written at once, by several processes.
void writeBoxRowsUnmerged(int fd, const Placement& p, const Box& b, const BoxValues& values,
                          const std::string& path);
// A box converted into a mapping (sample (k, j, i) at mapped + p.offset(k, j, i)) by a few
// threads; its pages are let go of once written (they stay in the page cache, dirty).
void writeBoxMapped(char* mapped, const Placement& p, const Box& b, const BoxValues& values);

// Whether the file lives in memory (tmpfs), or on a network or user-space file system: there a
// write into a mapping whose page cannot be written back (a lost server, a full quota) would be a
// signal, not an error, so such outputs keep to pwrite.
bool inMemoryFileSystem(int fd);
bool onNetworkFileSystem(int fd);
// STACKLENS_WRITE_WITHOUT_MAPPING=1: pwrite only (tests; a file system whose mappings misbehave).
bool mappingTurnedOff();

}  // namespace stacklens::io
