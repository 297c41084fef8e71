#!/usr/bin/env bash
# README command (b): install what is missing, build everything, run the whole test suite.
# Two builds: Release (GUI, CUDA when the toolkit is present) and ASan+UBSan (io + compute + CLI),
# then every fuzzer for 25 s, two at a time (clang-14, build/fuzz).
# Under CI (CI=true) warnings are errors.
set -euo pipefail
cd "$(dirname "$0")/.."

"$(dirname "$0")/install-deps.sh"

jobs=$(nproc)
werror=OFF
[[ "${CI:-}" == true ]] && werror=ON

echo "== Release build (build/release)"
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTACKLENS_WERROR=$werror
cmake --build build/release -j "$jobs"
echo "== Release tests (GUI tests under xvfb-run)"
xvfb-run -a -s "-screen 0 1280x1024x24" \
  ctest --test-dir build/release --output-on-failure -j "$jobs" --timeout 900

echo "== Sanitizer build (build/asan: ASan + UBSan, CPU only, no GUI)"
cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTACKLENS_SANITIZE=ON \
  -DSTACKLENS_CUDA=OFF -DSTACKLENS_GUI=OFF -DSTACKLENS_WERROR=$werror
cmake --build build/asan -j "$jobs"
echo "== Sanitizer tests"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build/asan --output-on-failure -j "$jobs" --timeout 900 -LE slow
# 25 s per target, two at a time: the six targets and the build of the four new ones fit in the
# time that the FITS and TIFF fuzzers alone took before (io/FUZZING.md gives the figures).
echo "== Fuzzing (25 s per parser: a crash on a damaged file is caught here)"
tests/io/fuzz/run-fuzzers.sh 25
