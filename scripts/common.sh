# Shared by the scripts in this folder: dependency check and install, GPU detection, the configure step.
# Sourced, not run.

fastgemm_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

have_catch2() {
  local dir
  for dir in /usr/lib/cmake/Catch2 /usr/share/cmake/Catch2 /usr/local/lib/cmake/Catch2 /usr/lib/x86_64-linux-gnu/cmake/Catch2; do
    [ -f "$dir/Catch2Config.cmake" ] && return 0
  done
  return 1
}

# Installs what the build and the tests need and the machine lacks, through the OS package manager.
ensure_dependencies() {
  local missing=()
  command -v cmake >/dev/null || missing+=(cmake)
  command -v ninja >/dev/null || missing+=(ninja-build)
  command -v pkg-config >/dev/null || missing+=(pkg-config)
  command -v c++ >/dev/null || missing+=(g++)
  have_catch2 || missing+=(catch2)
  command -v clang++ >/dev/null || missing+=(clang)
  # libFuzzer's runtime: clang prints a bare file name when it has none.
  case "$(clang++ -print-file-name=libclang_rt.fuzzer-x86_64.a 2>/dev/null)" in
    /*) ;;
    *) missing+=(libclang-rt-dev) ;;
  esac
  if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
    echo "fastgemm: the CUDA toolkit (nvcc, cuBLAS) is missing; install CUDA 12.4 or newer first." >&2
    return 1
  fi
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "fastgemm: installing ${missing[*]}" >&2
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  if ! command -v apt-get >/dev/null; then
    echo "fastgemm: please install ${missing[*]} with your package manager" >&2
    return 1
  fi
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

gpu_present() {
  command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU'
}

# configure BUILD_DIR [extra cmake arguments]: architectures follow CMAKE_CUDA_ARCHITECTURES from the
# environment, else the local GPU's, else the project's default list.
configure() {
  local build_dir=$1
  shift
  local archs=()
  if [ -n "${CMAKE_CUDA_ARCHITECTURES:-}" ]; then
    archs=("-DCMAKE_CUDA_ARCHITECTURES=$CMAKE_CUDA_ARCHITECTURES")
  elif gpu_present; then
    archs=(-DCMAKE_CUDA_ARCHITECTURES=native)
  fi
  [ -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc >/dev/null && export PATH=/usr/local/cuda/bin:$PATH
  cmake -S "$fastgemm_root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "${archs[@]}" "$@"
}
