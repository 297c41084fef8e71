// prepareColorPath and readRgbaSample: YCbCr and old-style JPEG pages through libtiff's own
// colour conversion.
#include "io/tiff_color.h"

#include <vector>

#include "io/file_checks.h"

namespace stacklens::io {

TiffColorPath prepareColorPath(TIFF* t) {
  uint16_t compression = COMPRESSION_NONE, photometric = PHOTOMETRIC_MINISBLACK;
  TIFFGetFieldDefaulted(t, TIFFTAG_COMPRESSION, &compression);
  TIFFGetField(t, TIFFTAG_PHOTOMETRIC, &photometric);
  if (compression == COMPRESSION_OJPEG) return TiffColorPath::Rgba;
  if (photometric != PHOTOMETRIC_YCBCR) return TiffColorPath::Stored;
  if (compression == COMPRESSION_JPEG &&
      TIFFSetField(t, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB) == 1)
    return TiffColorPath::JpegAsRgb;
  return TiffColorPath::Rgba;
}

std::string readRgbaSample(TIFF* t, uint32_t width, uint32_t height, uint16_t sample, float* out) {
  char why[1024] = {};
  if (!TIFFRGBAImageOK(t, why)) return why[0] ? why : "libtiff cannot convert it to RGBA";
  const uint64_t pixels = uint64_t{width} * height;
  if (pixels * 4 > allocationCap())
    return "its RGBA image of " + std::to_string(pixels * 4) +
           " bytes is more than StackLens "
           "decodes";
  std::vector<uint32_t> raster(static_cast<size_t>(pixels));
  if (!TIFFReadRGBAImageOriented(t, width, height, raster.data(), ORIENTATION_TOPLEFT, 1))
    return "libtiff could not decode it";
  for (size_t i = 0; i < raster.size(); ++i) {
    const uint32_t p = raster[i];
    out[i] = static_cast<float>(sample == 0   ? TIFFGetR(p)
                                : sample == 1 ? TIFFGetG(p)
                                : sample == 2 ? TIFFGetB(p)
                                              : TIFFGetA(p));
  }
  return {};
}

}  // namespace stacklens::io
