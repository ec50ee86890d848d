# SPDX-License-Identifier: Apache-2.0
# Shared by the scripts in this folder: GPU detection, the packages each script needs and their install,
# the configure step, the test count. Sourced, not run.

fastgemm_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# The Debian/Ubuntu packages the scripts install when missing: bench.sh the build's, test.sh both lists.
# The README names the same lists (a test checks it).
build_packages=(cmake ninja-build pkg-config g++)
test_packages=(catch2 gfortran python3 python3-numpy python3-pip python3-venv clang libclang-rt-dev clang-format libblas-dev libblas-test liblapack-test openmpi-bin scalapack-mpi-test)
# Those whose tests say they are skipped where the package is missing (scalapack.*): without apt-get, or where it
# cannot install them, test.sh goes on without them.
optional_packages=(openmpi-bin scalapack-mpi-test)

have_catch2() {
  local dir
  for dir in /usr/lib/cmake/Catch2 /usr/share/cmake/Catch2 /usr/local/lib/cmake/Catch2 /usr/lib/x86_64-linux-gnu/cmake/Catch2; do
    [ -f "$dir/Catch2Config.cmake" ] && return 0
  done
  return 1
}

# Whether dpkg has PACKAGE installed ("deinstall ok config-files", left by a removal, is not installed).
debian_package_installed() {
  [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]
}

# Whether what PACKAGE brings is already on the machine. A package that brings a command is judged by the
# command, however it got there; one that brings none, by dpkg, or else by the files it would bring where
# those may come another way (a Catch2 built from source, numpy from pip). A package named nowhere below
# brings no command: asking for its name as a command would find it missing forever, and call apt each run.
package_present() {
  case "$1" in
    cmake | pkg-config | gfortran | python3 | clang-format) command -v "$1" ;;
    ninja-build) command -v ninja ;;
    g++) command -v c++ ;;
    clang) command -v clang++ ;;
    catch2) debian_package_installed "$1" || have_catch2 ;;
    # Debian's packages serve the system's interpreter, whatever python3 the PATH finds first.
    python3-numpy) debian_package_installed "$1" || /usr/bin/python3 -c "import numpy" ;;
    python3-pip) debian_package_installed "$1" || /usr/bin/python3 -c "import setuptools, wheel, pip" ;;
    # libFuzzer's runtime: clang prints a bare file name when it has none.
    libclang-rt-dev)
      debian_package_installed "$1" ||
        [[ "$(clang++ -print-file-name=libclang_rt.fuzzer-x86_64.a 2>/dev/null)" == /* ]] ;;
    # The system BLAS with CBLAS's header, and netlib's test programs, where Debian puts them.
    libblas-dev) debian_package_installed "$1" || compgen -G "/usr/include/*/cblas.h" || [ -f /usr/include/cblas.h ] ;;
    libblas-test) debian_package_installed "$1" || compgen -G "/usr/lib/*/blas/xscblat3" ;;
    # OpenMPI's launcher and ScaLAPACK's testers built for it.
    openmpi-bin) debian_package_installed "$1" || command -v mpirun.openmpi ;;
    scalapack-mpi-test) debian_package_installed "$1" || compgen -G "/usr/lib/*/scalapack/openmpi-tests/xslu" ;;
    *) debian_package_installed "$1" ;;
  esac >/dev/null 2>&1
}

# The CUDA toolkit is not a distribution package: it must be there, recent enough for the default
# architectures (sm_100 and sm_120 need CUDA 12.8).
ensure_cuda_toolkit() {
  [ -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc >/dev/null && export PATH=/usr/local/cuda/bin:$PATH
  if ! command -v nvcc >/dev/null; then
    echo "fastgemm: the CUDA toolkit (nvcc, cuBLAS) is missing: install CUDA 12.8 or newer first" \
         "(https://developer.nvidia.com/cuda-downloads)." >&2
    return 1
  fi
  local version
  version=$(nvcc --version | sed -n 's/.*release \([0-9]*\.[0-9]*\).*/\1/p')
  if [ -z "${CMAKE_CUDA_ARCHITECTURES:-}" ] && ! printf '%s\n12.8\n' "$version" | sort -V -C -r; then
    echo "fastgemm: CUDA $version cannot build the default architectures (sm_100, sm_120 need 12.8):" \
         "install CUDA 12.8 or newer, or set CMAKE_CUDA_ARCHITECTURES (e.g. \"75;80;86;89;90\")." >&2
    return 1
  fi
}

# apt_install PACKAGE...: apt-get install, through sudo when not root; the package lists are updated once.
apt_updated=0
apt_install() {
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  if [ "$apt_updated" = 0 ]; then
    $sudo apt-get update -qq || return 1
    apt_updated=1
  fi
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}

# ensure_packages PACKAGE...: installs those that are missing with apt-get. Missing optional_packages are
# installed apart, and where they cannot be, their tests are skipped and say so.
ensure_packages() {
  local missing=() optional=() package
  for package in "$@"; do
    package_present "$package" && continue
    if [[ " ${optional_packages[*]} " == *" $package "* ]]; then
      optional+=("$package")
    else
      missing+=("$package")
    fi
  done
  if [ ${#missing[@]} -gt 0 ]; then
    if ! command -v apt-get >/dev/null; then
      echo "fastgemm: please install ${missing[*]} with your package manager" >&2
      return 1
    fi
    echo "fastgemm: installing ${missing[*]}" >&2
    apt_install "${missing[@]}" || return 1
  fi
  if [ ${#optional[@]} -gt 0 ]; then
    local installed=0
    if command -v apt-get >/dev/null; then
      echo "fastgemm: installing ${optional[*]}" >&2
      apt_install "${optional[@]}" && installed=1
    fi
    [ "$installed" = 1 ] ||
      echo "fastgemm: ${optional[*]} not installed (no apt-get, or it failed): the tests that need them are skipped" >&2
  fi
  local cmake_version
  cmake_version=$(cmake --version | sed -n '1s/[^0-9]*\([0-9.]*\).*/\1/p')
  if ! printf '%s\n3.24\n' "$cmake_version" | sort -V -C -r; then
    echo "fastgemm: CMake $cmake_version is older than 3.24, which fastgemm needs (pip install cmake)" >&2
    return 1
  fi
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
  cmake -S "$fastgemm_root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "${archs[@]}" "$@"
}

# count_tests JUNIT_FILE: from CTest's JUnit report, prints the names of the tests that failed, then one
# line, last: "N passed, N failed, N skipped (no GPU: N; matplotlib missing: N; ScaLAPACK missing: N)". A test
# skips for one of those reasons, which it prints; a skip that gives none counts as a failure. Returns 1 when a
# test failed.
count_tests() {
  awk '
    function verdict() {
      if (status == "run") { passed++; return }
      if (status == "notrun" && skipped && output ~ /SKIPPED: no CUDA device/) { no_gpu++; return }
      if (status == "notrun" && skipped && output ~ /matplotlib is not installed/) { no_matplotlib++; return }
      if (status == "notrun" && skipped && output ~ /SKIPPED: no ScaLAPACK/) { no_scalapack++; return }
      failed++
      if (status == "notrun" && skipped) print "failed: " name " (skipped, for no reason it names)"
      else print "failed: " name
    }
    /<testcase / {
      name = $0; sub(/.*<testcase name="/, "", name); sub(/".*/, "", name)
      status = $0; sub(/.* status="/, "", status); sub(/".*/, "", status)
      skipped = 0; output = ""; open = 1
    }
    open && /<skipped / { skipped = 1 }
    open { output = output $0 "\n" }
    open && (/<\/testcase>/ || /<testcase [^>]*\/>/) { verdict(); open = 0 }
    END {
      printf "%d passed, %d failed, %d skipped (no GPU: %d; matplotlib missing: %d; ScaLAPACK missing: %d)\n",
             passed, failed, no_gpu + no_matplotlib + no_scalapack, no_gpu, no_matplotlib, no_scalapack
      exit (failed > 0 || passed + failed + no_gpu + no_matplotlib + no_scalapack == 0)
    }' "$1"
}
