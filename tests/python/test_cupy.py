"""Device arrays (CuPy) stay on their GPU, after the work queued on their stream; CPU and CUDA
agree on fresh random inputs. Skipped without CuPy or a usable GPU."""

import unittest

import numpy as np

import references as ref
import stacklens as sl

try:
    import cupy as cp
    GPU = sl.cuda_usable()[0] and cp.cuda.runtime.getDeviceCount() > 0
except Exception:  # no CuPy, or no driver
    GPU = False


@unittest.skipUnless(GPU, "needs CuPy and a usable CUDA device")
class DeviceArrays(unittest.TestCase):
    def setUp(self):
        self.rng = np.random.default_rng()  # fresh inputs each run

    def test_results_stay_on_the_device_and_agree_with_the_cpu(self):
        a = self.rng.uniform(1, 100, (9, 70, 65)).astype(np.float32)
        d = cp.asarray(a)
        for name, call in (("blur", lambda x, b: sl.blur(x, (1.0, 2.0, 1.5), backend=b)),
                           ("median", lambda x, b: sl.median(x, 5, backend=b)),
                           ("outliers", lambda x, b: sl.remove_outliers(x, 3, 20.0, backend=b)),
                           ("resample", lambda x, b: sl.resample(x, (1.5, 0.75, 0.5), backend=b)),
                           ("rl2d", lambda x, b: sl.deconvolve(x, psf_sigma=1.5, iterations=10,
                                                               backend=b)),
                           ("rl3d", lambda x, b: sl.deconvolve(x, psf_sigma=(1, 1.5, 1.5),
                                                               iterations=10, mode="3d",
                                                               backend=b))):
            got = call(d, "auto")
            self.assertIsInstance(got, cp.ndarray, name)
            self.assertEqual(got.device.id, d.device.id, name)
            self.assertEqual(got.dtype, cp.float32, name)
            cpu = call(a, "cpu")
            self.assertLess(ref.relative_l2(cp.asnumpy(got), cpu), 1e-5, name)
            host = call(a, "cuda")  # a host array on the GPU comes back to the host
            self.assertIsInstance(host, np.ndarray, name)
            self.assertLess(ref.relative_l2(host, cp.asnumpy(got)), 1e-6, name)

    def test_work_queued_on_the_arrays_stream_comes_first(self):
        a = self.rng.uniform(1, 100, (2048, 2048)).astype(np.float32)
        s = cp.cuda.Stream(non_blocking=True)
        with s:
            d = cp.asarray(a)
            for _ in range(20):  # long enough to be unfinished when blur starts
                d = cp.sqrt(d * d + 1.0)
            got = sl.blur(d, 2.0)
        want = sl.blur(cp.asnumpy(d), 2.0, backend="cpu")
        self.assertLess(ref.relative_l2(cp.asnumpy(got), want), 1e-5)

    def test_statistics_and_segmentation_of_device_arrays(self):
        a = self.rng.normal(100, 5, (256, 256)).astype(np.float32)
        a[50:54, 60:64] = 1000
        d = cp.asarray(a)
        self.assertAlmostEqual(sl.sigma_clipped_stats(d)["median"],
                               sl.sigma_clipped_stats(a, backend="cpu")["median"], places=3)
        seg = sl.segment(d, threshold=500.0)
        self.assertEqual(int(seg["labels"].max()), 1)
        self.assertEqual(int(seg["sources"]["npix"][0]), 16)
        with self.assertRaisesRegex(ValueError, "cpu"):
            sl.blur(d, 1.0, backend="cpu")


@unittest.skipUnless(GPU, "needs a usable CUDA device")
class EveryGpu(unittest.TestCase):
    def test_blocks_shared_among_the_gpus_give_the_one_gpu_result(self):
        v = np.random.default_rng().uniform(10, 100, (40, 96, 80)).astype(np.float32)
        psf = sl.gaussian_psf((1.5, 1.0, 1.0))
        one = sl.deconvolve(v, psf, iterations=8, mode="3d", block=(20, 48, 40), backend="cuda")
        every = sl.deconvolve(v, psf, iterations=8, mode="3d", block=(20, 48, 40),
                              devices="all")
        np.testing.assert_array_equal(every, one)


if __name__ == "__main__":
    unittest.main()
