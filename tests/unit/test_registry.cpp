// SPDX-License-Identifier: Apache-2.0
// AUTO's choice within a caller's workspace (fg_set_workspace), as pure functions of the problem, a simulated
// device and the workspace's bytes: no GPU needed.
#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "auto_choice.hpp"
#include "rowmean/registry.hpp"
#include "sgemm/cublas.hpp"
#include "sgemm/registry.hpp"

using namespace fastgemm;

namespace {

// Stand-ins for device arrays: only their alignment is looked at.
alignas(256) float array_a[64], array_b[64], array_c[64];

detail::DeviceInfo simulated_hopper() {
  detail::DeviceInfo hopper;
  hopper.cc_major = 9, hopper.sm_count = 132, hopper.smem_per_block_optin = 227 * 1024, hopper.l2_bytes = 50 << 20;
  return hopper;
}

detail::RowmeanProblem rowmean(fg_dtype_t dtype, int64_t L, int64_t M, int64_t N) {
  return detail::RowmeanProblem{dtype, array_a, array_b, array_c, L, M, N};
}

detail::GemmProblem sgemm(int64_t m, int64_t n, int64_t k, fg_math_mode_t math) {
  detail::GemmProblem p;
  p.m = m, p.n = n, p.k = k, p.math = math;
  p.a = {array_a, k, 0, false};
  p.b = {array_b, n, 0, false};
  p.c = array_c;
  p.ldc = n;
  return p;
}

// A caller's workspace from none at all to one that holds most arrays.
const std::vector<size_t> kLimits = {0, 256, 64 << 10, 1 << 20, 16 << 20};

}  // namespace

TEST_CASE("AUTO within a caller's workspace: rowmean runs a fast workspace-free algorithm, never refuses", "[auto]") {
  const detail::DeviceInfo hopper = simulated_hopper();
  // Unlimited, staged runs both; its means (L x N doubles at least) do not fit 64 KiB.
  CHECK(fgtest::auto_rowmean_choice(rowmean(FG_F32, 512, 1024, 64), hopper) == FG_ROWMEAN_STAGED);
  CHECK(fgtest::auto_rowmean_choice(rowmean(FG_F64, 2048, 64, 256), hopper) == FG_ROWMEAN_STAGED);
  for (size_t limit : {size_t{0}, size_t{64} << 10}) {
    INFO("workspace " << limit);
    // Eight fused tiles would leave most SMs idle: a block per batch reads the input faster than single_block's
    // one block for all batches.
    CHECK(fgtest::auto_rowmean_choice(rowmean(FG_F32, 512, 1024, 64), hopper, limit) == FG_ROWMEAN_COALESCED);
    // Beyond L = 1024 and beyond what fused keeps on chip (f64 at L = 2048), AUTO still runs the problem.
    CHECK(fgtest::auto_rowmean_choice(rowmean(FG_F64, 2048, 64, 256), hopper, limit) == FG_ROWMEAN_COALESCED);
    // Batches enough for fused's tiles to occupy the SMs: fused, which reads the input once.
    CHECK(fgtest::auto_rowmean_choice(rowmean(FG_F64, 512, 512, 1024), hopper, limit) == FG_ROWMEAN_FUSED);
    CHECK(fgtest::auto_rowmean_choice(rowmean(FG_F32, 4096, 8, 16384), hopper, limit) == FG_ROWMEAN_COALESCED);
  }
  // A workspace that holds staged's arrays changes nothing.
  size_t staged_bytes = 0;
  const detail::RowmeanProblem fits = rowmean(FG_F32, 512, 1024, 64);
  REQUIRE(detail::rowmean_workspace_bytes(fits, hopper, FG_ROWMEAN_STAGED, &staged_bytes).ok());
  CHECK(fgtest::auto_rowmean_choice(fits, hopper, staged_bytes) == FG_ROWMEAN_STAGED);
  CHECK(fgtest::auto_rowmean_choice(fits, hopper, staged_bytes - 1) == FG_ROWMEAN_COALESCED);

  // Over many shapes and workspaces, on a device with full-rate FP64 and on one without: AUTO's choice runs the
  // problem within the workspace, and is never one of the slow rungs that a scan of the table in ladder order
  // would reach first.
  detail::DeviceInfo slow_fp64 = hopper;
  slow_fp64.cc_major = 8, slow_fp64.cc_minor = 9, slow_fp64.smem_per_block_optin = 99 * 1024;
  for (const detail::DeviceInfo &device : {hopper, slow_fp64})
    for (fg_dtype_t dtype : {FG_F32, FG_F64})
      for (int64_t L : {1, 64, 512, 1024, 1025, 2048, 4096})
        for (int64_t M : {1, 64, 1024})
          for (int64_t N : {1, 64, 1024, 8192})
            for (size_t limit : kLimits) {
              const detail::RowmeanProblem p = rowmean(dtype, L, M, N);
              INFO("dtype " << dtype << " L " << L << " M " << M << " N " << N << " workspace " << limit << " arch "
                            << device.arch());
              const fg_rowmean_algo_t choice = fgtest::auto_rowmean_choice(p, device, limit);
              REQUIRE(choice != FG_ROWMEAN_AUTO);
              CHECK(choice != FG_ROWMEAN_SINGLE_BLOCK);
              CHECK(choice != FG_ROWMEAN_BLOCK_PER_BATCH);
              const detail::RowmeanVariant *variant = detail::find_rowmean_variant(choice);
              REQUIRE(variant != nullptr);
              CHECK(variant->can_implement(p, device).ok());
              CHECK(variant->workspace_bytes(p, device) <= limit);
            }
}

TEST_CASE("AUTO within a caller's workspace: rowmean refuses only where no workspace-free algorithm can run",
          "[auto]") {
  const detail::DeviceInfo hopper = simulated_hopper();
  // A batch's means at L = 30000 (240 kB in double) exceed a block's shared memory: with no room for staged's
  // arrays there is nothing that runs it, and AUTO says so rather than run something that cannot.
  const detail::RowmeanProblem wide = rowmean(FG_F32, 30000, 8, 4);
  CHECK(fgtest::auto_rowmean_choice(wide, hopper, 64 << 10) == FG_ROWMEAN_AUTO);
  CHECK(fgtest::auto_rowmean_choice(wide, hopper) == FG_ROWMEAN_STAGED);
  size_t bytes = 0;
  CHECK(detail::rowmean_workspace_bytes(wide, hopper, FG_ROWMEAN_COALESCED, &bytes).code ==
        detail::StatusCode::not_supported);
}

TEST_CASE("AUTO within a caller's workspace: SGEMM runs cuBLAS where a faster algorithm does not fit", "[auto]") {
  const detail::DeviceInfo hopper = simulated_hopper();
  // The emulation, first at 4096^3 in FP32_EMULATED mode, keeps its residues in the workspace.
  const detail::GemmProblem emulated = sgemm(4096, 4096, 4096, FG_MATH_FP32_EMULATED);
  REQUIRE(fgtest::auto_sgemm_choice(emulated, hopper) == FG_SGEMM_OZAKI_INT8);
  size_t ozaki_bytes = 0;
  REQUIRE(detail::sgemm_workspace_bytes(emulated, hopper, FG_SGEMM_OZAKI_INT8, &ozaki_bytes).ok());
  REQUIRE(ozaki_bytes > 0);
  CHECK(fgtest::auto_sgemm_choice(emulated, hopper, ozaki_bytes) == FG_SGEMM_OZAKI_INT8);
  CHECK(fgtest::auto_sgemm_choice(emulated, hopper, ozaki_bytes - 1) == FG_SGEMM_CUBLAS);
  CHECK(fgtest::auto_sgemm_choice(emulated, hopper, 0) == FG_SGEMM_CUBLAS);
  // The workspace-free kernels AUTO prefers stay preferred in any workspace.
  CHECK(fgtest::auto_sgemm_choice(sgemm(256, 256, 256, FG_MATH_FP32), hopper, 0) == FG_SGEMM_SMALL_TILE);
  CHECK(fgtest::auto_sgemm_choice(sgemm(4096, 4096, 256, FG_MATH_FP32), hopper, 0) == FG_SGEMM_DOUBLE_BUFFER);
  for (fg_math_mode_t math : {FG_MATH_FP32, FG_MATH_FP32_EMULATED})
    for (int64_t size : {1, 17, 256, 1000, 4096, 8192})
      for (int64_t k : {int64_t{16}, size, int64_t{65536}})
        for (size_t limit : kLimits) {
          const detail::GemmProblem p = sgemm(size, size, k, math);
          INFO("size " << size << " k " << k << " math " << math << " workspace " << limit);
          const fg_sgemm_algo_t choice = fgtest::auto_sgemm_choice(p, hopper, limit);
          REQUIRE(choice != FG_SGEMM_AUTO);
          CHECK(choice != FG_SGEMM_NAIVE);
          const detail::SgemmVariant *variant = detail::find_sgemm_variant(choice);
          REQUIRE(variant != nullptr);
          CHECK(variant->can_implement(p, hopper).ok());
          CHECK(variant->workspace_bytes(p, hopper) <= limit);
        }
}

TEST_CASE("cuBLAS's product in a kept graph may read the addresses at launch only for one product of 32-bit sizes",
          "[auto]") {
  // Where it may, the emulation still compares the kernels the batched entry point captures with cublasSgemm's.
  detail::GemmProblem p = sgemm(4096, 2050, 8191, FG_MATH_FP32_EMULATED);
  CHECK(detail::cublas_may_read_live_addresses(p));
  p.a.transposed = true, p.a.ld = 4096;
  CHECK(detail::cublas_may_read_live_addresses(p));
  detail::GemmProblem batched = p;
  batched.batch = 2;
  CHECK_FALSE(detail::cublas_may_read_live_addresses(batched));
  for (int field = 0; field < 6; ++field) {
    detail::GemmProblem large = p;
    int64_t *sizes[] = {&large.m, &large.n, &large.k, &large.a.ld, &large.b.ld, &large.ldc};
    *sizes[field] = int64_t{1} << 31;  // past cuBLAS's 32-bit entry points
    INFO("field " << field);
    CHECK_FALSE(detail::cublas_may_read_live_addresses(large));
  }
}

TEST_CASE("AUTO emulates where it pays: every edge from 1024, and m n k from 2^34 in one product or a whole batch",
          "[auto]") {
  const detail::DeviceInfo hopper = simulated_hopper();
  const auto choice = [&](int64_t m, int64_t n, int64_t k, int64_t batch) {
    detail::GemmProblem p = sgemm(m, n, k, FG_MATH_FP32_EMULATED);
    p.batch = batch;
    if (batch > 1) p.a.stride = m * k, p.b.stride = k * n, p.stride_c = m * n;
    return fgtest::auto_sgemm_choice(p, hopper);
  };
  // Single products: every edge from 1024 and m n k from 2^34.
  CHECK(choice(2048, 1024, 8192, 1) == FG_SGEMM_OZAKI_INT8);
  CHECK(choice(2048, 1024, 8191, 1) != FG_SGEMM_OZAKI_INT8);
  CHECK(choice(1023, 4096, 8192, 1) != FG_SGEMM_OZAKI_INT8);
  CHECK(choice(2048, 2048, 2048, 1) != FG_SGEMM_OZAKI_INT8);
  // Batches: 2048^3 twice and 1024^3 16 times are 2^34 in all; 1024^3 8 times is not, nor an edge below 1024.
  CHECK(choice(2048, 2048, 2048, 2) == FG_SGEMM_OZAKI_INT8);
  CHECK(choice(2048, 2048, 2048, 16) == FG_SGEMM_OZAKI_INT8);
  CHECK(choice(1024, 1024, 1024, 16) == FG_SGEMM_OZAKI_INT8);
  CHECK(choice(1024, 1024, 1024, 64) == FG_SGEMM_OZAKI_INT8);
  CHECK(choice(1024, 2048, 4096, 64) == FG_SGEMM_OZAKI_INT8);
  CHECK(choice(1024, 1024, 1024, 15) != FG_SGEMM_OZAKI_INT8);
  CHECK(choice(1024, 1024, 1024, 8) != FG_SGEMM_OZAKI_INT8);
  CHECK(choice(1023, 1024, 1024, 64) != FG_SGEMM_OZAKI_INT8);
  CHECK(choice(2048, 2048, 1023, 64) != FG_SGEMM_OZAKI_INT8);
  // The FP32 mode never emulates.
  detail::GemmProblem fp32 = sgemm(8192, 8192, 8192, FG_MATH_FP32);
  CHECK(fgtest::auto_sgemm_choice(fp32, hopper) != FG_SGEMM_OZAKI_INT8);
}
