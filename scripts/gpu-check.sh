#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The whole check on a GPU machine, in one go: build for the local GPU, run every test (GPU ones included),
# run the GPU tests under compute-sanitizer, and run fastgemm-bench beside cuBLAS. Logs go to LOG_DIR
# (first argument, default build/gpu-check-logs); a summary table is printed last.
#   FASTGEMM_SANITIZER_TOOLS  sanitizer tools to run (default "memcheck initcheck racecheck synccheck")
#   FASTGEMM_BENCH_ARGS       arguments of `fastgemm-bench sgemm` (default: the default sweep)
#   FASTGEMM_CUBLAS_BENCH_ARGS  arguments of bench/cublas_interposer.py (default: its default sweep)
#   FASTGEMM_SKIP_BENCH=1     stop after the sanitizers
#   FASTGEMM_CTEST_ARGS       arguments that select the tests ctest runs (default all; e.g. "-R cublas" or
#                             "-E gpu.huge|gpu.emulated", so that the suite can run in parts)
#   FASTGEMM_SANITIZER_TOOLS="" and FASTGEMM_SKIP_BENCH=1 run the tests alone
set -uo pipefail
source "$(dirname "$0")/common.sh"
log_dir=${1:-$fastgemm_root/build/gpu-check-logs}
mkdir -p "$log_dir"
build_dir=${FASTGEMM_BUILD_DIR:-$fastgemm_root/build/gpu-check}
summary=()
step() {  # step NAME COMMAND...: runs the command with its output in LOG_DIR/NAME.log, records the result
  local name=$1
  shift
  local start=$SECONDS
  "$@" >"$log_dir/$name.log" 2>&1
  local rc=$?
  summary+=("$(printf '%-28s %-6s %5ss' "$name" "$([ $rc -eq 0 ] && echo ok || echo FAIL:$rc)" $((SECONDS - start)))")
  tail -n 5 "$log_dir/$name.log"
  return $rc
}

if ! gpu_present; then
  echo "gpu-check: no GPU on this machine (nvidia-smi lists none)" >&2
  exit 3
fi
nvidia-smi -L | tee "$log_dir/device.txt"
step configure configure "$build_dir" -DFASTGEMM_BUILD_TESTS=ON -DCMAKE_CUDA_FLAGS="-Xptxas -v" || exit 1
step build cmake --build "$build_dir" || exit 1
grep -E "registers|spill" "$log_dir/build.log" | sort | uniq -c | sort -rn | head -40 >"$log_dir/ptxas.txt"
# shellcheck disable=SC2086  # the selection is words
step ctest ctest --test-dir "$build_dir" --output-on-failure ${FASTGEMM_CTEST_ARGS:-}
for tool in ${FASTGEMM_SANITIZER_TOOLS-memcheck initcheck racecheck synccheck}; do
  # racecheck and synccheck look at shared memory and barriers: the kernels that have them are the tiled
  # ones, and small shapes exercise every edge path of theirs.
  filter="[sgemm]~[large],[rowmean]~[grid]~[classes]"
  # memcheck and initcheck cover everything but the tests that fill device memory on purpose.
  case "$tool" in memcheck | initcheck) filter="~[huge]~[pressure]~[fault]~[tall]" ;; esac
  # Some tests provoke CUDA errors on purpose (a failed cudaMalloc left pending, which the library must leave
  # as it was) and check them themselves: the sanitizers judge memory accesses and barriers, not API errors.
  step "sanitizer-$tool" compute-sanitizer --tool "$tool" --error-exitcode 1 --print-limit 20 --report-api-errors no \
    "$build_dir/tests/test_gpu" $filter
  # The internal kernels' own test (the emulated mode's INT8 product on Hopper).
  step "sanitizer-$tool-internal" compute-sanitizer --tool "$tool" --error-exitcode 1 --print-limit 20 \
    --report-api-errors no "$build_dir/tests/test_gpu_internal"
done
if [ "${FASTGEMM_SKIP_BENCH:-0}" != 1 ] && [ -x "$build_dir/bench/fastgemm-bench" ]; then
  step bench-sgemm "$build_dir/bench/fastgemm-bench" sgemm ${FASTGEMM_BENCH_ARGS:-} --csv "$log_dir/sgemm.csv" --json "$log_dir/sgemm.json"
  step bench-rowmean "$build_dir/bench/fastgemm-bench" rowmean --csv "$log_dir/rowmean.csv" --json "$log_dir/rowmean.json"
  # The same PyTorch and CuPy programs with and without libfastgemm_cublas.so preloaded (where python3 has them).
  if python3 -c "import torch" 2>/dev/null || python3 -c "import cupy" 2>/dev/null; then
    step bench-cublas python3 "$fastgemm_root/bench/cublas_interposer.py" --preload "$build_dir/libfastgemm_cublas.so" \
      ${FASTGEMM_CUBLAS_BENCH_ARGS:-} --csv "$log_dir/cublas.csv"
  fi
fi
echo
echo "== gpu-check summary ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)) =="
printf '%s\n' "${summary[@]}"
grep -hE "^(test cases|All tests|=+ ERROR SUMMARY)" "$log_dir"/*.log | sort | uniq -c
grep -h "tests passed" "$log_dir/ctest.log"
