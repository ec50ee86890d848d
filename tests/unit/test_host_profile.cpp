// SPDX-License-Identifier: Apache-2.0
// The host engine's profile (FASTGEMM_HOST_PROFILE) without a device: spans from several threads, the variable read,
// and calls written by several profiles at once landing whole, one after the other.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "host/profile.hpp"
#include "support/test_support.hpp"

using fastgemm::detail::HostActivity;
using fastgemm::detail::HostProfile;

namespace {

std::vector<std::string> lines_of(const std::string &path) {
  std::ifstream file(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(file, line);) lines.push_back(line);
  return lines;
}

}  // namespace

TEST_CASE("host profile: FASTGEMM_HOST_PROFILE names the file, unset or empty none", "[host]") {
  {
    const fgtest::ScopedEnvironment unset("FASTGEMM_HOST_PROFILE", nullptr);
    CHECK(HostProfile::from_environment() == nullptr);
  }
  {
    const fgtest::ScopedEnvironment empty("FASTGEMM_HOST_PROFILE", "");
    CHECK(HostProfile::from_environment() == nullptr);
  }
  const fgtest::ScopedEnvironment named("FASTGEMM_HOST_PROFILE", "/tmp/somewhere.csv");
  CHECK(HostProfile::from_environment() != nullptr);
}

TEST_CASE("host profile: calls written at once land whole, each with every span", "[host]") {
  const fgtest::TemporaryFile file("fastgemm-profile-unit");
  REQUIRE(!file.path().empty());
  const std::string &path = file.path();
  constexpr int kProfiles = 4, kThreads = 3, kSpans = 500;
  std::vector<std::thread> writers;
  for (int p = 0; p < kProfiles; ++p)
    writers.emplace_back([&, p] {
      HostProfile profile(path);
      std::vector<std::thread> threads;
      for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
          for (int s = 0; s < kSpans; ++s) profile.host(t, p, HostActivity::pack, profile.now(), 1000 + s);
        });
      for (std::thread &thread : threads) thread.join();
      profile.write("call=" + std::to_string(p));
    });
  for (std::thread &writer : writers) writer.join();

  const std::vector<std::string> lines = lines_of(path);
  // Each call: its comment line, the column names, then its spans, none of another call's among them.
  std::vector<int> seen(kProfiles, 0);
  size_t i = 0;
  while (i < lines.size()) {
    REQUIRE(lines[i].rfind("# call=", 0) == 0);
    const int call = std::stoi(lines[i].substr(7));
    REQUIRE(call >= 0);
    REQUIRE(call < kProfiles);
    ++seen[static_cast<size_t>(call)];
    REQUIRE(i + 1 < lines.size());
    CHECK(lines[i + 1] == "worker,device,activity,begin_ms,end_ms,amount");
    i += 2;
    long long amounts = 0;
    int spans = 0;
    double last_begin = -1;
    for (; i < lines.size() && lines[i].rfind("# ", 0) != 0; ++i, ++spans) {
      int worker = -1, device = -1;
      char activity[32] = {};
      double begin = 0, end = 0;
      long long amount = 0;
      REQUIRE(std::sscanf(lines[i].c_str(), "%d,%d,%31[^,],%lf,%lf,%lld", &worker, &device, activity, &begin, &end,
                          &amount) == 6);
      CHECK(device == call);  // a span of this call's profile, not another's
      CHECK(std::string(activity) == "pack");
      CHECK(begin <= end);
      CHECK(begin >= last_begin);  // in order of their start
      last_begin = begin;
      amounts += amount;
    }
    CHECK(spans == kThreads * kSpans);
    CHECK(amounts == kThreads * (1000LL * kSpans + kSpans * (kSpans - 1) / 2));
  }
  for (int count : seen) CHECK(count == 1);
}
