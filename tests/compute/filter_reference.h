// Loads the SciPy reference images written by tests/compute/data/filters/make_reference.py.
#pragma once

#include <fstream>
#include <stdexcept>
#include <string>

#include "compute/image.h"

// Raw little-endian float32, named NAME_ZxYxX.bin.
inline stacklens::compute::Image loadFilterReference(const std::string& name,
                                                     stacklens::compute::Shape shape) {
  const std::string path = std::string(STACKLENS_TEST_DATA) + "/filters/" + name + "_" +
                           std::to_string(shape.z) + "x" + std::to_string(shape.y) + "x" +
                           std::to_string(shape.x) + ".bin";
  std::ifstream file(path, std::ios::binary);
  if (!file) throw std::runtime_error("cannot open " + path);
  auto image = stacklens::compute::Image::host(shape);
  file.read(reinterpret_cast<char*>(image.data()), static_cast<std::streamsize>(image.bytes()));
  if (file.gcount() != static_cast<std::streamsize>(image.bytes()))
    throw std::runtime_error("short file " + path);
  return image;
}
