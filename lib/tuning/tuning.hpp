// SPDX-License-Identifier: Apache-2.0
// What was measured, per architecture, that decides where each algorithm runs: AUTO's rules for the FP32 kernels
// (lib/sgemm/registry.cpp) and for the emulated mode (the same rule in the cuBLAS interposer), the rates the
// emulation's choice of moduli weighs (lib/sgemm/ozaki_int8/choice.hpp), and the host engine's emulated tiles
// (lib/host/plan.hpp), which must reach the emulation's size rule. One table, as BLAS libraries keep one per core
// (OpenBLAS's param.h, BLIS's context initialisers). Header-only, with no dependency, so that libfastgemm_cublas
// includes it as well, and constexpr, so that kernels may read it.
#pragma once

#include <cstdint>

namespace fastgemm::tuning {

// --- Per architecture (compute capability as major * 10 + minor) ---------------------------------------------------

struct ArchTuning {
  // The project's FP32 kernels measured faster than cuBLAS called directly, cold and hot, on some shapes
  // (bench/NOTES-sgemm-fast.md): measured on 9.0 only.
  bool small_tile_shapes = false;
  bool double_buffer_shapes = false;
  // INT8 tensor cores that lead the FP32 lanes enough for the emulated mode to pay: the data-centre parts 8.0, 9.0
  // and 10.0 (30x and more); the others (8.6, 8.9, 12.0) by too little for 7 products.
  bool emulation = false;
  // FP64 (and FP64 tensor cores from 8.0 on) at half the FP32 rate or better: the data-centre parts.
  bool full_rate_fp64 = false;
};

constexpr ArchTuning arch_tuning(int arch) {
  ArchTuning t;
  t.small_tile_shapes = arch == 90;
  t.double_buffer_shapes = arch == 90;
  t.emulation = arch == 80 || arch == 90 || arch == 100;
  t.full_rate_fp64 = arch == 60 || arch == 70 || arch == 80 || arch == 90 || arch == 100;
  return t;
}

// --- FP32 kernels where they beat cuBLAS (measured on 9.0) ----------------------------------------------------------

// small_tile: outputs of all batches together at most 384 x 384, k at most 1024, edges from 16; single products
// from 20^3 multiply-adds (16^3 lost cold), batched ones from 32^3 (24^3 x 16 lost cold to cuBLAS's batched kernel).
constexpr int64_t kSmallTileOutputs = 384 * 384, kSmallTileDepth = 1024, kSmallTileEdge = 16;
constexpr int64_t kSmallTileWork = 20 * 20 * 20, kSmallTileBatchedWork = 32 * 32 * 32;
// double_buffer: wide, shallow single products, where cuBLAS's tiles fill the device poorly.
constexpr int64_t kDoubleBufferWideEdge = 4096, kDoubleBufferShallowDepth = 256;

// --- The emulated mode's size rule (measured on 9.0) ----------------------------------------------------------------

// Where the scan, the residues and the reconstruction around the INT8 products are paid back (bench/NOTES-emulated.md,
// docs/benchmarks.md): every edge from 1024, and m n k from 2^34 (1024 x 2048 x 8192, about 2580^3), in one product
// or in all the products of a strided batch together. A batch pays its fixed costs once; its products 1024 deep
// write as many elements of C for their work as 8192 x 8192 x 1024 does, and like it they pay less than deeper ones
// (H200, AUTO: 1024^3 1.07x cuBLAS FP32 in 16 products, 1.13x in 32, 1.16x in 64, 1.11x in 128; 16 of 1024 x 1024 x
// 2048 1.38x, 8 of 2048 x 2048 x 1024 1.39x, 8 of 1536^3 1.62x, 16 of 1024 x 4096 x 1024 1.34x; 2048^3 1.40x in 4).
// Batches were held to edges from 2048 while 1024^3 ran 0.75-0.94x emulated; the residues written by the codes'
// pass and the own product from 1024^3 a pair made them pay.
constexpr int64_t kEmulationMinEdge = 1024;
constexpr double kEmulationMinWork = 17179869184.0;  // 2^34

// The deepest product the emulation takes: its INT32 sums of int8 products stay exact while k 128^2 < 2^31
// (lib/sgemm/ozaki_int8/plan.hpp's kMaxDepth, which checks that it is this).
constexpr int64_t kEmulationMaxDepth = 131071;

enum class EmulationSize {
  pays,
  small_edge,  // an edge below kEmulationMinEdge
  small_work,  // m n k, times the batch's products, below kEmulationMinWork
};

constexpr EmulationSize emulation_size(int64_t m, int64_t n, int64_t k, int64_t batch) {
  if (m < kEmulationMinEdge || n < kEmulationMinEdge || k < kEmulationMinEdge) return EmulationSize::small_edge;
  const double work = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  return work * static_cast<double>(batch) >= kEmulationMinWork ? EmulationSize::pays : EmulationSize::small_work;
}

// --- The rates the emulation's choice of moduli weighs (estimates on 9.0; only their ratios matter, and other
// devices keep them roughly) ---------------------------------------------------------------------------------------

constexpr double kInt8OpsPerSecond = 1.3e15;       // the INT8 products
constexpr double kMemoryBytesPerSecond = 2e12;     // the memory-bound kernels (residues, reconstruction)
constexpr double kRecomputeFlopsPerSecond = 1e12;  // an element recomputed in FP32: k FMAs reading its row, column
constexpr double kFp32FlopsPerSecond = 50e12;      // FP32 products throughout

// --- The host engine --------------------------------------------------------------------------------------------

// In the emulated mode, products of 4096 and more on every side take tiles 4096 wide, and steps over all of k: each
// step's product then reaches the emulation's size rule (lib/host/plan.hpp has what 2048-wide steps cost).
constexpr int64_t kHostEmulatedTileEdge = 4096;
static_assert(emulation_size(kHostEmulatedTileEdge, kHostEmulatedTileEdge, kHostEmulatedTileEdge, 1) ==
                  EmulationSize::pays,
              "the host engine's emulated steps must reach the emulation's size rule");

}  // namespace fastgemm::tuning
