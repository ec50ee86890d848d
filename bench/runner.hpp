// SPDX-License-Identifier: Apache-2.0
// The one driver behind both ops: for every problem, a cuBLAS reference, then each algorithm checked
// against it and timed, each result reported as it completes. An op supplies its problems (BenchCase),
// its algorithm enumeration (AlgoFamily) and how its rate is counted (Metric).
#pragma once

#include <fastgemm/fastgemm.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "options.hpp"
#include "report.hpp"

namespace bench {

// Where a call writes: the output under test, or the reference cuBLAS fills once per problem.
enum class Target { output, reference };

// One problem on the device: operands filled, output and reference allocated.
class Workload {
 public:
  virtual ~Workload() = default;
  // Enqueues one call of the handle's selected algorithm, writing into target.
  virtual fg_status_t run(fg_handle_t handle, Target target) = 0;
  // Enqueues the vendor library's own call for the problem (cuBLAS called directly, no fastgemm on the
  // way), writing into the output; throws BenchError. Only for families with has_direct_vendor.
  virtual void run_direct_vendor() { throw BenchError("no direct vendor call for this op"); }
  virtual void poison_output() = 0;
  // The output's relative error against the reference; waits for the device.
  virtual double relative_error() const = 0;
};

// One problem as asked for on the command line.
class BenchCase {
 public:
  virtual ~BenchCase() = default;
  virtual std::string describe() const = 0;       // for the table
  virtual std::vector<Field> fields() const = 0;  // for CSV and JSON
  virtual double work_per_call() const = 0;       // flops or bytes, as the Metric counts
  virtual double tolerance() const = 0;           // the largest relative error that passes
  // Allocates and fills the operands; throws BenchError.
  virtual std::unique_ptr<Workload> allocate() const = 0;
};

// An op's algorithm enumeration, reached through the C ABI only, so algorithms added to the library
// show up here without edits.
struct AlgoFamily {
  const char *(*name)(int id);  // "unknown" for an id this build does not carry
  fg_status_t (*select)(fg_handle_t handle, int id);
  const char *select_call;
  fg_status_t (*last_ran)(fg_handle_t handle, int *id);  // what AUTO chose; null where the ABI does not tell
  const char *last_ran_call;
  int cublas_id;
  // Whether the op's workloads call the vendor library directly (Workload::run_direct_vendor): that call,
  // under id kDirectVendorId, is then what every ratio is taken to.
  bool has_direct_vendor = false;
  // The handle's math mode by name, for ops the mode applies to; null for the others. Throws BenchError.
  const char *(*math_mode_name)(fg_handle_t handle) = nullptr;
  // The id's former name, which --algo still accepts (a renamed algorithm keeps its value); null for none.
  const char *(*former_name)(int id) = nullptr;
  // The moduli count of the handle's last call in the emulated math mode (0 where it ran FP32 throughout); null
  // for ops without one.
  fg_status_t (*last_moduli)(fg_handle_t handle, int *moduli) = nullptr;
};

constexpr int kDirectVendorId = -1;

// What every ratio of the family is taken to: the direct vendor call, or fastgemm's cuBLAS algorithm.
inline int baseline_algo(const AlgoFamily &family) {
  return family.has_direct_vendor ? kDirectVendorId : family.cublas_id;
}

// The ids from 0 to 100 this build carries, in order.
std::vector<int> carried_algos(const AlgoFamily &family);

// --algo names, each of them possibly "all", to ids: the baseline first, then cuBLAS, each id once; no
// names means auto.
// Throws UsageError for a name this build does not carry.
std::vector<int> resolve_algos(const std::vector<std::string> &names, const AlgoFamily &family);

// The carried algorithm an --algo name (not "all") names; throws UsageError, listing the carried ones, otherwise.
int algo_named(const std::string &name, const AlgoFamily &family, const std::vector<int> &carried);

// Rounding in a reduction of n random terms grows like sqrt(n) unit roundoffs. About 84 of them (1e-5 in
// FP32) up to n = 256, and sqrt(n / 256) times that beyond, stays well above the rounding of any
// summation order and far below the error of a wrong index or a missed tile, which is of order one.
template <typename T>
double tolerance(int64_t reduction_length) {
  constexpr double kUnitRoundoffs = 84;
  return kUnitRoundoffs * std::numeric_limits<T>::epsilon() *
         std::max(1.0, std::sqrt(static_cast<double>(reduction_length) / 256.0));
}

struct Plan {
  Metric metric{};
  AlgoFamily family{};
  std::vector<int> algos;  // the baseline first
  std::vector<std::unique_ptr<BenchCase>> cases;
  std::optional<fg_math_mode_t> math;  // set on the handle before anything runs; unset: the handle's own
};

// Runs the plan on the current device with handle, prints the table, writes the requested reports.
// Returns the exit status: 0, or 1 after any failed check or call.
int run_plan(const Plan &plan, const Options &options, fg_handle_t handle);

}  // namespace bench
