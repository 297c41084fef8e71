#!/usr/bin/env bash
# README command (b): install what is missing, build everything, run the whole test suite.
# Two builds: Release (GUI, CUDA when the toolkit is present) and ASan+UBSan (clang-14: io +
# compute + CLI, and the fuzzers), then every fuzzer for 15 s, two at a time.
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
# The sanitizer build is clang's: it compiles this code in about half of GCC's time, and the same
# build then holds the libFuzzer targets (STACKLENS_FUZZ=ON), so the fuzzing stage builds nothing
# of its own. -O1 with line tables only, as OSS-Fuzz builds: what ASan's reports need (file and
# line of each frame), at less than half the compile time of -O2 -g; the test programs' own code
# at -O0.
sanitizer_build() {
  CC=clang-14 CXX=clang++-14 cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
    -DSTACKLENS_TEST_OPTIMIZATION=-O0 -DSTACKLENS_SANITIZE=ON -DSTACKLENS_FUZZ=ON \
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
stage "Sanitizer build (build/asan: clang, ASan + UBSan, CPU only, no GUI, fuzzers)" \
  sanitizer_build && {
  stage "Sanitizer tests" sanitizer_tests
  # Eight fuzzers of 15 s, two at a time (about 60 s): a crash on a damaged file is caught here;
  # the long runs that find what 15 s does not are in io/FUZZING.md.
  stage "Fuzzing (15 s per parser)" env FUZZ_BUILD=build/asan tests/io/fuzz/run-fuzzers.sh 15
}

if ((${#failed[@]})); then
  printf 'build-and-test: FAILED: %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "build-and-test: every stage passed"
