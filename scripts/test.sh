#!/usr/bin/env bash
# Builds fastgemm with its tests and runs every test. Without a GPU the GPU tests report "skipped".
set -euo pipefail
source "$(dirname "$0")/common.sh"
ensure_dependencies
build_dir=${FASTGEMM_BUILD_DIR:-$fastgemm_root/build/test}
configure "$build_dir" -DFASTGEMM_BUILD_TESTS=ON
cmake --build "$build_dir"
ctest --test-dir "$build_dir" --output-on-failure
