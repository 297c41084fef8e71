"""The Python package's operations against NumPy references (tests/python/references.py)."""

import os
import threading
import time
import unittest

import numpy as np

import references as ref
import stacklens as sl

BACKEND = os.environ.get("STACKLENS_BACKEND", "cpu")


def random_image(shape, seed=1, low=1.0, high=100.0):
    return np.random.default_rng(seed).uniform(low, high, shape).astype(np.float32)


class Filters(unittest.TestCase):
    def test_blur_2d_and_3d_match_a_separable_reference(self):
        a = random_image((7, 40, 33))
        got2 = sl.blur(a[3], 1.7, backend=BACKEND)
        self.assertEqual(got2.shape, (40, 33))
        self.assertEqual(got2.dtype, np.float32)
        self.assertLess(ref.relative_l2(got2, ref.blur(a[3], (1.7, 1.7))), 1e-6)
        got3 = sl.blur(a, (1.2, 2.0, 0.8), backend=BACKEND)
        self.assertLess(ref.relative_l2(got3, ref.blur(a, (1.2, 2.0, 0.8))), 1e-6)
        # Per slice with one sigma on a stack.
        per_slice = sl.blur(a, 1.5, backend=BACKEND)
        self.assertLess(ref.relative_l2(per_slice, ref.blur(a, (0, 1.5, 1.5))), 1e-6)

    def test_inputs_of_any_layout_and_type_give_the_same_result_and_stay_unchanged(self):
        a = random_image((30, 50))
        keep = a.copy()
        want = sl.blur(a, 2.0, backend=BACKEND)
        np.testing.assert_array_equal(a, keep)
        np.testing.assert_array_equal(sl.blur(a.astype(np.float64), 2.0, backend=BACKEND), want)
        fortran = np.asfortranarray(a)
        np.testing.assert_array_equal(sl.blur(fortran, 2.0, backend=BACKEND), want)
        np.testing.assert_array_equal(sl.blur(a.astype(np.uint16), 2.0, backend=BACKEND),
                                      sl.blur(a.astype(np.uint16).astype(np.float32), 2.0,
                                              backend=BACKEND))

    def test_c_contiguous_float32_is_read_in_place_and_others_are_converted(self):
        a = random_image((20, 30))
        self.assertEqual(sl._stacklens._input_address(a), a.ctypes.data)
        self.assertEqual(sl._stacklens._input_address(a[5:]), a[5:].ctypes.data)  # still C order
        for other in (a.astype(np.float64), np.asfortranarray(a), a[:, ::2]):
            self.assertNotEqual(sl._stacklens._input_address(other), other.ctypes.data)

    def test_median_matches_brute_force(self):
        a = random_image((3, 21, 26), seed=2)
        for size in (1, 3, 5):
            np.testing.assert_array_equal(sl.median(a, size, backend=BACKEND),
                                          ref.median(a, size).astype(np.float32))

    def test_remove_outliers_replaces_what_differs_from_the_median(self):
        a = random_image((24, 24), seed=3, low=10, high=11)
        a[5, 7] = 500.0
        a[12, 3] = -400.0
        med = ref.median(a, 3)
        for mode, chosen in (("both", np.abs(a - med) > 20), ("bright", a - med > 20),
                             ("dark", med - a > 20)):
            want = np.where(chosen, med, a).astype(np.float32)
            np.testing.assert_array_equal(
                sl.remove_outliers(a, 3, 20.0, mode=mode, backend=BACKEND), want, err_msg=mode)

    def test_linear_resampling_matches_interpolation_between_the_corners(self):
        a = random_image((17, 23), seed=4)
        got = sl.resample(a, (2.0, 0.5), order=1, backend=BACKEND)
        self.assertEqual(got.shape, (34, 12))
        ys = np.arange(34) * (17 - 1) / (34 - 1)
        xs = np.arange(12) * (23 - 1) / (12 - 1)
        rows = np.array([np.interp(xs, np.arange(23), r) for r in a])
        want = np.array([np.interp(ys, np.arange(17), c) for c in rows.T]).T
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)

    def test_resample_is_the_scipy_zoom_its_docstring_names(self):
        # The docstring's mode is the boundary the code applies: checked against SciPy's zoom,
        # whose 'reflect' (half-sample) and 'mirror' (whole-sample) differ at the edges.
        try:
            from scipy import ndimage
        except ImportError:
            self.skipTest("scipy is not installed")
        import re
        mode = re.search(r"mode='(\w+)'", sl.resample.__doc__).group(1)
        a = random_image((13, 17), seed=5)
        for zoom in ((2.0, 0.6), (1.5, 3.0)):
            got = sl.resample(a, zoom, order=3, backend=BACKEND)
            want = ndimage.zoom(a.astype(np.float64), zoom, order=3, mode=mode, grid_mode=False)
            self.assertEqual(got.shape, want.shape)
            # float32 arithmetic on values up to 100: a few ulp of 100 (1e-5 each) per output.
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-3, err_msg=f"{mode} {zoom}")
            other = {"mirror": "reflect", "reflect": "mirror"}[mode]
            self.assertGreater(np.abs(got - ndimage.zoom(a.astype(np.float64), zoom, order=3,
                                                         mode=other, grid_mode=False)).max(), 0.1)

    def test_nested_lists_have_the_dimensions_numpy_gives_them(self):
        rows = [[float((3 * y + x) % 7) for x in range(9)] for y in range(8)]
        a = np.asarray(rows, dtype=np.float32)
        for name, call in (("blur", lambda v: sl.blur(v, 1.0, backend=BACKEND)),
                           ("median", lambda v: sl.median(v, 3, backend=BACKEND)),
                           ("resample", lambda v: sl.resample(v, 2.0, order=1, backend=BACKEND))):
            got = call(rows)
            self.assertEqual(got.shape, call(a).shape, name)
            self.assertEqual(got.ndim, 2, name)
            np.testing.assert_array_equal(got, call(a), err_msg=name)
        part, _ = sl.symmetric_psf([[0.0, 1.0, 0.0], [1.0, 4.0, 1.0], [0.0, 1.0, 0.0]])
        self.assertEqual(part.shape, (3, 3))


class Measurements(unittest.TestCase):
    def test_sigma_clipped_statistics_match_the_reference(self):
        a = np.random.default_rng(5).normal(100, 5, (64, 64)).astype(np.float32)
        a[::9, ::7] = 1e4
        s = sl.sigma_clipped_stats(a, kappa=3.0, backend=BACKEND)
        kept = ref.sigma_clip(a, 3.0)
        self.assertEqual(s["n"], kept.size)
        self.assertAlmostEqual(s["median"], np.median(kept), delta=1e-4)
        self.assertAlmostEqual(s["std"], kept.std(), delta=1e-4)
        self.assertAlmostEqual(s["mean"], kept.mean(), delta=1e-4)
        self.assertEqual(s["all"]["n"], a.size)

    def test_segmentation_finds_the_blobs_and_measures_them(self):
        a = np.zeros((40, 50), np.float32)
        a[5:8, 10:13] = 10.0       # 9 pixels, flux 90
        a[20:22, 30:35] = 4.0      # 10 pixels, flux 40
        a[30, 2] = 7.0             # one pixel, dropped by min_pixels=2
        r = sl.segment(a, threshold=1.0, min_pixels=2, backend=BACKEND)
        labels, t = r["labels"], r["sources"]
        self.assertEqual(labels.dtype, np.int32)
        self.assertEqual(sorted(np.unique(labels)), [0, 1, 2])
        self.assertTrue(np.all(labels[5:8, 10:13] == 1))
        self.assertTrue(np.all(labels[20:22, 30:35] == 2))
        np.testing.assert_array_equal(t["npix"], [9, 10])
        np.testing.assert_allclose(t["flux"], [90.0, 40.0])
        np.testing.assert_allclose(t["x_centroid"], [11.0, 32.0])
        np.testing.assert_allclose(t["y_centroid"], [6.0, 20.5])


class Deconvolution(unittest.TestCase):
    def test_periodic_richardson_lucy_matches_the_fft_loop(self):
        a = random_image((48, 40), seed=6)
        psf = sl.gaussian_psf(1.5)
        self.assertAlmostEqual(float(psf.sum()), 1.0, places=5)
        got = sl.deconvolve(a, psf, iterations=8, boundary="periodic", backend=BACKEND)
        self.assertLess(ref.relative_l2(got, ref.richardson_lucy_periodic(a, psf, 8)), 1e-4)
        v = random_image((16, 24, 20), seed=7)
        psf3 = sl.gaussian_psf((1.0, 1.2, 0.9))
        got3 = sl.deconvolve(v, psf3, iterations=5, mode="3d", boundary="periodic",
                             backend=BACKEND)
        self.assertLess(ref.relative_l2(got3, ref.richardson_lucy_periodic(v, psf3, 5)), 1e-4)

    def test_reflect_exact_mirrors_at_every_convolution(self):
        a = random_image((48, 40), seed=9)
        psf = sl.gaussian_psf(1.5)
        got = sl.deconvolve(a, psf, iterations=8, boundary="reflect-exact", backend=BACKEND)
        want = ref.richardson_lucy_reflected(a, psf, 8)
        self.assertLess(ref.relative_l2(got, want), 1e-5)
        self.assertGreater(ref.relative_l2(want, a), 1e-2)
        v = random_image((16, 24, 20), seed=10)
        psf3 = sl.gaussian_psf((1.0, 1.2, 0.9))
        got3 = sl.deconvolve(v, psf3, iterations=5, mode="3d", boundary="reflect-exact",
                             backend=BACKEND)
        self.assertLess(ref.relative_l2(got3, ref.richardson_lucy_reflected(v, psf3, 5)), 1e-5)
        with self.assertRaisesRegex(ValueError, "symmetric"):
            sl.deconvolve(a, np.ones((3, 4), np.float32), boundary="reflect-exact",
                          backend=BACKEND)

    def test_symmetric_psf_is_the_mean_of_the_mirror_images(self):
        rng = np.random.default_rng(11)
        psf = rng.uniform(0.0, 1.0, (4, 6, 5)).astype(np.float32)
        part, differs = sl.symmetric_psf(psf, limit=None)  # random: far from symmetric
        # Even sides lose their unpaired first sample; the rest is averaged with its mirrors.
        kept = psf[1:, 1:, :].astype(np.float64)
        want = (kept + kept[::-1] + kept[:, ::-1] + kept[:, :, ::-1] + kept[::-1, ::-1]
                + kept[::-1, :, ::-1] + kept[:, ::-1, ::-1] + kept[::-1, ::-1, ::-1]) / 8
        self.assertEqual(part.shape, (3, 5, 5))
        np.testing.assert_allclose(part, want, rtol=1e-6)
        total = np.abs(psf.astype(np.float64)).sum()
        expected = (total - np.abs(kept).sum() + np.abs(kept - want).sum()) / total
        self.assertAlmostEqual(differs, expected, places=6)
        # A symmetric odd PSF comes back as it was; 2D stays 2D; reflect-exact takes the part.
        g = sl.gaussian_psf(1.5)
        same, none = sl.symmetric_psf(g)
        np.testing.assert_array_equal(same, g)
        self.assertEqual(none, 0.0)
        a = random_image((24, 20), seed=12)
        part2, _ = sl.symmetric_psf(rng.uniform(0.5, 1.0, (4, 4)).astype(np.float32), limit=None)
        self.assertEqual(part2.shape, (3, 3))
        sl.deconvolve(a, part2, iterations=2, boundary="reflect-exact", backend=BACKEND)

    def test_symmetric_psf_refuses_a_psf_far_from_symmetric(self):
        # All the flux two samples right of the centre: its symmetric part splits it between
        # both sides, differing by the whole sum, past the 0.1 that stands in for a PSF.
        psf = np.zeros((7, 7), np.float32)
        psf[3, 5] = 1.0
        with self.assertRaisesRegex(ValueError, r"by 1 of its sum, more than the 0\.1"):
            sl.symmetric_psf(psf)
        part, differs = sl.symmetric_psf(psf, limit=None)
        self.assertAlmostEqual(differs, 1.0, places=6)
        self.assertAlmostEqual(float(part[3, 1]), 0.5, places=6)
        with self.assertRaises(ValueError):
            sl.symmetric_psf(psf, limit=0.5)
        sl.symmetric_psf(psf, limit=1.0)

    def test_the_default_boundary_is_reflect_exact_where_the_psf_allows_it(self):
        v = random_image((12, 20, 20), seed=9)
        g = sl.gaussian_psf((1.0, 1.5, 1.5))
        self.assertEqual(sl.auto_boundary(g), ("reflect-exact", "the PSF is mirror-symmetric"))
        self.assertEqual(sl.auto_boundary(psf_sigma=1.0, mode="2d")[0], "reflect-exact")
        self.assertEqual(sl.auto_boundary(g, tv=0.01)[0], "reflect")
        lopsided = g.copy()
        lopsided[3, 4, 5] += 1e-3
        name, reason = sl.auto_boundary(lopsided)
        self.assertEqual(name, "reflect")
        self.assertIn("differs from its mirror image", reason)
        for psf, named in ((g, "reflect-exact"), (lopsided, "reflect")):
            by_default = sl.deconvolve(v, psf, iterations=3, mode="3d", backend=BACKEND)
            by_name = sl.deconvolve(v, psf, iterations=3, mode="3d", boundary=named,
                                    backend=BACKEND)
            np.testing.assert_array_equal(by_default, by_name, err_msg=named)
        other = sl.deconvolve(v, g, iterations=3, mode="3d", boundary="reflect", backend=BACKEND)
        self.assertGreater(np.abs(other - sl.deconvolve(v, g, iterations=3, mode="3d",
                                                        backend=BACKEND)).max(), 1e-3)

    def test_a_gaussian_by_its_sigma_is_the_same_as_its_array(self):
        v = random_image((12, 20, 20), seed=8)
        by_sigma = sl.deconvolve(v, psf_sigma=(1.0, 1.5, 1.5), iterations=3, mode="3d",
                                 backend=BACKEND)
        by_array = sl.deconvolve(v, sl.gaussian_psf((1.0, 1.5, 1.5)), iterations=3, mode="3d",
                                 backend=BACKEND)
        np.testing.assert_array_equal(by_sigma, by_array)

    def test_blocks_within_a_small_budget_agree_with_the_whole_volume(self):
        v = random_image((20, 64, 48), seed=9)
        psf = sl.gaussian_psf((1.0, 1.0, 1.0))
        whole = sl.deconvolve(v, psf, iterations=4, mode="3d", backend=BACKEND)
        blocked = sl.deconvolve(v, psf, iterations=4, mode="3d", backend=BACKEND,
                                block=(20, 32, 24))
        self.assertLess(ref.relative_l2(blocked, whole), 1e-3)
        self.assertGreater(ref.relative_l2(blocked, whole), 0.0)  # really in blocks

    def test_seams_takes_exact_or_fast(self):
        v = random_image((12, 20, 20), seed=11)
        exact = sl.deconvolve(v, psf_sigma=1.0, iterations=2, mode="3d", backend=BACKEND)
        fast = sl.deconvolve(v, psf_sigma=1.0, iterations=2, mode="3d", backend=BACKEND,
                             seams="fast")
        # One block either way (the volume fits): the same call twice in one process.
        self.assertLess(ref.relative_l2(fast, exact), 1e-6)
        with self.assertRaisesRegex(ValueError, "seams: expected 'exact' or 'fast'"):
            sl.deconvolve(v, psf_sigma=1.0, iterations=2, mode="3d", seams="Exact")

    def test_the_gil_is_released_while_the_kernels_run(self):
        # With the GIL held for the call, this thread could not run for the whole call: its
        # longest pause would be the call's length.
        # On the CPU whatever the backend under test: long enough to see, on any machine.
        # The watcher sleeps between looks, so that it leaves the cores to the call; waking up
        # needs the GIL, so a held GIL still shows as one long pause.
        v = random_image((64, 128, 128), seed=10)
        took = []

        def work():
            t0 = time.perf_counter()
            sl.deconvolve(v, psf_sigma=1.5, iterations=60, mode="3d", backend="cpu")
            took.append(time.perf_counter() - t0)

        t = threading.Thread(target=work)
        longest, last = 0.0, time.perf_counter()
        t.start()  # returns once the thread runs: late, if the call held the GIL
        while t.is_alive():
            time.sleep(0.002)
            now = time.perf_counter()
            longest, last = max(longest, now - last), now
        t.join()
        self.assertGreater(took[0], 0.2)
        self.assertLess(longest, took[0] / 4)


class Errors(unittest.TestCase):
    def test_bad_arguments_are_value_errors_with_the_reason(self):
        a = random_image((10, 10))
        with self.assertRaisesRegex(ValueError, "odd"):
            sl.median(a, 4)
        with self.assertRaisesRegex(ValueError, "backend"):
            sl.blur(a, 1.0, backend="tpu")
        with self.assertRaisesRegex(ValueError, "2D .* or 3D"):
            sl.blur(np.zeros((2, 2, 2, 2), np.float32), 1.0)
        with self.assertRaisesRegex(ValueError, "exactly one"):
            sl.deconvolve(a, iterations=3)
        with self.assertRaisesRegex(ValueError, "boundary"):
            sl.deconvolve(a, psf_sigma=1.0, boundary="mirror")
        with self.assertRaises(ValueError):
            sl.blur(a, -1.0, backend=BACKEND)

    def test_devices_need_the_cuda_backend_and_3d(self):
        v = random_image((8, 16, 16))
        with self.assertRaisesRegex(ValueError, "devices"):
            sl.deconvolve(v, psf_sigma=1.0, mode="3d", devices="all", backend="cpu")
        with self.assertRaisesRegex(ValueError, "devices"):
            sl.deconvolve(v, psf_sigma=1.0, devices="all")

    def test_missing_and_damaged_files_are_os_errors_naming_the_file(self):
        with self.assertRaisesRegex(OSError, "no-such-file.fits"):
            sl.open("/nonexistent/no-such-file.fits")


if __name__ == "__main__":
    unittest.main()
