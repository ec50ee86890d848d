// SPDX-License-Identifier: Apache-2.0
// Where the emulated FP32 mode pays, as a rule of sizes: AUTO's (lib/sgemm/registry.cpp), the cuBLAS interposer's
// and the host engine's tiles all follow this one. Header-only, with no dependency, so that libfastgemm_cublas
// includes it as well.
#pragma once

#include <cstdint>

namespace fastgemm::tuning {

// Measured on the H100 (bench/NOTES-emulated.md, docs/benchmarks.md), where the scan, the residues and the
// reconstruction around the INT8 products are paid back:
// - single products need every edge from 1024 and m n k from 2^34 (1024 x 2048 x 8192, about 2580^3);
// - a strided batch pays its fixed costs once: 2048^3 ran 1.23x cuBLAS FP32 in 4 products and 1.25x in 16, while
//   1024^3 ran 0.62x in 8, 0.70x in 16 and 0.75x in 64 (the reconstruction's m n count outweighs products 1024
//   deep), so batches need every edge from 2048 and all their products together from 2^34.
constexpr int64_t kEmulationMinEdge = 1024;
constexpr int64_t kEmulationMinBatchedEdge = 2048;
constexpr double kEmulationMinWork = 17179869184.0;  // 2^34

enum class EmulationSize {
  pays,
  small_edge,  // an edge below kEmulationMinEdge
  small_work,  // m n k below kEmulationMinWork, and the batch does not make up for it
};

constexpr EmulationSize emulation_size(int64_t m, int64_t n, int64_t k, int64_t batch) {
  if (m < kEmulationMinEdge || n < kEmulationMinEdge || k < kEmulationMinEdge) return EmulationSize::small_edge;
  const double work = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  if (work >= kEmulationMinWork) return EmulationSize::pays;
  const bool batch_pays = batch >= 2 && m >= kEmulationMinBatchedEdge && n >= kEmulationMinBatchedEdge &&
                          k >= kEmulationMinBatchedEdge && work * static_cast<double>(batch) >= kEmulationMinWork;
  return batch_pays ? EmulationSize::pays : EmulationSize::small_work;
}

}  // namespace fastgemm::tuning
