// SPDX-License-Identifier: Apache-2.0
// FASTGEMM_HOST_PROFILE: fg_sgemm_host appends each call's spans to the file it names, and they account for the call's
// work exactly (every flop of the product, every element of C downloaded once), inside the call's time; C is what it is
// without the profile; without the variable nothing is written.
#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "gpu/gemm_harness.hpp"

using namespace fgtest;

namespace {

struct ProfiledCall {
  std::map<std::string, std::string> header;
  struct Span {
    std::string activity;
    double begin = 0, end = 0;
    long long amount = 0;
  };
  std::vector<Span> spans;
};

std::vector<ProfiledCall> read_profile(const std::string &path) {
  std::vector<ProfiledCall> calls;
  std::ifstream file(path);
  std::string line;
  while (std::getline(file, line)) {
    if (line.rfind("# ", 0) == 0) {
      calls.emplace_back();
      std::istringstream fields(line.substr(2));
      std::string field;
      while (fields >> field) {
        const size_t equals = field.find('=');
        if (equals != std::string::npos) calls.back().header[field.substr(0, equals)] = field.substr(equals + 1);
      }
    } else if (!line.empty() && line.rfind("worker,", 0) != 0) {
      REQUIRE(!calls.empty());
      std::istringstream fields(line);
      std::string worker, device, activity, begin, end, amount;
      std::getline(fields, worker, ',');
      std::getline(fields, device, ',');
      std::getline(fields, activity, ',');
      std::getline(fields, begin, ',');
      std::getline(fields, end, ',');
      std::getline(fields, amount, ',');
      calls.back().spans.push_back({activity, std::stod(begin), std::stod(end), std::stoll(amount)});
    }
  }
  return calls;
}

}  // namespace

TEST_CASE("host: FASTGEMM_HOST_PROFILE accounts for the call's products and transfers", "[host]") {
  Handle handle;
  const int64_t m = 150, n = 130, k = 200;
  GemmCase gc;
  gc.m = m, gc.n = n, gc.k = k, gc.alpha = 1.5f, gc.beta = -0.5f;
  gc = gc.resolved();
  std::vector<float> a(gc.a_elements()), b(gc.b_elements()), c0(gc.c_elements());
  fill_uniform(a, 31);
  fill_uniform(b, 32);
  fill_uniform(c0, 33);
  const std::vector<double> reference = reference_gemm(gc, a, b, c0);
  const TemporaryFile file("fastgemm-profile");
  REQUIRE(!file.path().empty());
  const ScopedEnvironment tiles("FASTGEMM_HOST_TILE", "64");  // 3 x 3 tiles of 4 k chunks
  std::vector<float> c = c0;
  {
    const ScopedEnvironment profile("FASTGEMM_HOST_PROFILE", file.path().c_str());
    REQUIRE_FG_OK(fg_sgemm_host(handle.get(), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, m, n, k, gc.alpha, a.data(), k, b.data(),
                                n, gc.beta, c.data(), n));
  }
  CHECK(relative_error(c, reference) <= gemm_tolerance(k));
  // Without the variable, the next call adds nothing.
  std::vector<float> again = c0;
  const ScopedEnvironment unset("FASTGEMM_HOST_PROFILE", nullptr);
  REQUIRE_FG_OK(fg_sgemm_host(handle.get(), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, m, n, k, gc.alpha, a.data(), k, b.data(), n,
                              gc.beta, again.data(), n));

  const std::vector<ProfiledCall> calls = read_profile(file.path());
  REQUIRE(calls.size() == 1);
  const ProfiledCall &call = calls[0];
  CHECK(call.header.at("m") == "150");
  CHECK(call.header.at("n") == "130");
  CHECK(call.header.at("k") == "200");
  CHECK(call.header.at("tile") == "64x64x64");
  CHECK(call.header.at("failed") == "0");
  REQUIRE(call.header.at("device_times") == "1");
  const double total = std::stod(call.header.at("total_ms"));
  std::map<std::string, long long> amount, count;
  for (const ProfiledCall::Span &span : call.spans) {
    INFO(span.activity << " " << span.begin << " .. " << span.end << " ms of " << total);
    CHECK(span.begin <= span.end);
    // Device spans are placed by one synchronization at the worker's start: allow a little either side.
    CHECK(span.begin >= -1.0);
    CHECK(span.end <= total + 1.0);
    amount[span.activity] += span.amount;
    ++count[span.activity];
  }
  // Every step's product is there, once: 2 m n k flops in all, in 9 tiles x 4 chunks.
  CHECK(amount["product"] == 2 * m * n * k);
  CHECK(count["product"] == 36);
  // C comes back once, every element; A, B and (beta != 0) C go up at least once.
  CHECK(amount["download"] == static_cast<long long>(m * n * sizeof(float)));
  CHECK(amount["upload"] >= static_cast<long long>((m * k + k * n + m * n) * sizeof(float)));
  // Pageable operands are packed and C unpacked by the host.
  CHECK(amount["unpack"] == static_cast<long long>(m * n * sizeof(float)));
  CHECK(amount["pack"] + amount["pack_shared"] >= static_cast<long long>((m * k + k * n + m * n) * sizeof(float)));
}

TEST_CASE("host: B's pieces passed between workers (unless FASTGEMM_HOST_PEER=0) leave C's bits unchanged", "[host]") {
  Handle handle;
  const int64_t m = 300, n = 260, k = 200;
  GemmCase gc;
  gc.m = m, gc.n = n, gc.k = k, gc.alpha = 0.75f, gc.beta = 1.25f;
  gc = gc.resolved();
  std::vector<float> a(gc.a_elements()), b(gc.b_elements()), c0(gc.c_elements());
  fill_uniform(a, 41);
  fill_uniform(b, 42);
  fill_uniform(c0, 43);
  const std::vector<double> reference = reference_gemm(gc, a, b, c0);
  // Two workers on each listed device at least, so that even one device has pieces to pass; 5 x 5 tiles of 4 chunks.
  const ScopedEnvironment workers("FASTGEMM_HOST_WORKERS_PER_DEVICE", "2");
  const ScopedEnvironment tiles("FASTGEMM_HOST_TILE", "64");
  const auto product = [&](const char *peer, const char *profile) {
    const ScopedEnvironment peer_variable("FASTGEMM_HOST_PEER", peer);
    const ScopedEnvironment profile_variable("FASTGEMM_HOST_PROFILE", profile);
    std::vector<float> c = c0;
    REQUIRE_FG_OK(fg_sgemm_host(handle.get(), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, m, n, k, gc.alpha, a.data(), k, b.data(),
                                n, gc.beta, c.data(), n));
    return c;
  };
  const std::vector<float> from_host = product("0", nullptr);
  CHECK(relative_error(from_host, reference) <= gemm_tolerance(k));
  const TemporaryFile file("fastgemm-profile");
  REQUIRE(!file.path().empty());
  for (int round = 0; round < 3; ++round) {
    INFO("round " << round);
    const std::vector<float> passed = product(round == 2 ? nullptr : "1", file.path().c_str());
    CHECK(std::memcmp(passed.data(), from_host.data(), passed.size() * sizeof(float)) == 0);
  }
  // Pieces pass between devices only where every pair of the handle's devices can reach the other's memory.
  int count = 0;
  REQUIRE_FG_OK(fg_get_devices(handle.get(), nullptr, 0, &count));
  std::vector<int> devices(static_cast<size_t>(count));
  REQUIRE_FG_OK(fg_get_devices(handle.get(), devices.data(), count, &count));
  bool reach = true;
  for (int from : devices)
    for (int to : devices) {
      int can = 1;
      if (from != to) REQUIRE_CUDA_OK(cudaDeviceCanAccessPeer(&can, from, to));
      reach = reach && can != 0;
    }
  const std::vector<ProfiledCall> calls = read_profile(file.path());
  REQUIRE(calls.size() == 3);
  for (const ProfiledCall &call : calls) {
    CHECK(call.header.at("peer_b") == (reach ? "1" : "0"));
    if (!reach) continue;
    long long copies = 0, copied = 0, flops = 0;
    for (const ProfiledCall::Span &span : call.spans) {
      if (span.activity == "peer_copy") ++copies, copied += span.amount;
      if (span.activity == "product") flops += span.amount;
    }
    // Every worker needs every piece of B in its band's first row, and only one of them brings each from the host:
    // the others copy it, each at most once.
    CHECK(copies > 0);
    CHECK(copied <= static_cast<long long>(k * n * sizeof(float)) * (std::stoll(call.header.at("workers")) - 1));
    CHECK(flops == 2 * m * n * k);
  }
  // FASTGEMM_HOST_PEER=0 takes every piece from the host.
  const TemporaryFile declined("fastgemm-profile");
  REQUIRE(!declined.path().empty());
  CHECK(std::memcmp(product("0", declined.path().c_str()).data(), from_host.data(), from_host.size() * sizeof(float)) ==
        0);
  const std::vector<ProfiledCall> from_host_calls = read_profile(declined.path());
  REQUIRE(from_host_calls.size() == 1);
  CHECK(from_host_calls[0].header.at("peer_b") == "0");
}
