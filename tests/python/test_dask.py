"""stacklens.dask: chunks with halos through map_overlap give the blocked deconvolution's result
when the chunks are its blocks, stay close to the whole-volume run, and run on a
dask.distributed cluster."""

import json
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
        # Two chunks along every axis. What differs is almost all at the volume's faces (93 %
        # of the squared difference within the halo of a face): there each run pads to its own
        # frame, and the padding's far end wraps around (see
        # tests/compute/blocked_deconvolution_test.cpp). Measured 7.5e-4, as the blocked run's.
        v = beads((48, 128, 128), 4)
        psf = sl.gaussian_psf((1.5, 1.0, 1.0))
        whole = sl.deconvolve(v, psf, iterations=20, mode="3d", backend=BACKEND)
        chunks = da.from_array(v, chunks=(24, 64, 64))
        got = sld.deconvolve(chunks, psf, iterations=20, backend=BACKEND).compute()
        self.assertLessEqual(ref.relative_l2(got, whole), 1e-3)
        wider = sld.deconvolve(chunks, psf, iterations=20, halo=(10, 8, 8),
                               backend=BACKEND).compute()
        self.assertLessEqual(ref.relative_l2(wider, whole), 1e-3)
        # Smaller chunks against the halo: more of the volume near a face or a seam.
        v = beads((32, 96, 96), 4)
        whole = sl.deconvolve(v, psf, iterations=20, mode="3d", backend=BACKEND)
        got = sld.deconvolve(da.from_array(v, chunks=(32, 48, 48)), psf, iterations=20,
                             backend=BACKEND).compute()
        self.assertLess(ref.relative_l2(got, whole), 1.5e-3)  # measured 1.0e-3

    def test_reflect_exact_chunks_reflect_only_at_the_arrays_faces(self):
        # Nothing is padded: chunks at the faces start there and reflect there, as the whole
        # run does, so one chunk is the whole run and several differ only near the seams.
        v = beads((40, 64, 56), 6)
        psf = sl.gaussian_psf((1.0, 1.0, 1.0), size=(7, 7, 7))
        whole = sl.deconvolve(v, psf, iterations=10, mode="3d", boundary="reflect-exact",
                              backend=BACKEND)
        one = sld.deconvolve(da.from_array(v, chunks=v.shape), psf, iterations=10,
                             boundary="reflect-exact", backend=BACKEND).compute()
        self.assertLessEqual(ref.relative_l2(one, whole), 1e-6)
        # A halo of 6 (half the PSF is 4): measured 9.6e-5 over the volume, 9.5e-7 farther than
        # the halo from the seams.
        got = sld.deconvolve(da.from_array(v, chunks=(20, 32, 28)), psf, iterations=10, halo=6,
                             boundary="reflect-exact", backend=BACKEND).compute()
        self.assertLessEqual(ref.relative_l2(got, whole), 1e-3)
        away = (slice(0, 14), slice(0, 26), slice(0, 22))  # the first chunk, 6 from its seams
        self.assertLessEqual(ref.relative_l2(got[away], whole[away]), 1e-5)
        self.assertGreater(ref.relative_l2(whole, v), 1e-2)  # it did deconvolve
        with self.assertRaisesRegex(Exception, "mirror image"):
            sld.deconvolve(da.from_array(v, chunks=(20, 32, 28)), np.arange(27.0).reshape(3, 3, 3),
                           iterations=2, boundary="reflect-exact", backend=BACKEND).compute()

    def test_an_axis_in_one_chunk_widens_only_to_fused_frames(self):
        chunks = ((950,), (1024, 1024), (1024, 1024))
        self.assertEqual(sld._widened((64, 64, 64), chunks, cuda=True), (101, 64, 64))
        self.assertEqual(sld._widened((64, 64, 64), chunks, cuda=False)[0], 64)
        self.assertEqual(sld._widened((3, 3, 3), ((12, 12), (30, 30), (24, 24)), cuda=False),
                         (3, 3, 3))

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


class FromStack(unittest.TestCase):
    def test_auto_chunks_are_multiples_of_a_zarr_arrays_chunks(self):
        a = np.random.default_rng(9).uniform(0, 100, (12, 48, 40)).astype(np.float32)
        with tempfile.TemporaryDirectory() as folder:
            for version in ("0.4", "0.5"):
                path = os.path.join(folder, f"in{version}.zarr")
                sl.write(path, a, zarr_version=version, zarr_chunks=(3, 16, 20))
                stack = sl.open(path)
                self.assertEqual(stack.chunks, (3, 16, 40))  # whole rows, as indexing reads
                # A chunk budget of a few Zarr chunks, so that the array has several.
                with dask.config.set({"array.chunk-size": "40KiB"}):
                    d = sld.from_stack(stack)
                self.assertGreater(d.npartitions, 1)
                for axis, unit in ((0, 3), (1, 16)):
                    starts = np.cumsum((0,) + d.chunks[axis][:-1])
                    self.assertTrue(all(s % unit == 0 for s in starts), d.chunks)
                self.assertEqual(d.chunks[2], (40,))
                # Exact on purpose: float32 values stored and decoded back are copies (blosc is
                # lossless), whatever process or thread count read them.
                np.testing.assert_array_equal(d.compute(), a)
            tif = os.path.join(folder, "in.tif")
            sl.write(tif, a)
            self.assertIsNone(sl.open(tif).chunks)


class ToFile(unittest.TestCase):
    def test_chunks_written_in_place_as_fits_and_tiff(self):
        a = np.random.default_rng(7).uniform(0, 100, (9, 40, 30)).astype(np.float32)
        d = da.from_array(a, chunks=(4, 15, 30)) * 2
        with tempfile.TemporaryDirectory() as folder:
            for name in ("out.fits", "out.tif"):
                path = os.path.join(folder, name)
                sld.to_file(d, path, spacing=(2.0, 0.5, 0.5), history=["made by a test"])
                got = sl.open(path)
                np.testing.assert_array_equal(got.read(), a * 2)
                self.assertEqual(got.spacing, (2.0, 0.5, 0.5))
            sld.to_file(d[3], os.path.join(folder, "slice.fits"))
            np.testing.assert_array_equal(sl.read(os.path.join(folder, "slice.fits"))[0], a[3] * 2)
            self.assertIn("HISTORY", " ".join(c[0] for c in sl.open(
                os.path.join(folder, "out.fits")).header))
            self.assertEqual(sorted(os.listdir(folder)), ["out.fits", "out.tif", "slice.fits"])

    def test_a_failing_chunk_leaves_no_file(self):
        def fail(block):
            if block.size and block.sum() > 0:
                raise RuntimeError("a chunk failed")
            return block
        d = da.from_array(np.ones((6, 20, 20), np.float32), chunks=(3, 20, 20)).map_blocks(
            fail, dtype=np.float32)
        with tempfile.TemporaryDirectory() as folder:
            with self.assertRaisesRegex(RuntimeError, "a chunk failed"):
                sld.to_file(d, os.path.join(folder, "out.fits"))
            self.assertEqual(os.listdir(folder), [])
            with self.assertRaisesRegex(ValueError, "expected a .fits"):
                sld.to_file(d, os.path.join(folder, "out.png"))


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
                # Other processes measure their own FFT plans: rounding apart, not bit for bit.
                ref.assert_fft_rounding_close(self, got, want)
                self.assertEqual(len(client.scheduler_info()["workers"]), 2)


    def test_chunks_read_with_their_halos_from_the_file_give_map_overlaps_result(self):
        # Operations on from_stack's array read each chunk's halo from the file in the chunk's
        # own task (padded at the faces as Dask pads); periodic faces go through map_overlap.
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "stack.fits")
            v = beads((20, 48, 40), 10)
            sl.write(path, v)
            chunks = (10, 24, 20)
            for boundary in ("reflect", "zero", "reflect-exact", "periodic"):
                got = sld.deconvolve(sld.from_stack(path, chunks=chunks), psf_sigma=1.0,
                                     iterations=5, boundary=boundary, backend=BACKEND)
                self.assertEqual("-from-file-" in got.name, boundary != "periodic", boundary)
                want = sld.deconvolve(da.from_array(v, chunks=chunks), psf_sigma=1.0,
                                      iterations=5, boundary=boundary, backend=BACKEND)
                ref.assert_fft_rounding_close(self, got.compute(scheduler="threads"),
                                              want.compute(scheduler="threads"), boundary)
            stack, array = sld.from_stack(path, chunks=chunks), da.from_array(v, chunks=chunks)
            # The same blocks blurred by the same code: equal up to float32 rounding (a few ulp
            # of the largest value, 1e-6 of it); a wrong halo differs by far more.
            want = np.asarray(sld.blur(array, (1.0, 2.0, 1.5), backend=BACKEND))
            np.testing.assert_allclose(sld.blur(stack, (1.0, 2.0, 1.5), backend=BACKEND), want,
                                       rtol=0, atol=1e-6 * np.abs(want).max())
            # A median picks one of its inputs: no arithmetic, so equal exactly.
            np.testing.assert_array_equal(sld.median(stack, 5, backend=BACKEND),
                                          sld.median(array, 5, backend=BACKEND))

    @unittest.skipUnless("STACKLENS_SAMPLES" in os.environ, "the build's samples (ctest sets it)")
    def test_the_bundled_sample_on_two_worker_processes_matches_one_process(self):
        # The microscopy sample (32 x 200 x 200) with its 17^3 PSF in four chunks: two worker
        # processes give what one process gives.
        from distributed import Client, LocalCluster
        samples = os.environ["STACKLENS_SAMPLES"]
        path = os.path.join(samples, "beads.tif")
        psf = sl.read(os.path.join(samples, "beads_psf.tif"))
        chunks = (32, 100, 100)
        want = sld.deconvolve(sld.from_stack(path, chunks=chunks), psf, iterations=5,
                              backend=BACKEND).compute(scheduler="synchronous")
        with dask.config.set({"distributed.worker.daemon": False}), \
                LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                             dashboard_address=None) as cluster, Client(cluster) as client:
            self.assertEqual(len(client.scheduler_info()["workers"]), 2)
            got = sld.deconvolve(sld.from_stack(path, chunks=chunks), psf, iterations=5,
                                 backend=BACKEND).compute()
        ref.assert_fft_rounding_close(self, got, want)
        v = sl.read(path)
        self.assertGreater(ref.relative_l2(got, v), 1e-3)  # it did deconvolve

    def test_distributed_output_streams_to_a_file(self):
        from distributed import Client, LocalCluster
        a = beads((12, 40, 32), 8)
        with tempfile.TemporaryDirectory() as folder, \
                dask.config.set({"distributed.worker.daemon": False}), \
                LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                             dashboard_address=None) as cluster, Client(cluster):
            path = os.path.join(folder, "out.tif")
            sld.to_file(da.from_array(a, chunks=(5, 20, 32)) + 1, path)
            np.testing.assert_array_equal(sl.read(path), a + 1)

    @unittest.skipUnless(BACKEND.startswith("cuda") and sl.cuda_device_count() >= 2,
                         "needs two GPUs")
    def test_workers_of_a_host_with_several_gpus_take_one_each(self):
        from distributed import Client, LocalCluster
        count = sl.cuda_device_count()
        v = beads((32, 64, 64), 9)
        with dask.config.set({"distributed.worker.daemon": False}), \
                LocalCluster(n_workers=count, threads_per_worker=1, processes=True,
                             dashboard_address=None) as cluster, Client(cluster) as client:
            chosen = client.run(lambda: sld._backend_here("cuda"))
            self.assertEqual(sorted(chosen.values()), [f"cuda:{i}" for i in range(count)])
            got = sld.deconvolve(da.from_array(v, chunks=(16, 32, 32)), psf_sigma=1.0,
                                 iterations=10, backend="cuda").compute()
        want = sld.deconvolve(da.from_array(v, chunks=(16, 32, 32)), psf_sigma=1.0,
                              iterations=10, backend="cuda:0").compute(scheduler="threads")
        self.assertLessEqual(ref.relative_l2(got, want), 1e-6)


class WorkersWriteTheirChunks(unittest.TestCase):
    """stacklens.dask.to_file with a dask.distributed client: the file is prepared here and each
    worker writes the chunks it computed into it; only their voxel counts come back."""

    @classmethod
    def setUpClass(cls):
        from distributed import Client, LocalCluster
        cls.config = dask.config.set({"distributed.worker.daemon": False})
        cls.config.__enter__()
        cls.cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                   dashboard_address=None)
        # Not the default client: to_file uses it within on_workers only, and the threaded runs
        # it is compared with go outside.
        cls.client = Client(cls.cluster, set_as_default=False)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        cls.cluster.close()
        cls.config.__exit__(None, None, None)

    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.addCleanup(self.folder.cleanup)

    def path(self, name):
        return os.path.join(self.folder.name, name)

    def on_workers(self, write):
        # As a default client would be: to_file finds it, and Dask computes on it.
        with self.client.as_current(), dask.config.set(scheduler=self.client):
            return write()

    def sent_to_the_client(self):
        """Bytes the workers have sent so far to anything but each other: to the client, directly
        or through the scheduler."""
        workers = set(self.client.scheduler_info()["workers"])
        logs = self.client.run(lambda dask_worker: list(dask_worker.transfer_outgoing_log))
        return sum(t["total"] for log in logs.values() for t in log if t["who"] not in workers)

    def test_plain_copies_are_the_files_the_threaded_path_writes(self):
        # Chunks that split the rows (1030 columns as 500 + 500 + 30): the two workers' boxes
        # share rows and pages. A slice of the stack is a single FITS image; a crop's chunks
        # are views whose rows are apart (written without a copy).
        a = np.random.default_rng(11).uniform(-1e3, 1e3, (9, 40, 1030)).astype(np.float32)
        source = self.path("in.fits")
        sl.write(source, a, spacing=(2.0, 0.5, 0.5))
        written = ["in.fits"]
        for name in ("out.fits", "out.tif", "slice.fits", "slice.tif", "crop.fits", "crop.tif"):
            one, crop = name.startswith("slice"), name.startswith("crop")

            def array():
                d = sld.from_stack(source, chunks=(4, 20, 500)) * 2
                return d[3] if one else d[:, 3:37, 7:1001] if crop else d

            here, there = self.path("threads-" + name), self.path(name)
            sld.to_file(array(), here, like=sl.open(source), history=["a test"])
            self.on_workers(lambda: sld.to_file(array(), there, like=sl.open(source),
                                                history=["a test"]))
            with open(here, "rb") as mine, open(there, "rb") as theirs:
                self.assertTrue(mine.read() == theirs.read(), f"{name}: the files differ")
            # Values times two, copied into the file: exact in float32.
            np.testing.assert_array_equal(sl.read(there), a[3:4] * 2 if one else
                                          a[:, 3:37, 7:1001] * 2 if crop else a * 2)
            written += [name, "threads-" + name]
        self.assertEqual(sorted(os.listdir(self.folder.name)), sorted(written))

    def test_workers_write_whole_chunks_of_an_ome_zarr_output(self):
        # Dask chunks of 4 × 20 × 500 against Zarr chunks of 3 × 16 × 256: rechunked to whole
        # Zarr chunks, each then written by the worker that computed it; the second level is
        # made at commit from what the workers wrote.
        a = np.random.default_rng(17).uniform(-1e3, 1e3, (9, 40, 1030)).astype(np.float32)
        source = self.path("in.fits")
        sl.write(source, a, spacing=(2.0, 0.5, 0.5))
        for version in ("0.4", "0.5"):
            name = f"out{version}.zarr"
            d = sld.from_stack(source, chunks=(4, 20, 500)) * 2
            before = self.sent_to_the_client()
            self.on_workers(lambda: sld.to_file(d, self.path(name), like=sl.open(source),
                                                history=["a test"], zarr_version=version,
                                                zarr_chunks=(3, 16, 256), levels=2))
            self.assertLess(self.sent_to_the_client() - before, a.nbytes // 100)
            got = sl.open(self.path(name))
            # Exact on purpose: ×2 only raises each float32's exponent (no rounding, in any
            # process), and the chunks store and give back those values as they are.
            np.testing.assert_array_equal(got.read(), a * 2)
            self.assertEqual(got.spacing, (2.0, 0.5, 0.5))
            self.assertEqual(got.chunks, (3, 16, 1030))
            self.assertEqual(sl.open(self.path(name), hdu=1).shape, (9, 20, 515))
            self.assertIn("a test", " ".join(v + c for k, v, c in got.header))
        self.assertEqual(sorted(os.listdir(self.folder.name)),
                         ["in.fits", "out0.4.zarr", "out0.5.zarr"])

    def test_workers_write_whole_shards_of_a_sharded_output(self):
        # Dask chunks of 4 x 20 x 500 against shards of 6 x 32 x 512 (chunks 3 x 16 x 256):
        # rechunked to whole shards, each shard file then written by the one worker that
        # computed it; the threaded path writes the same values.
        a = np.random.default_rng(19).uniform(-1e3, 1e3, (9, 40, 1030)).astype(np.float32)
        a[:6, :32, :512] = np.nan  # a shard all fill: no file
        source = self.path("in.fits")
        sl.write(source, a)
        options = dict(zarr_chunks=(3, 16, 256), zarr_shards=(6, 32, 512), levels=2)
        d = sld.from_stack(source, chunks=(4, 20, 500)) * 2
        self.on_workers(lambda: sld.to_file(d, self.path("workers.zarr"), **options))
        sld.to_file(d, self.path("threads.zarr"), **options)
        for name in ("workers.zarr", "threads.zarr"):
            got = sl.read(self.path(name))
            # Exact on purpose: x2 only raises each float32's exponent.
            np.testing.assert_array_equal(got, a * 2, err_msg=name)
            level0 = os.path.join(self.path(name), "0")
            with open(os.path.join(level0, "zarr.json"), encoding="utf-8") as f:
                meta = json.load(f)
            self.assertEqual(meta["codecs"][0]["name"], "sharding_indexed")
            self.assertEqual(meta["chunk_grid"]["configuration"]["chunk_shape"], [6, 32, 512])
            files = sorted(os.path.relpath(os.path.join(p, f), level0)
                           for p, _, names in os.walk(os.path.join(level0, "c")) for f in names)
            # 2 x 2 x 3 shards, the first all NaN and left out; nothing else (no temporary).
            self.assertEqual(len(files), 11, files)
            self.assertNotIn(os.path.join("c", "0", "0", "0"), files)
        self.assertEqual(sl.open(self.path("workers.zarr"), hdu=1).shape, (9, 20, 515))

    def test_a_box_off_the_shard_grid_is_refused_naming_the_shard(self):
        writer = sl._stacklens._BlockWriter(
            self.path("grid.zarr"), [4, 32, 32], None, None, None, [], None, for_workers=True,
            zarr_chunks=(2, 8, 8), zarr_shards=(4, 16, 16))
        try:
            prepared = writer.prepared_file()
            self.assertEqual(prepared.zarr_shards, (4, 16, 16))
            with self.assertRaisesRegex(OSError, "shard c/0/1/0"):
                prepared.write_box(0, 16, 0, np.ones((4, 8, 16), np.float32))
        finally:
            writer.close()
        with self.assertRaisesRegex(ValueError, "zarr_shards"):
            sld.to_file(da.zeros((4, 8, 8), dtype=np.float32), self.path("v4.zarr"),
                        zarr_version="0.4", zarr_shards=(4, 8, 8))

    def test_a_deconvolution_written_by_the_workers_matches_the_threaded_one(self):
        source = self.path("in.tif")
        sl.write(source, beads((16, 48, 40), 12))

        def result():
            return sld.deconvolve(sld.from_stack(source, chunks=(8, 24, 40)), psf_sigma=1.0,
                                  iterations=5, backend=BACKEND)

        for name in ("out.fits", "out.tif"):
            sld.to_file(result(), self.path("threads-" + name))
            self.on_workers(lambda: sld.to_file(result(), self.path(name)))
            # Other processes measure their own FFT plans: rounding apart, not bit for bit.
            ref.assert_fft_rounding_close(self, sl.read(self.path(name)),
                                          sl.read(self.path("threads-" + name)), name)

    def test_no_voxels_go_through_the_client(self):
        # When the chunks came to the client to be written the workers sent it at least the
        # array's bytes (8 MiB); now only the chunks' voxel counts.
        a = np.random.default_rng(13).uniform(0, 1, (32, 256, 256)).astype(np.float32)
        source = self.path("in.fits")
        sl.write(source, a)
        d = sld.from_stack(source, chunks=(8, 256, 256)) * 2
        # Nor does the graph the client sends hold voxels: the tasks read their chunks.
        import cloudpickle
        self.assertLess(len(cloudpickle.dumps(dict(d.__dask_graph__()))), a.nbytes // 100)
        before = self.sent_to_the_client()
        self.on_workers(lambda: sld.to_file(d, self.path("out.fits")))
        self.assertLess(self.sent_to_the_client() - before, a.nbytes // 100)
        np.testing.assert_array_equal(sl.read(self.path("out.fits")), a * 2)

    def test_a_failing_chunk_leaves_nothing(self):
        def fail(block, block_info=None):
            if block_info[None]["chunk-location"][0] == 1:
                raise RuntimeError("a chunk failed")
            return block

        d = da.ones((6, 20, 20), np.float32, chunks=(3, 20, 20)).map_blocks(fail,
                                                                            dtype=np.float32)
        for name in ("out.fits", "out.tif", "out.zarr"):
            with self.assertRaisesRegex(RuntimeError, "a chunk failed"):
                self.on_workers(lambda: sld.to_file(d, self.path(name)))
        self.assertEqual(os.listdir(self.folder.name), [])


if __name__ == "__main__":
    unittest.main()
