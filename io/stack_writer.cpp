// Placeholder until the writers land.
#include "io/stack_writer.h"

namespace stacklens::io {

void writeStack(const std::string& path, const float*, int64_t, int64_t, int64_t,
                const WriteOptions&) {
  throw IoError(path, "writing stacks is not implemented yet");
}

void writeLabelStack(const std::string& path, const int32_t*, int64_t, int64_t, int64_t,
                     const WriteOptions&) {
  throw IoError(path, "writing stacks is not implemented yet");
}

}  // namespace stacklens::io
