"""stacklens.seam_estimate: the seam error of 3D deconvolution in overlapping chunks, from a
small synthetic trial, against what stacklens.dask's chunks leave on other data."""

import os
import unittest

import numpy as np
import dask.array as da

import stacklens as sl
import stacklens.dask as sld

BACKEND = os.environ.get("STACKLENS_BACKEND", "cpu")


def measured_like_psf(shape=(31, 24, 24)):
    """A Gaussian core on broad power-law tails that fill the array (as a measured bead's)."""
    z, y, x = np.indices(shape, dtype=np.float64)
    dz, dy, dx = z - shape[0] // 2, y - shape[1] // 2, x - shape[2] // 2
    core = np.exp(-0.5 * (dz ** 2 / 9 + (dy ** 2 + dx ** 2) / 2.25))
    tails = 0.03 / (1 + dz ** 2 / 16 + (dy ** 2 + dx ** 2) / 4) ** 1.2
    return (core + tails).astype(np.float32)


def beads(shape, seed):
    rng = np.random.default_rng(seed)
    v = np.full(shape, 10.0)
    z, y, x = np.indices(shape)
    for _ in range(40):
        c = rng.uniform(0, 1, 3) * shape
        v += rng.uniform(50, 150) * np.exp(-((z - c[0]) ** 2 + (y - c[1]) ** 2
                                             + (x - c[2]) ** 2) / 4.0)
    return v.astype(np.float32)


class SeamEstimate(unittest.TestCase):
    def test_predicts_the_seams_of_dask_chunks(self):
        # Chunks cut z and y; the estimate must be within 5x either way of the worst difference
        # that the chunks leave within a halo of their seams (other data, the same PSF,
        # boundary, halo and iterations), and well above float rounding.
        psf = measured_like_psf()
        v = beads((40, 56, 56), 23)
        chunks, halo = (20, 28, 56), (16, 12, 12)
        whole = sl.deconvolve(v, psf, iterations=10, mode="3d", boundary="reflect",
                              backend=BACKEND)
        chunked = sld.deconvolve(da.from_array(v, chunks=chunks), psf, iterations=10,
                                 boundary="reflect", halo=halo, backend=BACKEND).compute()
        near = np.zeros(v.shape, bool)
        near[20 - halo[0]:20 + halo[0]] = True
        near[:, 28 - halo[1]:28 + halo[1]] = True
        measured = np.abs(chunked - whole)[near].max() / np.abs(whole[near]).max()
        e = sl.seam_estimate(v.shape, chunks, psf, iterations=10, boundary="reflect", halo=halo,
                             backend=BACKEND)
        print(f"measured {measured:.2e}; {e['description']}")
        self.assertTrue(e["estimated"], e["description"])
        self.assertGreater(e["relative_l2"], 1e-4)
        self.assertGreater(e["max_relative"], measured / 5)
        self.assertLess(e["max_relative"], measured * 5)
        self.assertIn("relative L2 near the seams (synthetic trial)", e["provenance"])

    def test_says_why_there_is_none(self):
        psf = measured_like_psf()
        one = sl.seam_estimate((40, 56, 56), (40, 56, 56), psf, iterations=10, backend=BACKEND)
        self.assertFalse(one["estimated"])
        self.assertIn("not cut into overlapping blocks", one["description"])
        costly = sl.seam_estimate((40, 56, 56), (20, 28, 56), psf, iterations=10,
                                  backend=BACKEND, max_seconds=0.0)
        self.assertFalse(costly["estimated"])
        self.assertIn("the trial would take about", costly["description"])


if __name__ == "__main__":
    unittest.main()
