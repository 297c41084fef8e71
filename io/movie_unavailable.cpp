// A build without FFmpeg (STACKLENS_MOVIE=OFF): movies cannot be written, said by name.
#include "io/io_error.h"
#include "io/movie_writer.h"

namespace stacklens::io {

struct MovieWriter::State {};

bool MovieWriter::supports(const std::string&) { return false; }
bool MovieWriter::available() { return false; }

MovieWriter::MovieWriter(const std::string& path, int, int, const MovieOptions&) {
  throw IoError(path, "this build of StackLens writes no movies (built without FFmpeg)");
}
MovieWriter::~MovieWriter() = default;
void MovieWriter::addFrame(const uint8_t*) {}
void MovieWriter::finish() {}
int64_t MovieWriter::frames() const { return 0; }

}  // namespace stacklens::io
