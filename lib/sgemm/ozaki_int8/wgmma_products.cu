// SPDX-License-Identifier: Apache-2.0
// FG_SGEMM_OZAKI_INT8's own INT8 product on Hopper (wgmma_products.hpp). Built for sm_90a only (CMakeLists.txt).
// Each block is persistent over 128 x 256 tiles of the pairs' products, one pair after the other (so that the last
// round of blocks is shared by all pairs, not repeated for each), walked 16 tile rows at a time down each column of
// tiles (so that a column's residues_b tile stays in L2 for 16 of them). Its first warpgroup is the producer: one
// thread copies each 128-deep step of the tile's residues_a (128 rows) and residues_b (256 rows) into one of 4
// stages of shared memory with the tensor copy (128-byte swizzle; rows and depth past the operands come as zeros),
// and the stage's full barrier completes on their bytes. The two consumer warpgroups each multiply 64 rows by the
// 256 columns with wgmma (4 of k 32 per step) into 128 INT32 registers a thread, and free a stage (its empty
// barrier) once the products reading it are done. Then each warp writes its 16 x 256 slab through shared memory,
// 16 bytes a lane along rows, skipping rows and columns past the product.
#include "sgemm/ozaki_int8/wgmma_products.hpp"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <atomic>
#include <cstring>

#include "core/check.hpp"
#include "core/launch.cuh"
#include "cuda/hopper.cuh"
#include "sgemm/ozaki_int8/math.hpp"
#include "sgemm/ozaki_int8/plan.hpp"

namespace fastgemm::detail::ozaki {
namespace {

constexpr int kTileRows = 128, kTileCols = 256, kStepDepth = 128, kStages = 4;
static_assert(kStepDepth == kHalfSetStep, "a half-depth set is zero up to a whole step");
constexpr int kWgmmaDepth = 32;
constexpr int kGroupRows = 16;  // tile rows walked before the next column of tiles
constexpr int kAStageBytes = kTileRows * kStepDepth, kBStageBytes = kTileCols * kStepDepth;
constexpr int kStageBytes = kAStageBytes + kBStageBytes;
constexpr int kConsumerWarps = 8;
constexpr int kSlabBytes = 16 * 256;  // a warp's 16 rows x 64 INT32, staged for the store
constexpr int kEpilogueBytes = kConsumerWarps * kSlabBytes;
constexpr int kThreads = 384;
// The stages, the slabs, the barriers, and room to align the stages to 1024 bytes (the swizzle's period).
constexpr int kSharedBytes = kStages * kStageBytes + kEpilogueBytes + 2 * kStages * 8 + 1024;
// setmaxnreg's plan: the producer's warpgroup down to 40 registers, the consumers' up to 232, out of the
// registers the block is launched with (its pool): at least this many a thread.
constexpr int kProducerRegisters = 40, kConsumerRegisters = 232;
constexpr int kLaunchRegisters = (128 * kProducerRegisters + 256 * kConsumerRegisters + kThreads - 1) / kThreads;

struct Shape {
  int rows, cols, pitch, depth;  // of one pair's product; pitch in elements of the output
  int pairs;
  int64_t output_stride;  // elements of the output from one pair's product to the next
  // Where not null, each pair's operands hold kCodeSets sets of lines, the second the codes at half depth, taken
  // where codes_at_half_depth(*half_chunks).
  const CodeChunks *half_chunks;
  // For residues: pair p's sums s written as s - q rint(s / q), one byte, q = modulus[p % moduli] (256, or odd), by
  // math.hpp's sum_residue_byte from q, 1 / q rounded to a float and sum_split_residue(q).
  int moduli;
  int modulus[kMaxModuli], split_residue[kMaxModuli];
  float inverse_modulus[kMaxModuli];
};

__device__ __forceinline__ void tile_origin(int tile, int tile_rows, int tile_cols, int *row0, int *col0) {
  const int per_group = kGroupRows * tile_cols;
  const int group = tile / per_group, first = group * kGroupRows;
  const int height = min(tile_rows - first, kGroupRows);
  const int within = tile - group * per_group;
  *row0 = (first + within % height) * kTileRows;
  *col0 = within / height * kTileCols;
}

// kResidues: the output is one byte an element, the sum's residue modulo shape.modulus as the Chinese remainder
// reconstruction reduces it (CrtSums::add: in [-p / 2, p / 2], 128 for p = 256 written as -128, the same class), in
// FP32 and integer arithmetic (a double's conversions, a quarter of the rate, held the tensor cores back in the
// epilogue); otherwise the INT32 sums.
template <bool kResidues>
__global__ void __launch_bounds__(kThreads, 1)
    own_product_kernel(const __grid_constant__ CUtensorMap residues_a, const __grid_constant__ CUtensorMap residues_b,
                       void *__restrict__ output, Shape shape) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using namespace hopper;
  extern __shared__ uint8_t shared[];
  const uint32_t base = (shared_address(shared) + 1023u) & ~1023u;
  const uint32_t slabs = base + kStages * kStageBytes;
  const uint32_t full = slabs + kEpilogueBytes, empty = full + kStages * 8;  // barrier s at + 8 s
  const int thread = threadIdx.x, warpgroup = thread / 128;
  if (thread == 0) {
    for (int s = 0; s < kStages; ++s) {
      barrier_init(full + 8 * s, 1);
      barrier_init(empty + 8 * s, kConsumerWarps);
    }
    barrier_init_fence();
    prefetch_map(&residues_a);
    prefetch_map(&residues_b);
  }
  __syncthreads();
  const int tile_rows = (shape.rows + kTileRows - 1) / kTileRows;
  const int tile_cols = (shape.cols + kTileCols - 1) / kTileCols;
  const int pair_tiles = tile_rows * tile_cols, tiles = pair_tiles * shape.pairs;
  int sets = 1, set = 0, depth = shape.depth;  // the sets of lines a pair's operands hold, the one taken, its depth
  if (shape.half_chunks != nullptr) {
    sets = kCodeSets;
    if (codes_at_half_depth(*shape.half_chunks)) set = 1, depth = shape.depth / 2;
  }
  const int steps = (depth + kStepDepth - 1) / kStepDepth;
  // The pairs' residues lie one after the other, the tensor maps' lines pair * rows (or cols) on: a tile's lines
  // past its pair's come from the next pair's (or zeros past the last), and give sums nobody stores.

  if (warpgroup == 0) {
    lower_registers<kProducerRegisters>();
    if (thread != 0) return;
    uint32_t step_count = 0;
    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
      const int pair = tile / pair_tiles;
      int row0 = 0, col0 = 0;
      tile_origin(tile - pair * pair_tiles, tile_rows, tile_cols, &row0, &col0);
      row0 += (pair * sets + set) * shape.rows;
      col0 += (pair * sets + set) * shape.cols;
      for (int step = 0; step < steps; ++step, ++step_count) {
        const uint32_t s = step_count % kStages, parity = step_count / kStages & 1;
        barrier_wait(empty + 8 * s, parity ^ 1);
        barrier_arrive_expecting(full + 8 * s, kStageBytes);
        const uint32_t stage = base + s * kStageBytes;
        copy_box(stage, &residues_a, full + 8 * s, step * kStepDepth, row0);
        copy_box(stage + kAStageBytes, &residues_b, full + 8 * s, step * kStepDepth, col0);
      }
    }
    return;
  }

  raise_registers<kConsumerRegisters>();
  const int half = warpgroup - 1;                        // the 64 rows of the tile this warpgroup multiplies
  const int warp = thread / 32 % 4, lane = thread % 32;  // the warp's 16 of them
  int sums[128];
  uint32_t step_count = 0;
  for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int pair = tile / pair_tiles;
    int row0 = 0, col0 = 0;
    tile_origin(tile - pair * pair_tiles, tile_rows, tile_cols, &row0, &col0);
#pragma unroll
    for (int i = 0; i < 128; ++i) sums[i] = 0;
    uint32_t previous = 0;
    for (int step = 0; step < steps; ++step, ++step_count) {
      const uint32_t s = step_count % kStages, parity = step_count / kStages & 1;
      barrier_wait(full + 8 * s, parity);
      const uint64_t a = swizzled_tile(base + s * kStageBytes + half * 64 * kStepDepth);
      const uint64_t b = swizzled_tile(base + s * kStageBytes + kAStageBytes);
      pin(sums);
      wgmma_fence();
#pragma unroll
      for (int k = 0; k < kStepDepth / kWgmmaDepth; ++k) wgmma_64x256x32(sums, a + 2 * k, b + 2 * k, step | k);
      wgmma_commit();
      pin(sums);
      if (step > 0) {  // the step before is done: its stage may be refilled
        wgmma_wait<1>();
        pin(sums);
        if (lane == 0) barrier_arrive(empty + 8 * previous);
      }
      previous = s;
    }
    wgmma_wait<0>();
    pin(sums);
    if (lane == 0 && steps > 0) barrier_arrive(empty + 8 * previous);

    // The slab: rows row0 + 64 half + 16 warp .. + 15, staged in shared memory 256 bytes a row with its 16-byte
    // chunks swizzled by the row (no bank conflicts either way), then stored 16 bytes a lane along rows: INT32
    // sums in 4 passes of 64 columns, residues in one of 256.
    const uint32_t slab = slabs + (half * 4 + warp) * kSlabBytes;
    const int slab_row = row0 + half * 64 + warp * 16;
    if constexpr (kResidues) {
      const int l = pair % shape.moduli, modulus = shape.modulus[l], split = shape.split_residue[l];
      const float inverse = shape.inverse_modulus[l];
      const auto residue = [&](int sum) { return sum_residue_byte(sum, split, inverse, modulus); };
#pragma unroll
      for (int j = 0; j < 32; ++j) {
#pragma unroll
        for (int i = 0; i < 2; ++i) {
          const int r = lane / 4 + 8 * i, byte = 8 * j + 2 * (lane % 4);
          const uint32_t pair = residue(sums[4 * j + 2 * i]) | residue(sums[4 * j + 2 * i + 1]) << 8;
          store_shared_half(slab + r * 256 + ((byte / 16 ^ (r & 7)) << 4) + byte % 16, pair);
        }
      }
      __syncwarp();
      auto *bytes = static_cast<uint8_t *>(output) + pair * shape.output_stride;
#pragma unroll
      for (int p = 0; p < 8; ++p) {
        const int index = p * 32 + lane, r = index / 16, chunk = index % 16;
        const int row = slab_row + r, col = col0 + chunk * 16;
        const uint4 v = load_shared_quad(slab + r * 256 + ((chunk ^ (r & 7)) << 4));
        // The pitch is a multiple of 16 bytes at least cols rounded up to 16: a chunk past cols lands in the padding.
        if (row < shape.rows && col < shape.cols)
          *reinterpret_cast<uint4 *>(bytes + static_cast<int64_t>(row) * shape.pitch + col) = v;
      }
      __syncwarp();
    } else {
      auto *products = static_cast<int32_t *>(output) + pair * shape.output_stride;
#pragma unroll
      for (int pass = 0; pass < 4; ++pass) {
#pragma unroll
        for (int j8 = 0; j8 < 8; ++j8) {
          const int j = pass * 8 + j8;
#pragma unroll
          for (int i = 0; i < 2; ++i) {
            const int r = lane / 4 + 8 * i, byte = (8 * j8 + 2 * (lane % 4)) * 4;
            store_shared_pair(slab + r * 256 + ((byte / 16 ^ (r & 7)) << 4) + byte % 16, sums[4 * j + 2 * i],
                              sums[4 * j + 2 * i + 1]);
          }
        }
        __syncwarp();
#pragma unroll
        for (int p = 0; p < 8; ++p) {
          const int index = p * 32 + lane, r = index / 16, chunk = index % 16;
          const int row = slab_row + r, col = col0 + pass * 64 + chunk * 4;
          const uint4 v = load_shared_quad(slab + r * 256 + ((chunk ^ (r & 7)) << 4));
          if (row < shape.rows && col < shape.cols)  // cols is a multiple of 4: a chunk is wholly in or out
            *reinterpret_cast<uint4 *>(products + static_cast<int64_t>(row) * shape.pitch + col) = v;
        }
        __syncwarp();
      }
    }
  }
#else
  __trap();  // never launched: own_products_ready() is false without sm_90a code
#endif
}

// The driver's tensor-map encoder (no link against libcuda: through the runtime's entry point).
PFN_cuTensorMapEncodeTiled_v12000 encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 found = [] {
    void *function = nullptr;
    cudaDriverEntryPointQueryResult result = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &function, 12000, cudaEnableDefault, &result) !=
            cudaSuccess ||
        result != cudaDriverEntryPointSuccess)
      return static_cast<PFN_cuTensorMapEncodeTiled_v12000>(nullptr);
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(function);
  }();
  return found;
}

// Lines x depth int8, depth-contiguous, in boxes of kStepDepth x box_lines with the 128-byte swizzle.
Status tensor_map(const int8_t *data, int64_t lines, int64_t depth, int box_lines, CUtensorMap *map) {
  std::memset(map, 0, sizeof *map);
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(depth), static_cast<cuuint64_t>(lines)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(depth)};
  const cuuint32_t box[2] = {kStepDepth, static_cast<cuuint32_t>(box_lines)};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult made = encoder()(map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, const_cast<int8_t *>(data), dims, strides, box,
                                  element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                  CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (made != CUDA_SUCCESS)
    return Status::failure(StatusCode::internal_error,
                           "cuTensorMapEncodeTiled failed (" + std::to_string(static_cast<int>(made)) + ")");
  return Status::success();
}

constexpr int kMaxDevices = 64;
std::atomic<int> readiness[kMaxDevices];  // 0 not asked yet, 1 ready, 2 not
std::atomic<int> processors[kMaxDevices];

bool ask_readiness(int device) {
  int major = 0, minor = 0, optin = 0, count = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device) != cudaSuccess)
    return false;
  if (major != 9 || minor != 0 || optin < kSharedBytes || encoder() == nullptr) return false;
  for (const auto kernel : {own_product_kernel<false>, own_product_kernel<true>}) {
    cudaFuncAttributes attributes = {};
    if (cudaFuncGetAttributes(&attributes, kernel) != cudaSuccess) return false;  // no sm_90a code
    if (attributes.numRegs < kLaunchRegisters) return false;  // setmaxnreg would wait for registers forever
    if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSharedBytes) != cudaSuccess)
      return false;
  }
  processors[device].store(count);
  return true;
}

}  // namespace

bool own_products_ready() {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= kMaxDevices) return false;
  int state = readiness[device].load();
  if (state == 0) {
    state = ask_readiness(device) ? 1 : 2;
    (void)cudaGetLastError();  // a failed attribute query is an answer, not an error of the caller's
    readiness[device].store(state);
  }
  return state == 1;
}

bool own_products_take(int64_t padded_rows, int64_t padded_cols, int64_t depth, int64_t pairs) {
  // Whole tiles at least; the tensor copies' strides in multiples of 16 bytes, the stores' chunks of 4 columns
  // wholly in or out; the tiles' count, the tensor maps' lines and every index in an int.
  return pairs >= 1 && padded_rows >= kTileRows && padded_cols >= kTileCols && depth >= kStepDepth && depth % 16 == 0 &&
         padded_cols % 4 == 0 && padded_rows < (1 << 30) && padded_cols < (1 << 30) && depth < (1 << 30) &&
         pairs < (1 << 30) && pairs * padded_rows < (int64_t{1} << 31) && pairs * padded_cols < (int64_t{1} << 31) &&
         pairs * ((padded_rows + kTileRows - 1) / kTileRows) * ((padded_cols + kTileCols - 1) / kTileCols) < (1 << 28);
}

int64_t own_products_tiles(int64_t padded_rows, int64_t padded_cols, int64_t pairs) {
  return pairs * ((padded_rows + kTileRows - 1) / kTileRows) * ((padded_cols + kTileCols - 1) / kTileCols);
}

namespace {

Status own_product(const int8_t *residues_a, const int8_t *residues_b, void *output, bool residues, int64_t padded_rows,
                   int64_t padded_cols, int64_t pitch, int64_t depth, int64_t pairs, const double *moduli,
                   int moduli_count, const CodeChunks *half_chunks, cudaStream_t stream) {
  const int64_t sets = half_chunks != nullptr ? kCodeSets : 1;
  CUtensorMap a = {}, b = {};
  FG_RETURN_IF_ERROR(tensor_map(residues_a, pairs * sets * padded_rows, depth, kTileRows, &a));
  FG_RETURN_IF_ERROR(tensor_map(residues_b, pairs * sets * padded_cols, depth, kTileCols, &b));
  int device = 0;
  FG_CUDA_CHECK(cudaGetDevice(&device));
  const int64_t tiles = own_products_tiles(padded_rows, padded_cols, pairs);
  const int64_t blocks = tiles < processors[device].load() ? tiles : processors[device].load();
  Shape shape{static_cast<int>(padded_rows),
              static_cast<int>(padded_cols),
              static_cast<int>(pitch),
              static_cast<int>(depth),
              static_cast<int>(pairs),
              padded_rows * pitch,
              half_chunks,
              moduli_count,
              {},
              {},
              {}};
  for (int l = 0; residues && l < moduli_count; ++l) {  // own_int8_residues checked them (INT32 sums take none)
    const int p = static_cast<int>(moduli[l]);
    shape.modulus[l] = p;
    shape.split_residue[l] = sum_split_residue(p);
    shape.inverse_modulus[l] = 1.0f / static_cast<float>(p);
  }
  return launch(residues ? own_product_kernel<true> : own_product_kernel<false>,
                dim3(static_cast<unsigned int>(blocks < 1 ? 1 : blocks)), dim3(kThreads), kSharedBytes, stream, a, b,
                output, shape);
}

bool aligned(const void *pointer) { return reinterpret_cast<uintptr_t>(pointer) % 16 == 0; }

}  // namespace

Status own_int8_products(const int8_t *residues_a, const int8_t *residues_b, int32_t *products, int64_t padded_rows,
                         int64_t padded_cols, int64_t pitch, int64_t depth, int64_t pairs, cudaStream_t stream,
                         const CodeChunks *half_chunks) {
  const int64_t sets = half_chunks != nullptr ? kCodeSets : 1;
  if (!own_products_take(padded_rows, padded_cols, depth, pairs * sets) || pitch < padded_cols || pitch % 4 != 0 ||
      pitch >= (1 << 30) || !aligned(residues_a) || !aligned(residues_b) || !aligned(products))
    return Status::failure(StatusCode::internal_error, "the own INT8 product cannot take this product's layout");
  const double none = 0.0;
  return own_product(residues_a, residues_b, products, false, padded_rows, padded_cols, pitch, depth, pairs, &none, 1,
                     half_chunks, stream);
}

Status own_int8_residues(const int8_t *residues_a, const int8_t *residues_b, int8_t *residues, int64_t padded_rows,
                         int64_t padded_cols, int64_t pitch, int64_t depth, int64_t pairs, const double *moduli,
                         int moduli_count, cudaStream_t stream) {
  bool moduli_fit = moduli != nullptr && moduli_count >= 1 && moduli_count <= kMaxModuli;
  for (int l = 0; moduli_fit && l < moduli_count; ++l)  // 256, or an odd integer from 3 (sum_residue_byte's)
    moduli_fit =
        moduli[l] == 256.0 || (moduli[l] >= 3.0 && moduli[l] <= 255.0 && moduli[l] == static_cast<int>(moduli[l]) &&
                               static_cast<int>(moduli[l]) % 2 == 1);
  if (!own_products_take(padded_rows, padded_cols, depth, pairs) || pitch < residue_pitch(padded_cols) ||
      pitch % 16 != 0 || pitch >= (1 << 30) || !aligned(residues_a) || !aligned(residues_b) || !aligned(residues) ||
      !moduli_fit)
    return Status::failure(StatusCode::internal_error, "the own INT8 product cannot take this product's layout");
  return own_product(residues_a, residues_b, residues, true, padded_rows, padded_cols, pitch, depth, pairs, moduli,
                     moduli_count, nullptr, stream);
}

}  // namespace fastgemm::detail::ozaki
