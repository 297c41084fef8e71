// The inverse WCS (sky → pixel), the sky-frame conversions and the local sky scale: against
// wcslib's own pixel → sky, a closed-form TAN projection and published frame constants.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "io/stack.h"
#include "io/wcs.h"
#include "sky_headers.h"

using namespace stacklens::io;

namespace {

double arcsecBetween(double lon1, double lat1, double lon2, double lat2) {
  return skySeparation(lon1, lat1, lon2, lat2) * 3600.0;
}

}  // namespace

TEST(WcsInverse, WorldToPixelUndoesPixelToWorldOnHorseHead) {
  auto reader = openStack(std::string(STACKLENS_SHARED_DATA) + "/HorseHead.fits");
  const Wcs* wcs = reader->wcs();
  ASSERT_NE(wcs, nullptr);
  ASSERT_TRUE(wcs->hasCelestial());
  // A DSS plate solution at equinox J2000: FK5 or ICRS, the same frame here.
  EXPECT_TRUE(wcs->celestialFrame() == SkyFrame::Fk5 || wcs->celestialFrame() == SkyFrame::Icrs);
  for (double x : {0.0, 123.4, 445.0, 890.0})
    for (double y : {0.0, 300.7, 892.0}) {
      double lng = 0, lat = 0, bx = 0, by = 0;
      ASSERT_TRUE(wcs->celestial(x, y, 0, lng, lat));
      ASSERT_TRUE(wcs->worldToPixel(lng, lat, 0, bx, by));
      EXPECT_NEAR(bx, x, 1e-6);
      EXPECT_NEAR(by, y, 1e-6);
    }
}

TEST(WcsInverse, MatchesClosedFormTanProjection) {
  for (bool eastRight : {false, true})
    for (double rho : {0.0, 30.0, -115.0}) {
      test::TanHeader h;
      h.rho = rho;
      h.eastRight = eastRight;
      auto wcs = h.wcs();
      ASSERT_TRUE(wcs);
      std::mt19937 rng(7);
      std::uniform_real_distribution<double> off(-0.05, 0.05);
      for (int i = 0; i < 50; ++i) {
        const double ra = h.ra0 + off(rng), dec = h.dec0 + off(rng);
        const auto want = h.pixelOf(ra, dec);
        double x = 0, y = 0;
        ASSERT_TRUE(wcs->worldToPixel(ra, dec, 0, x, y));
        EXPECT_NEAR(x, want[0], 1e-7);
        EXPECT_NEAR(y, want[1], 1e-7);
      }
      // North's direction and the handedness: north is rho ccw from +y when east is left,
      // and rho cw from +y when the sky is mirrored.
      Wcs::LocalSky local;
      ASSERT_TRUE(wcs->localSky(SkyFrame::Icrs, h.ra0, h.dec0, 0, local));
      const double wantNorth = eastRight ? 90.0 - rho : 90.0 + rho;
      EXPECT_NEAR(std::remainder(local.northAngle - wantNorth, 360.0), 0.0, 1e-6);
      EXPECT_EQ(local.eastLeft, !eastRight);
      EXPECT_NEAR(local.scale * 3600.0, 1.0, 1e-6);
    }
}

TEST(WcsInverse, FarSideOfTheSkyHasNoPixel) {
  test::TanHeader h;
  auto wcs = h.wcs();
  double x = 0, y = 0;
  EXPECT_FALSE(wcs->worldToPixel(h.ra0 + 180.0, -h.dec0, 0, x, y));
}

TEST(WcsSkyFrames, GalacticCentreAndPoleMatchPublishedValues) {
  double lon = 0, lat = 0;
  ASSERT_TRUE(convertSkyFrame(SkyFrame::Galactic, SkyFrame::Fk5, lon, lat));
  EXPECT_NEAR(lon, 266.40499, 2e-5);
  EXPECT_NEAR(lat, -28.93617, 2e-5);
  lon = 0, lat = 90;
  ASSERT_TRUE(convertSkyFrame(SkyFrame::Galactic, SkyFrame::Icrs, lon, lat));
  EXPECT_NEAR(lon, 192.85948, 2e-5);
  EXPECT_NEAR(lat, 27.12825, 2e-5);
  // And back: the pole of the equator is at galactic longitude 122.93192°.
  lon = 0, lat = 90;
  ASSERT_TRUE(convertSkyFrame(SkyFrame::Fk5, SkyFrame::Galactic, lon, lat));
  EXPECT_NEAR(lon, 122.93192, 2e-5);
  EXPECT_NEAR(lat, 27.12825, 2e-5);
  lon = 266.40499, lat = -28.93617;
  ASSERT_TRUE(convertSkyFrame(SkyFrame::Fk5, SkyFrame::Galactic, lon, lat));
  EXPECT_NEAR(std::remainder(lon, 360.0), 0.0, 2e-5);
  EXPECT_NEAR(lat, 0.0, 2e-5);
}

TEST(WcsSkyFrames, EclipticPoleAndEquinox) {
  double lon = 0, lat = 90;
  ASSERT_TRUE(convertSkyFrame(SkyFrame::Ecliptic, SkyFrame::Fk5, lon, lat));
  EXPECT_NEAR(lon, 270.0, 1e-9);
  EXPECT_NEAR(lat, 90.0 - 23.4392911, 1e-7);
  lon = 0, lat = 0;
  ASSERT_TRUE(convertSkyFrame(SkyFrame::Fk5, SkyFrame::Ecliptic, lon, lat));
  EXPECT_NEAR(std::remainder(lon, 360.0), 0.0, 1e-9);
  EXPECT_NEAR(lat, 0.0, 1e-9);
  lon = 123.4, lat = -56.7;  // a round trip
  ASSERT_TRUE(convertSkyFrame(SkyFrame::Ecliptic, SkyFrame::Galactic, lon, lat));
  ASSERT_TRUE(convertSkyFrame(SkyFrame::Galactic, SkyFrame::Ecliptic, lon, lat));
  EXPECT_NEAR(lon, 123.4, 1e-9);
  EXPECT_NEAR(lat, -56.7, 1e-9);
}

TEST(WcsSkyFrames, Fk4B1950ToFk5OfThreeC273) {
  // 3C 273: B1950 12h26m33.246s +02°19′43.53″ → J2000 12h29m06.6997s +02°03′08.598″ (NED).
  double lon = (12 + 26 / 60.0 + 33.246 / 3600.0) * 15, lat = 2 + 19 / 60.0 + 43.53 / 3600.0;
  ASSERT_TRUE(convertSkyFrame(SkyFrame::Fk4, SkyFrame::Fk5, lon, lat));
  const double ra = (12 + 29 / 60.0 + 6.6997 / 3600.0) * 15, dec = 2 + 3 / 60.0 + 8.598 / 3600.0;
  EXPECT_LT(arcsecBetween(lon, lat, ra, dec), 0.3);
  ASSERT_TRUE(convertSkyFrame(SkyFrame::Fk5, SkyFrame::Fk4, lon, lat));
  EXPECT_LT(arcsecBetween(lon, lat, (12 + 26 / 60.0 + 33.246 / 3600.0) * 15,
                          2 + 19 / 60.0 + 43.53 / 3600.0),
            1e-6);
}

TEST(WcsSkyFrames, ImagesInOtherFramesAndEquinoxes) {
  // A galactic image: an fk5 position lands where its galactic coordinates do.
  test::TanHeader g;
  g.lngType = "GLON", g.latType = "GLAT", g.radesys = "";
  g.ra0 = 10, g.dec0 = 5;
  auto gw = g.wcs();
  EXPECT_EQ(gw->celestialFrame(), SkyFrame::Galactic);
  double l = 10.01, b = 4.99, ra = l, dec = b;
  ASSERT_TRUE(convertSkyFrame(SkyFrame::Galactic, SkyFrame::Fk5, ra, dec));
  double x1 = 0, y1 = 0, x2 = 0, y2 = 0;
  ASSERT_TRUE(gw->skyToPixel(SkyFrame::Fk5, ra, dec, 0, x1, y1));
  ASSERT_TRUE(gw->worldToPixel(l, b, 0, x2, y2));
  EXPECT_NEAR(x1, x2, 1e-6);
  EXPECT_NEAR(y1, y2, 1e-6);
  double back1 = 0, back2 = 0;
  ASSERT_TRUE(gw->pixelToSky(SkyFrame::Fk5, x1, y1, 0, back1, back2));
  EXPECT_LT(arcsecBetween(back1, back2, ra, dec), 1e-6);

  // FK5 at equinox 1975: precessed from J2000 by ~25 years × 50″/yr ≈ 0.35°.
  test::TanHeader p;
  p.radesys = "FK5", p.equinox = 1975.0, p.scale = 10.0 / 3600.0;
  auto pw = p.wcs();
  EXPECT_EQ(pw->celestialFrame(), SkyFrame::Fk5);
  EXPECT_DOUBLE_EQ(pw->celestialEquinox(), 1975.0);
  double x = 0, y = 0;
  ASSERT_TRUE(pw->skyToPixel(SkyFrame::Fk5, p.ra0, p.dec0, 0, x, y));
  const double moved = std::hypot(x - (p.crpix1 - 1), y - (p.crpix2 - 1)) * 10.0 / 3600.0;
  EXPECT_GT(moved, 0.3);
  EXPECT_LT(moved, 0.4);
  double lon = 0, lat = 0;
  ASSERT_TRUE(pw->pixelToSky(SkyFrame::Fk5, x, y, 0, lon, lat));
  EXPECT_LT(arcsecBetween(lon, lat, p.ra0, p.dec0), 1e-6);

  // No RADESYS: before equinox 1984 it is FK4, without an equinox ICRS.
  test::TanHeader f;
  f.radesys = "", f.equinox = 1950.0;
  EXPECT_EQ(f.wcs()->celestialFrame(), SkyFrame::Fk4);
  f.equinox = 0;
  EXPECT_EQ(f.wcs()->celestialFrame(), SkyFrame::Icrs);
}

TEST(WcsSkyFrames, OffsetAndSeparationAgree) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(0, 1);
  for (int i = 0; i < 200; ++i) {
    const double lon = 360 * u(rng), lat = -89.9 + 179.8 * u(rng);
    const double pa = 360 * u(rng), d = 1e-4 + 20 * u(rng);
    double l2 = 0, b2 = 0;
    offsetOnSky(lon, lat, pa, d, l2, b2);
    EXPECT_NEAR(skySeparation(lon, lat, l2, b2), d, 1e-9);
  }
  EXPECT_NEAR(skySeparation(0, 0, 180, 0), 180.0, 1e-12);
  EXPECT_NEAR(skySeparation(359.9999, 10, 0.0001, 10),
              0.0002 * std::cos(10 * 3.14159265358979 / 180), 1e-9);
}
