#!/usr/bin/env bash
# README command (c): builds the Debian packages stacklens, stacklens-cli, python3-stacklens and
# stacklens-data with CPack from a Release build in build/deb, checks them with lintian, and
# lists them.
# Install them with apt (see README); packaging/test-deb-clean-root.sh checks them in a clean root.
# The packages are CPU-only unless STACKLENS_CUDA=ON is given: Debian 12 has no CUDA 12.4 or
# newer. A CUDA build loads the driver and NVIDIA's cuFFT only when it runs, so its packages
# install where neither is present and compute on the CPU there.
# JOBS sets the build's parallelism (default: every core).
set -euo pipefail
cd "$(dirname "$0")/.."

packaging/install-deps.sh

# Packaging tools, not needed to build or test StackLens: dpkg-shlibdeps finds the shared-library
# dependencies, help2man writes the man pages, lintian checks the result.
declare -A tools=([dpkg-shlibdeps]=dpkg-dev [help2man]=help2man [lintian]=lintian)
missing=()
for tool in "${!tools[@]}"; do
  command -v "$tool" >/dev/null || missing+=("${tools[$tool]}")
done
if ((${#missing[@]})); then
  if [[ $(id -u) != 0 ]]; then
    echo "make-deb: missing packages: ${missing[*]}; run as root (or with sudo)" >&2
    exit 1
  fi
  echo "make-deb: installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Dates inside the packages (man pages, changelog) are the commit's, so that the same commit
# gives the same files.
SOURCE_DATE_EPOCH=$(git log -1 --format=%ct 2>/dev/null || date +%s)
export SOURCE_DATE_EPOCH

# Debian's hardening flags (dpkg-buildflags with hardening=+all), on top of Release's -O3.
hardening="-D_FORTIFY_SOURCE=2 -fstack-protector-strong -fstack-clash-protection -fcf-protection"
hardening+=" -Wformat -Werror=format-security"
link="-Wl,-z,relro -Wl,-z,now"
build=build/deb
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
  -DSTACKLENS_CUDA="${STACKLENS_CUDA:-OFF}" -DSTACKLENS_GUI=ON -DSTACKLENS_PYTHON=ON \
  -DSTACKLENS_TESTS=OFF -DCMAKE_C_FLAGS="$hardening" -DCMAKE_CXX_FLAGS="$hardening" \
  -DCMAKE_EXE_LINKER_FLAGS="$link" -DCMAKE_SHARED_LINKER_FLAGS="$link" \
  -DCMAKE_MODULE_LINKER_FLAGS="$link" -DCMAKE_STRIP="$PWD/packaging/deb/strip.sh"
cmake --build "$build" -j "${JOBS:-$(nproc)}"

rm -rf "$build/packages"
(cd "$build" && cpack -G DEB -B "$PWD/packages")
debs=("$build"/packages/*.deb)

# Tags that remain are explained in the packages' own lintian overrides (packaging/lintian/).
echo "== lintian"
lintian --display-info --pedantic --fail-on error "${debs[@]}"
echo "== packages"
ls -l "${debs[@]}"
