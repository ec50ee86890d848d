// SPDX-License-Identifier: Apache-2.0
#include "options.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "distributions.hpp"
#include "text.hpp"

namespace bench {
namespace {

int64_t parse_integer(const std::string &text, const std::string &what, int64_t minimum) {
  int64_t value = 0;
  const char *end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || stop != end || value < minimum) {
    throw UsageError(
        format("%s '%s' is not a whole number >= %lld", what.c_str(), text.c_str(), static_cast<long long>(minimum)));
  }
  return value;
}

double parse_seconds(const std::string &text, const std::string &what) {
  char *stop = nullptr;
  const double value = std::strtod(text.c_str(), &stop);
  if (text.empty() || *stop != '\0' || !std::isfinite(value) || value <= 0) {
    throw UsageError(format("%s '%s' is not a number of seconds > 0", what.c_str(), text.c_str()));
  }
  return value;
}

void append(std::vector<std::string> &list, const std::string &value) {
  for (const std::string &entry : split(value, ',')) list.push_back(entry);
}

// Options that take a value, as "--name value" or "--name=value". Lists may be given as a comma list,
// by repeating the option, or both.
struct ValueOption {
  const char *name;
  void (*apply)(Options &options, const std::string &value);
};

const ValueOption kValueOptions[] = {
    {"--sizes",
     [](Options &o, const std::string &v) {
       for (const std::string &entry : split(v, ',')) o.sizes.push_back(parse_positive(entry, "--sizes entry"));
     }},
    {"--shape", [](Options &o, const std::string &v) { append(o.shapes, v); }},
    {"--math",
     [](Options &o, const std::string &v) {
       for (fg_math_mode_t mode : {FG_MATH_FP32, FG_MATH_FP32_EMULATED})
         if (v == fg_math_mode_name(mode)) {
           o.math = mode;
           return;
         }
       throw UsageError("--math '" + v + "' is not fp32 or fp32_emulated");
     }},
    {"--dist", [](Options &o, const std::string &v) { append(o.distributions, v); }},
    {"--k",
     [](Options &o, const std::string &v) {
       for (const std::string &entry : split(v, ',')) o.depths.push_back(parse_positive(entry, "--k entry"));
     }},
    {"--trans", [](Options &o, const std::string &v) { append(o.trans, v); }},
    {"--layout", [](Options &o, const std::string &v) { append(o.layouts, v); }},
    {"--batch", [](Options &o, const std::string &v) { o.batch = parse_positive(v, "--batch"); }},
    {"--dtype", [](Options &o, const std::string &v) { o.dtype = v; }},
    {"--algo", [](Options &o, const std::string &v) { append(o.algos, v); }},
    {"--max-seconds",
     [](Options &o, const std::string &v) { o.timing.max_seconds = parse_seconds(v, "--max-seconds"); }},
    {"--repeats",
     [](Options &o, const std::string &v) {
       constexpr int64_t kMostRepeats = 1000000;
       o.timing.repeats = static_cast<int>(std::min(parse_positive(v, "--repeats"), kMostRepeats));
     }},
    {"--mode",
     [](Options &o, const std::string &v) {
       if (v != "cold" && v != "hot" && v != "both") throw UsageError("--mode '" + v + "' is not cold, hot or both");
       o.cold = v != "hot";
       o.hot = v != "cold";
     }},
    {"--device",
     [](Options &o, const std::string &v) { o.device = static_cast<int>(parse_integer(v, "--device", 0)); }},
    {"--devices",
     [](Options &o, const std::string &v) {
       o.host_devices.clear();
       for (const std::string &entry : split(v, ','))
         o.host_devices.push_back(static_cast<int>(parse_integer(entry, "--devices entry", 0)));
     }},
    {"--csv", [](Options &o, const std::string &v) { o.csv_path = v; }},
    {"--json", [](Options &o, const std::string &v) { o.json_path = v; }},
};

const ValueOption *find_value_option(const std::string &name) {
  for (const ValueOption &option : kValueOptions) {
    if (name == option.name) return &option;
  }
  return nullptr;
}

bool is_flag(const std::string &arg) {
  return arg == "-h" || arg == "--help" || arg == "--help-all" || arg == "--list" || arg == "--suite" ||
         arg == "--hot" || arg == "--host" || arg == "--pinned" || arg == "--profile" || arg == "--stages" ||
         arg == "--host-time";
}

void apply_flag(Options &options, const std::string &arg) {
  if (arg == "--list") {
    options.list = true;
  } else if (arg == "--suite") {
    options.suite = true;
  } else if (arg == "--profile") {
    options.profile = true;
  } else if (arg == "--stages") {
    options.stages = true;
  } else if (arg == "--host-time") {
    options.host_time = true;
  } else if (arg == "--hot") {
    options.cold = false;
    options.hot = true;
  } else if (arg == "--host" || arg == "--pinned") {
    const std::string memory = arg == "--host" ? "pageable" : "pinned";
    if (!options.host_memory.empty() && options.host_memory != memory)
      throw UsageError("--host and --pinned exclude each other");
    options.host_memory = memory;
  } else {
    options.help = true;
    options.help_all = options.help_all || arg == "--help-all";
  }
}

void note_given(Options &options, const std::string &name) {
  if (std::find(options.given.begin(), options.given.end(), name) == options.given.end()) options.given.push_back(name);
}

}  // namespace

int64_t parse_positive(const std::string &text, const std::string &what) { return parse_integer(text, what, 1); }

std::vector<int64_t> parse_dimensions(const std::string &text, size_t count, const std::string &what) {
  const std::vector<std::string> parts = split(text, 'x');
  if (parts.size() != count) throw UsageError(format("'%s' is not %s", text.c_str(), what.c_str()));
  std::vector<int64_t> dimensions;
  for (const std::string &part : parts) dimensions.push_back(parse_positive(part, "a dimension of " + what));
  return dimensions;
}

Options parse_options(int argc, char **argv) {
  Options options;
  const std::vector<std::string> args(argv + 1, argv + argc);
  options.command_line = join(std::vector<std::string>(argv, argv + argc), " ");
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &arg = args[i];
    if (is_flag(arg)) {
      apply_flag(options, arg);
      note_given(options, arg);
      continue;
    }
    if (arg.empty() || arg[0] != '-') {
      if (!options.command.empty()) throw UsageError("unexpected argument '" + arg + "'");
      if (arg != "sgemm" && arg != "rowmean" && arg != "overhead" && arg != "accuracy") {
        throw UsageError("unknown command '" + arg + "' (sgemm, rowmean, overhead or accuracy)");
      }
      options.command = arg;
      continue;
    }
    const size_t equals = arg.find('=');
    const std::string name = arg.substr(0, equals);
    const ValueOption *option = find_value_option(name);
    if (option == nullptr) {
      throw UsageError(is_flag(name) ? name + " takes no value" : "unknown option '" + name + "'");
    }
    note_given(options, name);
    if (equals != std::string::npos) {
      option->apply(options, arg.substr(equals + 1));
    } else if (i + 1 < args.size()) {
      option->apply(options, args[++i]);
    } else {
      throw UsageError(name + " needs a value");
    }
  }
  if (!options.help && !options.list && options.command.empty()) {
    throw UsageError("missing command: sgemm, rowmean, overhead or accuracy");
  }
  return options;
}

namespace {

// The distributions, one per line: "  name  description", the descriptions wrapped under each other.
std::string distribution_lines(const char *indent) {
  std::string lines;
  for (const DistributionInfo &info : distributions()) {
    std::string line = std::string(indent) + format("%-17s", info.name);
    const size_t column = line.size();
    for (const std::string &word : split(info.description, ' ')) {
      if (line.size() + 1 + word.size() > 110 && line.size() > column) {
        lines += line + "\n";
        line = std::string(column, ' ');
      } else if (line.size() > column) {
        line += ' ';
      }
      line += word;
    }
    lines += line + "\n";
  }
  return lines;
}

}  // namespace

const std::string &short_usage_text() {
  static const std::string text =
      R"(fastgemm-bench: measure fastgemm's algorithms beside cuBLAS on this GPU.

Usage:
  fastgemm-bench sgemm   [--sizes LIST | --shape MxNxK ... | --suite] [--trans LIST] [--layout LIST]
                         [--batch N] [--host | --pinned] [--math fp32|fp32_emulated] [options]
  fastgemm-bench rowmean [--shape [f32:|f64:]LxMxN ...] [--dtype f32|f64] [options]
  fastgemm-bench overhead [--shape MxNxK ...] [--batch N] [--repeats N] [--profile] [--csv FILE]
  fastgemm-bench accuracy [--k LIST] [--dist LIST] [--algo LIST] [--csv FILE]
  fastgemm-bench --list | --version | --help | --help-all

Each algorithm's result is first checked against cuBLAS's, then timed beside cuBLAS in the same run.

Commands:
  sgemm               FP32 products C = op(A) op(B): by default the squares 128 ... 16384, AUTO
  rowmean             fg_rowmean_matvec on its default shapes, f32 and f64
  overhead            host microseconds per call, fastgemm beside cuBLAS, on tiny problems
  accuracy            the emulated FP32 mode's accuracy contract, beside cuBLAS FP32

Options:
  --sizes LIST        square sgemm problems n x n x n
  --shape SHAPE       one problem: MxNxK for sgemm and overhead, [f32:|f64:]LxMxN for rowmean
  --suite             sgemm's fixed suite: squares, odd, rectangular, transposed, batched
  --host, --pinned    sgemm operands in pageable or pinned host memory, through fg_sgemm_host
  --math MODE         fp32, or fp32_emulated (FP32 accuracy from tensor-core products)
  --stages            with --math fp32_emulated: each row's kernel time by stage, from a trace (CUPTI)
  --host-time         each row's host time per call, over calls enqueued back to back
  --algo LIST         algorithm names as --list prints them, or all (default auto); cuBLAS always runs
  --mode cold|hot|both  cold: each call after an L2 flush (default); hot: back to back
  --max-seconds S     time budget of one algorithm on one problem (default 1)
  --device N          the CUDA device to use (default 0)
  --csv FILE          every figure, the device and the versions as CSV (--json FILE: as JSON)
  --list              the algorithms this build carries
  --version           the versions of fastgemm-bench, libfastgemm, the CUDA runtime and the driver
  -h, --help          this text
  --help-all          every option, and how fastgemm-bench checks and times

Examples:
  fastgemm-bench sgemm --algo all --sizes 1024,4096
  fastgemm-bench sgemm --suite --mode both --csv suite.csv
  fastgemm-bench sgemm --math fp32_emulated --dist phi2

Exit status: 0 every check passed; 1 a check or a call failed; 2 usage error; 3 no CUDA device.
)";
  return text;
}

const std::string &usage_text() {
  static const std::string text =
      R"(fastgemm-bench: measure fastgemm's algorithms beside cuBLAS on this GPU.

Usage:
  fastgemm-bench sgemm   [--sizes LIST | --shape MxNxK ... | --suite] [--trans LIST] [--layout LIST]
                         [--batch N] [--math fp32|fp32_emulated] [--dist NAME] [--stages] [--algo LIST]
                         [common options]
  fastgemm-bench rowmean [--shape [f32:|f64:]LxMxN ...] [--dtype f32|f64] [--algo LIST] [common options]
  fastgemm-bench overhead [--shape MxNxK ...] [--batch N] [--repeats N] [--profile] [--csv FILE] [--json FILE]
  fastgemm-bench accuracy [--k LIST] [--dist LIST] [--algo LIST] [--device N] [--csv FILE] [--json FILE]
  fastgemm-bench --list | --version | --help | --help-all

Every algorithm's result is first checked against cuBLAS's, then timed; cuBLAS is timed in the same run,
so every figure comes with its ratio to cuBLAS. For sgemm that is cuBLAS called directly (cublas_direct,
cublasSgemm or cublasSgemmStridedBatched on the legacy default stream, FP32 math), as a program that
links cuBLAS instead of fastgemm calls it; fastgemm's own cublas algorithm is timed beside it. Lists are comma separated; a list option may also be
repeated.

sgemm: C = op(A) op(B), FP32, alpha 1, beta 0, inputs uniform in (-1, 1) unless --dist says otherwise.
  --sizes LIST        square problems n x n x n
                      (default 128,256,384,512,768,1024,1536,2048,3072,4096,6144,8192,12288,16384)
  --shape MxNxK       one problem (op(A) is MxK, op(B) KxN); with --sizes, both run
  --suite             the fixed suite: the default squares; odd 1000, 4097, 8191 cubed; rectangular
                      4096x4096x256, 256x256x16384, 16384x128x4096, 128x16384x4096, 8192x1024x8192;
                      4096 cubed in NN, NT, TN, TT and column-major; strided batches of 64 x 256^3,
                      1024 x 64^3, 16 x 1024^3. Takes no --sizes, --shape, --trans, --layout or --batch.
  --trans LIST        NN, NT, TN, TT: whether op(A) and op(B) transpose (default NN)
  --layout LIST       row or col (default row)
  --batch N           N products per call, through fg_sgemm_strided_batched (default 1: fg_sgemm)
  --host              operands in pageable host memory, through fg_sgemm_host, each problem also run
                      device-resident through fg_sgemm, so that the rows show the share of its speed
  --pinned            the same with operands in pinned host memory (cudaMallocHost)
  --devices LIST      with --host or --pinned: the devices fg_sgemm_host spreads each product over
                      (fg_set_devices), ordinals separated by commas; default: the --device alone
                      A --host problem too large for the device (row-major NN) is checked on a sample
                      of C and timed against cuBLAS on a device-resident slab of k / 10, called ten times
  --math MODE         the math mode of fastgemm's handle: fp32, or fp32_emulated (FP32 accuracy from
                      tensor-core products, FG_MATH_FP32_EMULATED); default: the handle's own, fp32 unless
                      FASTGEMM_MATH says otherwise. cuBLAS called directly stays FP32 (TF32 off) and remains
                      the ratios' base; the table's heading and every CSV and JSON row carry the mode
  --dist NAME         the distribution of A's and B's elements, one of accuracy's below (default uniform),
                      to time the products on wide-range inputs
  --stages            with --math fp32_emulated: one more call of each fastgemm algorithm, its kernels traced
                      through CUPTI (libcupti of the CUDA toolkit, loaded at run time), and each row's time
                      on the device by stage: scan (the preview and the scan), codes (the codes and their
                      INT8 product), plan, residues, products, rebuild and recompute (the elements done in
                      FP32); columns stage_*_ms in CSV and JSON. Without libcupti the rows say so
  --host-time         after each row's timing, the same call up to 15 times back to back (as an
                      application's loop makes them: an emulated call's graph is kept from the timed
                      calls), each timed on the host from the call to its return; the median, column
                      host_us_per_call. Not with --stages: once CUPTI has traced, every call of the
                      process costs the host more
  Rates are GFLOP/s = 2 m n k batch / time; "% of peak" is of SMs x FP32 lanes per SM x clock x 2.

rowmean: output = matrix * row means of input, L x N, through fg_rowmean_matvec.
  --shape [DT:]LxMxN  one problem, DT f32 or f64 (default: --dtype)
                      (default f64:512x512x1024, f32:512x512x1024, f64:128x4096x2048, f32:1024x64x8192,
                      f32:4096x8x16384, f64:64x1x1000000, f32:8192x2048x16, f32:3x100000x100)
  --dtype f32|f64     the dtype of shapes given without one (default f32)
  Rates are GB/s = (input + matrix + output bytes) / time; "% of read bandwidth" is of the device's
  read bandwidth, measured in the same run with a float4 read-only sweep over eight times L2.

overhead: host microseconds per call, back to back without synchronizing, of fg_sgemm (AUTO and forced
cublas) and of cuBLAS called directly (cublasSgemm, cublasSgemm_64, and cublasSgemm through a handle set
up as fastgemm's), forced cublas and cublasSgemm also on a non-blocking stream, over tiny problems
(default 8x8x8, 32x32x32, 64x64x64, 1x64x64, and 64x64x64 in batches of 16), and fg_sgemm_host (AUTO) on
pageable copies of each single product, a synchronous round trip per call; with the device time per
call the same loop took, and the cost of the steps a call goes through (a traced no-op call, formatting
an fg_sgemm trace line as every call did before, pointer queries: the runtime's, the driver's full one and
its allocation-id one, also on a problem's three operands; cudaGetDevice, cuCtxGetCurrent,
cublasSetStream, cudaStreamIsCapturing, cudaEventRecord on the legacy and on a non-blocking stream, an
empty kernel launch). --profile adds a sampling profile of each problem's loops (the loop's thread
interrupted every 97 us of wall time, its program counter counted by shared object and symbol): host
microseconds per call in fastgemm, the CUDA driver, cuBLAS and the C library, for cuBLAS called directly
and for fastgemm, and the symbols where fastgemm's calls spend more than cuBLAS's (functions that no
exported symbol covers are shown as an offset in their object, for addr2line).
Each figure is the median over --repeats loops (default 101) of 200 calls, the calls of a problem taking
turns loop by loop.

accuracy: the accuracy contract of the emulated FP32 mode (FG_MATH_FP32_EMULATED), measured. For each k
and distribution, C = A B with m = n = 1024 (row-major), computed by cuBLAS FP32 (cublasSgemm, default
math, TF32 off) and by fastgemm on a handle in fp32_emulated: AUTO, and each emulating algorithm the
build carries, forced (one that declines a problem, FG_STATUS_NOT_SUPPORTED, is reported so, no failure).
Each result C is compared with the exact product R: the normwise ||C - R||_F / ||R||_F, and the median
and largest of |C - R|_ij / (|A||B|)_ij; NaN and Inf elements are counted (and make the normwise Inf).
R and |A||B| are cublasDgemm products of the inputs widened to double: each product of two floats is
exact in double (24 + 24 significant bits of 53), and the sums' rounding, at most k 2^-53 (|A||B|)_ij
(7e-12 relative at k = 65536), lies over four orders of magnitude under FP32's unit roundoff (6e-8).
Each row also counts its uncertified elements, |C - R|_ij over the per-element guarantee's bound
2^-24 (1 + sqrt(t)) (|A||B|)_ij, t = min(k, nonzeros of row i of A, of column j of B), plus 2 k 2^-53
(|A||B|)_ij for R's and |A||B|'s own rounding (NaN and Inf included), and, on the integer distributions (binary, counts, int2048), its inexact elements: those with
(|A||B|)_ij < 2^24, where every partial sum is an integer FP32 holds, that are not bitwise R. fastgemm rows
add fg_get_last_sgemm_emulation's report: the moduli count (0: no emulation ran) and the elements sent to
FP32 (fp32, with their fraction of m n).
Every fastgemm row gets its ratios to cuBLAS's three figures and a verdict: met when the normwise and the
median error are no larger than cuBLAS's, the largest at most twice cuBLAS's, it has no more NaN/Inf
elements and, where it emulated (moduli above 0), no uncertified or inexact element (a row that ran plain
FP32 is outside the per-element guarantee: its counts are reported); missed otherwise. On cancel, where cuBLAS's summation order adds each cancelling pair first and makes its error
unusually small, the ratios are reported but only the elements are judged. A summary line counts the
cases and the verdicts. Seeds are fixed: a build and GPU give the same figures run after run.
  --k LIST            the reduction lengths (default 256,1024,4096,16384,65536)
  --dist LIST         the input distributions (default all, in this order):
)" + distribution_lines("                        ") +
      R"(  --algo LIST         the fastgemm algorithms to run in fp32_emulated, names as --list prints them, or all
                      (default auto and the emulating algorithms carried)

Common options:
  --algo LIST         algorithm names as --list prints them, or all (default auto); cuBLAS always runs
  --mode cold|hot|both
                      cold: each call after an L2 flush (default); hot: calls back to back on the same
                      operands; both: each algorithm and problem in both modes, rows marked by mode
  --hot               the same as --mode hot
  --max-seconds S     wall-clock budget for the timed calls of one algorithm on one problem (default 1)
  --repeats N         time N calls instead of choosing adaptively (the budget still applies)
  --device N          the CUDA device to use (default 0)
  --csv FILE          write every figure, the device and the versions as CSV
  --json FILE         the same as JSON, with the geometric means
  --list              print the algorithms this build carries, then exit
  -h, --help          print the short help, then exit
  --help-all          print this text, then exit
  --version           print the versions of fastgemm-bench, libfastgemm, the CUDA runtime and the driver

Checking: each algorithm writes into an output filled with NaN, and its result is compared with cuBLAS's.
For sgemm the error is max_ij |C - C_cublas|_ij / (|A||B|)_ij, |A||B| from cublasDgemm of the operands'
magnitudes widened to double: the scale of the rounding any FP32 product (emulated or not) makes in each
element, whatever the inputs' range and the sums' cancellation. For rowmean it is the relative error
||C - C_cublas||_F / ||C_cublas||_F. The tolerance is 84 unit roundoffs (1e-5 in f32, 1.9e-14 in f64)
for reductions up to 256 long, growing with the square root of the reduction length (k for sgemm, M + L
for rowmean). A failed check is marked and is not timed. An algorithm that cannot run a problem
(FG_STATUS_NOT_SUPPORTED) is reported as such and is not a failure.

Timing: each call is timed on its own between two CUDA events, after an L2 flush: a read-only sweep over
twice L2's size, which leaves L2 holding only clean lines of the flush buffer, so no call finds its
operands cached and none pays to write back another's data. Rotating several input sets instead would
need more memory than the largest problems leave. Up to 3 warm-up calls (fewer when one call takes over a
tenth of the budget) precede the timed calls; then, unless --repeats is given, calls are timed until at
least 10 calls and a fifth of the budget are spent, stopping at the budget (after at least one call) or
10000 calls. The table gives min / median / max; rates and ratios use the median.
Hot mode times samples of back-to-back calls instead (as many as take about a millisecond, at most 1000),
each between two events and divided by its calls, with no flush: host work per call shows wherever it
is longer than the device's, as it does in an application's loop. Since the host's pace drifts, in hot
mode the direct cuBLAS call is timed again beside each sgemm algorithm, their samples taking turns, and
the ratio is to that.

Output: a table on stdout, one line per algorithm and problem, then the geometric mean of each
algorithm's ratio to cuBLAS (cuBLAS's median time over the algorithm's: above 100% is faster); a
progress line on stderr when it is a terminal.

Exit status:
  0  every check passed and every call succeeded
  1  a check failed, or a CUDA or fastgemm call failed; for accuracy, a row missed the contract
  2  the command line is wrong
  3  no CUDA device (the bench needs a GPU to measure anything)
)";
  return text;
}

}  // namespace bench
