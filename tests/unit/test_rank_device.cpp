// SPDX-License-Identifier: Apache-2.0
// libfastgemm_blas under MPI: the device each rank takes from the local rank its launcher sets.
#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include <catch2/catch.hpp>

#include <cstring>
#include <map>
#include <string>

#include "blas/rank_device.hpp"

using fastgemm_blas::rank_device;
using fastgemm_blas::RankDevice;

namespace {

// The environment a test sets, read through the function rank_device takes.
std::map<std::string, std::string> g_environment;
const char *lookup(const char *name) {
  const auto found = g_environment.find(name);
  return found == g_environment.end() ? nullptr : found->second.c_str();
}

}  // namespace

TEST_CASE("rank_device: the local rank, round-robin over the devices", "[rank_device]") {
  g_environment = {{"OMPI_COMM_WORLD_LOCAL_RANK", "5"}};
  RankDevice chosen = rank_device(lookup, 4);
  CHECK(chosen.device == 1);
  CHECK(chosen.local_rank == 5);
  CHECK(std::strcmp(chosen.variable, "OMPI_COMM_WORLD_LOCAL_RANK") == 0);
  for (int rank = 0; rank < 9; ++rank) {
    g_environment = {{"SLURM_LOCALID", std::to_string(rank)}};
    CHECK(rank_device(lookup, 2).device == rank % 2);
    CHECK(rank_device(lookup, 1).device == 0);
  }
  g_environment = {{"MPI_LOCALRANKID", "3"}};
  CHECK(rank_device(lookup, 8).device == 3);
  CHECK(std::strcmp(rank_device(lookup, 8).variable, "MPI_LOCALRANKID") == 0);
}

TEST_CASE("rank_device: OpenMPI's variable first, then Slurm's, then MPICH's", "[rank_device]") {
  g_environment = {{"OMPI_COMM_WORLD_LOCAL_RANK", "1"}, {"SLURM_LOCALID", "2"}, {"MPI_LOCALRANKID", "3"}};
  CHECK(rank_device(lookup, 4).device == 1);
  g_environment = {{"SLURM_LOCALID", "2"}, {"MPI_LOCALRANKID", "3"}};
  CHECK(rank_device(lookup, 4).device == 2);
  g_environment = {{"OMPI_COMM_WORLD_LOCAL_RANK", ""}, {"MPI_LOCALRANKID", "3"}};  // empty counts as unset
  CHECK(rank_device(lookup, 4).device == 3);
}

TEST_CASE("rank_device: nothing chosen without a launcher, a usable value or a device", "[rank_device]") {
  g_environment = {};
  RankDevice chosen = rank_device(lookup, 4);
  CHECK(chosen.device == -1);
  CHECK(*chosen.variable == '\0');
  for (const char *bad : {"-1", "x", "1x", "0.5", "99999999999999999999"}) {
    INFO(bad);
    g_environment = {{"OMPI_COMM_WORLD_LOCAL_RANK", bad}, {"SLURM_LOCALID", "1"}};
    chosen = rank_device(lookup, 4);
    CHECK(chosen.device == -1);  // the first variable set decides, even when it cannot be used
    CHECK(chosen.local_rank == -1);
    CHECK(std::strcmp(chosen.variable, "OMPI_COMM_WORLD_LOCAL_RANK") == 0);
  }
  g_environment = {{"OMPI_COMM_WORLD_LOCAL_RANK", "2"}};
  chosen = rank_device(lookup, 0);
  CHECK(chosen.device == -1);
  CHECK(chosen.local_rank == 2);
}
