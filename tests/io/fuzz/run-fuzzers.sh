#!/usr/bin/env bash
# Builds the libFuzzer targets (clang-14, ASan + UBSan) in build/fuzz and runs each for a bounded
# time, seeded with the files in tests/io/data/fixtures and reference_agreement. Crashing inputs
# are written to build/fuzz/findings/<target>/; after fixing the bug, copy each into
# tests/io/data/corpus_regressions/ so that io_tests replays it on every CI run.
#
#   tests/io/fuzz/run-fuzzers.sh [SECONDS_PER_TARGET]   (default 60)
set -euo pipefail
cd "$(dirname "$0")/../../.."
seconds=${1:-60}
jobs=${JOBS:-2}

CC=clang-14 CXX=clang++-14 cmake -S . -B build/fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSTACKLENS_FUZZ=ON -DSTACKLENS_SANITIZE=ON -DSTACKLENS_GUI=OFF -DSTACKLENS_CUDA=OFF >/dev/null
cmake --build build/fuzz -j "$jobs" --target fits_fuzzer tiff_fuzzer

fixtures=tests/io/data/fixtures
agreement=tests/io/data/reference_agreement  # old-style JPEG, YCbCr, random groups, ...
status=0
for target in fits_fuzzer tiff_fuzzer; do
  corpus=build/fuzz/corpus/$target
  findings=build/fuzz/findings/$target
  mkdir -p "$corpus" "$findings"
  if [[ $target == fits_fuzzer ]]; then
    cp -n "$fixtures"/*.fits "$fixtures"/*.fz "$fixtures"/*.gz "$agreement"/*.fits "$corpus"/ \
      2>/dev/null || true
  else
    cp -n "$fixtures"/*.tif "$agreement"/*.tif "$corpus"/ 2>/dev/null || true
  fi
  echo "== $target for ${seconds}s"
  # -rss_limit_mb bounds what a hostile header can make the readers allocate (the harness caps
  # the readers at 512 MiB). -fork=1 with -ignore_crashes=1 keeps fuzzing after a finding, so
  # that one run lists them all.
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "build/fuzz/tests/io/$target" "$corpus" -max_total_time="$seconds" -max_len=65536 \
    -rss_limit_mb=2048 -timeout=10 -fork=1 -ignore_crashes=1 -artifact_prefix="$findings/" -print_final_stats=1 || status=1
done
ls build/fuzz/findings/*/ 2>/dev/null | grep -v '^$' || true
exit $status
