"""Device arrays (CuPy) stay on their GPU, after the work queued on their stream; CPU and CUDA
agree on fresh random inputs. Skipped without CuPy or a usable GPU."""

import os
import tempfile
import unittest
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import references as ref
import stacklens as sl
from stacklens import _stacklens

try:
    import dask.array as da
    import stacklens.dask as sld
except ImportError:  # a Dask too old for this NumPy: the writer is tested without it
    da = None

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

    def test_device_arrays_are_copied_down_where_the_host_reads_them(self):
        # The writers and the PSF's preparation read values on the host: a device pointer there
        # was a segmentation fault.
        a = self.rng.uniform(0, 100, (5, 40, 30)).astype(np.float32)
        d = cp.asarray(a)
        with tempfile.TemporaryDirectory() as folder:
            for name in ("w.fits", "w.tif"):
                path = os.path.join(folder, name)
                sl.write(path, d)
                np.testing.assert_array_equal(sl.read(path), a)  # a copy: exact
            # stacklens.dask.to_file's writer, given CuPy chunks.
            path = os.path.join(folder, "boxes.fits")
            writer = _stacklens._BlockWriter(path, [5, 40, 30], None, None, None, [], None)
            writer.write_box(0, 0, 0, d[:2])
            writer.write_box(2, 0, 0, d[2:])
            writer.commit()
            np.testing.assert_array_equal(sl.read(path), a)
            if da is not None:
                path = os.path.join(folder, "chunks.fits")
                sld.to_file(da.from_array(d, chunks=(2, 20, 30), asarray=False), path)
                np.testing.assert_array_equal(sl.read(path), a)
        psf = sl.gaussian_psf(1.5)
        image = self.rng.uniform(10, 100, (48, 40)).astype(np.float32)
        for backend in ("cpu", "cuda"):
            want = sl.deconvolve(image, psf, iterations=5, backend=backend)
            got = sl.deconvolve(image, cp.asarray(psf), iterations=5, backend=backend)
            self.assertIsInstance(got, np.ndarray)
            self.assertLessEqual(ref.relative_l2(got, want), 1e-6, backend)  # the same PSF
        on_device = sl.deconvolve(d, cp.asarray(sl.gaussian_psf((1, 1, 1))), iterations=3,
                                  mode="3d")
        self.assertIsInstance(on_device, cp.ndarray)
        asymmetric = self.rng.uniform(0.5, 1.0, (5, 5)).astype(np.float32)
        # Random values are far from symmetric: no limit, only the same answer as on the host.
        part, differs = sl.symmetric_psf(cp.asarray(asymmetric), limit=None)
        want_part, want_differs = sl.symmetric_psf(asymmetric, limit=None)
        np.testing.assert_array_equal(part, want_part)  # the same host code on the same values
        self.assertEqual(differs, want_differs)

    def test_a_freed_result_waits_for_cupy_kernels_still_reading_it(self):
        # CuPy frees our result while its kernel (on its own stream) still reads it; the memory
        # must not become the next result before that kernel is done.
        a = self.rng.uniform(1, 100, (4096, 4096)).astype(np.float32)
        d = cp.asarray(a)
        s = cp.cuda.Stream(non_blocking=True)
        for _ in range(3):
            r = sl.blur(d, 2.0)
            want = cp.asnumpy(r).astype(np.float64).sum()
            with s:
                total = cp.zeros((), cp.float64)
                for _ in range(30):  # long enough to be running when r goes
                    total += r.sum(dtype=cp.float64)
            del r
            sl.blur(d * 3, 2.0)  # a new result of the same size, where r was
            s.synchronize()
            self.assertAlmostEqual(float(total) / 30 / want, 1.0, places=5)


@unittest.skipUnless(GPU, "needs a usable CUDA device")
class EveryGpu(unittest.TestCase):
    def test_blocks_shared_among_the_gpus_give_the_one_gpu_result(self):
        v = np.random.default_rng().uniform(10, 100, (40, 96, 80)).astype(np.float32)
        psf = sl.gaussian_psf((1.5, 1.0, 1.0))
        one = sl.deconvolve(v, psf, iterations=8, mode="3d", block=(20, 48, 40), backend="cuda")
        every = sl.deconvolve(v, psf, iterations=8, mode="3d", block=(20, 48, 40),
                              devices="all")
        # The same blocks; the GPUs of a host may be of different models, whose FFTs round
        # differently (as float32 RL's few ulps: see references.assert_fft_rounding_close).
        ref.assert_fft_rounding_close(self, every, one)
        self.assertEqual(cp.cuda.runtime.getDevice(), 0)


@unittest.skipUnless(GPU and cp.cuda.runtime.getDeviceCount() >= 2, "needs two CUDA devices")
class TwoGpus(unittest.TestCase):
    def setUp(self):
        self.rng = np.random.default_rng()

    def test_each_call_works_on_its_backends_device_and_gives_the_callers_back(self):
        a = self.rng.uniform(1, 100, (64, 80)).astype(np.float32)
        want = sl.blur(a, 2.0, backend="cpu")
        for device in (1, 0, 1, 0):  # was "invalid resource handle" on the third call
            got = sl.blur(a, 2.0, backend=f"cuda:{device}")
            self.assertLess(ref.relative_l2(got, want), 1e-5, device)
            self.assertEqual(cp.cuda.runtime.getDevice(), 0)
        v = self.rng.uniform(10, 100, (16, 40, 32)).astype(np.float32)
        sl.deconvolve(v, psf_sigma=1.0, iterations=2, mode="3d", backend="cuda:1")
        self.assertEqual(cp.cuda.runtime.getDevice(), 0)  # was left at 1
        with cp.cuda.Device(1):
            sl.blur(a, 2.0, backend="cuda:0")
            self.assertEqual(cp.cuda.runtime.getDevice(), 1)

    def test_threads_calling_on_both_gpus_at_once(self):
        # Dask's worker threads: each thread calls on either GPU, in any order.
        a = self.rng.uniform(1, 100, (8, 96, 80)).astype(np.float32)
        want = sl.blur(a, 1.5, backend="cpu")
        with ThreadPoolExecutor(4) as pool:
            got = list(pool.map(lambda i: sl.blur(a, 1.5, backend=f"cuda:{i % 2}"), range(16)))
        for g in got:
            self.assertLess(ref.relative_l2(g, want), 1e-5)

    def test_a_legacy_stream_array_on_the_other_device_is_waited_for(self):
        # Its default (legacy) stream is device 1's: waiting on device 0's would not wait.
        a = self.rng.uniform(1, 100, (2048, 2048)).astype(np.float32)
        with cp.cuda.Device(1):
            d = cp.asarray(a)
            for _ in range(20):  # queued on device 1's legacy stream, unfinished at the call
                d = cp.sqrt(d * d + 1.0)
        got = sl.blur(d, 2.0)  # device 0 current here
        self.assertEqual(got.device.id, 1)
        with cp.cuda.Device(1):
            want = sl.blur(cp.asnumpy(d), 2.0, backend="cpu")
            self.assertLess(ref.relative_l2(cp.asnumpy(got), want), 1e-5)


if __name__ == "__main__":
    unittest.main()
