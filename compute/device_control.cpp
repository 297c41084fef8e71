// DeviceControl's defaults: host images only, plain copies.
#include "compute/device_control.h"

#include <cstring>
#include <string>

#include "compute/params.h"

namespace stacklens::compute {

void DeviceControl::downloadInto(const Image& image, Image& host) {
  if (!image.onHost()) throw InvalidArgument("download: this backend holds no device images");
  if (!host.onHost() || !(host.shape() == image.shape()))
    throw InvalidArgument("download: the host buffer must have the image's shape");
  if (!image.empty()) std::memcpy(host.data(), image.data(), image.bytes());
  host.spacing = image.spacing;
}

Shape stackedShape(const std::vector<Image>& slices) {
  if (slices.empty()) throw InvalidArgument("stack slices: no slices");
  const Shape first = slices.front().shape();
  for (const Image& s : slices)
    if (s.shape().z != 1 || s.shape().y != first.y || s.shape().x != first.x)
      throw InvalidArgument("stack slices: every slice must be 1 × " + std::to_string(first.y) +
                            " × " + std::to_string(first.x));
  return {static_cast<int64_t>(slices.size()), first.y, first.x};
}

Image DeviceControl::stackSlices(const std::vector<Image>& slices) {
  Image out = Image::hostUninitialized(stackedShape(slices));
  out.spacing = slices.front().spacing;
  for (size_t k = 0; k < slices.size(); ++k) {
    if (!slices[k].onHost())
      throw InvalidArgument("stack slices: this backend holds no device images");
    std::memcpy(out.slice(static_cast<int64_t>(k)), slices[k].data(), slices[k].bytes());
  }
  return out;
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
