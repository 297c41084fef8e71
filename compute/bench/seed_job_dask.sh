#!/usr/bin/env bash
# The seed job of issue 15 through Dask (python3 -m stacklens, issue 18) beside the CLI on the
# same GPUs: makes the input unless /tmp/seed.fits exists, runs the CLI on every visible GPU,
# then Dask with one LocalCluster worker per GPU (chunks 950 x 1024 x 1024), output in memory,
# and compares the two results. Both as users type them: no budget or boundary options.
#   B=build/cuda/app compute/bench/seed_job_dask.sh
# PYTHONPATH must reach the stacklens module (and Dask); ITERATIONS (100) may be set.
set -euo pipefail
B=${B:-build/cuda/app}
here=$(dirname "$0")
gpus=$(nvidia-smi -L | wc -l)
[[ -f /tmp/seed.fits ]] || python3 "$here/make_seed_stack.py" /tmp/seed.fits /tmp/psf128.fits >/dev/null
rm -f /dev/shm/cli.fits /dev/shm/dask.fits
TIMEFORMAT="wall %R s"
echo "== CLI, $gpus GPU(s)"
time "$B/stacklens-cli" deconvolve /tmp/seed.fits /dev/shm/cli.fits --mode 3d \
  --psf /tmp/psf128.fits --iterations "${ITERATIONS:-100}" --backend cuda --devices all 2>&1 |
  grep -v "deconvolving:" | tail -4
echo "== python3 -m stacklens, LocalCluster of $gpus worker(s)"
time python3 -m stacklens deconvolve /tmp/seed.fits /dev/shm/dask.fits --psf /tmp/psf128.fits \
  --iterations "${ITERATIONS:-100}" --mode 3d --chunks 950,1024,1024 --local-workers "$gpus" \
  --backend cuda --quiet
python3 - <<'PY'
import numpy as np, stacklens as sl
a, b = sl.open("/dev/shm/cli.fits"), sl.open("/dev/shm/dask.fits")
num = den = 0.0
for z in range(0, a.shape[0], 50):
    x, y = a[z:z + 50].astype(np.float64), b[z:z + 50].astype(np.float64)
    num += ((x - y) ** 2).sum(); den += (x ** 2).sum()
print(f"Dask against the CLI: relative L2 {np.sqrt(num / den):.2e}")
PY
rm -f /dev/shm/cli.fits /dev/shm/dask.fits
