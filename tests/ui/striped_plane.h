// A single-plane OME-Zarr of vertical stripes, for the tests that move the view across levels.
#pragma once

#include <QString>
#include <QTemporaryDir>
#include <cstdint>
#include <vector>

#include "io/stack_writer.h"

namespace stacklens::test {

// width × height float32 pixels, value(x) in every row, written with `levels` levels and square
// chunks of chunkSide as dir/stripes.ome.zarr; returns its path.
template <class Value>
QString writeStripedOmeZarr(const QTemporaryDir& dir, int width, int height, Value value,
                            int levels, int64_t chunkSide) {
  const QString path = dir.filePath("stripes.ome.zarr");
  std::vector<float> data(size_t(width) * height);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) data[size_t(y) * width + x] = value(x);
  io::WriteOptions options;
  options.zarr.levels = levels;
  options.zarr.chunks = {1, chunkSide, chunkSide};
  io::writeStack(path.toStdString(), data.data(), 1, height, width, options);
  return path;
}

}  // namespace stacklens::test
