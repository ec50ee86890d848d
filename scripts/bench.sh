#!/usr/bin/env bash
# Installs what is missing, builds fastgemm and runs fastgemm-bench (SGEMM and rowmean_matvec beside
# cuBLAS) on this machine's GPU. Arguments go to `fastgemm-bench sgemm`. Without a GPU it says so and
# exits nonzero.
set -euo pipefail
source "$(dirname "$0")/common.sh"
ensure_dependencies
build_dir=${FASTGEMM_BUILD_DIR:-$fastgemm_root/build/release}
configure "$build_dir" -DFASTGEMM_BUILD_TESTS=OFF
cmake --build "$build_dir"
bench="$build_dir/bench/fastgemm-bench"
"$bench" sgemm "$@"
"$bench" rowmean
