// SPDX-License-Identifier: Apache-2.0
// FG_SGEMM_OZAKI_INT8's own INT8 tensor-core product on Hopper (wgmma_products.cu, built for sm_90a only): the
// residues' products of all pairs in one launch, what cublasGemmEx calls of steps.cpp's int8_products compute
// one pair each, in a kernel of the project's own (TMA copies into a 4-stage pipeline of 128 x 256 x 128 tiles,
// one producer warpgroup and two consumer warpgroups of wgmma, INT32 sums exact). Elsewhere (other devices, or a build
// without sm_90a code), cuBLAS's product runs.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/status.hpp"
#include "sgemm/ozaki_int8/plan.hpp"

namespace fastgemm::detail::ozaki {

// Whether the own product runs on the current device: compute capability 9.0, the kernel's sm_90a code and its
// register budget present, the driver's tensor-map encoder found, and its shared memory granted. Asked once per
// device; false where this build has no sm_90a code.
bool own_products_ready();

// Whether the own product takes `pairs` products of these padded sizes (at least one tile each way, depth a multiple
// of 16, padded_cols of 4, the pairs' lines and tiles countable in an int).
bool own_products_take(int64_t padded_rows, int64_t padded_cols, int64_t depth, int64_t pairs);

// The own product's tiles (its blocks' units of work) for `pairs` products of these padded sizes.
int64_t own_products_tiles(int64_t padded_rows, int64_t padded_cols, int64_t pairs);

// For each pair p < pairs, in one launch whose blocks take the tiles of all pairs:
// products_p[row][col] (row < padded_rows, col < padded_cols, pitch elements apart) = sum over l < depth of
// residues_a_p[row][l] residues_b_p[col][l], both int8 and depth-contiguous, where residues_a_p = residues_a +
// p padded_rows depth, residues_b_p = residues_b + p padded_cols depth, products_p = products + p padded_rows
// pitch (depth a multiple of 16, the rows 16-byte aligned, products too, pitch a multiple of 4), enqueued on
// `stream`. Only where own_products_ready(); an internal error for a layout it cannot take.
// With half_chunks (device memory), each pair's operands hold kCodeSets sets of lines, the second the codes at half
// depth (zeros from depth / 2 to the next multiple of kHalfSetStep, nothing read past it; kernels.hpp's
// make_residues): residues_a_p = residues_a + p kCodeSets padded_rows
// depth, and its half-depth set padded_rows depth further (the same for residues_b). The launch reads
// *half_chunks when it runs and takes the half-depth sets, over depth / 2, where math.hpp's codes_at_half_depth
// chooses them; the first sets otherwise.
Status own_int8_products(const int8_t *residues_a, const int8_t *residues_b, int32_t *products, int64_t padded_rows,
                         int64_t padded_cols, int64_t pitch, int64_t depth, int64_t pairs, cudaStream_t stream,
                         const CodeChunks *half_chunks = nullptr);

// The same products, each sum written as one byte: its residue modulo q = moduli[p % moduli_count] (each 256 or odd
// from 3 to 255, as kModuli's; moduli_count 1..kMaxModuli) as the Chinese remainder reconstruction reduces it, s - q
// rint(s / q) (CrtSums::add), 128 written as -128 (the same class modulo 256); rows pitch bytes apart, pitch a multiple
// of 16 of at least residue_pitch(padded_cols), pair p's at residues + p padded_rows pitch. The bytes of a row past
// padded_cols, up to residue_pitch(padded_cols), may hold anything.
Status own_int8_residues(const int8_t *residues_a, const int8_t *residues_b, int8_t *residues, int64_t padded_rows,
                         int64_t padded_cols, int64_t pitch, int64_t depth, int64_t pairs, const double *moduli,
                         int moduli_count, cudaStream_t stream);
inline int64_t residue_pitch(int64_t padded_cols) { return (padded_cols + 15) / 16 * 16; }

}  // namespace fastgemm::detail::ozaki
