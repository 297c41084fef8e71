// Loads the reference data committed in tests/compute/data: the SciPy filter images written by
// data/filters/make_reference.py and the SciPy/astropy results of data/make_cuda_reference.py.
#pragma once

#include <algorithm>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "compute/image.h"

namespace stacklens::testing {

// count raw little-endian values of type T from data/NAME.
template <class T>
std::vector<T> readReference(const std::string& name, size_t count) {
  const std::string path = std::string(STACKLENS_TEST_DATA) + "/" + name;
  std::ifstream file(path, std::ios::binary);
  if (!file) throw std::runtime_error("cannot open " + path);
  std::vector<T> values(count);
  const auto bytes = static_cast<std::streamsize>(count * sizeof(T));
  file.read(reinterpret_cast<char*>(values.data()), bytes);
  if (file.gcount() != bytes) throw std::runtime_error("short file " + path);
  return values;
}

// A float32 image of the given shape from data/NAME.
inline compute::Image readReferenceImage(const std::string& name, compute::Shape shape) {
  const std::vector<float> values = readReference<float>(name, size_t(shape.count()));
  compute::Image image = compute::Image::host(shape);
  std::copy(values.begin(), values.end(), image.data());
  return image;
}

}  // namespace stacklens::testing

// data/filters/NAME_ZxYxX.bin.
inline stacklens::compute::Image loadFilterReference(const std::string& name,
                                                     stacklens::compute::Shape shape) {
  return stacklens::testing::readReferenceImage("filters/" + name + "_" + std::to_string(shape.z) +
                                                    "x" + std::to_string(shape.y) + "x" +
                                                    std::to_string(shape.x) + ".bin",
                                                shape);
}
