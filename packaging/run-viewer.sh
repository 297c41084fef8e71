#!/usr/bin/env bash
# README command (a): install what is missing, build Release, start the viewer on the bundled
# sample (or on the files given as arguments).
set -euo pipefail
cd "$(dirname "$0")/.."
"$(dirname "$0")/install-deps.sh"
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build/release -j "$(nproc)" --target stacklens
exec build/release/app/stacklens "$@"
