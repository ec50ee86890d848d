// SPDX-License-Identifier: Apache-2.0
// One GPU per rank: under MPI each rank of a node takes the device of its local rank, as the launcher numbers
// the ranks of one node (OpenMPI, Slurm, MPICH), round-robin over the devices the process sees.
#pragma once

namespace fastgemm_blas {

// The launchers' variables for a rank's place among the ranks of its node, in the order they are asked.
constexpr const char *kLocalRankVariables[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID"};

struct RankDevice {
  int device = -1;            // the device the rank takes; -1: no local rank is set (or none usable)
  int local_rank = -1;        // the rank's number among its node's ranks
  const char *variable = "";  // the variable that told it
};

// The device of the local rank that the first set variable of kLocalRankVariables names (a decimal number from
// 0), local_rank % device_count; device -1 where none is set, a set one is not such a number (then `variable`
// names it and local_rank stays -1), or device_count < 1. Pure: `lookup` is getenv, or a test's table.
RankDevice rank_device(const char *(*lookup)(const char *), int device_count);

}  // namespace fastgemm_blas
