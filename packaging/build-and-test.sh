#!/usr/bin/env bash
# README command (b): install what is missing, build everything, run the whole test suite.
# Two builds: Release (GUI, CUDA when the toolkit is present) and ASan+UBSan (io + compute + CLI),
# then every fuzzer for 25 s, two at a time (clang-14, build/fuzz).
# Every stage runs even when one before it failed, so that one failure hides none of the others;
# the script fails at the end, naming the stages that failed.
# Under CI (CI=true) warnings are errors.
set -uo pipefail
cd "$(dirname "$0")/.."

"$(dirname "$0")/install-deps.sh" || exit 1

jobs=$(nproc)
werror=OFF
[[ "${CI:-}" == true ]] && werror=ON
failed=()

# stage NAME COMMAND...: runs one stage, remembering its failure.
stage() {
  local name=$1
  shift
  echo "== $name"
  if ! "$@"; then
    echo "== $name: FAILED"
    failed+=("$name")
    return 1
  fi
}

# The tests' CUDA code: machine code for the GPU that will run it, or, with no GPU to run it,
# PTX for one architecture, which compiles every kernel (the check that matters here) in less
# than half the time of the packaged list (CMakeLists.txt). A CMAKE_CUDA_ARCHITECTURES in the
# environment wins.
cuda_architectures() {
  if [[ -n "${CMAKE_CUDA_ARCHITECTURES:-}" ]]; then
    echo "$CMAKE_CUDA_ARCHITECTURES"
  elif nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    echo native
  else
    echo 90-virtual
  fi
}
release_build() {
  cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTACKLENS_WERROR=$werror \
    -DCMAKE_CUDA_ARCHITECTURES="$(cuda_architectures)" &&
    cmake --build build/release -j "$jobs"
}
release_tests() {
  xvfb-run -a -s "-screen 0 1280x1024x24" \
    ctest --test-dir build/release --output-on-failure -j "$jobs" --timeout 900
}
# -O1 with line tables only: what ASan's reports need (file and line of each frame), at less
# than half the compile time of -O2 -g.
sanitizer_build() {
  cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTACKLENS_SANITIZE=ON \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
    -DSTACKLENS_CUDA=OFF -DSTACKLENS_GUI=OFF -DSTACKLENS_WERROR=$werror &&
    cmake --build build/asan -j "$jobs"
}
sanitizer_tests() {
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    LSAN_OPTIONS="suppressions=$PWD/tests/lsan_suppressions.txt" \
    ctest --test-dir build/asan --output-on-failure -j "$jobs" --timeout 900 -LE slow
}

stage "Release build (build/release)" release_build &&
  stage "Release tests (GUI tests under xvfb-run)" release_tests
stage "Sanitizer build (build/asan: ASan + UBSan, CPU only, no GUI)" sanitizer_build &&
  stage "Sanitizer tests" sanitizer_tests
# Six fuzzers of 25 s, two at a time (75 s), and the four added to the build (about 45 s on two
# cores) take the 120 s that two fuzzers of 60 s, one at a time, took before: a crash on a
# damaged file is caught here. zarr_fuzzer (issue 41) makes seven: about 100 s of fuzzing.
stage "Fuzzing (25 s per parser)" tests/io/fuzz/run-fuzzers.sh 25

if ((${#failed[@]})); then
  printf 'build-and-test: FAILED: %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "build-and-test: every stage passed"
