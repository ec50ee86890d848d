#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Times PyTorch and CuPy FP32 workloads with and without libfastgemm_cublas.so preloaded.

    python3 bench/cublas_interposer.py --preload build/libfastgemm_cublas.so
    python3 bench/cublas_interposer.py --preload PATH --sizes 4096,8192,16384 --steps 200 --csv out.csv
    python3 bench/cublas_interposer.py --preload PATH --quick      # sizes 4096, 20 training steps

Each measurement runs in two child processes, one plain and one with LD_PRELOAD, the programs themselves
unchanged. Cases, all in float32 with TF32 off:

- torch.mm N x N x N for each size: the median of CUDA-event timings of 15 calls after 3 warm-ups, fresh
  random operands before each call;
- cupy.matmul N x N x N for each size, timed the same way with CuPy's events;
- torch.bmm of 64 products of 1024 x 1024 x 1024 and of 16 products of 2048 x 2048 x 2048 (the interposer's
  size rule serves strided batches of 1024 and more on every edge whose products reach 2^34 together);
- a training loop: an MLP of 4 nn.Linear(8192, 8192) layers with ReLU between them, a batch of 8192 tokens,
  MSE loss (a mean over all elements) to a random target, plain SGD at a learning rate small for that loss
  (--lr, default 1.0), --steps steps: the median step time and the final loss. The plain loop runs with two
  seeds (initialisation only; the data are the same), the preloaded one with the first; the emulated loss
  passes the loss-spread criterion when |loss_preloaded - loss_seed0| <= |loss_seed0 - loss_seed1|, that is
  when emulation moves the result less than a change of seed does.

Preloaded children run with FASTGEMM_CUBLAS_STATS=1; the interposer's stats lines are printed after each
case. Other FASTGEMM_* variables are passed through, so FASTGEMM_MATH=fp32 times the pure pass-through.
A framework that is missing, or sees no CUDA device, is skipped with a message. The table comes last:
case, plain ms, preloaded ms, speed-up (plain / preloaded), note.
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys

RESULT_PREFIX = "RESULT "
STATS_PREFIX = "fastgemm_cublas stats:"
PRELOAD_ERROR = "cannot be preloaded"
WARMUP = 3
BMMS = ((64, 1024), (16, 2048))
DATA_SEED = 4242


# ---------------------------------------------------------------------------------------------------------
# child side: one case, one process, one JSON line of results


def first_line(error):
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def import_torch():
    """torch, or a string that says why it cannot run."""
    try:
        import torch
    except Exception as error:  # a broken install raises more than ImportError
        return "torch is not importable: " + first_line(error)
    if not torch.cuda.is_available():
        return "torch sees no CUDA device"
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    if hasattr(torch, "set_float32_matmul_precision"):
        torch.set_float32_matmul_precision("highest")
    return torch


def import_cupy():
    try:
        import cupy
    except Exception as error:
        return "cupy is not importable: " + first_line(error)
    try:
        if cupy.cuda.runtime.getDeviceCount() > 0:
            return cupy
    except Exception as error:  # CuPy raises, rather than counting zero, without a driver
        return "cupy sees no CUDA device: " + first_line(error)
    return "cupy sees no CUDA device"


def torch_products(torch, spec):
    g = torch.Generator(device="cuda")
    g.manual_seed(spec["seed"])
    if spec["case"] == "torch.mm":
        shape = (spec["n"], spec["n"])
        product = torch.mm
    else:
        shape = (spec["batch"], spec["n"], spec["n"])
        product = torch.bmm
    a = torch.empty(shape, device="cuda")
    b = torch.empty(shape, device="cuda")
    c = torch.empty(shape, device="cuda")
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for call in range(WARMUP + spec["calls"]):
        # New operands each call, so that nothing a library might keep from one call helps the next.
        a.normal_(generator=g)
        b.normal_(generator=g)
        start.record()
        product(a, b, out=c)
        end.record()
        end.synchronize()
        if call >= WARMUP:
            times.append(start.elapsed_time(end))
    return {"ms": statistics.median(times), "min_ms": min(times)}


def cupy_products(cupy, spec):
    n = spec["n"]
    rs = cupy.random.RandomState(spec["seed"])
    c = cupy.empty((n, n), dtype=cupy.float32)
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    times = []
    for call in range(WARMUP + spec["calls"]):
        a = rs.standard_normal((n, n), dtype=cupy.float32)
        b = rs.standard_normal((n, n), dtype=cupy.float32)
        start.record()
        cupy.matmul(a, b, out=c)
        end.record()
        end.synchronize()
        if call >= WARMUP:
            times.append(cupy.cuda.get_elapsed_time(start, end))
        del a, b  # the pool reuses the blocks: at 16384 each operand is 1 GiB
    return {"ms": statistics.median(times), "min_ms": min(times)}


def torch_training(torch, spec):
    width, tokens, layers = spec["width"], spec["tokens"], spec["layers"]
    data = torch.Generator(device="cuda")
    data.manual_seed(DATA_SEED)
    x = torch.randn(tokens, width, device="cuda", generator=data)
    target = torch.randn(tokens, width, device="cuda", generator=data)
    # The seed decides the initial weights only: two seeds give the spread that the same data leave to chance.
    torch.manual_seed(spec["seed"])
    modules = []
    for layer in range(layers):
        modules.append(torch.nn.Linear(width, width))
        if layer + 1 < layers:
            modules.append(torch.nn.ReLU())
    model = torch.nn.Sequential(*modules).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=spec["lr"])
    loss_function = torch.nn.MSELoss()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(spec["steps"])]
    losses = []
    for start, end in events:
        start.record()
        optimizer.zero_grad(set_to_none=True)
        loss = loss_function(model(x), target)
        loss.backward()
        optimizer.step()
        end.record()
        # Kept on the device: reading each loss would synchronise every step and time the host too.
        losses.append(loss.detach())
    torch.cuda.synchronize()
    times = [start.elapsed_time(end) for start, end in events]
    timed = times[WARMUP:] if len(times) > WARMUP else times
    values = [float(value) for value in torch.stack(losses).cpu()]
    return {"ms": statistics.median(timed), "min_ms": min(timed), "loss": values[-1], "first_loss": values[0]}


def child(spec):
    if spec["case"] == "cupy.matmul":
        framework = import_cupy()
    else:
        framework = import_torch()
    if isinstance(framework, str):
        result = {"skipped": framework}
    elif spec["case"] == "cupy.matmul":
        result = cupy_products(framework, spec)
    elif spec["case"] == "train":
        result = torch_training(framework, spec)
    else:
        result = torch_products(framework, spec)
    print(RESULT_PREFIX + json.dumps(result), flush=True)


# ---------------------------------------------------------------------------------------------------------
# parent side


def run_child(spec, preload, timeout):
    """(result dict or None, stderr, why it failed or None)."""
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    env.pop("FASTGEMM_LOG", None)  # a line per call would be timed too
    env["CUPY_TF32"] = "0"  # CuPy's products in FP32 arithmetic, as PyTorch's with allow_tf32 off
    env["PYTHONUNBUFFERED"] = "1"
    if preload:
        inherited = os.environ.get("LD_PRELOAD")
        env["LD_PRELOAD"] = preload + (":" + inherited if inherited else "")
        env["FASTGEMM_CUBLAS_STATS"] = "1"
    command = [sys.executable, os.path.abspath(__file__), "--child", json.dumps(spec)]
    try:
        done = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "", "timed out after %d s" % timeout
    result = None
    for line in done.stdout.splitlines():
        if line.startswith(RESULT_PREFIX):
            result = json.loads(line[len(RESULT_PREFIX):])
    if preload and PRELOAD_ERROR in done.stderr:
        return None, done.stderr, "the dynamic loader did not preload " + preload
    if done.returncode != 0 or result is None:
        return None, done.stderr, "exit status %d" % done.returncode
    return result, done.stderr, None


def stats_lines(stderr):
    return [line for line in stderr.splitlines() if line.startswith(STATS_PREFIX)]


def tail(text, lines=15):
    return "\n".join("    " + line for line in text.rstrip().splitlines()[-lines:])


class Bench:
    def __init__(self, args):
        self.args = args
        self.rows = []  # (case, plain ms, preloaded ms, speed-up, note)
        self.failed = []
        self.skipped = {}  # framework -> reason

    def measure(self, label, spec, preload):
        """The child's result, or None after printing why there is none."""
        which = "preloaded" if preload else "plain"
        print("%s (%s%s)..." % (label, which, ", seed %d" % spec["seed"] if spec["case"] == "train" else ""),
              flush=True)
        result, stderr, failure = run_child(spec, preload, self.args.timeout)
        if failure:
            print("  failed: %s\n%s" % (failure, tail(stderr)), flush=True)
            self.failed.append("%s (%s)" % (label, which))
            return None
        if "skipped" in result:
            return result
        lines = stats_lines(stderr)
        for line in lines:
            print("  " + line)
        if preload and not lines:
            print("  (no '%s' line on stderr)" % STATS_PREFIX)
        print("  %.3f ms" % result["ms"] + ("; final loss %.9g" % result["loss"] if "loss" in result else ""),
              flush=True)
        return result

    def framework_skipped(self, framework, result):
        if result is not None and "skipped" in result:
            self.skipped[framework] = result["skipped"]
            print("  skipped: %s" % result["skipped"], flush=True)
            return True
        return framework in self.skipped

    def pair(self, framework, label, spec):
        if framework in self.skipped:
            return
        plain = self.measure(label, spec, None)
        if self.framework_skipped(framework, plain):
            return
        preloaded = self.measure(label, spec, self.args.preload)
        self.add_row(label, plain, preloaded, "")

    def add_row(self, label, plain, preloaded, note):
        plain_ms = plain["ms"] if plain else None
        preloaded_ms = preloaded["ms"] if preloaded else None
        speedup = plain_ms / preloaded_ms if plain_ms and preloaded_ms else None
        self.rows.append((label, plain_ms, preloaded_ms, speedup, note))

    def training(self):
        if "torch" in self.skipped:
            return
        args = self.args
        label = "train MLP %dx%d, %d tokens (ms/step)" % (args.layers, args.width, args.tokens)
        spec = {"case": "train", "width": args.width, "tokens": args.tokens, "layers": args.layers,
                "lr": args.lr, "steps": args.steps, "seed": args.seeds[0]}
        plain0 = self.measure(label, spec, None)
        if self.framework_skipped("torch", plain0):
            return
        plain1 = self.measure(label, dict(spec, seed=args.seeds[1]), None)
        preloaded = self.measure(label, spec, args.preload)
        note = ""
        if plain0 and plain1 and preloaded:
            emulation = abs(preloaded["loss"] - plain0["loss"])
            spread = abs(plain0["loss"] - plain1["loss"])
            holds = emulation <= spread
            print("loss after %d steps: plain seed %d %.9g (first step %.9g), plain seed %d %.9g, preloaded seed %d "
                  "%.9g" % (args.steps, args.seeds[0], plain0["loss"], plain0["first_loss"], args.seeds[1],
                            plain1["loss"], args.seeds[0], preloaded["loss"]))
            print("loss spread: |preloaded - plain seed %d| = %.3g %s |plain seed %d - plain seed %d| = %.3g: %s"
                  % (args.seeds[0], emulation, "<=" if holds else ">", args.seeds[0], args.seeds[1], spread,
                     "criterion met" if holds else "CRITERION NOT MET"), flush=True)
            note = "loss %.6g plain, %.6g preloaded (seed %d: %.6g); spread %s" % (
                plain0["loss"], preloaded["loss"], args.seeds[1], plain1["loss"], "met" if holds else "NOT MET")
        self.add_row(label, plain0, preloaded, note)

    def table(self):
        def number(value, form):
            return form % value if value is not None else "-"

        header = ("case", "plain ms", "preloaded ms", "speed-up", "note")
        body = [(case, number(plain, "%.3f"), number(preloaded, "%.3f"), number(speedup, "%.2fx"), note)
                for case, plain, preloaded, speedup, note in self.rows]
        widths = [max(len(row[i]) for row in [header] + body) for i in range(4)]
        lines = []
        for row in [header] + body:
            cells = [row[0].ljust(widths[0])] + [row[i].rjust(widths[i]) for i in range(1, 4)]
            lines.append("  ".join(cells + [row[4]]).rstrip())
        lines.insert(1, "-" * max(len(line) for line in lines))
        return "\n".join(lines)

    def write_csv(self, path):
        with open(path, "w", newline="") as stream:
            writer = csv.writer(stream)
            writer.writerow(["case", "plain_ms", "preloaded_ms", "speedup", "note"])
            for case, plain, preloaded, speedup, note in self.rows:
                writer.writerow([case] + ["" if value is None else "%.6g" % value for value in
                                          (plain, preloaded, speedup)] + [note])


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preload", help="path of libfastgemm_cublas.so")
    parser.add_argument("--sizes", help="square sizes for torch.mm and cupy.matmul (default 4096,8192,16384)")
    parser.add_argument("--steps", type=int, help="training steps (default 200)")
    parser.add_argument("--csv", help="also write the table to this CSV file")
    parser.add_argument("--quick", action="store_true", help="a smoke run: sizes 4096 and 20 training steps")
    parser.add_argument("--calls", type=int, default=15, help="timed calls per product, after 3 warm-ups (15)")
    parser.add_argument("--width", type=int, default=8192, help="width of the MLP's layers (8192)")
    parser.add_argument("--layers", type=int, default=4, help="nn.Linear layers in the MLP (4)")
    parser.add_argument("--tokens", type=int, default=8192, help="rows of the training batch (8192)")
    parser.add_argument("--lr", type=float, default=1.0,
                        help="SGD learning rate (1.0: the loss is a mean over tokens x width, so gradients are small)")
    parser.add_argument("--seeds", default="0,1", help="the two initialisation seeds of the plain loops (0,1)")
    parser.add_argument("--only", help="comma-separated subset of mm,cupy,bmm,train (default all)")
    parser.add_argument("--timeout", type=int, default=1800, help="seconds each child may run (1800)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return args
    if not args.preload:
        parser.error("--preload PATH is required")
    sizes = args.sizes or ("4096" if args.quick else "4096,8192,16384")
    args.sizes = [int(size) for size in sizes.split(",") if size]
    if args.steps is None:
        args.steps = 20 if args.quick else 200
    args.seeds = [int(seed) for seed in args.seeds.split(",")]
    if len(args.seeds) != 2 or args.seeds[0] == args.seeds[1]:
        parser.error("--seeds takes two different seeds")
    args.only = set((args.only or "mm,cupy,bmm,train").split(","))
    unknown = args.only - {"mm", "cupy", "bmm", "train"}
    if unknown:
        parser.error("--only: unknown case %s" % ", ".join(sorted(unknown)))
    return args


def main():
    args = parse_arguments()
    if args.child:
        child(json.loads(args.child))
        return 0
    if not os.path.isfile(args.preload):
        print("cublas_interposer: --preload %s is not a file" % args.preload, file=sys.stderr)
        return 2
    args.preload = os.path.abspath(args.preload)

    bench = Bench(args)
    if "mm" in args.only:
        for n in args.sizes:
            bench.pair("torch", "torch.mm %d^3" % n, {"case": "torch.mm", "n": n, "calls": args.calls, "seed": 1})
    if "cupy" in args.only:
        for n in args.sizes:
            bench.pair("cupy", "cupy.matmul %d^3" % n, {"case": "cupy.matmul", "n": n, "calls": args.calls,
                                                        "seed": 1})
    if "bmm" in args.only:
        for batch, n in BMMS:
            bench.pair("torch", "torch.bmm %d x %d^3" % (batch, n),
                       {"case": "torch.bmm", "batch": batch, "n": n, "calls": args.calls, "seed": 1})
    if "train" in args.only:
        bench.training()

    print()
    for framework, reason in sorted(bench.skipped.items()):
        print("skipped %s: %s" % (framework, reason))
    if bench.failed:
        print("failed: " + "; ".join(bench.failed))
    if args.csv:
        bench.write_csv(args.csv)
        print("wrote " + args.csv)
    print()
    print(bench.table())
    return 1 if bench.failed else 0


if __name__ == "__main__":
    sys.exit(main())
