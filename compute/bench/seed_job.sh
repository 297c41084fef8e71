#!/usr/bin/env bash
# The seed job, file to file, as a user types it: makes the input, measures the disk with dd,
# then runs the 3D deconvolution on one GPU with --timings once per output folder, with no budget
# or boundary options (the boundary is auto: reflect-exact for this symmetric PSF); then on 2 and
# 4 GPUs where the host has them, and through Dask (seed_job_dask.sh).
#   B=build/cuda/app compute/bench/seed_job.sh [OUTPUT_FOLDER ...]   (default: /dev/shm /tmp)
# ITERATIONS (100), PSF_SIZE (128), BOUNDARY (unset: auto), BUDGET_MB (unset: the default) and
# EXTRA (more options, e.g. --devices 2) may be set in the environment.
set -euo pipefail
B=${B:-build/cuda/app}
here=$(dirname "$0")
TIMEFORMAT="%R s"
echo -n "input made in "
psf=/tmp/psf${PSF_SIZE:-128}.fits
time python3 "$here/make_seed_stack.py" /tmp/seed.fits "$psf" --psf-size "${PSF_SIZE:-128}" >/dev/null
sync
echo "dd, page cache / flushed to disk / read back:"
dd if=/dev/zero of=/tmp/dd.bin bs=64M count=128 2>&1 | tail -1
rm -f /tmp/dd.bin
dd if=/dev/zero of=/tmp/dd.bin bs=64M count=128 conv=fdatasync 2>&1 | tail -1
rm -f /tmp/dd.bin
dd if=/tmp/seed.fits of=/dev/null bs=64M 2>&1 | tail -1
for dir in "${@:-/dev/shm /tmp}"; do
  for d in $dir; do
    echo "== output in $d"
    rm -f "$d/seed-out.fits"
    TIMEFORMAT="wall %R s"
    time "$B/stacklens-cli" deconvolve /tmp/seed.fits "$d/seed-out.fits" --mode 3d \
      --psf "$psf" --iterations "${ITERATIONS:-100}" ${BOUNDARY:+--boundary $BOUNDARY} \
      ${BUDGET_MB:+--budget-mb $BUDGET_MB} --backend cuda --timings ${EXTRA:-} 2>&1 |
      grep -v "deconvolving:"
    head -c 100000 "$d/seed-out.fits" | fold -w 80 | grep -a "^HISTORY" | tail -3
    rm -f "$d/seed-out.fits"
  done
done
# Then every GPU count this host has (2, 4: --devices N, output in memory and on the disk), and
# the Dask path where Dask and the module import.
gpus=$(nvidia-smi -L | wc -l)
for n in 2 4; do
  ((gpus >= n)) || continue
  for d in /dev/shm /tmp; do
    echo "== $n GPUs, output in $d"
    TIMEFORMAT="wall %R s"
    time "$B/stacklens-cli" deconvolve /tmp/seed.fits "$d/seed-out.fits" --mode 3d --psf "$psf" \
      --iterations "${ITERATIONS:-100}" --backend cuda --devices "$n" --timings 2>&1 |
      grep -v "deconvolving:" | tail -6
    rm -f "$d/seed-out.fits"
  done
done
if python3 -c "import dask, distributed, stacklens" 2>/dev/null; then
  B=$B "$here/seed_job_dask.sh"
else
  echo "== Dask path skipped: dask, distributed or stacklens does not import here"
fi
