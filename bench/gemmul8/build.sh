#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds gemmul8-anchor (anchor.cu in this folder) against GEMMul8 3.x, outside the project's CMake build.
#
#   bench/gemmul8/build.sh [GEMMUL8_DIR]
#
# With a GEMMul8 work tree (the argument, or $GEMMUL8_DIR): compiles the nine of its explicit-instantiation
# objects that gemmul8::gemm<float, Backend::INT8> and gemmul8::workSize need, with GEMMul8's own flags
# (make/backend.mk), into $DEPS_DIR/obj/sm_$GPU_ARCH/, copies its public headers and licence to $DEPS_DIR,
# then links the anchor. An object already there, built from the same GEMMul8 version and sources by the same
# nvcc with the same flags (recorded in a stamp file), is kept.
# Without one: links the anchor from the objects and headers already in $DEPS_DIR (a copy prebuilt elsewhere).
#
# Environment:
#   DEPS_DIR   where the objects, headers and the anchor go (default: <repository>/.device-deps/gemmul8)
#   GPU_ARCH   compute capability without the dot (default 90: H100/H200)
#   CUDA_PATH  CUDA toolkit (default /usr/local/cuda); nvcc is $CUDA_PATH/bin/nvcc unless NVCC is set
#   JOBS       parallel compiles (default: the number of cores)
#   NICE       prefix for the compiles, e.g. "nice -n 10" (default none)
#   FORCE=1    recompile every object
#   GEMMUL8_COMMIT  the commit the work tree came from, for $DEPS_DIR/SOURCE (default: git's answer, if any)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
deps=${DEPS_DIR:-$repo/.device-deps/gemmul8}
arch=${GPU_ARCH:-90}
cuda=${CUDA_PATH:-/usr/local/cuda}
nvcc=${NVCC:-$cuda/bin/nvcc}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
nice_prefix=${NICE:-}
src_dir=${1:-${GEMMUL8_DIR:-}}
obj_dir=$deps/obj/sm_$arch

fail() {
  echo "gemmul8/build.sh: $*" >&2
  exit 1
}

[[ -x $nvcc ]] || command -v "$nvcc" >/dev/null 2>&1 || fail "no nvcc at $nvcc (set CUDA_PATH or NVCC)"
[[ $arch =~ ^[0-9]+[a-z]?$ ]] || fail "GPU_ARCH=$arch is not a compute capability such as 90"

# The objects gemmul8::gemm<float, Backend::INT8> (fast and accurate scaling, full matrices, no transposes
# needed at instantiation) and gemmul8::workSize<false, Backend::INT8, Func::gemm> need, as
# "object name|recipe source|-D flags", from GEMMul8's src/**/cu_recipe/instantiations.mk. Together they
# leave no gemmul8:: symbol undefined:
#   gemm_i8_s_s_s -> mod_hi2mid_real_i8_full, accu/extract_s_i8_full_nonunit,
#                    accu/scaling_s_i8_full_nonunit_out_full, fast/scaling_s_i8_full_nonunit,
#                    undo_scaling_s_i8_full_s_s
#   accu and fast scaling -> general/scaling_rowwise_s_i8_full_nonunit_conj0
#   worksize_real_i8 (workSizeTrsm's instantiations in it) -> block_size_trsm
full='-DGEMMUL8_INST_FILLMODE=CUBLAS_FILL_MODE_FULL'
nonunit='-DGEMMUL8_INST_DIAG=CUBLAS_DIAG_NON_UNIT'
objects=(
  "gemm_i8_s_s_s|src/gemm/cu_recipe/gemm.cu|-DGEMMUL8_INST_TYPE_A=float -DGEMMUL8_INST_TYPE_B=float -DGEMMUL8_INST_TYPE_C=float -DGEMMUL8_INST_BACKEND=INT8"
  "mod_hi2mid_real_i8_full|src/oz2/mod/cu_recipe/mod_hi2mid.cu|-DGEMMUL8_INST_COMPLEX=false -DGEMMUL8_INST_BACKEND=INT8 $full"
  "accu_extract_s_i8_full_nonunit|src/oz2/scaling/accu/cu_recipe/extract.cu|-DGEMMUL8_INST_TYPE=float -DGEMMUL8_INST_BACKEND=INT8 $full $nonunit"
  "accu_scaling_s_i8_full_nonunit_out_full|src/oz2/scaling/accu/cu_recipe/scaling.cu|-DGEMMUL8_INST_TYPE=float -DGEMMUL8_INST_BACKEND=INT8 $full $nonunit -DGEMMUL8_INST_FILLMODE_C=CUBLAS_FILL_MODE_FULL"
  "fast_scaling_s_i8_full_nonunit|src/oz2/scaling/fast/cu_recipe/scaling.cu|-DGEMMUL8_INST_TYPE=float -DGEMMUL8_INST_BACKEND=INT8 $full $nonunit"
  "undo_scaling_s_i8_full_s_s|src/oz2/undo_scaling/cu_recipe/undo_scaling.cu|-DGEMMUL8_INST_TYPE=float -DGEMMUL8_INST_TYPE_ALPHA=float -DGEMMUL8_INST_TYPE_BETA=float -DGEMMUL8_INST_BACKEND=INT8 $full"
  "worksize_real_i8|src/worksize/cu_recipe/worksize.cu|-DGEMMUL8_INST_COMPLEX=0 -DGEMMUL8_INST_BACKEND=INT8"
  "general_scaling_rowwise_s_i8_full_nonunit_conj0|src/oz2/scaling/general/cu_recipe/scaling_rowwise.cu|-DGEMMUL8_INST_TYPE=float -DGEMMUL8_INST_BACKEND=INT8 $full $nonunit -DGEMMUL8_INST_CONJ=false"
  "block_size_trsm|src/trsm/cu_recipe/block_size_trsm.cu|"
)
gencode="-gencode arch=compute_$arch,code=sm_$arch"

if [[ -n $src_dir ]]; then
  [[ -d $src_dir ]] || fail "no GEMMul8 work tree at $src_dir"
  src_dir=$(cd "$src_dir" && pwd)
  [[ -f $src_dir/include/gemmul8.hpp && -f $src_dir/include/version.hpp ]] ||
    fail "$src_dir is not a GEMMul8 work tree (no include/gemmul8.hpp)"
  version=$(sed -n 's/^#define GEMMUL8_VERSION_STRING "\(.*\)"/\1/p' "$src_dir/include/version.hpp")
  [[ $version == 3.* ]] || echo "gemmul8/build.sh: warning: GEMMul8 $version; this was written for 3.x" >&2
  # GEMMul8's CUDA flags (make/backend.mk: FLAGS_PIC and ARCH), include paths made absolute.
  common_flags="-std=c++20 -O3 -diag-suppress 177 -DGPU_ARCH=$arch -Xcompiler -fPIC"
  flags="$common_flags -I$src_dir/include -I$src_dir/src"
  mkdir -p "$obj_dir" "$deps/include"
  # Every header and recipe a compile reads: a change to any of them rebuilds all nine.
  sources_hash=$(cd "$src_dir" && find include src -name '*.hpp' -o -name '*.cu' | LC_ALL=C sort |
    xargs cat | sha256sum | cut -c1-16)
  stamp="GEMMul8 $version sources $sources_hash; $("$nvcc" --version | tail -n 1); flags $common_flags $gencode"
  stamp_file=$obj_dir/STAMP
  if [[ ${FORCE:-0} == 1 || ! -f $stamp_file || $(cat "$stamp_file") != "$stamp" ]]; then
    rm -f "$obj_dir"/*.o "$stamp_file"
  fi
  echo "gemmul8/build.sh: GEMMul8 $version from $src_dir, sm_$arch, objects in $obj_dir"
  log_dir=$(mktemp -d)
  trap 'rm -rf "$log_dir"' EXIT
  running=0
  failed=0
  for entry in "${objects[@]}"; do
    IFS='|' read -r name source defines <<<"$entry"
    out=$obj_dir/$name.o
    [[ -f $out ]] && continue
    [[ -f $src_dir/$source ]] || fail "GEMMul8 has no $source"
    echo "  nvcc -c $source $defines -o ${out#"$repo"/}"
    # shellcheck disable=SC2086
    (
      start=$SECONDS
      if $nice_prefix "$nvcc" $flags $gencode $defines -c "$src_dir/$source" -o "$out.tmp" >"$log_dir/$name.log" 2>&1; then
        mv "$out.tmp" "$out"
        echo "  done $name ($((SECONDS - start)) s)"
      else
        rm -f "$out.tmp"
        echo "  FAILED $name:" >&2
        cat "$log_dir/$name.log" >&2
        exit 1
      fi
    ) &
    running=$((running + 1))
    if ((running >= jobs)); then
      wait -n || failed=1
      running=$((running - 1))
    fi
  done
  while ((running > 0)); do
    wait -n || failed=1
    running=$((running - 1))
  done
  ((failed == 0)) || fail "a GEMMul8 object did not compile (its output is above)"
  echo "$stamp" >"$stamp_file"
  rm -rf "$deps/include"
  mkdir -p "$deps/include"
  cp "$src_dir"/include/*.hpp "$deps/include/"
  cp "$src_dir/LICENSE" "$deps/LICENSE.GEMMul8"
  commit=${GEMMUL8_COMMIT:-unknown commit}
  if [[ -z ${GEMMUL8_COMMIT:-} && $(git -C "$src_dir" rev-parse --show-toplevel 2>/dev/null) == "$src_dir" ]]; then
    commit=$(git -C "$src_dir" rev-parse HEAD)
  fi
  echo "GEMMul8 $version ($commit), sources $sources_hash, from $src_dir" >"$deps/SOURCE"
else
  [[ -f $deps/include/gemmul8.hpp ]] ||
    fail "no GEMMul8 headers in $deps/include: give a GEMMul8 work tree (argument or GEMMUL8_DIR)"
fi

objs=()
for entry in "${objects[@]}"; do
  name=${entry%%|*}
  [[ -f $obj_dir/$name.o ]] ||
    fail "no $obj_dir/$name.o: give a GEMMul8 work tree (argument or GEMMUL8_DIR) to compile it"
  objs+=("$obj_dir/$name.o")
done

# The anchor: its own code, GEMMul8's public headers, fastgemm's C header for types only (the library is
# opened at run time). The shared CUDA runtime, so that fastgemm (which links it) and the anchor share one.
anchor=$deps/gemmul8-anchor
echo "  nvcc anchor.cu + ${#objs[@]} GEMMul8 objects -> ${anchor#"$repo"/}"
# shellcheck disable=SC2086
$nice_prefix "$nvcc" -std=c++20 -O3 $gencode -I"$deps/include" -I"$repo/include" -cudart shared \
  "$here/anchor.cu" "${objs[@]}" -lcublas -lcublasLt -ldl -Xlinker -rpath,"$cuda/lib64" -o "$anchor"
echo "gemmul8/build.sh: built $anchor"
