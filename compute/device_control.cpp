// DeviceControl's defaults: host images only, plain copies.
#include "compute/device_control.h"

#include <cstring>

#include "compute/params.h"

namespace stacklens::compute {

void DeviceControl::downloadInto(const Image& image, Image& host) {
  if (!image.onHost()) throw InvalidArgument("download: this backend holds no device images");
  if (!host.onHost() || !(host.shape() == image.shape()))
    throw InvalidArgument("download: the host buffer must have the image's shape");
  if (!image.empty()) std::memcpy(host.data(), image.data(), image.bytes());
  host.spacing = image.spacing;
}

Image DeviceControl::downloadRows(const Image& image, int64_t z, int64_t step) {
  const Shape s = image.shape();
  if (!image.onHost()) throw InvalidArgument("download rows: this backend holds no device images");
  if (z < 0 || z >= s.z || step < 1) throw InvalidArgument("download rows: bad slice or step");
  const int64_t rows = (s.y + step - 1) / step;
  Image out = Image::hostUninitialized({1, rows, s.x});
  out.spacing = image.spacing;
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(out.slice(0) + r * s.x, image.slice(z) + r * step * s.x,
                static_cast<size_t>(s.x) * sizeof(float));
  return out;
}

DeviceControl& hostDeviceControl() {
  static DeviceControl control;
  return control;
}

}  // namespace stacklens::compute
