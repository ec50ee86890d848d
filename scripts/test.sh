#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what the build and the tests need and the machine lacks, builds fastgemm with its tests and
# runs every test. Without a GPU the GPU tests are skipped. The last line is the count:
#   N passed, N failed, N skipped (no GPU: N; matplotlib missing: N; ScaLAPACK missing: N)
# and the exit status is nonzero when a test failed.
set -euo pipefail
source "$(dirname "$0")/common.sh"
ensure_cuda_toolkit
ensure_packages "${build_packages[@]}" "${test_packages[@]}"
build_dir=${FASTGEMM_BUILD_DIR:-$fastgemm_root/build/script-test}
configure "$build_dir" -DFASTGEMM_BUILD_TESTS=ON
cmake --build "$build_dir"
results="$build_dir/test-results.xml"
rm -f "$results"
ctest_status=0
ctest --test-dir "$build_dir" --output-on-failure --output-junit "$results" || ctest_status=$?
if [ ! -f "$results" ]; then
  echo "scripts/test.sh: CTest wrote no results (exit status $ctest_status)" >&2
  exit 1
fi
count_tests "$results" && exit "$ctest_status"
