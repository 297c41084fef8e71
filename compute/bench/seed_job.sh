#!/usr/bin/env bash
# The seed job of issue 15 on one GPU, file to file: makes the input, measures the disk with dd,
# then runs the 3D deconvolution with --timings once per output folder.
#   B=build/cuda/app compute/bench/seed_job.sh [OUTPUT_FOLDER ...]   (default: /dev/shm /tmp)
# ITERATIONS (100), BOUNDARY (reflect), PSF_SIZE (128) and EXTRA (more options, e.g.
# --symmetrize-psf for reflect-exact with an even-sided PSF whose edge holds more than rounding)
# may be set in the environment.
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
      --psf "$psf" --iterations "${ITERATIONS:-100}" \
      --boundary "${BOUNDARY:-reflect}" --backend cuda --budget-mb 70000 --timings ${EXTRA:-} 2>&1 |
      grep -v "deconvolving:"
    rm -f "$d/seed-out.fits"
  done
done
