"""stacklens.read_regions, read_catalog and crossmatch against the gnomonic (TAN) projection in
closed form (Calabretta & Greisen 2002, independent of wcslib), and the same answers as
`stacklens-cli regions` / `crossmatch` give (one implementation: io/region_placement.h,
compute/catalog_match.h)."""

import math
import os
import shutil
import tempfile
import unittest
import warnings

import numpy as np

import stacklens as sl

RA0, DEC0, CRPIX1, CRPIX2, CDELT = 150.0, 20.0, 50.5, 40.5, 0.001


def sky(x, y):
    """0-based pixel -> (RA, Dec) in degrees."""
    xi, eta = math.radians(-CDELT * (x + 1 - CRPIX1)), math.radians(CDELT * (y + 1 - CRPIX2))
    d0 = math.radians(DEC0)
    ra = RA0 + math.degrees(math.atan2(xi, math.cos(d0) - eta * math.sin(d0)))
    dec = math.degrees(math.asin((math.sin(d0) + eta * math.cos(d0)) / math.sqrt(1 + xi * xi + eta * eta)))
    return ra, dec


def separation_arcsec(p, q):
    s1, s2 = math.sin(math.radians(q[1] - p[1]) / 2), math.sin(math.radians(q[0] - p[0]) / 2)
    h = s1 * s1 + math.cos(math.radians(p[1])) * math.cos(math.radians(q[1])) * s2 * s2
    return math.degrees(2 * math.asin(math.sqrt(h))) * 3600


class RegionsAndCatalogs(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="stacklens_regions_")
        self.image = os.path.join(self.dir, "tan.fits")
        header = [("CTYPE1", "'RA---TAN'"), ("CTYPE2", "'DEC--TAN'"), ("CRVAL1", repr(RA0)),
                  ("CRVAL2", repr(DEC0)), ("CRPIX1", repr(CRPIX1)), ("CRPIX2", repr(CRPIX2)),
                  ("CDELT1", repr(-CDELT)), ("CDELT2", repr(CDELT)), ("CUNIT1", "'deg'"),
                  ("CUNIT2", "'deg'"), ("RADESYS", "'ICRS'")]
        sl.write(self.image, np.ones((80, 100), np.float32), header=header)

    def tearDown(self):
        shutil.rmtree(self.dir)

    def path(self, name, text=None):
        p = os.path.join(self.dir, name)
        if text is not None:
            with open(p, "w") as f:
                f.write(text)
        return p

    def test_read_regions_places_them_through_the_wcs(self):
        ra, dec = sky(30.25, 45.5)
        reg = self.path("a.reg", f"icrs\ncircle({ra:.12f},{dec:.12f},7.2\") # text={{star}}\n"
                                 "image\nbox(11,21,4,6,30)\nfk5\ncircle(0,-89,1\")\n")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            regions = sl.read_regions(reg, self.image)
        self.assertEqual([r["shape"] for r in regions], ["circle", "box"])
        circle, box = regions
        # wcslib and the closed form agree to ~1e-10 px; the TAN scale varies by ~1e-7 here.
        self.assertAlmostEqual(circle["pixels"][0][0], 30.25, delta=1e-6)
        self.assertAlmostEqual(circle["pixels"][0][1], 45.5, delta=1e-6)
        self.assertAlmostEqual(circle["sizes"][0], 2.0, delta=1e-4)
        self.assertEqual(circle["text"], "star")
        self.assertEqual(circle["sky_frame"], "icrs")
        self.assertAlmostEqual(circle["sky"][0][0], ra, delta=1e-9)
        want = sky(10, 20)  # the box's 1-based (11, 21)
        self.assertAlmostEqual(box["sky"][0][0], want[0], delta=1e-9)
        self.assertAlmostEqual(box["sky"][0][1], want[1], delta=1e-9)
        self.assertEqual(box["line"], 4)
        # The region near the pole is off this TAN image's projection: a warning naming its line.
        self.assertTrue(any("line 6" in str(w.message) for w in caught), [str(w.message) for w in caught])

    def test_without_an_image_only_image_regions_are_placed(self):
        reg = self.path("b.reg", "fk5\ncircle(150,20,3\")\nimage\npoint(3,4)\n")
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            regions = sl.read_regions(reg)
        self.assertEqual(len(regions), 1)
        self.assertEqual(regions[0]["pixels"], [(2.0, 3.0)])
        self.assertIsNone(regions[0]["sky"])
        with self.assertRaisesRegex(OSError, "missing.reg"):
            sl.read_regions(self.path("missing.reg"), self.image)

    def test_read_catalog_gives_the_cells_and_the_guessed_columns(self):
        cat = self.path("c.csv", "name,RAJ2000,DEJ2000,mag\nx,150.1,20.2,12.5\ny,150.2,,13\n")
        t = sl.read_catalog(cat)
        self.assertEqual(t["columns"], ["name", "RAJ2000", "DEJ2000", "mag"])
        self.assertEqual(t["rows"], [["x", "150.1", "20.2", "12.5"], ["y", "150.2", "", "13"]])
        self.assertEqual(t["positions"]["lon"], "RAJ2000")
        self.assertEqual(t["positions"]["lat"], "DEJ2000")
        self.assertEqual(t["positions"]["frame"], "fk5")

    def test_crossmatch_matches_as_the_cli_does(self):
        sources = {"label": np.array([1, 2, 3], np.int32),
                   "x_centroid": np.array([20.0, 60.5, 80.0]),
                   "y_centroid": np.array([30.0, 50.25, 10.0]),
                   "flux": np.array([100.0, 200.0, 300.0]), "peak": np.array([10, 20, 30], np.float32)}
        stars = [sky(20.3, 30.0), sky(60.5, 50.05), sky(40.0, 70.0), sky(-30.0, 10.0)]
        cat = self.path("cat.csv", "name,RA,DEC\n" + "".join(
            f"{n},{ra:.12f},{dec:.12f}\n" for n, (ra, dec) in zip("abcd", stars)))
        m = sl.crossmatch(cat, sources, self.image, 2.0)
        self.assertEqual(m["unit"], "arcsec")
        np.testing.assert_array_equal(m["catalog_row"], [0, 1])
        np.testing.assert_array_equal(m["source"], [0, 1])
        np.testing.assert_array_equal(m["unmatched_catalog"], [2, 3])
        np.testing.assert_array_equal(m["unmatched_sources"], [2])
        self.assertEqual(m["outside_image"], 1)
        for k in range(2):
            want = separation_arcsec(stars[k], sky(sources["x_centroid"][k], sources["y_centroid"][k]))
            self.assertAlmostEqual(m["separation"][k], want, delta=1e-7 * want)
        table = m["table"]
        self.assertEqual(table["columns"][-1], "separation_arcsec")
        self.assertEqual([row[0] for row in table["rows"]], ["a", "b"])
        # The same from a sources CSV file, in pixels.
        src = self.path("s.csv", "label,x,y\n1,20,30\n2,60.5,50.25\n3,80,10\n")
        p = sl.crossmatch(cat, src, self.image, 0.5, unit="pixels")
        np.testing.assert_allclose(p["separation"], [0.3, 0.2], atol=1e-6)
        with self.assertRaisesRegex(OSError, "no column called 'DECL'"):
            sl.crossmatch(cat, src, self.image, 2.0, lon="RA", lat="DECL")
        with self.assertRaisesRegex(ValueError, "radius"):
            sl.crossmatch(cat, src, self.image, 0.0)

    def test_the_cli_gives_the_same_regions(self):
        cli = os.environ.get("STACKLENS_CLI")
        if not cli:
            self.skipTest("STACKLENS_CLI is not set")
        import json
        import subprocess
        ra, dec = sky(12.0, 60.0)
        reg = self.path("d.reg", f"icrs\nellipse({ra:.12f},{dec:.12f},9\",5.4\",30)\nimage\nline(1,2,30,40)\n")
        out = subprocess.run([cli, "regions", reg, "--image", self.image, "--format", "json"],
                             check=True, capture_output=True, text=True).stdout
        from_cli = json.loads(out)["regions"]
        from_python = sl.read_regions(reg, self.image)
        self.assertEqual(len(from_cli), len(from_python))
        for c, p in zip(from_cli, from_python):
            self.assertEqual(c["shape"], p["shape"])
            np.testing.assert_allclose(c["pixels"], p["pixels"], rtol=0, atol=1e-12)
            np.testing.assert_allclose(c["sizes"], p["sizes"], rtol=1e-15)
            self.assertAlmostEqual(c["angle"], p["angle"], delta=1e-12)


if __name__ == "__main__":
    unittest.main()
