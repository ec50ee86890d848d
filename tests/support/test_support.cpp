// SPDX-License-Identifier: Apache-2.0
#include "support/test_support.hpp"

#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <thread>

namespace fgtest {
namespace {

uint64_t splitmix64(uint64_t &state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

template <typename T>
void fill(std::vector<T> &values, uint64_t seed, T low, T high) {
  uint64_t state = seed * 0x2545f4914f6cdd1dull + 1;
  for (T &value : values) {
    const double unit = static_cast<double>(splitmix64(state) >> 11) * 0x1.0p-53;
    value = static_cast<T>(low + (high - low) * unit);
  }
}

}  // namespace

void fill_uniform(std::vector<float> &values, uint64_t seed, float low, float high) { fill(values, seed, low, high); }
void fill_uniform(std::vector<double> &values, uint64_t seed, double low, double high) {
  fill(values, seed, low, high);
}

GemmCase GemmCase::resolved() const {
  GemmCase r = *this;
  const bool row = layout == FG_ROW_MAJOR;
  const auto minimum = [](int64_t v) { return std::max<int64_t>(1, v); };
  if (r.lda == 0) r.lda = minimum(row ? a_cols() : a_rows());
  if (r.ldb == 0) r.ldb = minimum(row ? b_cols() : b_rows());
  if (r.ldc == 0) r.ldc = minimum(row ? n : m);
  const auto extent = [&](int64_t rows, int64_t cols, int64_t ld) { return row ? rows * ld : cols * ld; };
  if (r.stride_a < 0) r.stride_a = extent(a_rows(), a_cols(), r.lda);
  if (r.stride_b < 0) r.stride_b = extent(b_rows(), b_cols(), r.ldb);
  if (r.stride_c < 0) r.stride_c = extent(m, n, r.ldc);
  return r;
}

std::string GemmCase::describe() const {
  std::ostringstream text;
  text << (layout == FG_ROW_MAJOR ? "row" : "col") << ' ' << (transa == FG_OP_N ? 'N' : 'T')
       << (transb == FG_OP_N ? 'N' : 'T') << " m=" << m << " n=" << n << " k=" << k << " alpha=" << alpha
       << " beta=" << beta << " lda=" << lda << " ldb=" << ldb << " ldc=" << ldc << " batch=" << batch
       << " strides=" << stride_a << '/' << stride_b << '/' << stride_c << " offsets=" << offset_a << '/' << offset_b
       << '/' << offset_c;
  return text.str();
}

namespace {
int64_t allocation(int64_t offset, int64_t rows, int64_t cols, int64_t ld, int64_t stride, int64_t batch,
                   bool row_major) {
  const int64_t one = row_major ? (rows - 1) * ld + cols : (cols - 1) * ld + rows;
  return offset + (batch - 1) * stride + std::max<int64_t>(one, 1) + 8;  // 8 spare elements catch overruns
}
}  // namespace

int64_t GemmCase::a_elements() const {
  return allocation(offset_a, a_rows(), a_cols(), lda, stride_a, batch, layout == FG_ROW_MAJOR);
}
int64_t GemmCase::b_elements() const {
  return allocation(offset_b, b_rows(), b_cols(), ldb, stride_b, batch, layout == FG_ROW_MAJOR);
}
int64_t GemmCase::c_elements() const {
  return allocation(offset_c, m, n, ldc, stride_c, batch, layout == FG_ROW_MAJOR);
}

std::vector<double> reference_gemm(const GemmCase &gc, const std::vector<float> &a, const std::vector<float> &b,
                                   const std::vector<float> &c) {
  std::vector<double> result(c.begin(), c.end());
  const int64_t rows_per_batch = gc.m;
  parallel_for(gc.batch * rows_per_batch, [&](int64_t begin, int64_t end) {
    std::vector<double> row_of_a(static_cast<size_t>(gc.k));
    for (int64_t task = begin; task < end; ++task) {
      const int64_t batch = task / rows_per_batch, i = task % rows_per_batch;
      const float *a_batch = a.data() + gc.offset_a + batch * gc.stride_a;
      const float *b_batch = b.data() + gc.offset_b + batch * gc.stride_b;
      for (int64_t p = 0; p < gc.k; ++p) {
        const int64_t r = gc.transa == FG_OP_N ? i : p, col = gc.transa == FG_OP_N ? p : i;
        row_of_a[p] = a_batch[element_offset(gc.layout, r, col, gc.lda)];
      }
      for (int64_t j = 0; j < gc.n; ++j) {
        double sum = 0.0;
        for (int64_t p = 0; p < gc.k; ++p) {
          const int64_t r = gc.transb == FG_OP_N ? p : j, col = gc.transb == FG_OP_N ? j : p;
          sum += row_of_a[p] * static_cast<double>(b_batch[element_offset(gc.layout, r, col, gc.ldb)]);
        }
        const int64_t at = gc.offset_c + batch * gc.stride_c + element_offset(gc.layout, i, j, gc.ldc);
        const double old = gc.beta == 0.0f ? 0.0 : static_cast<double>(gc.beta) * c[at];
        result[at] = static_cast<double>(gc.alpha) * sum + old;
      }
    }
  });
  return result;
}

std::vector<char> c_window_mask(const GemmCase &gc) {
  std::vector<char> mask(static_cast<size_t>(gc.c_elements()), 0);
  for (int64_t batch = 0; batch < gc.batch; ++batch)
    for (int64_t i = 0; i < gc.m; ++i)
      for (int64_t j = 0; j < gc.n; ++j)
        mask[gc.offset_c + batch * gc.stride_c + element_offset(gc.layout, i, j, gc.ldc)] = 1;
  return mask;
}

template <typename T, typename R>
double relative_error(const std::vector<T> &got, const std::vector<R> &ref, const std::vector<char> *mask) {
  REQUIRE(got.size() == ref.size());
  long double difference = 0, norm = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (mask != nullptr && !(*mask)[i]) continue;
    if (!std::isfinite(static_cast<double>(got[i]))) return std::nan("");
    const long double delta = static_cast<long double>(got[i]) - static_cast<long double>(ref[i]);
    difference += delta * delta;
    norm += static_cast<long double>(ref[i]) * static_cast<long double>(ref[i]);
  }
  if (norm == 0) return difference == 0 ? 0.0 : INFINITY;
  return static_cast<double>(std::sqrt(difference / norm));
}

template double relative_error(const std::vector<float> &, const std::vector<double> &, const std::vector<char> *);
template double relative_error(const std::vector<float> &, const std::vector<long double> &, const std::vector<char> *);
template double relative_error(const std::vector<double> &, const std::vector<long double> &,
                               const std::vector<char> *);

template <typename T>
std::vector<long double> reference_rowmean(const std::vector<T> &input, const std::vector<T> &matrix, int64_t L,
                                           int64_t M, int64_t N) {
  std::vector<long double> means(static_cast<size_t>(N * L));
  parallel_for(N * L, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      long double sum = 0;
      for (int64_t m = 0; m < M; ++m) sum += input[row * M + m];
      means[row] = sum / M;
    }
  });
  std::vector<long double> output(static_cast<size_t>(L * N));
  parallel_for(L, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      for (int64_t k = 0; k < N; ++k) {
        long double sum = 0;
        for (int64_t j = 0; j < L; ++j) sum += static_cast<long double>(matrix[i * L + j]) * means[k * L + j];
        output[i * N + k] = sum;
      }
  });
  return output;
}

template std::vector<long double> reference_rowmean(const std::vector<float> &, const std::vector<float> &, int64_t,
                                                    int64_t, int64_t);
template std::vector<long double> reference_rowmean(const std::vector<double> &, const std::vector<double> &, int64_t,
                                                    int64_t, int64_t);

std::vector<fg_sgemm_algo_t> carried_sgemm_algos(fg_handle_t handle) {
  std::vector<fg_sgemm_algo_t> algos;
  for (int id = 1; id <= 100; ++id)
    if (fg_set_sgemm_algo(handle, static_cast<fg_sgemm_algo_t>(id)) == FG_STATUS_SUCCESS)
      algos.push_back(static_cast<fg_sgemm_algo_t>(id));
  REQUIRE(fg_set_sgemm_algo(handle, FG_SGEMM_AUTO) == FG_STATUS_SUCCESS);
  return algos;
}

std::vector<fg_rowmean_algo_t> carried_rowmean_algos(fg_handle_t handle) {
  std::vector<fg_rowmean_algo_t> algos;
  for (int id = 1; id <= 100; ++id)
    if (fg_set_rowmean_algo(handle, static_cast<fg_rowmean_algo_t>(id)) == FG_STATUS_SUCCESS)
      algos.push_back(static_cast<fg_rowmean_algo_t>(id));
  REQUIRE(fg_set_rowmean_algo(handle, FG_ROWMEAN_AUTO) == FG_STATUS_SUCCESS);
  return algos;
}

DeviceMemory::DeviceMemory(size_t bytes) { REQUIRE_CUDA_OK(cudaMalloc(&pointer_, std::max<size_t>(bytes, 1))); }
DeviceMemory::~DeviceMemory() { (void)cudaFree(pointer_); }

template <typename T>
void upload(DeviceMemory &memory, const std::vector<T> &values) {
  REQUIRE_CUDA_OK(cudaMemcpy(memory.get(), values.data(), values.size() * sizeof(T), cudaMemcpyHostToDevice));
  // From pageable memory the copy may return before its DMA lands, and a non-blocking stream does not wait for the
  // legacy stream's work: the values are in place before any stream reads them.
  REQUIRE_CUDA_OK(cudaDeviceSynchronize());
}
template <typename T>
std::vector<T> download(const DeviceMemory &memory, size_t count) {
  std::vector<T> values(count);
  REQUIRE_CUDA_OK(cudaDeviceSynchronize());
  REQUIRE_CUDA_OK(cudaMemcpy(values.data(), memory.get(), count * sizeof(T), cudaMemcpyDeviceToHost));
  return values;
}
template void upload(DeviceMemory &, const std::vector<float> &);
template void upload(DeviceMemory &, const std::vector<double> &);
template std::vector<float> download(const DeviceMemory &, size_t);
template std::vector<double> download(const DeviceMemory &, size_t);

}  // namespace fgtest
