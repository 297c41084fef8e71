// HostBlockTransfers: the copies of whole-stack runs for backends that compute on the host.
#include "compute/block_transfers.h"

#include <cstring>

namespace stacklens::compute {

Image HostBlockTransfers::allocate(Shape shape) { return Image::hostUninitialized(shape); }

float* HostBlockTransfers::staging(int slot, size_t floats) {
  std::vector<float>& s = staging_[slot & 3];
  if (s.size() < floats) s.resize(floats);
  return s.data();
}

void HostBlockTransfers::put(Image& image, int64_t z, int64_t count, const float* src) {
  const Shape s = image.shape();
  if (z < 0 || count < 0 || z + count > s.z) throw InvalidArgument("put: slices out of range");
  std::memcpy(image.slice(z), src, size_t(count * s.y * s.x) * sizeof(float));
}

void HostBlockTransfers::get(const Image& image, Shape origin, Shape extent, float* dst) {
  const Shape s = image.shape();
  if (origin.z < 0 || origin.y < 0 || origin.x < 0 || origin.z + extent.z > s.z ||
      origin.y + extent.y > s.y || origin.x + extent.x > s.x)
    throw InvalidArgument("get: box out of range");
  for (int64_t z = 0; z < extent.z; ++z)
    for (int64_t y = 0; y < extent.y; ++y)
      std::memcpy(dst + (z * extent.y + y) * extent.x,
                  image.data() + ((origin.z + z) * s.y + origin.y + y) * s.x + origin.x,
                  size_t(extent.x) * sizeof(float));
}

}  // namespace stacklens::compute
