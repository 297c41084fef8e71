// A stack file's values, for tests that compare what a command wrote.
#pragma once

#include <string>
#include <vector>

#include "io/stack.h"

namespace stacklens::testing {

// Every voxel of the file's stack as float32, slice by slice (C order).
inline std::vector<float> stackValues(const std::string& path) {
  auto reader = io::openStack(path);
  const io::StackInfo& info = reader->info();
  std::vector<float> out(size_t(info.z * info.y * info.x));
  for (int64_t k = 0; k < info.z; ++k) reader->readSlice(k, out.data() + k * info.y * info.x);
  return out;
}

}  // namespace stacklens::testing
