#!/usr/bin/env bash
# Installs StackLens's build, run and test dependencies from Debian 12's archive.
# Idempotent: when every package is already present it returns at once.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  qt6-base-dev libqt6opengl6-dev libgl-dev qt6-charts-dev
  libcfitsio-dev libtiff-dev wcslib-dev libfftw3-dev libexpat1-dev
  libgtest-dev libegl-dev libopengl-dev
  nlohmann-json3-dev libblosc-dev libzstd-dev zlib1g-dev libcurl4-openssl-dev
  xvfb xauth libgl1-mesa-dri
  clang-14 libclang-rt-14-dev
  python3-dev pybind11-dev python3-numpy python3-dask python3-distributed python3-zarr
  python3-pytest python3-jsonschema
  libavcodec-dev libavformat-dev libavutil-dev libswscale-dev
  librsvg2-dev
)
# qt6-charts-dev draws the speedup lab's figures (Tools ▸ Speedup lab…).
# clang-14 and its runtime build the FITS and TIFF fuzzers, which the test command runs briefly.
# The Python module (pybind11) and stacklens.dask, with their tests: Debian's NumPy, Dask,
# dask.distributed and Zarr. FFmpeg's libraries write movies (H.264 through libx264).
# librsvg draws the lab's SVG figure as PNG for `stacklens-cli lab --plot OUT.png`.
# Zarr/OME-Zarr in io/: nlohmann-json reads the metadata; blosc, zstd and zlib decode chunks;
# libcurl reads them over HTTP(S). python3-jsonschema checks the OME-Zarr we write against the
# official schemas (tests/io/data/ome_ngff_schemas).
# Optional extras (reference-data generation) are installed only when asked for, so the common
# path stays small.
if [[ "${STACKLENS_DEV_EXTRAS:-0}" == 1 ]]; then
  packages+=(python3-numpy python3-scipy
             python3-skimage python3-astropy python3-tifffile imagemagick)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi

if [[ $(id -u) != 0 ]]; then
  echo "install-deps: missing packages: ${missing[*]}; run as root (or with sudo)" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
