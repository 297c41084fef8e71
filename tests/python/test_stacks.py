"""Lazy stacks, reading and writing from Python: values, shape, spacing, header, provenance."""

import os
import pickle
import subprocess
import tempfile
import unittest

import numpy as np

import stacklens as sl


class Stacks(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.data = np.random.default_rng(1).uniform(-5, 5, (6, 17, 23)).astype(np.float32)

    def tearDown(self):
        self.folder.cleanup()

    def path(self, name):
        return os.path.join(self.folder.name, name)

    def test_indexing_reads_what_numpy_indexing_gives(self):
        for name in ("s.fits", "s.tif"):
            p = self.path(name)
            sl.write(p, self.data, spacing=(0.5, 0.1, 0.1), units=("um", "um", "um"),
                     history=["made by a test"])
            s = sl.open(p)
            self.assertEqual(s.shape, (6, 17, 23))
            self.assertEqual(s.dtype, np.float32)
            self.assertEqual(len(s), 6)
            self.assertTrue(s.spacing_known)
            np.testing.assert_allclose(s.spacing, (0.5, 0.1, 0.1), rtol=1e-6)
            keys = [2, -1, (slice(1, 4),), (slice(None), 5), (3, slice(2, 9), slice(4, 20, 3)),
                    (slice(None, None, 2), slice(16, 2, -4), 7), (Ellipsis, 1),
                    ([0, 4, 5], slice(None)), (slice(2, 2),), (slice(1, 5), [3, 4, 5, 6]),
                    (slice(None), [5, 5, 6])]
            for key in keys:
                np.testing.assert_array_equal(s[key], self.data[key], err_msg=f"{name} {key}")
            np.testing.assert_array_equal(np.asarray(s), self.data)
            np.testing.assert_array_equal(sl.read(p), self.data)

    def test_header_and_history_are_written_and_a_stack_travels_by_pickle(self):
        p = self.path("h.fits")
        sl.write(p, self.data, header=[("OBSERVER", "'Hubble'", "who")],
                 history=["deconvolved in a test"])
        s = sl.open(p)
        cards = {k: v for k, v, _ in s.header}
        self.assertIn("OBSERVER", cards)
        self.assertTrue(any(k == "HISTORY" and "deconvolved in a test" in v + c
                            for k, v, c in s.header))
        again = pickle.loads(pickle.dumps(s))
        np.testing.assert_array_equal(again[4], self.data[4])
        # Carried from an input, which is never written over.
        out = self.path("out.fits")
        sl.write(out, self.data * 2, like=s, history=["doubled"])
        carried = {k for k, _, _ in sl.open(out).header}
        self.assertIn("OBSERVER", carried)
        with self.assertRaisesRegex(OSError, "over the input"):
            sl.write(p, self.data, like=s)

    def test_two_dimensional_arrays_and_uint16_tiff(self):
        p = self.path("plane.tif")
        plane = np.arange(12 * 9, dtype=np.float32).reshape(12, 9) * 100.7
        sl.write(p, plane, uint16=True)
        s = sl.open(p)
        self.assertEqual(s.shape, (1, 12, 9))
        self.assertEqual(s.stored_dtype, "uint16")
        np.testing.assert_array_equal(s[0], np.clip(np.floor(plane + 0.5), 0, 65535))  # half up

    def test_ome_zarr_is_written_and_read_back(self):
        p = self.path("s.ome.zarr")
        sl.write(p, self.data, spacing=(0.5, 0.1, 0.1), units=("um", "um", "um"),
                 history=["zarr from python"])
        s = sl.open(p)
        self.assertEqual(s.shape, (6, 17, 23))
        # float32 through a lossless codec in this process: exact.
        np.testing.assert_array_equal(np.asarray(s), self.data)
        np.testing.assert_allclose(s.spacing, (0.5, 0.1, 0.1), rtol=1e-12)
        self.assertTrue(any(k == "HISTORY" and "zarr from python" in v + c
                            for k, v, c in s.header))
        # 0.4 with levels, which Debian's python3-zarr (v2 API) opens.
        import zarr
        p4 = self.path("s04.zarr")
        sl.write(p4, self.data, zarr_version="0.4", zarr_chunks=(2, 8, 8), levels=2)
        group = zarr.open_group(p4, mode="r")
        self.assertEqual(group["0"].chunks, (2, 8, 8))
        np.testing.assert_array_equal(group["0"][...], self.data)
        np.testing.assert_array_equal(group["1"][...], sl.read(p4, hdu=1))
        with self.assertRaisesRegex(ValueError, "apply to a .zarr output"):
            sl.write(self.path("s.fits"), self.data, levels=2)
        with self.assertRaisesRegex(OSError, "OME-Zarr version"):
            sl.write(self.path("bad.zarr"), self.data, zarr_version="0.3")

    def test_the_clis_ome_zarr_0_4_opens_in_zarr_python(self):
        cli = os.environ.get("STACKLENS_CLI")
        if not cli:
            self.skipTest("STACKLENS_CLI is not set (ctest sets it)")
        import zarr  # Debian's python3-zarr: the v2 API, which reads OME-Zarr 0.4
        data = self.data.copy()
        data[2, 3, 4] = np.nan
        fits, out = self.path("in.fits"), self.path("out.zarr")
        sl.write(fits, data, spacing=(0.5, 0.1, 0.1), units=("um", "um", "um"))
        run = subprocess.run([cli, "convert", fits, out, "--zarr-version", "0.4", "--levels", "2",
                              "--zarr-chunks", "4,8,8"], capture_output=True, text=True)
        self.assertEqual(run.returncode, 0, run.stderr)
        group = zarr.open_group(out, mode="r")
        multiscale = group.attrs["multiscales"][0]
        self.assertEqual(multiscale["version"], "0.4")
        self.assertEqual([a["name"] for a in multiscale["axes"]], ["z", "y", "x"])
        level0 = group[multiscale["datasets"][0]["path"]][...]
        # convert copies the float32 values, no arithmetic: exact, NaN where NaN.
        np.testing.assert_array_equal(level0, data)
        level1 = group[multiscale["datasets"][1]["path"]][...]
        self.assertEqual(level1.shape, (6, 9, 12))
        padded = np.full((6, 18, 24), np.nan, np.float32)
        padded[:, :17, :23] = data
        with np.errstate(invalid="ignore"):
            mean = np.nanmean(padded.reshape(6, 9, 2, 12, 2), axis=(2, 4))
        np.testing.assert_allclose(level1, mean, rtol=1e-6, atol=1e-6)
        np.testing.assert_array_equal(sl.read(out, hdu=1), level1)


@unittest.skipUnless("STACKLENS_SAMPLES" in os.environ, "the build's samples (ctest sets it)")
class Samples(unittest.TestCase):
    def test_the_radio_cubes_world_coordinates_as_python_values(self):
        s = sl.open(os.path.join(os.environ["STACKLENS_SAMPLES"], "radio_cube.fits"))
        w = s.wcs_header
        self.assertEqual(s.shape, (32, 128, 128))
        self.assertEqual((w["NAXIS"], w["NAXIS1"], w["NAXIS3"]), (3, 128, 32))
        self.assertEqual(w["CTYPE1"], "RA---SIN")
        self.assertEqual(w["CTYPE3"], "VRAD")
        self.assertEqual(w["CUNIT3"], "m/s")
        self.assertAlmostEqual(w["CDELT3"], 10000.0)
        self.assertAlmostEqual(w["RESTFRQ"], 1420405752.0)
        self.assertNotIn("BITPIX", w)
        # The lazy stack gives a channel and a spectrum as the whole cube does.
        cube = s.read()
        np.testing.assert_array_equal(s[16], cube[16])
        np.testing.assert_array_equal(s[:, 64, 64], cube[:, 64, 64])


if __name__ == "__main__":
    unittest.main()
