// SPDX-License-Identifier: Apache-2.0
#include "sgemm_suite.hpp"

#include <array>

namespace bench {
namespace {

GemmShape square(int64_t size) { return GemmShape{size, size, size}; }

}  // namespace

const std::vector<int64_t> &classic_sizes() {
  static const std::vector<int64_t> sizes = {128,  256,  384,  512,  768,  1024,  1536,
                                             2048, 3072, 4096, 6144, 8192, 12288, 16384};
  return sizes;
}

std::vector<GemmShape> sgemm_suite() {
  std::vector<GemmShape> shapes;
  for (int64_t size : classic_sizes()) shapes.push_back(square(size));
  for (int64_t size : {1000, 4097, 8191}) shapes.push_back(square(size));
  for (const auto &[m, n, k] : std::vector<std::array<int64_t, 3>>{
           {4096, 4096, 256}, {256, 256, 16384}, {16384, 128, 4096}, {128, 16384, 4096}, {8192, 1024, 8192}}) {
    shapes.push_back(GemmShape{m, n, k});
  }
  for (fg_op_t transa : {FG_OP_N, FG_OP_T})
    for (fg_op_t transb : {FG_OP_N, FG_OP_T}) {
      GemmShape s = square(4096);
      s.transa = transa;
      s.transb = transb;
      shapes.push_back(s);
    }
  GemmShape column_major = square(4096);
  column_major.layout = FG_COL_MAJOR;
  shapes.push_back(column_major);
  for (const auto &[batch, size] : std::vector<std::array<int64_t, 2>>{{64, 256}, {1024, 64}, {16, 1024}}) {
    GemmShape s = square(size);
    s.batch = batch;
    shapes.push_back(s);
  }
  return shapes;
}

}  // namespace bench
