// SPDX-License-Identifier: Apache-2.0
// The emulated mode in graphs and on streams: a captured call's replays, each choosing for its own operands, and
// AUTO's asynchronous calls, each launching the call's graph again.
#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <thread>
#include <vector>

#include "gpu/emulated_support.hpp"
#include "gpu/probe_support.hpp"

using namespace fgtest;

namespace {

// A handle in the emulated mode on a non-blocking stream of its own, both given back at the end.
struct EmulatedOnStream {
  Handle handle;
  cudaStream_t stream = nullptr;
  EmulatedOnStream() {
    REQUIRE_FG_OK(fg_set_math_mode(handle.get(), FG_MATH_FP32_EMULATED));
    REQUIRE_CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    REQUIRE_FG_OK(fg_set_stream(handle.get(), stream));
  }
  ~EmulatedOnStream() {
    (void)fg_set_stream(handle.get(), nullptr);
    (void)cudaStreamDestroy(stream);
  }
  EmulatedOnStream(const EmulatedOnStream &) = delete;
  EmulatedOnStream &operator=(const EmulatedOnStream &) = delete;
};

// One replay over C poisoned with NaN; C after it.
std::vector<float> replay(cudaGraphExec_t exec, DeviceProduct &product, cudaStream_t stream) {
  product.poison();
  REQUIRE_CUDA_OK(cudaGraphLaunch(exec, stream));
  REQUIRE_CUDA_OK(cudaStreamSynchronize(stream));
  return product.result();
}

int64_t inexact_elements(const std::vector<float> &c, const Reference &r) {
  int64_t inexact = 0;
  for (size_t i = 0; i < c.size(); ++i) inexact += static_cast<double>(c[i]) != r.product[i];
  return inexact;
}

bool same_bits(const std::vector<float> &x, const std::vector<float> &y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
}

// One call over C poisoned with NaN, on the handle's stream: what ran, the emulation's report, and C.
struct Called {
  fg_sgemm_algo_t ran = FG_SGEMM_AUTO;
  Emulation emulation;
  std::vector<float> c;
};
Called call_once(fg_handle_t handle, cudaStream_t stream, DeviceProduct &product) {
  product.poison();
  REQUIRE_CUDA_OK(cudaDeviceSynchronize());
  REQUIRE_FG_OK(product.run(handle));
  Called called;
  called.ran = last_algo(handle);  // waits for the device's choice
  called.emulation = emulation_of(handle);
  REQUIRE_CUDA_OK(cudaStreamSynchronize(stream));
  called.c = product.result();
  return called;
}

// One launch of a sequence over the same call: what it is, its operands and their reference.
struct Launch {
  const char *what;
  const Operands *operands;
  const Reference *reference;
};

}  // namespace

TEST_CASE("emulated: a captured call runs the emulation, and each replay chooses for its own operands",
          "[emulated][emulated-large][graph]") {
  EmulatedOnStream on;
  Handle &handle = on.handle;
  const cudaStream_t stream = on.stream;

  SECTION("AUTO on a large product: the replay's bits are the direct call's; integers exact") {
    const Operands uniform = make_operands(Inputs{Distribution::uniform, 0}, 1024, 2048, 8192, 7000);
    const Operands binary = make_hard(HardCase{Hard::binary, 0, "0/1"}, 1024, 2048, 8192, 7001);
    const Reference binary_reference = reference_of(binary);
    DeviceProduct product(uniform);
    product.poison();
    REQUIRE_FG_OK(product.run(handle.get()));  // outside a capture, for the bits to compare with
    CHECK(last_algo(handle.get()) == FG_SGEMM_OZAKI_INT8);
    REQUIRE_CUDA_OK(cudaStreamSynchronize(stream));
    const std::vector<float> direct = product.result();
    cudaGraphExec_t exec = capture_call(stream, [&] { return product.run(handle.get()); });
    CHECK(last_algo(handle.get()) == FG_SGEMM_OZAKI_INT8);
    CHECK(emulation_of(handle.get()).moduli == 0);  // a replay's choice is the device's: none to report at capture
    for (int round = 0; round < 2; ++round) {
      product.load(uniform);
      CHECK(same_bits(replay(exec, product, stream), direct));
      product.load(binary);
      CHECK(inexact_elements(replay(exec, product, stream), binary_reference) == 0);
    }
    REQUIRE_CUDA_OK(cudaGraphExecDestroy(exec));
  }

  SECTION("forced: emulated, declined to FP32 and NaN rows fixed up, as each replay's operands ask") {
    REQUIRE_FG_OK(fg_set_sgemm_algo(handle.get(), FG_SGEMM_OZAKI_INT8));
    const int64_t m = 256, n = 320, k = 1024;
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const Operands uniform = make_operands(Inputs{Distribution::uniform, 0}, m, n, k, 7100);
    Operands few_nan = uniform, many_nan = uniform;
    for (int64_t i : {3, 100, 255}) few_nan.a[i * k + 17] = nan;
    for (int64_t i = 0; i < m; i += 2) many_nan.a[i * k + i % k] = nan;
    const Operands inner = make_hard(HardCase{Hard::inner, 40, "inner 2^+-40"}, m, n, k, 7101);
    const Operands counts = make_hard(HardCase{Hard::counts, 0, "counts"}, m, n, k, 7102);
    DeviceProduct product(uniform);
    REQUIRE_FG_OK(product.run(handle.get()));  // the first call of the shape grows the workspace, outside the capture
    REQUIRE_CUDA_OK(cudaStreamSynchronize(stream));
    cudaGraphExec_t exec = capture_call(stream, [&] { return product.run(handle.get()); });
    struct Replay {
      const char *what;
      const Operands *operands;
    };
    for (const Replay &r : {Replay{"uniform", &uniform}, Replay{"counts", &counts}, Replay{"inner 2^+-40", &inner},
                            Replay{"NaN in 3 rows", &few_nan}, Replay{"NaN in half the rows", &many_nan},
                            Replay{"uniform again", &uniform}}) {
      INFO(r.what);
      product.load(*r.operands);
      const std::vector<float> replayed = replay(exec, product, stream);
      // The same operands through a direct call: the emulation's bits, or its refusal (then FP32 throughout).
      product.poison();
      const fg_status_t status = product.run(handle.get());
      REQUIRE_CUDA_OK(cudaStreamSynchronize(stream));
      const std::vector<float> direct = product.result();
      Reference reference = reference_of(*r.operands);
      // NaN exactly where the double reference has it; the rest measured without those elements.
      std::vector<float> finite = replayed;
      int64_t wrong_nan = 0;
      for (size_t i = 0; i < finite.size(); ++i) {
        const bool expect_nan = std::isnan(reference.product[i]);
        wrong_nan += std::isnan(finite[i]) != expect_nan;
        if (expect_nan) finite[i] = 0, reference.product[i] = 0, reference.magnitude[i] = 0;
      }
      CHECK(wrong_nan == 0);
      if (status == FG_STATUS_SUCCESS) {
        CHECK(same_bits(replayed, direct));
        CHECK(guarantee_of(finite, reference, k).beyond == 0);
      } else {
        CHECK(status == FG_STATUS_NOT_SUPPORTED);
        CHECK(relative_error(finite, reference.product) <= gemm_tolerance(k));
      }
      if (r.operands == &counts) CHECK(inexact_elements(replayed, reference) == 0);
      std::printf("emulated, captured and replayed: %-22s direct call %s\n", r.what, fg_status_name(status));
    }
    REQUIRE_CUDA_OK(cudaGraphExecDestroy(exec));
  }
}

namespace {

// A host function that holds its stream for `*milliseconds`: work enqueued behind it cannot have run before.
void CUDART_CB hold_stream(void *milliseconds) {
  std::this_thread::sleep_for(std::chrono::milliseconds(*static_cast<const int *>(milliseconds)));
}

}  // namespace

TEST_CASE("emulated: AUTO enqueues and returns; each launch of the call's graph chooses for its operands",
          "[emulated][emulated-large][async]") {
  EmulatedOnStream on;
  Handle &handle = on.handle;
  const cudaStream_t stream = on.stream;
  const int64_t m = 1024, n = 2048, k = 8192;
  const Operands uniform = make_operands(Inputs{Distribution::uniform, 0}, m, n, k, 7200);
  {
    // The handle's cuBLAS and workspace are made by a first call of the shape, on other memory.
    DeviceProduct first(uniform);
    REQUIRE_FG_OK(first.run(handle.get()));
    REQUIRE_CUDA_OK(cudaStreamSynchronize(stream));
  }
  const Reference uniform_reference = reference_of(uniform);

  SECTION("the call returns while its stream is held; the report waits for the device's choice") {
    const Operands inner = make_hard(HardCase{Hard::inner, 40, "inner 2^+-40"}, m, n, k, 7201);
    const Operands binary = make_hard(HardCase{Hard::binary, 0, "0/1"}, m, n, k, 7202);
    const Reference inner_reference = reference_of(inner), binary_reference = reference_of(binary);
    DeviceProduct product(uniform);
    std::vector<float> first_uniform;
    // The first launch captures the call's graph; the others launch it again, over the operands loaded between.
    for (const Launch &l :
         {Launch{"uniform", &uniform, &uniform_reference}, Launch{"inner 2^+-40", &inner, &inner_reference},
          Launch{"0/1", &binary, &binary_reference}, Launch{"uniform again", &uniform, &uniform_reference}}) {
      INFO(l.what);
      product.load(*l.operands);
      product.poison();
      REQUIRE_CUDA_OK(cudaDeviceSynchronize());
      const int held_ms = 400;
      REQUIRE_CUDA_OK(cudaLaunchHostFunc(stream, hold_stream, const_cast<int *>(&held_ms)));
      const auto start = std::chrono::steady_clock::now();
      REQUIRE_FG_OK(product.run(handle.get()));
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      CHECK(seconds < 0.2);  // it did not wait for the held stream
      CHECK(cudaStreamQuery(stream) == cudaErrorNotReady);
      const fg_sgemm_algo_t ran = last_algo(handle.get());  // waits for the device's choice
      const Emulation e = emulation_of(handle.get());
      REQUIRE_CUDA_OK(cudaStreamSynchronize(stream));
      const std::vector<float> c = product.result();
      std::printf("emulated AUTO, asynchronous: %-14s call %.3f ms, ran %s, moduli %d\n", l.what, seconds * 1e3,
                  fg_sgemm_algo_name(ran), e.moduli);
      if (l.operands == &inner) {  // no moduli count pays: FP32 throughout, reported so
        CHECK(ran != FG_SGEMM_OZAKI_INT8);
        CHECK(e.moduli == 0);
        CHECK(relative_error(c, inner_reference.product) <= gemm_tolerance(k));
      } else {
        CHECK(ran == FG_SGEMM_OZAKI_INT8);
        CHECK(e.moduli >= 2);
        CHECK(guarantee_of(c, *l.reference, k).beyond == 0);
      }
      if (l.operands == &binary) CHECK(inexact_elements(c, binary_reference) == 0);
      if (l.operands == &uniform) {
        if (first_uniform.empty()) first_uniform = c;
        CHECK(same_bits(c, first_uniform));
      }
    }
  }

  SECTION(
      "the codes write the residues of 7 moduli beside them where the preview foresees 7; a launch that "
      "chooses otherwise makes its own") {
    // The preview's sample foresees a moduli count, and where it is 7 the codes' pass writes the residues of 7 moduli
    // too, which the products at 7 then take without making them again. Here the sample and the whole disagree both
    // ways: integers (few moduli) in the sampled lines only, the rest uniform (the sample foresees fewer than 7, the
    // plan takes 7 and must make its residues), and the reverse (the sample foresees 7, the plan may take fewer and
    // make those). Row-major: A's rows are contiguous lines, B's columns strided ones, the two kernels of each pass.
    const Operands counts = make_hard(HardCase{Hard::counts, 0, "counts"}, m, n, k, 7206);
    // The preview samples rows i m / 32 of A and columns j n / 32 of B (plan.hpp's kPreviewLines).
    const auto mixed = [&](const Operands &sampled, const Operands &rest) {
      Operands o = rest;
      for (int64_t i = 0; i < m; i += m / 32)
        std::copy(sampled.a.begin() + i * k, sampled.a.begin() + (i + 1) * k, o.a.begin() + i * k);
      for (int64_t l = 0; l < k; ++l)
        for (int64_t j = 0; j < n; j += n / 32) o.b[l * n + j] = sampled.b[l * n + j];
      return o;
    };
    const Operands sampled_integers = mixed(counts, uniform), sampled_floats = mixed(uniform, counts);
    const Reference counts_reference = reference_of(counts), integers_reference = reference_of(sampled_integers);
    const Reference floats_reference = reference_of(sampled_floats);
    DeviceProduct product(uniform);
    std::vector<float> first_uniform;
    for (const Launch &l :
         {Launch{"uniform", &uniform, &uniform_reference}, Launch{"counts", &counts, &counts_reference},
          Launch{"uniform again", &uniform, &uniform_reference},
          Launch{"integers in the sample only", &sampled_integers, &integers_reference},
          Launch{"floats in the sample only", &sampled_floats, &floats_reference},
          Launch{"uniform, last", &uniform, &uniform_reference}}) {
      INFO(l.what);
      product.load(*l.operands);
      const Called called = call_once(handle.get(), stream, product);
      const fg_sgemm_algo_t ran = called.ran;
      const Emulation &e = called.emulation;
      const std::vector<float> &c = called.c;
      std::printf("emulated AUTO, residues beside the codes: %-28s ran %s, moduli %d, %lld elements in FP32\n", l.what,
                  fg_sgemm_algo_name(ran), e.moduli, static_cast<long long>(e.fp32_elements));
      CHECK(ran == FG_SGEMM_OZAKI_INT8);
      CHECK(guarantee_of(c, *l.reference, k).beyond == 0);
      if (l.operands == &uniform || l.operands == &sampled_integers) CHECK(e.moduli == 7);
      if (l.operands == &counts) {
        CHECK(e.moduli < 7);
        CHECK(inexact_elements(c, counts_reference) == 0);
      }
      if (l.operands == &uniform) {
        if (first_uniform.empty()) first_uniform = c;
        CHECK(same_bits(c, first_uniform));
      }
    }
  }

  SECTION("more layouts than the handle keeps graphs for: each still right, nothing written past C's columns") {
    // ldc = n + i for 70 values of i: the key holds the layout, so 70 graphs, more than the handle keeps; the first
    // ones are evicted and made again. alpha varies too, which the graph is given at each launch.
    const int64_t widest = n + 70;
    DeviceMemory da(uniform.a.size() * 4), db(uniform.b.size() * 4), dc(static_cast<size_t>(m * widest) * 4);
    upload(da, uniform.a);
    upload(db, uniform.b);
    std::vector<int> order;
    for (int i = 0; i < 70; ++i) order.push_back(i);
    for (int i : {0, 1, 2, 69}) order.push_back(i);
    for (int i : order) {
      const int64_t ldc = n + i;
      const float alpha = 1.0f + static_cast<float>(i) / 128.0f;
      INFO("ldc " << ldc << ", alpha " << alpha);
      REQUIRE_CUDA_OK(cudaMemset(dc.get(), 0xff, static_cast<size_t>(m * widest) * 4));  // NaN
      REQUIRE_CUDA_OK(cudaDeviceSynchronize());
      REQUIRE_FG_OK(fg_sgemm(handle.get(), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, m, n, k, alpha, da.as<float>(), k,
                             db.as<float>(), n, 0.0f, dc.as<float>(), ldc));
      CHECK(last_algo(handle.get()) == FG_SGEMM_OZAKI_INT8);
      REQUIRE_CUDA_OK(cudaStreamSynchronize(stream));
      const std::vector<float> all = download<float>(dc, m * widest);
      std::vector<float> c(static_cast<size_t>(m * n));
      int64_t written_outside = 0;
      for (int64_t at = 0; at < m * widest; ++at) {
        const int64_t r = at / ldc, col = at % ldc;
        if (r < m && col < n)
          c[r * n + col] = all[at];
        else
          written_outside += !std::isnan(all[at]);
      }
      CHECK(written_outside == 0);
      CHECK(guarantee_of(c, scaled(uniform_reference, alpha), k).beyond == 0);
    }
  }

  SECTION("calls on other memory and with other scalars launch the call's graph again, each on its own operands") {
    // The handle's graph of this shape was made by the first call above, on memory since freed: every call here
    // launches it again (or its beta != 0 twin), given its own addresses and scalars. Each call writes its own C
    // and no other; inner 2^+-40 runs FP32 throughout, the FP32 mode's product captured again for its operands. The
    // last calls repeat earlier operands and scalars: the graph sets the FP32 product it kept for them; then the same
    // operands with new scalars, beta 0 and not: cuBLAS's FP32 product reads them where the graph published them.
    const Operands second = make_operands(Inputs{Distribution::uniform, 0}, m, n, k, 7203);
    const Operands inner = make_hard(HardCase{Hard::inner, 40, "inner 2^+-40"}, m, n, k, 7204);
    const Reference second_reference = reference_of(second), inner_reference = reference_of(inner);
    DeviceProduct first_product(uniform), second_product(second), inner_product(inner);
    std::vector<float> c0(static_cast<size_t>(m * n));
    fill_uniform(c0, 7205);
    struct Call {
      DeviceProduct *product;
      const Reference *reference;
      float alpha, beta;
    };
    DeviceProduct *all[] = {&first_product, &second_product, &inner_product};
    for (const Call &call :
         {Call{&second_product, &second_reference, 1.0f, 0.0f}, Call{&first_product, &uniform_reference, -0.75f, 0.0f},
          Call{&inner_product, &inner_reference, 2.0f, 0.0f}, Call{&second_product, &second_reference, 0.5f, 0.25f},
          Call{&first_product, &uniform_reference, 1.5f, -2.0f}, Call{&inner_product, &inner_reference, -1.0f, 0.5f},
          Call{&first_product, &uniform_reference, 1.0f, 0.0f}, Call{&inner_product, &inner_reference, 2.0f, 0.0f},
          Call{&second_product, &second_reference, 1.0f, 0.0f}, Call{&inner_product, &inner_reference, 2.0f, 0.0f},
          Call{&inner_product, &inner_reference, -1.0f, 0.5f}, Call{&first_product, &uniform_reference, 1.5f, -2.0f},
          Call{&inner_product, &inner_reference, -1.0f, 0.5f}, Call{&inner_product, &inner_reference, 0.75f, 0.0f},
          Call{&inner_product, &inner_reference, 3.0f, -0.25f}, Call{&inner_product, &inner_reference, -2.5f, 1.5f}}) {
      const int which = static_cast<int>(std::find(std::begin(all), std::end(all), call.product) - std::begin(all));
      INFO("operands " << which << ", alpha " << call.alpha << ", beta " << call.beta);
      for (DeviceProduct *each : all) each->poison();
      if (call.beta != 0.0f)
        REQUIRE_CUDA_OK(cudaMemcpy(call.product->c(), c0.data(), c0.size() * 4, cudaMemcpyHostToDevice));
      REQUIRE_CUDA_OK(cudaDeviceSynchronize());
      REQUIRE_FG_OK(call.product->run(handle.get(), call.alpha, call.beta));
      const fg_sgemm_algo_t ran = last_algo(handle.get());
      REQUIRE_CUDA_OK(cudaStreamSynchronize(stream));
      Reference expected = scaled(*call.reference, call.alpha);
      for (size_t i = 0; i < c0.size(); ++i) {
        const double before = call.beta != 0.0f ? static_cast<double>(call.beta) * c0[i] : 0.0;
        expected.product[i] += before;
        expected.magnitude[i] += std::fabs(before);
      }
      const std::vector<float> c = call.product->result();
      if (call.product == &inner_product) {
        CHECK(ran != FG_SGEMM_OZAKI_INT8);
        CHECK(relative_error(c, expected.product) <= gemm_tolerance(k));
        int64_t unwritten = 0;
        for (float x : c) unwritten += std::isnan(x);
        CHECK(unwritten == 0);
      } else {
        CHECK(ran == FG_SGEMM_OZAKI_INT8);
        CHECK(guarantee_of(c, expected, k).beyond == 0);
      }
      for (DeviceProduct *other : all) {
        if (other == call.product) continue;
        int64_t written = 0;
        for (float x : other->result()) written += !std::isnan(x);
        CHECK(written == 0);
      }
    }
    // Declined operands give the FP32 mode's bits: the graph's FP32 product is the FP32 mode's call.
    for (const float beta : {0.0f, 0.5f}) {
      INFO("declined, beta " << beta);
      const auto run_in = [&](fg_math_mode_t mode) {
        REQUIRE_FG_OK(fg_set_math_mode(handle.get(), mode));
        REQUIRE_CUDA_OK(cudaMemcpy(inner_product.c(), c0.data(), c0.size() * 4, cudaMemcpyHostToDevice));
        REQUIRE_CUDA_OK(cudaDeviceSynchronize());  // C0 in place before the handle's non-blocking stream reads it
        REQUIRE_FG_OK(inner_product.run(handle.get(), -3.0f, beta));
        REQUIRE_CUDA_OK(cudaStreamSynchronize(stream));
        return inner_product.result();
      };
      const std::vector<float> fp32 = run_in(FG_MATH_FP32), emulated = run_in(FG_MATH_FP32_EMULATED);
      CHECK(same_bits(emulated, fp32));
    }
    // A batch of two declined products, on two sets of memory in turn.
    std::vector<float> a2(inner.a), b2(inner.b);
    a2.insert(a2.end(), inner.a.begin(), inner.a.end());
    b2.insert(b2.end(), inner.b.begin(), inner.b.end());
    for (int place = 0; place < 2; ++place) {
      INFO("batched, memory " << place);
      DeviceMemory da(a2.size() * 4), db(b2.size() * 4), dc(static_cast<size_t>(2 * m * n) * 4);
      upload(da, a2);
      upload(db, b2);
      REQUIRE_CUDA_OK(cudaMemset(dc.get(), 0xff, static_cast<size_t>(2 * m * n) * 4));
      REQUIRE_CUDA_OK(cudaDeviceSynchronize());
      REQUIRE_FG_OK(fg_sgemm_strided_batched(handle.get(), FG_ROW_MAJOR, FG_OP_N, FG_OP_N, m, n, k, 1.0f,
                                             da.as<float>(), k, m * k, db.as<float>(), n, k * n, 0.0f, dc.as<float>(),
                                             n, m * n, 2));
      CHECK(last_algo(handle.get()) != FG_SGEMM_OZAKI_INT8);
      REQUIRE_CUDA_OK(cudaStreamSynchronize(stream));
      const std::vector<float> c = download<float>(dc, 2 * m * n);
      for (int t = 0; t < 2; ++t) {
        const std::vector<float> one(c.begin() + t * m * n, c.begin() + (t + 1) * m * n);
        CHECK(relative_error(one, inner_reference.product) <= gemm_tolerance(k));
      }
    }
  }

  SECTION("declined operands on memory taken in turn, whether the FP32 product holds the addresses or reads them") {
    // cuBLAS's FP32 product in the graph reads the addresses at launch where its batched entry point runs
    // cublasSgemm's kernels (on the H100, 1024 x 16384 x 1024), and is captured again for each set of addresses
    // elsewhere (B's rows of 2050 floats). Two places hold the same declined operands; each call writes its own C and
    // no other, with alpha and beta changing, and the last gives the FP32 mode's bits.
    struct Shape {
      int64_t m, n, k;
    };
    for (const Shape &shape : {Shape{1030, 2050, 8190}, Shape{1024, 16384, 1024}}) {
      INFO("shape " << shape.m << " x " << shape.n << " x " << shape.k);
      REQUIRE_FG_OK(fg_set_math_mode(handle.get(), FG_MATH_FP32_EMULATED));
      const Operands inner = make_hard(HardCase{Hard::inner, 40, "inner 2^+-40"}, shape.m, shape.n, shape.k, 7210);
      const Reference inner_reference = reference_of(inner);
      DeviceProduct here(inner), there(inner);
      DeviceProduct *places[] = {&here, &there};
      std::vector<float> c0(static_cast<size_t>(shape.m * shape.n));
      fill_uniform(c0, 7211);
      const float alphas[] = {1.0f, -2.0f, 0.5f, 3.0f, 1.0f}, betas[] = {0.0f, 0.0f, 0.75f, -1.5f, 0.0f};
      for (int call = 0; call < 5; ++call) {
        DeviceProduct &product = *places[call % 2];
        INFO("call " << call);
        for (DeviceProduct *each : places) each->poison();
        if (betas[call] != 0.0f)
          REQUIRE_CUDA_OK(cudaMemcpy(product.c(), c0.data(), c0.size() * 4, cudaMemcpyHostToDevice));
        REQUIRE_CUDA_OK(cudaDeviceSynchronize());
        REQUIRE_FG_OK(product.run(handle.get(), alphas[call], betas[call]));
        CHECK(last_algo(handle.get()) != FG_SGEMM_OZAKI_INT8);
        REQUIRE_CUDA_OK(cudaStreamSynchronize(stream));
        Reference expected = scaled(inner_reference, alphas[call]);
        for (size_t i = 0; i < c0.size(); ++i)
          expected.product[i] += betas[call] != 0.0f ? static_cast<double>(betas[call]) * c0[i] : 0.0;
        CHECK(relative_error(product.result(), expected.product) <= gemm_tolerance(shape.k));
        int64_t written_elsewhere = 0;
        for (float x : places[(call + 1) % 2]->result()) written_elsewhere += !std::isnan(x);
        CHECK(written_elsewhere == 0);
      }
      const std::vector<float> emulated = here.result();
      REQUIRE_FG_OK(fg_set_math_mode(handle.get(), FG_MATH_FP32));
      here.poison();
      REQUIRE_FG_OK(here.run(handle.get(), alphas[4], 0.0f));
      REQUIRE_CUDA_OK(cudaStreamSynchronize(stream));
      CHECK(same_bits(emulated, here.result()));
    }
  }

  SECTION("batched and transposed, with alpha and beta: the graph's bits are the forced algorithm's") {
    struct Case {
      fg_op_t transa, transb;
      int64_t m, n, k, batch;
      float alpha, beta;
    };
    for (const Case &c : {Case{FG_OP_N, FG_OP_N, 1024, 2048, 8192, 2, 1.0f, 0.0f},
                          Case{FG_OP_T, FG_OP_T, 1024, 1280, 16384, 2, -0.5f, 0.75f}}) {
      INFO("transa " << c.transa << ", transb " << c.transb << ", batch " << c.batch);
      const int64_t size_a = c.m * c.k, size_b = c.k * c.n, size_c = c.m * c.n;
      std::vector<float> a(size_a * c.batch), b(size_b * c.batch), c0(size_c * c.batch);
      fill_uniform(a, 7300);
      fill_uniform(b, 7301);
      fill_uniform(c0, 7302);
      // The operands twice, in two places: a call on the copies launches the first call's graph again.
      DeviceMemory da(a.size() * 4), db(b.size() * 4), dc(c0.size() * 4);
      DeviceMemory copy_a(a.size() * 4), copy_b(b.size() * 4), copy_c(c0.size() * 4);
      for (DeviceMemory *x : {&da, &copy_a}) upload(*x, a);
      for (DeviceMemory *x : {&db, &copy_b}) upload(*x, b);
      const int64_t lda = c.transa == FG_OP_N ? c.k : c.m, ldb = c.transb == FG_OP_N ? c.n : c.k;
      const auto run_on = [&](fg_sgemm_algo_t algo, DeviceMemory &da, DeviceMemory &db, DeviceMemory &dc) {
        REQUIRE_FG_OK(fg_set_sgemm_algo(handle.get(), algo));
        upload(dc, c0);
        REQUIRE_CUDA_OK(cudaDeviceSynchronize());
        REQUIRE_FG_OK(fg_sgemm_strided_batched(handle.get(), FG_ROW_MAJOR, c.transa, c.transb, c.m, c.n, c.k, c.alpha,
                                               da.as<float>(), lda, size_a, db.as<float>(), ldb, size_b, c.beta,
                                               dc.as<float>(), c.n, size_c, c.batch));
        CHECK(last_algo(handle.get()) == FG_SGEMM_OZAKI_INT8);
        CHECK(emulation_of(handle.get()).moduli >= 2);
        REQUIRE_CUDA_OK(cudaStreamSynchronize(stream));
        return download<float>(dc, c0.size());
      };
      const auto run = [&](fg_sgemm_algo_t algo) { return run_on(algo, da, db, dc); };
      const std::vector<float> graph = run(FG_SGEMM_AUTO), forced = run(FG_SGEMM_OZAKI_INT8);
      CHECK(same_bits(graph, forced));
      CHECK(same_bits(run(FG_SGEMM_AUTO), graph));
      CHECK(same_bits(run_on(FG_SGEMM_AUTO, copy_a, copy_b, copy_c), graph));
      // Every 7th row and 5th column of the last batch within the guarantee, against a double reference.
      const int64_t last = c.batch - 1;
      int64_t beyond = 0;
      for (int64_t i = 0; i < c.m; i += 7)
        for (int64_t j = 0; j < c.n; j += 5) {
          double sum = 0, magnitude = 0;
          for (int64_t l = 0; l < c.k; ++l) {
            const double x = a[last * size_a + (c.transa == FG_OP_N ? i * c.k + l : l * c.m + i)];
            const double y = b[last * size_b + (c.transb == FG_OP_N ? l * c.n + j : j * c.k + l)];
            sum += x * y;
            magnitude += std::fabs(x * y);
          }
          const double before = c0[last * size_c + i * c.n + j];
          const double exact = c.alpha * sum + c.beta * before;
          const double allowed = std::ldexp(1.0 + std::sqrt(static_cast<double>(c.k)), -24) *
                                 (std::fabs(c.alpha) * magnitude + std::fabs(c.beta * before));
          beyond += !(std::fabs(graph[last * size_c + i * c.n + j] - exact) <= allowed);
        }
      CHECK(beyond == 0);
    }
    REQUIRE_FG_OK(fg_set_sgemm_algo(handle.get(), FG_SGEMM_AUTO));
  }

  SECTION("NaN and Inf through the graph: FP32's pattern where they reach, the guarantee elsewhere") {
    Operands flagged = uniform;
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    for (int64_t i : {3, 900}) flagged.a[i * k + 17] = nan;
    flagged.b[40 * n + 17] = inf;       // column 17 of B
    flagged.b[4000 * n + 1500] = -inf;  // column 1500
    const Reference reference = reference_of(flagged);
    DeviceProduct product(flagged);
    product.poison();
    REQUIRE_CUDA_OK(cudaDeviceSynchronize());
    REQUIRE_FG_OK(product.run(handle.get()));
    CHECK(last_algo(handle.get()) == FG_SGEMM_OZAKI_INT8);  // a few lines: the emulation and its FP32 fix-up
    REQUIRE_CUDA_OK(cudaStreamSynchronize(stream));
    const std::vector<float> c = product.result();
    int64_t wrong = 0, nonfinite = 0;
    std::vector<float> finite = c;
    Reference finite_reference = reference;
    for (size_t i = 0; i < c.size(); ++i) {
      const double r = reference.product[i];
      if (std::isfinite(r)) continue;
      ++nonfinite;
      wrong += std::isnan(r) ? !std::isnan(c[i]) : c[i] != static_cast<float>(r);
      finite[i] = 0, finite_reference.product[i] = 0, finite_reference.magnitude[i] = 0;
    }
    CHECK(nonfinite == 2 * n + 2 * (m - 2));
    CHECK(wrong == 0);
    CHECK(guarantee_of(finite, finite_reference, k).beyond == 0);
  }

  SECTION("the preview's sample of lines and the plan of every element: right whichever decides") {
    // The preview samples every 32nd row of op(A) (32 of them). An outlier in column 3 of A against B's zero row 3
    // leaves a row's elements to FP32: first in every row the preview does not see (it finds nothing wrong; the
    // plan declines), then in 8 rows it sees (it declines from a quarter of its rows, where the plan alone would
    // recompute 8 rows of 1024).
    const auto sampled = [](int64_t row) { return row % 32 == 0; };
    for (const bool hard_sampled : {false, true}) {
      INFO((hard_sampled ? "outliers in 8 sampled rows" : "outliers in every row not sampled"));
      Operands hard = uniform;
      for (int64_t j = 0; j < n; ++j) hard.b[3 * n + j] = 0.0f;
      for (int64_t i = 0; i < m; ++i)
        if (hard_sampled ? sampled(i) && i < 8 * 32 : !sampled(i))
          hard.a[i * k + 3] = std::ldexp(hard.a[i * k + 3], 40);
      const Reference reference = reference_of(hard);
      DeviceProduct product(hard);
      const Called called = call_once(handle.get(), stream, product);
      const fg_sgemm_algo_t ran = called.ran;
      const Emulation &e = called.emulation;
      const std::vector<float> &c = called.c;
      std::printf("emulated AUTO, preview: %-36s ran %s, moduli %d, %lld elements in FP32\n",
                  hard_sampled ? "outliers in 8 sampled rows" : "outliers in every row not sampled",
                  fg_sgemm_algo_name(ran), e.moduli, static_cast<long long>(e.fp32_elements));
      CHECK((ran == FG_SGEMM_OZAKI_INT8) == (e.moduli >= 2));
      if (e.moduli == 0)
        CHECK(relative_error(c, reference.product) <= gemm_tolerance(k));
      else
        CHECK(guarantee_of(c, reference, k).beyond == 0);
      if (!hard_sampled) CHECK(e.moduli == 0);  // 97% of the elements need FP32: the plan declines
    }
  }

  SECTION("two handles on two streams at once") {
    EmulatedOnStream other;
    DeviceProduct mine(uniform), theirs(uniform);
    mine.poison();
    theirs.poison();
    REQUIRE_CUDA_OK(cudaDeviceSynchronize());
    for (int round = 0; round < 3; ++round) {
      REQUIRE_FG_OK(mine.run(handle.get()));
      REQUIRE_FG_OK(theirs.run(other.handle.get()));
    }
    REQUIRE_CUDA_OK(cudaStreamSynchronize(stream));
    REQUIRE_CUDA_OK(cudaStreamSynchronize(other.stream));
    const std::vector<float> c = mine.result();
    CHECK(guarantee_of(c, uniform_reference, k).beyond == 0);
    CHECK(same_bits(c, theirs.result()));
  }
}
