#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what the build needs and the machine lacks, builds fastgemm for this machine's GPU and runs
# fastgemm-bench (SGEMM and rowmean_matvec beside cuBLAS). Arguments go to `fastgemm-bench sgemm`.
# Without a GPU it says so first and exits 3, as fastgemm-bench does, having built nothing.
set -euo pipefail
source "$(dirname "$0")/common.sh"
if ! gpu_present; then
  echo "fastgemm: no NVIDIA driver/GPU found (nvidia-smi lists no GPU): the benchmark needs one." \
       "scripts/test.sh builds and tests fastgemm without a GPU." >&2
  exit 3
fi
ensure_cuda_toolkit
ensure_packages "${build_packages[@]}"
# A directory of its own: the presets' build/release is built for the default architectures, this one
# for the local GPU only.
build_dir=${FASTGEMM_BUILD_DIR:-$fastgemm_root/build/script-bench}
configure "$build_dir" -DFASTGEMM_BUILD_TESTS=OFF -DFASTGEMM_BUILD_SAMPLES=OFF
cmake --build "$build_dir"
bench="$build_dir/bench/fastgemm-bench"
"$bench" sgemm "$@"
"$bench" rowmean
