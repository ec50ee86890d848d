// SPDX-License-Identifier: Apache-2.0
#include "error_measures.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "gpu.hpp"
#include "launch.cuh"

namespace bench {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

__global__ void widen_kernel(const float *in, double *out, int64_t count, bool absolute) {
  for (int64_t i = first_index(); i < count; i += grid_stride()) {
    const double value = in[i];
    out[i] = absolute ? fabs(value) : value;
  }
}

// Non-negative doubles (and +Inf) order as their bit patterns do, so atomicMax on the bits keeps the largest.
__device__ void atomic_max_nonnegative(unsigned long long *largest, double value) {
  atomicMax(largest, static_cast<unsigned long long>(__double_as_longlong(value)));
}

__global__ void largest_error_kernel(const float *result, const float *reference, const double *absolute, int64_t count,
                                     unsigned long long *largest, unsigned int *unmatched) {
  double local = 0;
  bool mismatch = false;
  for (int64_t i = first_index(); i < count; i += grid_stride()) {
    const float got = result[i], want = reference[i];
    if (__float_as_uint(got) == __float_as_uint(want) || (isnan(got) && isnan(want))) continue;
    if (!isfinite(got) || !isfinite(want)) {
      mismatch = true;
      continue;
    }
    const double difference = fabs(static_cast<double>(got) - static_cast<double>(want));
    local = fmax(local, absolute[i] > 0 ? difference / absolute[i] : kInfinity);
  }
  atomic_max_nonnegative(largest, local);
  if (mismatch) atomicOr(unmatched, 1u);
}

// Each warp writes its two sums to its own slots of `sums` (squared errors, then squared exact values, warp by
// warp): the host adds them in a fixed order, so that the normwise error is the same, bit for bit, on the same
// data. (Atomic additions would sum in the order the warps finish, and two equal results could then compare
// as unequal.)
__global__ void error_measures_kernel(const float *result, const double *exact, const double *absolute, int64_t count,
                                      double *elementwise, double *sums, unsigned long long *nonfinite) {
  double squared_error = 0, squared_exact = 0;
  unsigned long long local_nonfinite = 0;
  for (int64_t i = first_index(); i < count; i += grid_stride()) {
    const float got = result[i];
    const double difference = static_cast<double>(got) - exact[i];
    squared_error += difference * difference;
    squared_exact += exact[i] * exact[i];
    if (!isfinite(got)) {
      ++local_nonfinite;
      elementwise[i] = kInfinity;
    } else if (absolute[i] > 0) {
      elementwise[i] = fabs(difference) / absolute[i];
    } else {
      elementwise[i] = difference == 0 ? 0.0 : kInfinity;
    }
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    squared_error += __shfl_down_sync(0xFFFFFFFFu, squared_error, offset);
    squared_exact += __shfl_down_sync(0xFFFFFFFFu, squared_exact, offset);
    local_nonfinite += __shfl_down_sync(0xFFFFFFFFu, local_nonfinite, offset);
  }
  if (threadIdx.x % 32 == 0) {
    const int64_t warp = first_index() / 32;
    sums[2 * warp] = squared_error;
    sums[2 * warp + 1] = squared_exact;
    atomicAdd(nonfinite, local_nonfinite);
  }
}

// Nonzeros of each of `lines` lines of `length` elements, element l of line i at data[i * line_step + l * step].
__global__ void line_nonzeros_kernel(const float *data, int64_t lines, int64_t length, int64_t line_step, int64_t step,
                                     int *nonzeros) {
  for (int64_t i = first_index(); i < lines; i += grid_stride()) {
    int count = 0;
    for (int64_t l = 0; l < length; ++l) count += data[i * line_step + l * step] != 0.0f;
    nonzeros[i] = count;
  }
}

__global__ void certificate_counts_kernel(const float *result, const double *exact, const double *absolute, int64_t m,
                                          int64_t n, int64_t k, const int *row_nonzeros, const int *col_nonzeros,
                                          bool integer_valued, unsigned long long *counts) {
  unsigned long long uncertified = 0, inexact = 0;
  for (int64_t i = first_index(); i < m * n; i += grid_stride()) {
    const int64_t terms = max(int64_t{1}, min(k, static_cast<int64_t>(min(row_nonzeros[i / n], col_nonzeros[i % n]))));
    const double bound_factor =
        0x1p-24 * (1.0 + sqrt(static_cast<double>(terms))) + 2.0 * static_cast<double>(k) * 0x1p-53;
    const float got = result[i];
    // Written so that a NaN difference counts as uncertified.
    if (!(fabs(static_cast<double>(got) - exact[i]) <= bound_factor * absolute[i])) ++uncertified;
    if (integer_valued && absolute[i] < 0x1p24 && static_cast<double>(got) != exact[i]) ++inexact;
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    uncertified += __shfl_down_sync(0xFFFFFFFFu, uncertified, offset);
    inexact += __shfl_down_sync(0xFFFFFFFFu, inexact, offset);
  }
  if (threadIdx.x % 32 == 0) {
    atomicAdd(&counts[0], uncertified);
    atomicAdd(&counts[1], inexact);
  }
}

}  // namespace

void widen(const float *in, double *out, int64_t count, bool absolute) {
  launch("widen_kernel", widen_kernel, blocks_for(count), in, out, count, absolute);
}

double largest_error_over_absolute(const float *result, const float *reference, const double *absolute, int64_t count) {
  DeviceBuffer scratch(sizeof(unsigned long long) + sizeof(unsigned int));
  check_cuda(cudaMemsetAsync(scratch.get(), 0, scratch.bytes(), 0), "cudaMemsetAsync");
  auto *largest = scratch.as<unsigned long long>();
  auto *unmatched = reinterpret_cast<unsigned int *>(largest + 1);
  launch("largest_error_kernel", largest_error_kernel, blocks_for(count), result, reference, absolute, count, largest,
         unmatched);
  unsigned long long bits = 0;
  unsigned int mismatch = 0;
  check_cuda(cudaMemcpy(&bits, largest, sizeof(bits), cudaMemcpyDeviceToHost), "cudaMemcpy");
  check_cuda(cudaMemcpy(&mismatch, unmatched, sizeof(mismatch), cudaMemcpyDeviceToHost), "cudaMemcpy");
  if (mismatch != 0) return std::numeric_limits<double>::quiet_NaN();
  double value = 0;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

CertificateCounts certificate_counts(const float *result, const double *exact, const double *absolute, const float *a,
                                     const float *b, int64_t m, int64_t n, int64_t k, bool integer_valued) {
  DeviceBuffer nonzeros(static_cast<size_t>(m + n) * sizeof(int));
  int *row_nonzeros = nonzeros.as<int>(), *col_nonzeros = row_nonzeros + m;
  launch("line_nonzeros_kernel", line_nonzeros_kernel, blocks_for(m), a, m, k, k, int64_t{1}, row_nonzeros);
  launch("line_nonzeros_kernel", line_nonzeros_kernel, blocks_for(n), b, n, k, int64_t{1}, n, col_nonzeros);
  DeviceBuffer scratch(2 * sizeof(unsigned long long));
  check_cuda(cudaMemsetAsync(scratch.get(), 0, scratch.bytes(), 0), "cudaMemsetAsync");
  launch("certificate_counts_kernel", certificate_counts_kernel, blocks_for(m * n), result, exact, absolute, m, n, k,
         static_cast<const int *>(row_nonzeros), static_cast<const int *>(col_nonzeros), integer_valued,
         scratch.as<unsigned long long>());
  unsigned long long counts[2] = {0, 0};
  check_cuda(cudaMemcpy(counts, scratch.get(), sizeof(counts), cudaMemcpyDeviceToHost), "cudaMemcpy");
  CertificateCounts result_counts;
  result_counts.uncertified = static_cast<int64_t>(counts[0]);
  result_counts.inexact = static_cast<int64_t>(counts[1]);
  return result_counts;
}

ErrorMeasures measure_errors(const float *result, const double *exact, const double *absolute, int64_t count) {
  const unsigned int blocks = blocks_for(count);
  const size_t warps = static_cast<size_t>(blocks) * kThreads / 32;
  DeviceBuffer elementwise(static_cast<size_t>(count) * sizeof(double));
  DeviceBuffer scratch(2 * warps * sizeof(double) + sizeof(unsigned long long));
  check_cuda(cudaMemsetAsync(scratch.get(), 0, scratch.bytes(), 0), "cudaMemsetAsync");
  auto *sums = scratch.as<double>();
  auto *nonfinite = reinterpret_cast<unsigned long long *>(sums + 2 * warps);
  launch("error_measures_kernel", error_measures_kernel, blocks, result, exact, absolute, count,
         elementwise.as<double>(), sums, nonfinite);
  std::vector<double> warp_sums(2 * warps);
  unsigned long long host_nonfinite = 0;
  check_cuda(cudaMemcpy(warp_sums.data(), sums, warp_sums.size() * sizeof(double), cudaMemcpyDeviceToHost),
             "cudaMemcpy");
  check_cuda(cudaMemcpy(&host_nonfinite, nonfinite, sizeof(host_nonfinite), cudaMemcpyDeviceToHost), "cudaMemcpy");
  double host_sums[2] = {0, 0};
  for (size_t warp = 0; warp < warps; ++warp) {
    host_sums[0] += warp_sums[2 * warp];
    host_sums[1] += warp_sums[2 * warp + 1];
  }
  std::vector<double> values(static_cast<size_t>(count));
  check_cuda(cudaMemcpy(values.data(), elementwise.get(), elementwise.bytes(), cudaMemcpyDeviceToHost), "cudaMemcpy");

  ErrorMeasures measures;
  measures.nonfinite = static_cast<int64_t>(host_nonfinite);
  // A NaN or infinite element makes the norm of the error NaN or infinite: the result is no approximation.
  if (measures.nonfinite > 0)
    measures.normwise = kInfinity;
  else if (host_sums[1] > 0)
    measures.normwise = std::sqrt(host_sums[0] / host_sums[1]);
  else
    measures.normwise = host_sums[0] == 0 ? 0.0 : kInfinity;
  if (values.empty()) return measures;
  measures.largest = *std::max_element(values.begin(), values.end());
  const size_t middle = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + middle, values.end());
  measures.median = values[middle];
  if (values.size() % 2 == 0) {
    const double below = *std::max_element(values.begin(), values.begin() + middle);
    measures.median = (below + measures.median) / 2;
  }
  return measures;
}

}  // namespace bench
