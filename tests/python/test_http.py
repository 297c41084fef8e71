"""stacklens.open and stacklens.dask.from_stack on an http:// URL read what the same OME-Zarr
folder gives locally, from a loopback server the test starts (tests/io/zarr_http_server.py)."""

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

import numpy as np

import stacklens as sl

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = os.path.join(HERE, "..", "io", "zarr_http_server.py")
V3 = os.path.join(HERE, "..", "io", "data", "zarr", "v3")


class LoopbackServer:
    """zarr_http_server.py serving folder on 127.0.0.1; it exits when its stdin closes."""

    def __init__(self, folder):
        self.process = subprocess.Popen([sys.executable, SERVER, folder],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.port = int(self.process.stdout.readline())

    def url(self, mode, path):
        return "http://127.0.0.1:%d/%s/%s" % (self.port, mode, path)

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=10)


class OpenOverHttp(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.servers = []

    def tearDown(self):
        for s in self.servers:
            s.close()
        self.folder.cleanup()

    def serve(self, folder):
        self.servers.append(LoopbackServer(folder))
        return self.servers[-1]

    def test_a_url_reads_as_the_folder_does(self):
        server = self.serve(V3)
        for plane in (0, 3):
            local = sl.open(os.path.join(V3, "ome05.zarr"), plane=plane)
            remote = sl.open(server.url("ok", "ome05.zarr"), plane=plane)
            self.assertEqual(remote.shape, local.shape)
            self.assertEqual(remote.spacing, local.spacing)
            # The same chunk bytes through the same decoders: a copy, so the values are exact.
            np.testing.assert_array_equal(remote[:], local[:])
            np.testing.assert_array_equal(remote[1, 2:5], local[1, 2:5])

    def test_our_own_pyramid_reads_level_by_level(self):
        data = np.random.default_rng(3).uniform(0, 9, (4, 70, 50)).astype(np.float32)
        sl.write(os.path.join(self.folder.name, "p.ome.zarr"), data, levels=2,
                 zarr_chunks=(2, 32, 32))
        server = self.serve(self.folder.name)
        for level in (0, 1):
            local = sl.open(os.path.join(self.folder.name, "p.ome.zarr"), hdu=level)
            remote = sl.open(server.url("ok", "p.ome.zarr"), hdu=level)
            # Same bytes, same decoders, either side: a copy, exact.
            np.testing.assert_array_equal(remote.read(), local.read())
        from stacklens.dask import from_stack
        np.testing.assert_array_equal(
            from_stack(server.url("ok", "p.ome.zarr"), chunks=(1, 35, 50)).compute(), data)

    def test_ctrl_c_ends_a_read_that_waits_on_a_stalled_server(self):
        server = self.serve(V3)
        script = textwrap.dedent("""
            import sys, stacklens as sl
            s = sl.open(sys.argv[1])
            print("started", flush=True)
            try:
                s[:]
            except KeyboardInterrupt:
                print("KeyboardInterrupt", flush=True)
            """)
        env = dict(os.environ, STACKLENS_HTTP_TIMEOUT_MS="60000")  # only Ctrl-C ends it early
        child = subprocess.Popen(
            [sys.executable, "-c", script, server.url("stall-chunks", "zstd_f4.zarr")],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        if child.stdout.readline().strip() != "started":
            child.kill()
            self.fail("the child did not start: " + child.communicate()[1])
        time.sleep(0.5)  # into the wait for the chunks
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        try:
            out, err = child.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            child.kill()
            raise
        self.assertIn("KeyboardInterrupt", out, err)
        self.assertLess(time.monotonic() - sent, 10)

    def test_a_token_url_reads_and_dask_keeps_its_query(self):
        server = self.serve(V3)
        url = server.url("token", "ome05.zarr") + "?token=secret"
        local = sl.open(os.path.join(V3, "ome05.zarr"), plane=1)
        # Exact on purpose: the same stored chunks decoded by the same code, over HTTP or from the
        # folder; no arithmetic happens on either side.
        np.testing.assert_array_equal(sl.open(url, plane=1)[:], local[:])
        # dask opens the stack again in each task, by the URL with its query.
        from stacklens.dask import from_stack
        np.testing.assert_array_equal(from_stack(url).compute(), sl.open(url).read())
        with self.assertRaises(OSError) as caught:
            sl.open(server.url("token", "ome05.zarr"))
        self.assertIn("HTTP status 403", str(caught.exception))

    def test_a_refusal_is_an_oserror_naming_the_status(self):
        server = self.serve(V3)
        with self.assertRaises(OSError) as caught:
            sl.open(server.url("forbidden", "ome05.zarr"))
        self.assertIn("HTTP status 403", str(caught.exception))
        self.assertIn("/forbidden/ome05.zarr/zarr.json", str(caught.exception))


if __name__ == "__main__":
    unittest.main()
