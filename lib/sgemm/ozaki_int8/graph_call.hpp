// SPDX-License-Identifier: Apache-2.0
// AUTO's emulation outside a capture, as a graph the handle keeps (graph_call.cpp).
#pragma once

#include "core/problem.hpp"
#include "core/status.hpp"
#include "core/variant.hpp"

namespace fastgemm::detail::ozaki {

// AUTO's emulation outside a capture: the call's graph, captured on the first call of its key and kept by the
// handle, runs on the call's stream, given the call's addresses and scalars where they differ from its last launch's;
// the host waits for nothing, and the report reads the device's choice when asked.
Status run_as_graph(const GemmProblem &p, const RunArgs &args);

}  // namespace fastgemm::detail::ozaki
