// SPDX-License-Identifier: Apache-2.0
#include <cmath>

#include "sgemm/ozaki_int8/math.hpp"
#include "sgemm/ozaki_int8/plan.hpp"
#include "sgemm/ozaki_int8/wgmma_products.hpp"
#include "tuning/tuning.hpp"

namespace fastgemm::detail::ozaki {

static_assert(kMaxDepth == tuning::kEmulationMaxDepth,
              "the host engine's emulated steps over all of k stop at kMaxDepth");

namespace {

using Wide = unsigned __int128;  // P < 2^103 for 13 moduli: products by a modulus stay below 2^128

Wide product_of_moduli(int count) {
  Wide product = 1;
  for (int l = 0; l < count; ++l) product *= static_cast<Wide>(kModuli[l]);
  return product;
}

int bit_length(Wide value) {
  int bits = 0;
  for (; value != 0; value >>= 1) ++bits;
  return bits;
}

// x^-1 mod p for x coprime to p (p <= 256: a search is enough).
int inverse_mod(int x, int p) {
  for (int y = 1; y < p; ++y)
    if (x * y % p == 1) return y;
  return 0;
}

// Scaled operands must stay below 2^53, exact in a double.
constexpr int kMaxScaleExponent = 52;

// Every partial sum of c_l W_l,high (|c_l| <= 128, 13 terms) and of q P_high (|q| <= 13 * 128) stays below
// 2^(bits(P) + 12): a grid of 2^(bits(P) + 14 - 53) keeps them exact, with room to spare.
int grid_bits_of(Wide product) {
  const int bits = bit_length(product) + 14 - 53;
  return bits > 0 ? bits : 0;
}

// The bounds the workspace is cut to: INT32 products of one tile, and the residues of each operand.
constexpr size_t kProductBudget = size_t{2} << 30;
constexpr size_t kResidueBudget = size_t{2} << 30;
// Tile edges, when C is cut, in multiples of these (the INT8 products' tile sizes).
constexpr int64_t kRowQuantum = 128;
constexpr int64_t kColQuantum = 256;
// Products per INT8 batched call are batches * count: kept well inside an int.
constexpr int64_t kMaxBatches = 4096;

size_t round_up_256(size_t bytes) { return (bytes + 255) / 256 * 256; }
int64_t round_up(int64_t value, int64_t quantum) { return (value + quantum - 1) / quantum * quantum; }

// The largest edge of at most `limit` (>= quantum) that cuts `extent` into equal pieces of whole quanta.
int64_t balanced_edge(int64_t extent, int64_t limit, int64_t quantum) {
  if (extent <= limit) return extent;
  const int64_t pieces = (extent + limit - 1) / limit;
  return round_up((extent + pieces - 1) / pieces, quantum);
}

}  // namespace

double scale_target(int count, int64_t k) {
  // |V| <= ||A'_i|| ||B'_j|| <= (S + sqrt(k) / 2)^2 for the scaled and rounded lines A'_i, B'_j (each scaled to a
  // 2-norm of at most S (1 + 2^-50), each element rounded by at most 1/2): below (P / 2)(1 - 2^-19) <
  // (P / 2)(1 - 2^-20), where the reconstruction is valid. The margins also cover the roundings of the doubles
  // here. Scaled elements stay below 2^52, exact in a double.
  const double limit =
      std::sqrt(std::ldexp(static_cast<double>(product_of_moduli(count)), -1) * (1.0 - std::ldexp(1.0, -19)));
  double target =
      (limit - 0.5 * std::sqrt(static_cast<double>(k)) * (1.0 + std::ldexp(1.0, -30))) * (1.0 - std::ldexp(1.0, -40));
  if (target > std::ldexp(1.0, kMaxScaleExponent)) target = std::ldexp(1.0, kMaxScaleExponent);
  return target >= 1.0 ? target : 0.0;
}

CrtConstants crt_constants(int count, int64_t k) {
  CrtConstants constants;
  constants.count = count;
  const Wide product = product_of_moduli(count);
  const int grid_bits = grid_bits_of(product);
  const auto split = [grid_bits](Wide value, double *high, double *low) {
    const Wide upper = value >> grid_bits << grid_bits;
    *high = static_cast<double>(upper);  // at most 39 significant bits: exact
    *low = static_cast<double>(value - upper);
  };
  for (int l = 0; l < count; ++l) {
    const int p = kModuli[l];
    const Wide cofactor = product / static_cast<Wide>(p);
    const int inverse = inverse_mod(static_cast<int>(cofactor % static_cast<Wide>(p)), p);
    const Wide weight = cofactor * static_cast<Wide>(inverse) % product;
    constants.modulus[l] = p;
    constants.inverse_modulus[l] = 1.0 / p;
    constants.integer_modulus[l] = static_cast<uint32_t>(p);
    constants.reciprocal[l] = static_cast<uint32_t>((uint64_t{1} << 39) / static_cast<uint64_t>(p) + 1);
    constants.power24_residue[l] = static_cast<uint32_t>((uint32_t{1} << 24) % static_cast<uint32_t>(p));
    constants.float_modulus[l] = static_cast<float>(p);
    constants.float_inverse[l] = 1.0f / static_cast<float>(p);
    const int split_residue = (1 << 12) % p;
    constants.split_residue[l] = static_cast<float>(2 * split_residue > p ? split_residue - p : split_residue);
    split(weight, &constants.weight_high[l], &constants.weight_low[l]);
  }
  split(product, &constants.product_high, &constants.product_low);
  constants.inverse_product = 1.0 / static_cast<double>(product);
  constants.scale_target = scale_target(count, k);
  return constants;
}

CertificateConstants certificate_constants(int64_t k) {
  CertificateConstants constants;
  constants.depth = k;
  constants.error_allowance = std::ldexp(std::sqrt(static_cast<double>(k)) * (1.0 - std::ldexp(1.0, -40)), -24);
  for (int count = kMinModuli; count <= kMaxModuli; ++count) {
    const double target = scale_target(count, k);
    constants.scale_target[count] = target;
    if (target == 0.0) continue;  // this count certifies nothing at this depth
    const Wide product = product_of_moduli(count);
    const double half_product = std::ldexp(static_cast<double>(product), -1);
    // The Chinese remainder sums in doubles (CrtSums): the high parts are exact; each of the 2 count + 2 roundings
    // of the low parts (terms below 128 * 2^grid_bits, count of them, and the rounded low parts of W_l and P, below
    // 2^grid_bits each) is at most 2^-53 of at most 2^(grid_bits + 12), and the last addition at most 2^-53 of
    // |V~| <= P / 2: together below 2^(grid_bits - 36) + 2^-53 P, doubled. Divided by the scales, each at least
    // S / (2 ||x||) (line_scale), they are at most 4 / S^2 times these, times the lines' norms.
    const double error = std::ldexp(1.0, grid_bits_of(product) - 35) + std::ldexp(half_product, -51);
    const double per_norms = 4.0 * (1.0 + std::ldexp(1.0, -40)) / (target * target);
    constants.reconstruction_error = std::fmax(constants.reconstruction_error, error * per_norms);
    constants.magnitude = std::fmax(constants.magnitude, (half_product + error) * per_norms);
  }
  return constants;
}

namespace {

// Products of at least this many multiply-adds run the own product (all pairs in one launch) where it can, and where
// its tiles fill the device's multiprocessors at least once: measured on the H200 against cuBLAS's strided batch,
// 2048 x 2048 x 4096 0.531 -> 0.467 ms a call, 1024 x 4096 x 4096 0.635 -> 0.524; 16 products of 2048^3 3.83 ->
// 3.50 ms (4 of them 0.96 either way); the codes' product of 1024 x 1024 x 16384 (64 tiles) grew from 0.099 to
// 0.120 ms. With the residues in bytes from 1024 deep, 64 products of 1024^3 (the emulation forced) 2.95 -> 2.71 ms
// a call, 16 of them 0.805 -> 0.753 (bench/NOTES-emulated-runs.md).
constexpr double kOwnProductWork = 1024.0 * 1024.0 * 1024.0;

}  // namespace

bool own_products_run(int64_t padded_rows, int64_t padded_cols, int64_t depth, int64_t pairs, const ProductPath &path) {
  return path.own_ready && static_cast<double>(padded_rows) * padded_cols * depth >= kOwnProductWork &&
         own_products_take(padded_rows, padded_cols, depth, pairs) &&
         own_products_tiles(padded_rows, padded_cols, pairs) >= path.processors;
}

bool residue_bytes_run(int64_t padded_rows, int64_t padded_cols, int64_t depth, int64_t pairs,
                       const ProductPath &path) {
  return depth >= kResidueBytesDepth && own_products_run(padded_rows, padded_cols, depth, pairs, path);
}

int plan_chunk_rows(int64_t rows, int64_t cols, int64_t batches, int processors) {
  const auto blocks = [&](int height) {
    return batches * ((cols + kPlanColumns - 1) / kPlanColumns) * ((rows + height - 1) / height);
  };
  int height = kPlanMostRows;
  while (height > kPlanFewestRows && blocks(height) < static_cast<int64_t>(kPlanFill) * processors) height /= 2;
  return height;
}

Tiling choose_tiling(int64_t m, int64_t n, int64_t k, int64_t batch, int count, const ProductPath &path) {
  Tiling tiling;
  tiling.depth = round_up(k, kDepthAlignment);
  const int64_t sets = count == 1 ? kCodeSets : count;
  const auto residue_bytes = [&](int64_t lines) {
    return static_cast<size_t>(sets * round_up(lines, 4) * tiling.depth);
  };
  const auto product_bytes = [&](int64_t rows, int64_t cols) {
    return static_cast<size_t>(count * round_up(rows, 4) * round_up(cols, 4) * 4);
  };
  const auto byte_product_bytes = [&](int64_t rows, int64_t cols) {
    return static_cast<size_t>(count * round_up(rows, 4) * residue_pitch(round_up(cols, 4)));
  };
  // Whole products, as many at a time as fit: `per_result` bytes of products each.
  const auto whole_batches = [&](size_t per_result) {
    const size_t per_product = residue_bytes(m) > residue_bytes(n) ? residue_bytes(m) : residue_bytes(n);
    int64_t batches = static_cast<int64_t>(kResidueBudget / per_product);
    const int64_t by_products = static_cast<int64_t>(kProductBudget / per_result);
    if (by_products < batches) batches = by_products;
    if (kMaxBatches < batches) batches = kMaxBatches;
    return batches < batch ? batches : batch;
  };
  const bool residues_fit = residue_bytes(m) <= kResidueBudget && residue_bytes(n) <= kResidueBudget;
  // The moduli's products of every batch in one pass, their sums written as bytes: only where the INT8 product of
  // exactly this tiling writes them (a pass over fewer batches, the last of several, might not), and at counts up to
  // kSpeculatedModuli, whose residues the codes' pass may write (kept whole at larger counts, the residues' buffers
  // would raise the workspace by up to 2 GB a call for counts that wide exponents alone need).
  if (count != 1 && count <= kSpeculatedModuli && residues_fit && byte_product_bytes(m, n) <= kProductBudget &&
      whole_batches(byte_product_bytes(m, n)) == batch &&
      residue_bytes_run(round_up(m, 4), round_up(n, 4), tiling.depth, batch * count, path)) {
    tiling.batches = batch;
    tiling.rows = m;
    tiling.cols = n;
    tiling.byte_sums = true;
  } else if (residues_fit && product_bytes(m, n) <= kProductBudget) {
    tiling.batches = whole_batches(product_bytes(m, n));
    tiling.rows = m;
    tiling.cols = n;
  } else {
    // One product at a time, in tiles: columns bounded by B's residues and by the products of a tile of
    // kRowQuantum rows, then rows by A's residues and by the products.
    const int64_t line_bytes = sets * tiling.depth;
    int64_t col_limit = static_cast<int64_t>(kResidueBudget) / line_bytes;
    const int64_t col_limit_by_products = static_cast<int64_t>(kProductBudget) / (count * kRowQuantum * 4);
    if (col_limit_by_products < col_limit) col_limit = col_limit_by_products;
    tiling.cols = balanced_edge(n, col_limit / kColQuantum * kColQuantum, kColQuantum);
    int64_t row_limit = static_cast<int64_t>(kResidueBudget) / line_bytes;
    const int64_t row_limit_by_products = static_cast<int64_t>(kProductBudget) / (count * round_up(tiling.cols, 4) * 4);
    if (row_limit_by_products < row_limit) row_limit = row_limit_by_products;
    tiling.rows = balanced_edge(m, row_limit / kRowQuantum * kRowQuantum, kRowQuantum);
    tiling.batches = 1;
  }
  tiling.padded_rows = round_up(tiling.rows, 4);
  tiling.padded_cols = round_up(tiling.cols, 4);
  tiling.a_residue_bytes = static_cast<size_t>(tiling.batches) * residue_bytes(tiling.rows);
  tiling.b_residue_bytes = static_cast<size_t>(tiling.batches) * residue_bytes(tiling.cols);
  tiling.product_bytes =
      static_cast<size_t>(tiling.batches) *
      (tiling.byte_sums ? byte_product_bytes(tiling.rows, tiling.cols) : product_bytes(tiling.rows, tiling.cols));
  const auto whole = [&](const Tiling &t) { return t.batches == batch && t.rows == m && t.cols == n; };
  if (count == 1 && whole(tiling)) {
    // The residues of kSpeculatedModuli moduli in their own tiling's place, before the codes' buffers: the codes
    // pass writes them where that tiling's products then read them (narrow residues only: line_scale's integers
    // below 2^28).
    const Tiling speculated = choose_tiling(m, n, k, batch, kSpeculatedModuli, path);
    const double target = scale_target(kSpeculatedModuli, k);
    if (whole(speculated) && target > 0.0 && target + 1.0 < 0x1p28)
      tiling.speculated_bytes = round_up_256(speculated.a_residue_bytes) + round_up_256(speculated.b_residue_bytes);
  }
  return tiling;
}

WorkspaceLayout workspace_layout(int64_t m, int64_t n, int64_t batch, const Tiling &tiling) {
  WorkspaceLayout layout;
  size_t offset = 0;
  const auto take = [&offset](size_t bytes) {
    const size_t at = offset;
    offset += round_up_256(bytes);
    return at;
  };
  layout.summary = take(256);
  layout.live = take(256);
  layout.speculation = take(sizeof(int));
  const size_t a_lines = static_cast<size_t>(batch * m), b_lines = static_cast<size_t>(batch * n);
  layout.a_lines = take(a_lines * sizeof(LineFacts));
  layout.b_lines = take(b_lines * sizeof(LineFacts));
  layout.a_flagged = take(a_lines * sizeof(int64_t));
  layout.b_flagged = take(b_lines * sizeof(int64_t));
  layout.needs = take(static_cast<size_t>(batch * m) * static_cast<size_t>(n));
  const size_t preview_lines =
      static_cast<size_t>((batch < kPreviewBatches ? batch : kPreviewBatches) * 2 * kPreviewLines);
  layout.preview_facts = take(preview_lines * sizeof(LineFacts));
  layout.preview_codes = take(preview_lines * static_cast<size_t>(tiling.depth));
  layout.preview_products = take(preview_lines / 2 * kPreviewLines * sizeof(int32_t));
  take(tiling.speculated_bytes);
  layout.a_residues = take(tiling.a_residue_bytes);
  layout.b_residues = take(tiling.b_residue_bytes);
  layout.products = take(tiling.product_bytes);
  layout.total = offset;
  return layout;
}

size_t max_workspace_bytes(int64_t m, int64_t n, int64_t k, int64_t batch, int processors, bool own_possible) {
  size_t most = 0;
  for (const bool own_ready : {false, own_possible}) {
    const ProductPath path{processors, own_ready};
    for (int count = 1; count <= kMaxModuli; count = count == 1 ? kMinModuli : count + 1) {
      const size_t bytes = workspace_layout(m, n, batch, choose_tiling(m, n, k, batch, count, path)).total;
      if (bytes > most) most = bytes;
    }
  }
  return most;
}

}  // namespace fastgemm::detail::ozaki
