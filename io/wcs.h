// World coordinates of a FITS image (wcslib behind a pimpl): pixel → sky/spectral values and text.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace stacklens::io {

// The frame a sky position is given in. Image means 0-based pixels, not a sky frame; Native is
// "whatever the image's WCS uses" (DS9's wcs, wcsa…), resolved against an image.
// Fk5 is FK5 at equinox J2000 and Fk4 is FK4 at B1950 (DS9's fk5/J2000 and fk4/B1950);
// Ecliptic is the mean ecliptic of J2000.
enum class SkyFrame { Image, Icrs, Fk5, Fk4, Galactic, Ecliptic, Native };
const char* skyFrameName(SkyFrame frame);  // "image", "icrs", "fk5", ... as DS9 writes them

// (lon, lat) in degrees from one sky frame to another. FK5 J2000 and ICRS are taken as the same
// frame: they differ by at most ~25 mas, far below what a viewer shows. False for Image or
// Native, or where the position is not finite.
bool convertSkyFrame(SkyFrame from, SkyFrame to, double& lon, double& lat);

// The point at angular distance `distance` (degrees) from (lon, lat) along position angle `pa`
// (degrees from north through east), on the sphere.
void offsetOnSky(double lon, double lat, double pa, double distance, double& outLon,
                 double& outLat);
// Great-circle distance between two (lon, lat) positions in degrees (Vincenty's formula, exact
// at all separations).
double skySeparation(double lon1, double lat1, double lon2, double lat2);

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
  // The inverse of celestial(): celestial degrees (lng, lat) in the WCS's own celestial frame →
  // 0-based pixel (x, y) at slice z (wcslib's wcss2p). False without celestial axes or where the
  // position has no pixel (e.g. the far side of a SIN projection).
  bool worldToPixel(double lng, double lat, double z, double& x, double& y) const;
  // The celestial frame of the image's axes: Icrs, Fk5 (any equinox, see celestialEquinox), Fk4,
  // Galactic, Ecliptic; Native when the axes are celestial but of another kind (e.g. planetary),
  // Image without celestial axes. Read from CTYPE, RADESYS and EQUINOX as the FITS standard
  // says (no RADESYS: FK4 before equinox 1984, FK5 from it, ICRS without an equinox).
  SkyFrame celestialFrame() const;
  double celestialEquinox() const;  // the equinox of Fk5/Fk4 frames (e.g. 2000, 1950); 0 if none
  // pixelToSky/skyToPixel through any sky frame: the position is converted between `frame` and
  // the image's own (including FK5 precession to the image's equinox). False where the frames
  // cannot be converted (Native regions against a non-celestial image, FK4 at an equinox other
  // than B1950) or the position has no pixel.
  bool skyToPixel(SkyFrame frame, double lon, double lat, double z, double& x, double& y) const;
  bool pixelToSky(SkyFrame frame, double x, double y, double z, double& lon, double& lat) const;
  // The local mapping of sky offsets to pixels at a sky position: what converts sizes and
  // angles of sky regions. jacobian maps a small offset (west, north) in degrees on the sky of
  // `frame` to a pixel offset (dx, dy): {dx/dW, dx/dN, dy/dW, dy/dN}.
  struct LocalSky {
    double x = 0, y = 0;               // the position's 0-based pixel
    std::array<double, 4> jacobian{};  // pixels per degree
    double scale = 0;                  // degrees per pixel (geometric mean of the two axes)
    double northAngle = 0;             // degrees ccw from +x of the direction of north
    bool eastLeft = true;              // east is ccw of north (the sky as seen, e.g. CDELT1<0)
  };
  bool localSky(SkyFrame frame, double lon, double lat, double z, LocalSky& out) const;

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
