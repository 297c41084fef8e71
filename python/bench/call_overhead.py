"""The Python call against the C++ one (issue 18's benchmark): one 2048 x 2048 slice, 20
Richardson-Lucy iterations, Gaussian PSF sigma 2, timed as stacklens-cli deconvolve --timings
reports its compute stage and as stacklens.deconvolve returns; then python3 -m stacklens on the
bundled sample with 1 and 2 local workers. Medians of REPEATS (default 5).

    PYTHONPATH=build/release/python python3 python/bench/call_overhead.py \\
        build/release/app/stacklens-cli build/release/samples [cpu|cuda]
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import stacklens as sl

cli, samples = sys.argv[1], sys.argv[2]
backend = sys.argv[3] if len(sys.argv) > 3 else "cpu"
repeats = int(os.environ.get("REPEATS", "5"))
rng = np.random.default_rng(1)
image = (sl.blur(rng.uniform(0, 1, (2048, 2048)).astype(np.float32), 3.0) + 0.01).astype(np.float32)

with tempfile.TemporaryDirectory() as folder:
    path = os.path.join(folder, "slice.fits")
    sl.write(path, image)
    cli_times, py_times = [], []
    for _ in range(repeats + 1):  # the first of each is a warm-up
        run = subprocess.run([cli, "deconvolve", path, os.path.join(folder, "out.fits"),
                              "--psf-sigma", "2", "--iterations", "20", "--backend", backend,
                              "--timings"], capture_output=True, text=True, check=True)
        stages = json.loads(run.stderr.strip().splitlines()[-1])
        cli_times.append(stages["compute"])
        start = time.perf_counter()
        sl.deconvolve(image, psf_sigma=2, iterations=20, backend=backend)
        py_times.append(time.perf_counter() - start)
    c, p = statistics.median(cli_times[1:]), statistics.median(py_times[1:])
    print(f"2048^2 RL-20 on {backend}: C++ (CLI compute stage) {c:.4f} s, "
          f"stacklens.deconvolve {p:.4f} s, Python over C++ {100 * (p / c - 1):+.1f} %")

    for workers in (1, 2):
        times = []
        for _ in range(max(1, repeats // 2)):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "stacklens", "deconvolve",
                            os.path.join(samples, "beads.tif"), os.path.join(folder, "d.fits"),
                            "--psf", os.path.join(samples, "beads_psf.tif"), "--iterations", "20",
                            "--chunks", "32,100,100", "--local-workers", str(workers),
                            "--backend", backend, "--quiet"], check=True)
            times.append(time.perf_counter() - start)
        print(f"python3 -m stacklens on the bundled sample (32 x 200 x 200, PSF 17^3, 20 "
              f"iterations, 4 chunks), {workers} worker(s): {statistics.median(times):.2f} s")
