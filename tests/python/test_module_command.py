"""python3 -m stacklens deconvolve: FITS/TIFF/Zarr in, Zarr (OME-Zarr) or FITS out, on threads
or a LocalCluster; a clear error and no output when it cannot run."""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import numpy as np
import zarr

import references as ref
import stacklens as sl
import stacklens.dask as sld

BACKEND = os.environ.get("STACKLENS_BACKEND", "cpu")


def run(*args):
    return subprocess.run([sys.executable, "-m", "stacklens", *args], capture_output=True,
                          text=True, timeout=300)


class ModuleCommand(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        rng = np.random.default_rng(2)
        self.data = rng.uniform(10, 100, (12, 40, 36)).astype(np.float32)
        self.input = self.path("in.fits")
        sl.write(self.input, self.data, spacing=(2.0, 0.5, 0.5), units=("um", "um", "um"))
        self.psf = self.path("psf.fits")
        sl.write(self.psf, sl.gaussian_psf((1.0, 1.0, 1.0)))
        chunks = (12, 20, 18)
        self.want = sld.deconvolve(sld.from_stack(self.input, chunks=chunks), sl.read(self.psf),
                                   iterations=4, backend=BACKEND).compute()

    def tearDown(self):
        self.folder.cleanup()

    def path(self, name):
        return os.path.join(self.folder.name, name)

    def test_fits_to_ome_zarr_with_the_spacing_and_back_to_fits(self):
        # OME-Zarr 0.5 by default, as stacklens-cli writes it; 0.4 (Zarr v2) on request, which
        # Debian's python3-zarr reads too.
        out = self.path("out.zarr")
        r = run("deconvolve", self.input, out, "--psf", self.psf, "--iterations", "4",
                "--chunks", "12,20,18", "--backend", BACKEND, "--quiet", "--levels", "2")
        self.assertEqual(r.returncode, 0, r.stderr)
        got = sl.open(out)
        self.assertEqual(got.spacing, (2.0, 0.5, 0.5))
        self.assertEqual(got.units[0], "micron")  # OME's "micrometer", as StackLens names it
        self.assertEqual(sl.open(out, hdu=1).shape, (12, 20, 18))
        # Another process, with FFT plans of its own: rounding apart, not bit for bit.
        ref.assert_fft_rounding_close(self, got.read(), self.want)
        old = self.path("out04.zarr")
        r = run("deconvolve", self.input, old, "--psf", self.psf, "--iterations", "4",
                "--chunks", "12,20,18", "--backend", BACKEND, "--quiet", "--zarr-version", "0.4")
        self.assertEqual(r.returncode, 0, r.stderr)
        group = zarr.open(old, mode="r")
        meta = group.attrs["multiscales"][0]
        self.assertEqual([a["name"] for a in meta["axes"]], ["z", "y", "x"])
        self.assertEqual(meta["axes"][0]["unit"], "micrometer")
        self.assertEqual(meta["datasets"][0]["coordinateTransformations"][0]["scale"],
                         [2.0, 0.5, 0.5])
        ref.assert_fft_rounding_close(self, group["0"][:], self.want)
        self.assertEqual([n for n in os.listdir(self.folder.name) if n.startswith(".")], [])
        r = run("deconvolve", self.input, self.path("x.fits"), "--psf", self.psf,
                "--iterations", "1", "--levels", "2")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("apply to a .zarr output", r.stderr)
        # The OME-Zarr image as input, written as FITS with its spacing.
        fits = self.path("again.fits")
        r = run("deconvolve", out, fits, "--psf-sigma", "1", "--iterations", "2",
                "--backend", BACKEND, "--quiet")
        self.assertEqual(r.returncode, 0, r.stderr)
        s = sl.open(fits)
        self.assertEqual(s.shape, self.data.shape)
        np.testing.assert_allclose(s.spacing, (2.0, 0.5, 0.5))
        self.assertTrue(any("python -m stacklens" in v + c for k, v, c in s.header
                            if k == "HISTORY"))

    def test_a_local_cluster_gives_the_same_result(self):
        # The workers write their chunks themselves: into the prepared FITS file, and whole
        # chunks of the prepared OME-Zarr folder.
        for name in ("cluster.fits", "cluster.zarr"):
            out = self.path(name)
            r = run("deconvolve", self.input, out, "--psf", self.psf, "--iterations", "4",
                    "--chunks", "12,20,18", "--local-workers", "2", "--backend", BACKEND)
            self.assertEqual(r.returncode, 0, r.stderr)
            got = sl.read(out)
            ref.assert_fft_rounding_close(self, got, self.want, name)
            # Overlapping chunks: the seam error a synthetic trial expects is said and kept.
            self.assertIn("expected seam error", r.stderr)
        # (HISTORY cards split the record anywhere, and a blank at a split is lost.)
        history = "".join(v + c for k, v, c in sl.open(self.path("cluster.fits")).header
                          if k == "HISTORY").replace(" ", "")
        self.assertIn("relativeL2neartheseams(synthetictrial)", history)
        self.assertEqual([n for n in os.listdir(self.folder.name) if n.startswith(".")], [])

    def test_zarr_shards_write_a_sharded_output_and_need_0_5(self):
        out = self.path("sharded.zarr")
        r = run("deconvolve", self.input, out, "--psf", self.psf, "--iterations", "4",
                "--chunks", "12,20,18", "--backend", BACKEND, "--quiet", "--zarr-shards",
                "12,64,64")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(out, "0", "zarr.json"), encoding="utf-8") as f:
            meta = json.load(f)
        self.assertEqual(meta["codecs"][0]["name"], "sharding_indexed")
        # Shards of the shape or more: one shard holding the whole array, clipped to it.
        self.assertEqual(meta["chunk_grid"]["configuration"]["chunk_shape"], [12, 40, 36])
        ref.assert_fft_rounding_close(self, sl.read(out), self.want)
        r = run("deconvolve", self.input, self.path("v04.zarr"), "--psf", self.psf,
                "--iterations", "1", "--zarr-version", "0.4", "--zarr-shards", "12,64,64")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("--zarr-shards", r.stderr)
        self.assertFalse(os.path.exists(self.path("v04.zarr")))

    def test_an_unreachable_scheduler_or_a_missing_psf_is_an_error_and_writes_nothing(self):
        out = self.path("never.zarr")
        r = run("deconvolve", self.input, out, "--psf", self.psf, "--iterations", "2",
                "--scheduler", "tcp://127.0.0.1:9", "--connect-timeout", "2s")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("cannot reach the Dask scheduler at tcp://127.0.0.1:9", r.stderr)
        r = run("deconvolve", self.input, out, "--psf", self.path("missing.fits"),
                "--iterations", "2")
        self.assertEqual(r.returncode, 1)
        self.assertIn("missing.fits", r.stderr)
        self.assertEqual(sorted(os.listdir(self.folder.name)), ["in.fits", "psf.fits"])


class Interrupted(unittest.TestCase):
    def test_a_second_keyboard_interrupt_while_winding_down_still_exits_130(self):
        # One Ctrl-C can raise KeyboardInterrupt twice in the main thread (from the run's
        # threads, then from the pending signal); CI once saw exit -2 so.
        import contextlib
        import io
        import signal as signals
        from stacklens.__main__ import _interrupted
        calls = []

        def leave():
            calls.append(1)
            if len(calls) == 1:
                raise KeyboardInterrupt

        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err):
                self.assertEqual(_interrupted(leave), 130)
            self.assertEqual(signals.getsignal(signals.SIGINT), signals.SIG_IGN)
        finally:
            signals.signal(signals.SIGINT, signals.default_int_handler)
        self.assertEqual(len(calls), 2)
        self.assertEqual(err.getvalue().count("interrupted; nothing was written"), 1)

    def test_ctrl_c_leaves_no_output_and_no_temporary_folder(self):
        with tempfile.TemporaryDirectory() as folder:
            source = os.path.join(folder, "in.fits")
            sl.write(source, np.random.default_rng(1).uniform(10, 100, (64, 256, 256))
                     .astype(np.float32))
            p = subprocess.Popen([sys.executable, "-m", "stacklens", "deconvolve", source,
                                  os.path.join(folder, "out.zarr"), "--psf-sigma", "2",
                                  "--iterations", "400", "--chunks", "32,128,128",
                                  "--backend", BACKEND],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            # Signalled once it writes (its temporary folder is there): then it is deconvolving,
            # however long a loaded machine took to start it.
            waited = 0.0
            while os.listdir(folder) == ["in.fits"] and p.poll() is None and waited < 120:
                time.sleep(0.01)
                waited += 0.01
            self.assertIsNone(p.poll(), "it ended before it could be interrupted")
            p.send_signal(signal.SIGINT)
            _, err = p.communicate(timeout=300)
            self.assertEqual(p.returncode, 130, err)
            self.assertIn("interrupted; nothing was written", err)
            self.assertEqual(os.listdir(folder), ["in.fits"], err)


if __name__ == "__main__":
    unittest.main()
