// Writing a float32 stack box by box, never holding it whole (whole-stack processing in blocks).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "io/stack_writer.h"

namespace stacklens::io {

// FITS (.fits/.fit/.fts): the header is written first, then each box at its place in the data
// unit, in any order (big-endian float32 written at its offset by a few threads; where the file
// system can reserve the file's blocks, straight into the file mapped in memory, and then boxes
// from several threads at once are written at once; STACKLENS_WRITE_WITHOUT_MAPPING=1 turns
// that off). TIFF (.tif/.tiff,
// BigTIFF when large): pages are written in order as soon as the boxes have covered them, so boxes
// in z-major order keep only one row of blocks' slices in memory (the ImageJ description then has
// no display range). Boxes must not overlap. The file appears at path on commit(); until then it is
// a temporary file in the same folder, removed when the writer goes uncommitted (an error, a
// cancelled run). Throws IoError naming path.
class StackBlockWriter {
 public:
  StackBlockWriter(const std::string& path, int64_t z, int64_t y, int64_t x,
                   const WriteOptions& options);
  ~StackBlockWriter();
  StackBlockWriter(const StackBlockWriter&) = delete;
  StackBlockWriter& operator=(const StackBlockWriter&) = delete;

  static bool supports(const std::string& path);  // by the extension
  // Box [z0, z1) × [y0, y1) × [x0, x1) inside the stack, C order (x fastest). Safe to call from
  // several threads at once.
  void writeBox(int64_t z0, int64_t z1, int64_t y0, int64_t y1, int64_t x0, int64_t x1,
                const float* data);
  void commit();

 private:
  struct State;
  static void mapWhenReserved(State& s, int64_t fileBytes);
  static void waitUntilReserved(State& s);
  std::unique_ptr<State> state_;
};

}  // namespace stacklens::io
