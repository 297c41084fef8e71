// Pages whose stored samples are not the colours they show: YCbCr (JPEG or not) and old-style
// JPEG, decoded as libtiff decodes them for its own tools (internal to io).
#pragma once

#include <tiffio.h>

#include <cstdint>
#include <string>

namespace stacklens::io {

enum class TiffColorPath {
  Stored,  // the samples as stored (TIFFReadEncodedStrip/Tile)
  // JPEG-compressed YCbCr: libjpeg converts to RGB and upsamples when asked (JPEGCOLORMODE_RGB);
  // without it libtiff hands over subsampled YCbCr, which no strip size here fits.
  JpegAsRgb,
  // Old-style JPEG (compression 6) and YCbCr that is not JPEG: only libtiff's RGBA interface
  // (TIFFReadRGBAImage, as tiff2rgba reads them) converts these.
  Rgba,
};

// How the current page must be read; for JpegAsRgb, sets JPEGCOLORMODE_RGB on the handle (which
// libtiff forgets at every change of directory, so call this after each).
TiffColorPath prepareColorPath(TIFF* t);

// Sample `sample` (0 red, 1 green, 2 blue; grey pages give the grey level in each) of every
// pixel of the current page, top row first, through TIFFReadRGBAImageOriented. Returns "" or
// why libtiff could not read it.
std::string readRgbaSample(TIFF* t, uint32_t width, uint32_t height, uint16_t sample, float* out);

}  // namespace stacklens::io
