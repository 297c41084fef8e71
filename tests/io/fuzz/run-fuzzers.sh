#!/usr/bin/env bash
# Builds the libFuzzer targets (clang-14, ASan + UBSan) in build/fuzz and runs each for a bounded
# time, JOBS targets at a time (default 2), each seeded with its corpus below and with the kept
# regressions of its kind. Crashing inputs are written to build/fuzz/findings/<target>/; after
# fixing the bug, copy each into tests/io/data/corpus_regressions/ (named <target>_<what>, see
# corpus_regressions_test.cpp) so that io_tests replays it on every CI run.
#
#   tests/io/fuzz/run-fuzzers.sh [SECONDS_PER_TARGET [TARGET...]]   (default 60, every target)
#
# FUZZ_BUILD names a build folder that already has the targets (configured by clang with
# STACKLENS_FUZZ=ON and STACKLENS_SANITIZE=ON, as the test command's sanitizer build is); then it
# is used as it is, and its findings, logs and corpora go under it.
#
# Targets: fits_fuzzer, tiff_fuzzer, zarr_fuzzer (stacks), http_fuzzer (a Zarr store's HTTP
# answers), catalog_fuzzer (CSV, IPAC, VOTable, FITS tables),
# regions_fuzzer (DS9 regions), pipeline_fuzzer (`process` options), session_fuzzer (viewer
# sessions; built when Qt 6 is installed).
set -euo pipefail
cd "$(dirname "$0")/../../.."
seconds=${1:-60}
shift || true
jobs=${JOBS:-2}

build=${FUZZ_BUILD:-build/fuzz}
if [[ -z ${FUZZ_BUILD:-} ]]; then
  # -O1 with line tables only, as OSS-Fuzz builds: fast enough to fuzz, and a crash names file
  # and line, at a fraction of -O2 -g's compile time.
  CC=clang-14 CXX=clang++-14 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" -DSTACKLENS_FUZZ=ON \
    -DSTACKLENS_SANITIZE=ON -DSTACKLENS_GUI=OFF -DSTACKLENS_CUDA=OFF >/dev/null
fi
targets=("$@")
if ((${#targets[@]} == 0)); then
  targets=(fits_fuzzer tiff_fuzzer zarr_fuzzer http_fuzzer catalog_fuzzer regions_fuzzer
    pipeline_fuzzer)
  # session_fuzzer exists only where CMake found Qt 6.
  # (The list is read whole first: grep -q would close the pipe early, and with pipefail the
  # writer's SIGPIPE would make the test false.)
  if grep -q '^session_fuzzer:' <<<"$(ninja -C "$build" -t targets all 2>/dev/null)"; then
    targets+=(session_fuzzer)
  fi
fi
cmake --build "$build" -j "$jobs" --target "${targets[@]}"

fixtures=tests/io/data/fixtures
agreement=tests/io/data/reference_agreement  # old-style JPEG, YCbCr, random groups, ...
seeds=tests/io/fuzz/seeds
kept=tests/io/data/corpus_regressions

# Copies target's seeds into its corpus folder (kept inputs of its kind included).
seed() {
  local target=$1 corpus=$2
  case $target in
    fits_fuzzer) cp -n "$fixtures"/*.fits "$fixtures"/*.fz "$fixtures"/*.gz "$agreement"/*.fits \
      "$kept"/fits_* "$kept"/hostile_fits* "$kept"/handmade_* "$corpus"/ ;;
    tiff_fuzzer) cp -n "$fixtures"/*.tif "$agreement"/*.tif "$kept"/*.tif "$corpus"/ ;;
    zarr_fuzzer) cp -n "$seeds"/zarr/* "$kept"/zarr_* "$corpus"/ ;;
    http_fuzzer) cp -n "$seeds"/http/* "$kept"/http_* "$corpus"/ ;;
    catalog_fuzzer) cp -n "$seeds"/catalog/* "$kept"/catalog_* "$corpus"/ ;;
    regions_fuzzer) cp -n tests/io/data/regions/*.reg "$kept"/regions_* "$corpus"/ ;;
    pipeline_fuzzer) cp -n "$seeds"/pipeline/* "$kept"/pipeline_* "$corpus"/ ;;
    session_fuzzer) cp -n "$seeds"/session/* "$kept"/session_* "$corpus"/ ;;
  esac 2>/dev/null || true
}

# Runs one target for $seconds; its output goes to build/fuzz/logs/<target>.log.
run() {
  local target=$1
  local corpus=$build/corpus/$target findings=$build/findings/$target
  mkdir -p "$corpus" "$findings" "$build/logs"
  seed "$target" "$corpus"
  # -rss_limit_mb bounds what a hostile input can make the parsers allocate (the harnesses cap
  # the readers at 512 MiB). -fork=1 with -ignore_crashes=1 keeps fuzzing after a finding, so
  # that one run lists them all.
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$build/tests/io/$target" "$corpus" -max_total_time="$seconds" -max_len=65536 \
    -rss_limit_mb=2048 -timeout=10 -fork=1 -ignore_crashes=1 -artifact_prefix="$findings/" \
    -print_final_stats=1 >"$build/logs/$target.log" 2>&1
}

# The last progress line of target's log (inputs run, coverage, oom/timeout/crash counts).
summary() { grep -E '^#[0-9]+|^INFO: exiting|ERROR' "$build/logs/$1.log" | tail -n 2 || true; }

status=0
pids=()
names=()
for target in "${targets[@]}"; do
  echo "== $target for ${seconds}s"
  run "$target" &
  pids+=($!)
  names+=("$target")
  # JOBS at a time: wait for the oldest before starting another.
  if ((${#pids[@]} >= jobs)); then
    wait "${pids[0]}" || { echo "!! ${names[0]} failed"; status=1; }
    summary "${names[0]}"
    pids=("${pids[@]:1}")
    names=("${names[@]:1}")
  fi
done
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || { echo "!! ${names[$i]} failed"; status=1; }
  summary "${names[$i]}"
done
ls "$build"/findings/*/ 2>/dev/null | grep -v '^$' || true
# Each finding into the log as well, compressed (a CI machine keeps its log, not its files):
# base64 -d | gunzip > crash gives the input back.
for finding in "$build"/findings/*/*; do
  [[ -f $finding ]] || continue
  echo "== $finding, gzip | base64:"
  gzip -9 -c "$finding" | base64 -w 0
  echo
done
exit $status
