#include "options.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

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
  return arg == "-h" || arg == "--help" || arg == "--list" || arg == "--suite" || arg == "--hot" || arg == "--host" ||
         arg == "--pinned";
}

void apply_flag(Options &options, const std::string &arg) {
  if (arg == "--list") {
    options.list = true;
  } else if (arg == "--suite") {
    options.suite = true;
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
  }
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
      continue;
    }
    if (arg.empty() || arg[0] != '-') {
      if (!options.command.empty()) throw UsageError("unexpected argument '" + arg + "'");
      if (arg != "sgemm" && arg != "rowmean" && arg != "overhead") {
        throw UsageError("unknown command '" + arg + "' (sgemm, rowmean or overhead)");
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
    if (equals != std::string::npos) {
      option->apply(options, arg.substr(equals + 1));
    } else if (i + 1 < args.size()) {
      option->apply(options, args[++i]);
    } else {
      throw UsageError(name + " needs a value");
    }
  }
  if (!options.help && !options.list && options.command.empty()) {
    throw UsageError("missing command: sgemm, rowmean or overhead");
  }
  return options;
}

const char *usage_text() {
  return R"(fastgemm-bench: measure fastgemm's algorithms beside cuBLAS on this GPU.

Usage:
  fastgemm-bench sgemm   [--sizes LIST | --shape MxNxK ... | --suite] [--trans LIST] [--layout LIST]
                         [--batch N] [--algo LIST] [common options]
  fastgemm-bench rowmean [--shape [f32:|f64:]LxMxN ...] [--dtype f32|f64] [--algo LIST] [common options]
  fastgemm-bench overhead [--shape MxNxK ...] [--batch N] [--repeats N] [--csv FILE] [--json FILE]
  fastgemm-bench --list
  fastgemm-bench --help

Every algorithm's result is first checked against cuBLAS's, then timed; cuBLAS is timed in the same run,
so every figure comes with its ratio to cuBLAS. For sgemm that is cuBLAS called directly (cublas_direct,
cublasSgemm or cublasSgemmStridedBatched on the legacy default stream, FP32 math), as a program that
links cuBLAS instead of fastgemm calls it; fastgemm's own cublas algorithm is timed beside it. Lists are comma separated; a list option may also be
repeated.

sgemm: C = op(A) op(B), FP32, alpha 1, beta 0, inputs uniform in (-1, 1).
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
(default 8x8x8, 32x32x32, 64x64x64, 1x64x64, and 64x64x64 in batches of 16); with the device time per
call the same loop took, and the cost of the steps a call goes through (a traced no-op call, formatting
an fg_sgemm trace line as every call did before, pointer queries: the runtime's, the driver's full one and
its allocation-id one, also on a problem's three operands; cudaGetDevice, cuCtxGetCurrent,
cublasSetStream, cudaStreamIsCapturing, cudaEventRecord on the legacy and on a non-blocking stream, an
empty kernel launch).
Each figure is the median over --repeats loops (default 101) of 200 calls, the calls of a problem taking
turns loop by loop.

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
  -h, --help          print this text, then exit
  --version           print the versions of fastgemm-bench, libfastgemm, the CUDA runtime and the driver

Checking: each algorithm writes into an output filled with NaN, and its result is compared with cuBLAS's:
relative error ||C - C_cublas||_F / ||C_cublas||_F. The tolerance is 84 unit roundoffs (1e-5 in f32,
1.9e-14 in f64) for reductions up to 256 long, growing with the square root of the reduction length
(k for sgemm, M + L for rowmean). A failed check is marked and is not timed. An algorithm that cannot run
a problem (FG_STATUS_NOT_SUPPORTED) is reported as such and is not a failure.

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
  1  a check failed, or a CUDA or fastgemm call failed
  2  the command line is wrong
  3  no CUDA device (the bench needs a GPU to measure anything)
)";
}

}  // namespace bench
