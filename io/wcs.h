// World coordinates of a FITS image (wcslib behind a pimpl): pixel → sky/spectral values and text.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace stacklens::io {

class Wcs {
 public:
  ~Wcs();
  Wcs(const Wcs&) = delete;
  Wcs& operator=(const Wcs&) = delete;

  std::vector<std::string> axisTypes() const;  // CTYPEn in file order, e.g. "RA---TAN", "VOPT"
  bool hasCelestial() const;
  bool hasSpectral() const;
  // 0-based pixel (x, y, z) → world value per WCS axis (degrees for celestial axes, SI units for
  // spectral axes: m/s, Hz, m).
  std::vector<double> pixelToWorld(double x, double y, double z) const;
  // The celestial longitude and latitude (degrees) at a 0-based pixel; false without celestial
  // axes or where the pixel has no world coordinate.
  bool celestial(double x, double y, double z, double& lng, double& lat) const;
  // e.g. "RA 05:40:59.21 Dec −02:27:30.6 (85.24671°, −2.45850°)", or "GLON 12.3456° GLAT
  // −0.1234°"; "" without celestial axes.
  std::string formatCelestial(double x, double y, double z) const;
  // The third axis at slice z, e.g. "VOPT 12.500 km/s" or "FREQ 1.420405 GHz"; "" when none.
  std::string formatSpectral(double z) const;
  // The world coordinate of each of `slices` slices along the axis formatSpectral shows (the
  // spectral axis, else a linear one that follows z), for moment maps: velocities in km/s,
  // other spectral values in SI units (Hz, m), other axes in their CUNIT. False when there is
  // no such axis or a slice has no world value.
  struct ZAxis {
    std::string type;  // CTYPE without its algorithm code, e.g. "VRAD", "FREQ"
    std::string unit;  // e.g. "km/s"; "" when the header gives none
    std::vector<double> values;
  };
  bool zAxis(int64_t slices, ZAxis& out) const;

  // Parses count 80-character cards with wcspih. fixedPixel holds a 0-based pixel coordinate for
  // every file axis (used for dropped length-1 axes and the chosen plane); xyzAxis names the
  // file axes shown as x, y and z (-1 when absent). Returns nullptr when the header has no WCS.
  static std::unique_ptr<Wcs> fromFitsHeader(const std::string& cards, int count,
                                             const std::vector<double>& fixedPixel,
                                             const std::array<int, 3>& xyzAxis);

 private:
  struct Impl;
  explicit Wcs(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace stacklens::io
