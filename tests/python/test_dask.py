"""stacklens.dask: chunks with halos through map_overlap give the blocked deconvolution's result
when the chunks are its blocks, stay close to the whole-volume run, and run on a
dask.distributed cluster."""

import os
import tempfile
import unittest

import dask
import dask.array as da
import numpy as np

import references as ref
import stacklens as sl
import stacklens.dask as sld

BACKEND = os.environ.get("STACKLENS_BACKEND", "cpu")


def beads(shape, seed):
    rng = np.random.default_rng(seed)
    v = np.full(shape, 10, np.float32)
    where = tuple(rng.integers(0, n, 60) for n in shape)
    v[where] += rng.uniform(0, 1000, 60).astype(np.float32)
    return sl.blur(v, (1.5, 1.0, 1.0), backend=BACKEND) + rng.random(shape).astype(np.float32)


class DaskDeconvolution(unittest.TestCase):
    def test_chunks_as_blocks_give_the_blocked_result(self):
        # Interiors 12 x 30 x 24 with a halo of 3 make frames of 18 x 36 x 30: FFT lengths the
        # planner takes as they are, so its frames are exactly the chunks with their depth.
        v = beads((24, 60, 48), 3)
        psf = sl.gaussian_psf((1.0, 1.0, 1.0), size=(5, 5, 5))
        blocked = sl.deconvolve(v, psf, iterations=10, mode="3d", backend=BACKEND,
                                block=(12, 30, 24), halo=3)
        for boundary in ("reflect", "zero", "periodic"):
            want = sl.deconvolve(v, psf, iterations=10, mode="3d", boundary=boundary,
                                 backend=BACKEND, block=(12, 30, 24), halo=3)
            got = sld.deconvolve(da.from_array(v, chunks=(12, 30, 24)), psf, iterations=10,
                                 boundary=boundary, backend=BACKEND).compute()
            self.assertEqual(got.dtype, np.float32)
            self.assertLessEqual(ref.relative_l2(got, want), 1e-5, boundary)
        self.assertGreater(ref.relative_l2(blocked, v), 1e-3)  # it did deconvolve

    def test_chunked_result_is_close_to_the_whole_volume(self):
        v = beads((32, 96, 96), 4)
        psf = sl.gaussian_psf((1.5, 1.0, 1.0))
        whole = sl.deconvolve(v, psf, iterations=20, mode="3d", backend=BACKEND)
        got = sld.deconvolve(da.from_array(v, chunks=(32, 48, 48)), psf, iterations=20,
                             backend=BACKEND).compute()
        # Measured 1.05e-3: most of it at the volume's faces, where the whole-volume run's own
        # padding wraps onto the far face (see tests/compute/blocked_deconvolution_test.cpp).
        self.assertLess(ref.relative_l2(got, whole), 2e-3)
        wider = sld.deconvolve(da.from_array(v, chunks=(32, 48, 48)), psf, iterations=20,
                               halo=(10, 8, 8), backend=BACKEND).compute()
        self.assertLess(ref.relative_l2(wider, whole), 2e-3)

    def test_chunks_smaller_than_the_halo_and_a_short_halo_are_refused(self):
        v = da.zeros((20, 40, 40), chunks=(20, 3, 40), dtype=np.float32)
        with self.assertRaisesRegex(ValueError, "chunks along axis 1"):
            sld.deconvolve(v, psf_sigma=1.0, iterations=2)
        with self.assertRaisesRegex(ValueError, "at least half the PSF"):
            sld.deconvolve(v.rechunk((20, 20, 20)), psf_sigma=1.0, iterations=2, halo=1)


class DaskFilters(unittest.TestCase):
    def test_filters_over_chunks_equal_the_whole_array(self):
        a = np.random.default_rng(5).uniform(0, 100, (10, 64, 56)).astype(np.float32)
        d = da.from_array(a, chunks=(5, 32, 28))
        np.testing.assert_allclose(sld.blur(d, (1.0, 2.0, 1.5), backend=BACKEND).compute(),
                                   sl.blur(a, (1.0, 2.0, 1.5), backend=BACKEND), rtol=1e-5,
                                   atol=1e-4)
        np.testing.assert_allclose(sld.blur(d, 2.0, backend=BACKEND).compute(),
                                   sl.blur(a, 2.0, backend=BACKEND), rtol=1e-5, atol=1e-4)
        np.testing.assert_array_equal(sld.median(d, 5, backend=BACKEND).compute(),
                                      sl.median(a, 5, backend=BACKEND))
        np.testing.assert_array_equal(
            sld.remove_outliers(d, 3, 30.0, backend=BACKEND).compute(),
            sl.remove_outliers(a, 3, 30.0, backend=BACKEND))


class Stacks(unittest.TestCase):
    def test_a_file_read_lazily_by_chunks_on_a_distributed_cluster(self):
        from distributed import Client, LocalCluster
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "stack.fits")
            v = beads((16, 48, 40), 6)
            sl.write(path, v)
            with dask.config.set({"distributed.worker.daemon": False}), \
                    LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                 dashboard_address=None) as cluster, Client(cluster) as client:
                d = sld.from_stack(path, chunks=(16, 24, 40))
                self.assertEqual(d.shape, (16, 48, 40))
                np.testing.assert_array_equal(d.compute(), v)
                got = sld.deconvolve(d, psf_sigma=(1.0, 1.0, 1.0), iterations=5,
                                     backend=BACKEND).compute()
                want = sld.deconvolve(da.from_array(v, chunks=(16, 24, 40)),
                                      psf_sigma=(1.0, 1.0, 1.0), iterations=5,
                                      backend=BACKEND).compute(scheduler="threads")
                np.testing.assert_array_equal(got, want)
                self.assertEqual(len(client.scheduler_info()["workers"]), 2)


if __name__ == "__main__":
    unittest.main()
