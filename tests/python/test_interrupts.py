"""Ctrl-C and failures in long runs: a deconvolve computing with the GIL released, and the chunks
Dask's threads compute, stop on SIGINT with KeyboardInterrupt; stacklens.dask.to_file stopped by
a failing chunk or by Ctrl-C leaves nothing and never writes into a closed file.

Each case runs in a child Python (the signal must not reach the test runner); the child says
when it starts the long call, and the signal is sent once it has used some processor time in it,
so that it lands in the middle of the work however loaded the machine is."""

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

BACKEND = os.environ.get("STACKLENS_BACKEND", "cpu")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def child(script):
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(script)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def interrupt_when_busy(p, busy=0.5):
    """Waits for the child's "started" line and busy seconds of its processor time after it,
    sends SIGINT and returns when it was sent and the child's output."""
    line = p.stdout.readline()
    if line.strip() != "started":
        p.kill()
        raise AssertionError("the child did not start: " + line + p.communicate()[1])
    base = cpu_seconds(p.pid)
    deadline = time.monotonic() + 120
    while cpu_seconds(p.pid) - base < busy:
        if p.poll() is not None or time.monotonic() > deadline:
            raise AssertionError("the child ended before it was interrupted: "
                                 + p.communicate()[1])
        time.sleep(0.01)
    sent = time.monotonic()
    p.send_signal(signal.SIGINT)
    try:
        out, err = p.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        raise AssertionError("the child did not stop on SIGINT")
    return sent, line + out, err


def latency(sent, out):
    """Seconds from the signal to the child's "KeyboardInterrupt AT" line (one clock)."""
    for line in out.splitlines():
        if line.startswith("KeyboardInterrupt "):
            return float(line.split()[1]) - sent
    return float("nan")


# The child's long call, between "started" and what it prints on KeyboardInterrupt.
CALL = """
import sys, time, numpy as np, stacklens as sl
v = np.random.default_rng(1).uniform(1, 100, {shape}).astype(np.float32)
print("started", flush=True)
try:
    {call}
except KeyboardInterrupt:
    print("KeyboardInterrupt", time.monotonic(), flush=True)
    {after}
    sys.exit(0)
sys.exit(1)
"""

# Whether the child's threads stopped computing: some half-second within the next minute uses
# less than a tenth of a CPU.
THREADS_STOPPED = """
import os, time
def cpu():
    with open(f"/proc/{os.getpid()}/stat") as f:
        f = f.read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
def threads_stopped():
    for _ in range(120):
        before = cpu()
        time.sleep(0.5)
        if cpu() - before < 0.05:
            return True
    return False
"""


class KeyboardInterruptInLongCalls(unittest.TestCase):
    def expect_interrupt(self, name, shape, call, after="pass", prelude=""):
        p = child(prelude + CALL.format(shape=shape, call=call, after=after))
        sent, out, err = interrupt_when_busy(p)
        # For the record (not a test: it depends on the machine's load).
        print(f"{name} raised KeyboardInterrupt {latency(sent, out):.3f} s after SIGINT")
        self.assertEqual(p.returncode, 0, out + err)
        self.assertIn("KeyboardInterrupt", out)
        return out

    def test_a_long_2d_deconvolve(self):
        self.expect_interrupt(
            "deconvolve 2d", (16, 256, 256),
            f"sl.deconvolve(v, psf_sigma=2, iterations=100000, backend='{BACKEND}')")

    def test_a_long_3d_deconvolve_in_blocks(self):
        self.expect_interrupt(
            "deconvolve 3d in blocks", (32, 128, 128),
            f"sl.deconvolve(v, psf_sigma=2, iterations=100000, mode='3d', block=16, "
            f"backend='{BACKEND}')")

    def test_a_dask_run_stops_its_threads_too(self):
        # Dask's main thread raises at once; the chunks its threads compute must stop as well,
        # or they would go on using the machine after the run was stopped.
        out = self.expect_interrupt(
            "dask deconvolve", (32, 128, 128),
            "import dask, dask.array as da, stacklens.dask as sld; "
            "d = sld.deconvolve(da.from_array(v, chunks=(16, 64, 64)), psf_sigma=2, "
            f"iterations=100000, backend='{BACKEND}'); "
            "d.compute(scheduler='threads', num_workers=2)",
            after="print('threads stopped' if threads_stopped() else 'threads go on')",
            prelude=THREADS_STOPPED)
        self.assertIn("threads stopped", out)

    def test_a_call_after_ctrl_c_within_its_tasks_scope_stops_too(self):
        # stacklens.dask's tasks that read a chunk's halo from the file and then deconvolve it
        # hold an interrupt scope for both: Ctrl-C during the read stops the call that follows
        # (without it that call, starting after the signal, ran its whole course).
        p = subprocess.run([sys.executable, "-c", textwrap.dedent(f"""
            import os, signal, threading, time, numpy as np, stacklens as sl
            from stacklens import _stacklens
            v = np.random.default_rng(1).uniform(1, 100, (16, 128, 128)).astype(np.float32)
            reading, read = threading.Event(), threading.Event()
            def task():
                with _stacklens._InterruptScope():
                    reading.set()
                    read.wait()
                    try:
                        sl.deconvolve(v, psf_sigma=2, iterations=100000, backend='{BACKEND}')
                    except KeyboardInterrupt:
                        print("the call stopped", flush=True)
            t = threading.Thread(target=task)
            t.start()
            reading.wait()
            try:
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(5)
            except KeyboardInterrupt:
                print("KeyboardInterrupt", flush=True)
            read.set()
            t.join(60)
            print("joined" if not t.is_alive() else "still running", flush=True)
            os._exit(0)
            """)], capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.split(), ["KeyboardInterrupt", "the", "call", "stopped",
                                            "joined"], p.stderr)


    def test_a_program_ending_on_ctrl_c_starts_no_call_after_it(self):
        # python -m stacklens: a Dask thread that starts a chunk after the signal, before the
        # main thread's handler ran, once computed all of it while the exit waited. After
        # _stop_calls_after_interrupt a call that starts after Ctrl-C stops at once; without it
        # (a notebook that goes on after Ctrl-C) the same call computes.
        script = textwrap.dedent(f"""
            import os, signal, sys, threading, numpy as np, stacklens as sl
            from stacklens import _stacklens
            if sys.argv[1] == "ends-on-ctrl-c":
                _stacklens._stop_calls_after_interrupt()
            v = np.random.default_rng(1).uniform(1, 100, (64, 64)).astype(np.float32)
            try:
                os.kill(os.getpid(), signal.SIGINT)
                signal.pause()
            except KeyboardInterrupt:
                print("KeyboardInterrupt", flush=True)
            def call():
                try:
                    sl.deconvolve(v, psf_sigma=2, iterations=int(sys.argv[2]),
                                  backend='{BACKEND}')
                    print("computed", flush=True)
                except KeyboardInterrupt:
                    print("stopped", flush=True)
            t = threading.Thread(target=call)
            t.start()
            t.join(120)
            call()
            """)
        for mode, iterations, expected in (("ends-on-ctrl-c", 10 ** 7, "stopped"),
                                           ("goes-on", 3, "computed")):
            p = subprocess.run([sys.executable, "-c", script, mode, str(iterations)],
                               capture_output=True, text=True, timeout=300)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(p.stdout.split(), ["KeyboardInterrupt", expected, expected],
                             mode + ": " + p.stderr)


class StopTasks(unittest.TestCase):
    def test_chunks_that_start_after_stop_tasks_compute_nothing(self):
        # What python -m stacklens does on Ctrl-C: the chunks not yet started must not start a
        # whole deconvolution each, which an exiting interpreter would wait for.
        import numpy as np
        import dask.array as da
        import stacklens.dask as sld
        calls = []

        class Counting:
            def __getattr__(self, name):
                return getattr(real, name)

            def deconvolve(self, *a, **k):
                calls.append(1)
                return real.deconvolve(*a, **k)

        real = sld._stacklens
        v = np.ones((16, 32, 32), np.float32)
        sld._stacklens = Counting()
        try:
            d = sld.deconvolve(da.from_array(v, chunks=(8, 16, 16)), psf_sigma=1.0,
                               iterations=2, backend=BACKEND)
            d.compute(scheduler="threads", num_workers=2)
            self.assertEqual(len(calls), 8)
            sld.stop_tasks()
            with self.assertRaisesRegex(RuntimeError, "stopping"):
                d.compute(scheduler="threads", num_workers=2)
            self.assertEqual(len(calls), 8)
        finally:
            sld._stacklens = real
            sld._stopping = False


class ToFileStopped(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.folder.cleanup()

    def test_a_failing_chunk_while_others_are_written(self):
        # One chunk fails while another thread writes a large chunk into the mapped file: the
        # failure closes the writer, which must wait for that write rather than unmap under it.
        out = os.path.join(self.folder.name, "out.fits")
        script = f"""
            import threading, numpy as np, dask, dask.array as da, stacklens.dask as sld
            writing = threading.Event()
            real = sld._Boxes.__setitem__
            def setitem(self, key, box):
                writing.set()
                real(self, key, box)
            sld._Boxes.__setitem__ = setitem
            def chunk(block, block_info=None):
                if block_info[None]["chunk-location"][0] == 7:
                    writing.wait(60)
                    raise RuntimeError("this chunk fails")
                return np.full(block.shape, 1.0, np.float32)
            a = da.zeros((64, 1024, 1024), np.float32, chunks=(8, 1024, 1024)).map_blocks(
                chunk, dtype=np.float32)
            with dask.config.set(scheduler="threads", num_workers=4):
                try:
                    sld.to_file(a, {out!r})
                except RuntimeError as e:
                    print("raised:", e)
            """
        for attempt in range(3):
            p = subprocess.run([sys.executable, "-c", textwrap.dedent(script)],
                               capture_output=True, text=True, timeout=300)
            self.assertEqual(p.returncode, 0, f"attempt {attempt}: {p.returncode} {p.stderr}")
            self.assertIn("raised: this chunk fails", p.stdout)
            self.assertEqual(os.listdir(self.folder.name), [])

    def test_ctrl_c_leaves_nothing(self):
        out = os.path.join(self.folder.name, "out.tif")
        p = child(f"""
            import time, numpy as np, dask, dask.array as da, stacklens.dask as sld
            v = np.random.default_rng(1).uniform(1, 100, (32, 128, 128)).astype(np.float32)
            d = sld.deconvolve(da.from_array(v, chunks=(16, 64, 64)), psf_sigma=2,
                               iterations=100000, backend='{BACKEND}')
            print("started", flush=True)
            with dask.config.set(scheduler="threads", num_workers=2):
                try:
                    sld.to_file(d, {out!r})
                except KeyboardInterrupt:
                    print("KeyboardInterrupt", time.monotonic(), flush=True)
            """)
        sent, out_text, err = interrupt_when_busy(p)
        print(f"to_file raised KeyboardInterrupt {latency(sent, out_text):.3f} s after SIGINT")
        self.assertEqual(p.returncode, 0, err)
        self.assertIn("KeyboardInterrupt", out_text)
        self.assertEqual(os.listdir(self.folder.name), [])

    def test_ctrl_c_on_a_cluster_leaves_nothing(self):
        # The workers write into the prepared file: the client removes it at once on Ctrl-C
        # (a worker still writing writes into a file no longer named; one starting later cannot
        # open it), and nothing stays.
        out = os.path.join(self.folder.name, "out.fits")
        p = child(f"""
            import time, numpy as np, dask, dask.array as da, stacklens.dask as sld
            from distributed import Client, LocalCluster
            v = np.random.default_rng(1).uniform(1, 100, (32, 128, 128)).astype(np.float32)
            d = sld.deconvolve(da.from_array(v, chunks=(16, 64, 64)), psf_sigma=2,
                               iterations=100000, backend='{BACKEND}')
            dask.config.set({{"distributed.worker.daemon": False}})
            with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                              dashboard_address=None) as cluster, Client(cluster):
                print("started", flush=True)
                try:
                    sld.to_file(d, {out!r})
                except KeyboardInterrupt:
                    print("KeyboardInterrupt", time.monotonic(), flush=True)
            """)
        line = p.stdout.readline()
        self.assertEqual(line.strip(), "started", p.stderr.read() if line == "" else line)
        # Signalled once the file is prepared (its temporary folder is there) and the workers
        # have had time to start on their chunks.
        deadline = time.monotonic() + 120
        while not os.listdir(self.folder.name) and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(1.0)
        sent = time.monotonic()
        p.send_signal(signal.SIGINT)
        try:
            out_text, err = p.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            raise AssertionError("the child did not stop on SIGINT")
        print(f"to_file on a cluster raised KeyboardInterrupt {latency(sent, out_text):.3f} s "
              "after SIGINT")
        self.assertEqual(p.returncode, 0, err)
        self.assertIn("KeyboardInterrupt", out_text)
        self.assertEqual(os.listdir(self.folder.name), [])


if __name__ == "__main__":
    unittest.main()
