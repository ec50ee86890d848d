// SPDX-License-Identifier: Apache-2.0
// Hopper's asynchronous building blocks (compute capability 9.0, code built for sm_90a): mbarriers, the bulk
// tensor copy (TMA) from global to shared memory, warpgroup tensor-core products (wgmma) over operands in shared
// memory, and the register budget of a warpgroup (setmaxnreg). Only code compiled for sm_90a may call them
// (__CUDA_ARCH_FEAT_SM90_ALL); callers keep other targets of a fat binary compiling without them.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace fastgemm::detail::hopper {

__device__ __forceinline__ uint32_t shared_address(const void *pointer) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(pointer));
}

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

// An mbarrier that `count` arrivals (and, where expected, a transaction count of bytes) complete.
__device__ __forceinline__ void barrier_init(uint32_t barrier, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(barrier), "r"(count) : "memory");
}
// Makes initialized barriers visible to the asynchronous proxy (TMA) before any copy signals them.
__device__ __forceinline__ void barrier_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
// Arrives, and expects `bytes` more of transactions in the barrier's current phase.
__device__ __forceinline__ void barrier_arrive_expecting(uint32_t barrier, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(barrier), "r"(bytes) : "memory");
}
__device__ __forceinline__ void barrier_arrive(uint32_t barrier) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(barrier) : "memory");
}
// Waits until the phase of parity `parity` has completed.
__device__ __forceinline__ void barrier_wait(uint32_t barrier, uint32_t parity) {
  uint32_t done = 0;
  do {
    asm volatile(
        "{\n\t.reg .pred p;\n\t"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
        "selp.u32 %0, 1, 0, p;\n\t}"
        : "=r"(done)
        : "r"(barrier), "r"(parity)
        : "memory");
  } while (done == 0);
}

// A box of a 2-D tensor (coordinates: innermost first) into shared memory; its bytes complete on `barrier`.
// Elements of the box outside the tensor are written as zeros (and counted).
__device__ __forceinline__ void copy_box(uint32_t destination, const CUtensorMap *map, uint32_t barrier, int inner,
                                         int outer) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];" ::"r"(
          destination),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(barrier), "r"(inner), "r"(outer)
      : "memory");
}
__device__ __forceinline__ void prefetch_map(const CUtensorMap *map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

// A warpgroup's register budget, raised or lowered to `kRegisters` per thread.
template <int kRegisters>
__device__ __forceinline__ void raise_registers() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kRegisters));
}
template <int kRegisters>
__device__ __forceinline__ void lower_registers() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kRegisters));
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
// Waits until at most kPending committed groups of this warpgroup's products are in flight.
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(kPending) : "memory");
}

// Keeps the compiler from moving accesses of the accumulators across the fences and waits above.
template <int kCount>
__device__ __forceinline__ void pin(int (&values)[kCount]) {
#pragma unroll
  for (int i = 0; i < kCount; ++i) asm volatile("" : "+r"(values[i])::"memory");
}

// The descriptor of a K-major operand tile in shared memory laid out by a 128-byte-swizzled copy: rows of 128
// bytes, groups of 8 rows 1024 bytes apart (the tile 1024-byte aligned). Bits 0-13: address / 16; 16-29: leading
// byte offset / 16 (unused in this layout, 1); 32-45: stride byte offset / 16; 62-63: 1, the 128-byte swizzle.
// The k-th 32-byte slice of the rows starts 2 k further (32 bytes / 16).
__device__ __forceinline__ uint64_t swizzled_tile(uint32_t address) {
  return static_cast<uint64_t>((address & 0x3FFFF) >> 4) | uint64_t{1} << 16 | uint64_t{1024 >> 4} << 32 |
         uint64_t{1} << 62;
}

// D (64 x 256, INT32) = A (64 x 32, int8) B (256 x 32, int8)^T + (accumulate ? D : 0), A and B K-major in shared
// memory (descriptors). Fragment of D: d[4 j + 2 i + c] is row 16 w + lane / 4 + 8 i, column 8 j + 2 (lane % 4) +
// c, for warp w of the warpgroup.
__device__ __forceinline__ void wgmma_64x256x32(int (&d)[128], uint64_t a, uint64_t b, int accumulate) {
  asm volatile(
      "{\n\t.reg .pred p;\n\t"
      "setp.ne.b32 p, %130, 0;\n\t"
      "wgmma.mma_async.sync.aligned.m64n256k32.s32.s8.s8 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63,"
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79,"
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95,"
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111,"
      "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
      "}, %128, %129, p;\n\t}"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]), "+r"(d[8]),
        "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15]), "+r"(d[16]),
        "+r"(d[17]), "+r"(d[18]), "+r"(d[19]), "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23]), "+r"(d[24]),
        "+r"(d[25]), "+r"(d[26]), "+r"(d[27]), "+r"(d[28]), "+r"(d[29]), "+r"(d[30]), "+r"(d[31]), "+r"(d[32]),
        "+r"(d[33]), "+r"(d[34]), "+r"(d[35]), "+r"(d[36]), "+r"(d[37]), "+r"(d[38]), "+r"(d[39]), "+r"(d[40]),
        "+r"(d[41]), "+r"(d[42]), "+r"(d[43]), "+r"(d[44]), "+r"(d[45]), "+r"(d[46]), "+r"(d[47]), "+r"(d[48]),
        "+r"(d[49]), "+r"(d[50]), "+r"(d[51]), "+r"(d[52]), "+r"(d[53]), "+r"(d[54]), "+r"(d[55]), "+r"(d[56]),
        "+r"(d[57]), "+r"(d[58]), "+r"(d[59]), "+r"(d[60]), "+r"(d[61]), "+r"(d[62]), "+r"(d[63]), "+r"(d[64]),
        "+r"(d[65]), "+r"(d[66]), "+r"(d[67]), "+r"(d[68]), "+r"(d[69]), "+r"(d[70]), "+r"(d[71]), "+r"(d[72]),
        "+r"(d[73]), "+r"(d[74]), "+r"(d[75]), "+r"(d[76]), "+r"(d[77]), "+r"(d[78]), "+r"(d[79]), "+r"(d[80]),
        "+r"(d[81]), "+r"(d[82]), "+r"(d[83]), "+r"(d[84]), "+r"(d[85]), "+r"(d[86]), "+r"(d[87]), "+r"(d[88]),
        "+r"(d[89]), "+r"(d[90]), "+r"(d[91]), "+r"(d[92]), "+r"(d[93]), "+r"(d[94]), "+r"(d[95]), "+r"(d[96]),
        "+r"(d[97]), "+r"(d[98]), "+r"(d[99]), "+r"(d[100]), "+r"(d[101]), "+r"(d[102]), "+r"(d[103]), "+r"(d[104]),
        "+r"(d[105]), "+r"(d[106]), "+r"(d[107]), "+r"(d[108]), "+r"(d[109]), "+r"(d[110]), "+r"(d[111]), "+r"(d[112]),
        "+r"(d[113]), "+r"(d[114]), "+r"(d[115]), "+r"(d[116]), "+r"(d[117]), "+r"(d[118]), "+r"(d[119]), "+r"(d[120]),
        "+r"(d[121]), "+r"(d[122]), "+r"(d[123]), "+r"(d[124]), "+r"(d[125]), "+r"(d[126]), "+r"(d[127])
      : "l"(a), "l"(b), "r"(accumulate));
}

__device__ __forceinline__ void store_shared_pair(uint32_t address, int x, int y) {
  asm volatile("st.shared.v2.b32 [%0], {%1, %2};" ::"r"(address), "r"(x), "r"(y) : "memory");
}
__device__ __forceinline__ void store_shared_half(uint32_t address, uint32_t value) {
  asm volatile("st.shared.u16 [%0], %1;" ::"r"(address), "h"(static_cast<unsigned short>(value)) : "memory");
}
__device__ __forceinline__ uint4 load_shared_quad(uint32_t address) {
  uint4 v;
  asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "r"(address)
               : "memory");
  return v;
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

}  // namespace fastgemm::detail::hopper
