#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks PyTorch and CuPy FP32 matrix products run with libfastgemm_cublas.so preloaded.

    python3 test_frameworks.py --preload /path/to/libfastgemm_cublas.so           # emulated FP32
    python3 test_frameworks.py --preload /path/to/libfastgemm_cublas.so --plain   # FASTGEMM_MATH=fp32

The script runs itself again in a child process with LD_PRELOAD and FASTGEMM_LOG=1 set. The child computes,
in float32 with TF32 off: torch.mm (2048x4096 @ 4096x2048, and with a transposed operand), torch.bmm (4
products of 2048x2048x4096), nn.Linear(4096, 2048) forward and backward, functional.linear + relu,
torch._addmm_activation (relu epilogue), a product captured in a CUDA graph and replayed on new data, and
cupy.matmul (2048x4096 @ 4096x2048). Every element is checked against a float64 reference R computed on the
GPU:

    |C - R| <= 2 * 2^-24 * (1 + sqrt(k)) * (|A| @ |B| + |bias|) + tiny

(after relu on both sides where relu applies). The parent reads the child's stderr and requires the
interposer's log lines "fastgemm_cublas: cublasSgemm_v2 ... -> fastgemm" (PyTorch), "cublasLtMatmul ... ->
fastgemm" when nn.Linear's forward went through cublasLt (only reported when it did not), and
"cublasGemmEx ... -> fastgemm" (CuPy).

With --plain the library is preloaded with FASTGEMM_MATH=fp32: every logged call must read "-> cuBLAS (",
and the products' output bytes must hash the same as in a second child run without the preload.

Prints one line per check and "frameworks: <n> checks passed, <m> skipped" last; exits nonzero on a failure,
after printing the child's output. A framework that is not importable has its checks reported "skipped
(<reason>)". With neither PyTorch nor CuPy usable on a CUDA device it prints "SKIPPED: no CUDA device (<reasons>)"
and exits 0.
"""
import argparse
import hashlib
import importlib.util
import json
import math
import os
import re
import subprocess
import sys
import traceback

SEED = 20240611
# An element whose bound is zero (exact zeros in the operands) may still differ by an FP32 subnormal's rounding.
TINY = 1e-30
# The certified bound is 2^-24 (1 + sqrt(k)); cuBLAS's own FP32 accumulation stays well inside twice that for
# these random operands, so a fallback to cuBLAS passes too.
SLACK = 2.0
RESULT_PREFIX = "RESULT "
SECTION_PREFIX = "test_frameworks: "
LOG_LINE = re.compile(r"^fastgemm_cublas: (\S+)(.*?)-> (fastgemm|cuBLAS)\b\s*(.*)$")
PRELOAD_ERROR = "cannot be preloaded"

LINEAR_FORWARD = "nn.Linear(4096, 2048) forward, bias"
TORCH_MM = "torch.mm 2048x4096 @ 4096x2048"


class CheckFailure(Exception):
    pass


# ---------------------------------------------------------------------------------------------------------
# child side


def say(text):
    print(text, flush=True)


def mark(text):
    # The interposer writes to the same stderr; the markers let the parent tell which check made which call.
    sys.stderr.write(SECTION_PREFIX + text + "\n")
    sys.stderr.flush()


def first_line(error):
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def framework_status():
    """{"torch": None or why its checks cannot run, "cupy": likewise}."""
    status = {}
    try:
        import torch
        status["torch"] = None if torch.cuda.is_available() else "torch sees no CUDA device"
    except Exception as error:  # a broken install raises more than ImportError
        status["torch"] = "torch is not importable: " + first_line(error)
    try:
        import cupy
    except Exception as error:
        status["cupy"] = "cupy is not importable: " + first_line(error)
    else:
        try:
            status["cupy"] = None if cupy.cuda.runtime.getDeviceCount() > 0 else "cupy sees no CUDA device"
        except Exception as error:  # CuPy raises, rather than counting zero, without a driver
            status["cupy"] = "cupy sees no CUDA device: " + first_line(error)
    return status


def torch_setup():
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    if hasattr(torch, "set_float32_matmul_precision"):
        torch.set_float32_matmul_precision("highest")
    return torch


def torch_bound(torch, c, reference, scale, k, relu=False):
    """Checks c (float32) against reference and scale (float64, the same shape); returns a short report."""
    if not bool(torch.isfinite(c).all()):
        raise CheckFailure("the result has a non-finite element")
    if relu:
        reference = torch.relu(reference)
    error = (c.double() - reference).abs()
    bound = SLACK * 2.0 ** -24 * (1.0 + math.sqrt(k)) * scale + TINY
    ratio = float((error / bound).max())
    bad = error > bound
    count = int(bad.sum())
    if count:
        index = tuple(int(i) for i in bad.nonzero()[0])
        raise CheckFailure("%d of %d elements outside the bound, worst error/bound %.3g; first at %s: got %.9g, "
                           "reference %.9g, bound %.3g" % (count, c.numel(), ratio, index, float(c[index]),
                                                           float(reference[index]), float(bound[index])))
    return "max error/bound %.3g" % ratio


def torch_product(torch, c, a, b, k, bias=None, relu=False):
    """Checks c = a @ b (+ bias) (then relu) with a and b the float32 operands as used (views included)."""
    a64, b64 = a.double(), b.double()
    reference = torch.matmul(a64, b64)
    scale = torch.matmul(a64.abs(), b64.abs())
    if bias is not None:
        reference = reference + bias.double()
        scale = scale + bias.double().abs()
    return torch_bound(torch, c, reference, scale, k, relu)


def torch_checks(torch):
    """[(name, function)] for the PyTorch checks; the functions run in this order and may share state."""
    import torch.nn.functional as F
    state = {}

    def seed(offset):
        torch.manual_seed(SEED + offset)

    def mm():
        seed(1)
        a = torch.randn(2048, 4096, device="cuda")
        b = torch.randn(4096, 2048, device="cuda")
        return torch_product(torch, torch.mm(a, b), a, b, 4096)

    def mm_transposed():
        seed(2)
        # Uniform on [-1, 1): a different distribution from the other cases, and a.t() reaches cuBLAS transposed.
        a = torch.rand(4096, 2048, device="cuda") * 2 - 1
        b = torch.rand(4096, 2048, device="cuda") * 2 - 1
        return torch_product(torch, a.t() @ b, a.t(), b, 4096)

    def bmm():
        seed(3)
        a = torch.randn(4, 2048, 4096, device="cuda")
        b = torch.randn(4, 4096, 2048, device="cuda")
        return torch_product(torch, torch.bmm(a, b), a, b, 4096)

    def linear_forward():
        seed(4)
        layer = torch.nn.Linear(4096, 2048).cuda()
        x = torch.randn(2048, 4096, device="cuda", requires_grad=True)
        y = layer(x)
        state["linear"] = (layer, x, y)
        return torch_product(torch, y.detach(), x.detach(), layer.weight.detach().t(), 4096,
                             bias=layer.bias.detach())

    def linear_backward():
        if "linear" not in state:
            raise CheckFailure("the forward pass did not run")
        layer, x, y = state.pop("linear")
        seed(5)
        grad = torch.randn_like(y)
        y.backward(grad)
        weight = layer.weight.detach()
        reports = [
            "weight: " + torch_product(torch, layer.weight.grad, grad.t(), x.detach(), 2048),
            "input: " + torch_product(torch, x.grad, grad, weight, 2048),
        ]
        # The bias gradient is a column sum, not a product; the same bound with k = 2048 holds for any summation
        # order FP32 uses here.
        grad64 = grad.double()
        reports.append("bias: " + torch_bound(torch, layer.bias.grad, grad64.sum(0), grad64.abs().sum(0), 2048))
        return "; ".join(reports)

    def linear_relu():
        seed(6)
        x = torch.randn(2048, 4096, device="cuda")
        weight = torch.randn(2048, 4096, device="cuda") / 64
        bias = torch.randn(2048, device="cuda")
        return torch_product(torch, torch.relu(F.linear(x, weight, bias)), x, weight.t(), 4096, bias=bias, relu=True)

    def addmm_relu():
        if not hasattr(torch, "_addmm_activation"):
            return None
        seed(7)
        x = torch.randn(2048, 4096, device="cuda")
        weight = torch.randn(2048, 4096, device="cuda") / 64
        bias = torch.randn(2048, device="cuda")
        # The fused form: PyTorch asks cublasLt for the RELU_BIAS epilogue where it can.
        c = torch._addmm_activation(bias, x, weight.t(), use_gelu=False)
        return torch_product(torch, c, x, weight.t(), 4096, bias=bias, relu=True)

    def graph():
        if not hasattr(torch.cuda, "graph"):
            return None
        seed(8)
        a = torch.randn(2048, 4096, device="cuda")
        b = torch.randn(4096, 2048, device="cuda")
        # Warm-up on a side stream before capture, as PyTorch's documentation does: the handle and workspace are
        # created outside the graph.
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                c = a @ b
        torch.cuda.current_stream().wait_stream(side)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            c = a @ b
        reports = []
        # Two replays on fresh data: the captured work must read the buffers, not what they held at capture.
        for replay, (low, high) in enumerate(((-1.0, 1.0), (0.0, 1.0))):
            new_a = torch.rand(2048, 4096, device="cuda") * (high - low) + low
            new_b = torch.rand(4096, 2048, device="cuda") * (high - low) + low
            a.copy_(new_a)
            b.copy_(new_b)
            g.replay()
            torch.cuda.synchronize()
            reports.append("replay %d: %s" % (replay + 1, torch_product(torch, c, new_a, new_b, 4096)))
        return "; ".join(reports)

    return [
        (TORCH_MM, mm),
        ("torch.mm a.t() @ b, 2048x4096 @ 4096x2048, uniform", mm_transposed),
        ("torch.bmm 4 x 2048x2048x4096", bmm),
        (LINEAR_FORWARD, linear_forward),
        ("nn.Linear(4096, 2048) backward: weight, bias, input", linear_backward),
        ("functional.linear + relu", linear_relu),
        ("torch._addmm_activation relu", addmm_relu),
        ("torch.cuda.graph capture of a @ b, replayed", graph),
    ]


def cupy_checks(cupy):
    def matmul():
        rs = cupy.random.RandomState(SEED + 9)
        a = rs.standard_normal((2048, 4096), dtype=cupy.float32)
        b = rs.standard_normal((4096, 2048), dtype=cupy.float32)
        c = cupy.matmul(a, b)
        a64, b64 = a.astype(cupy.float64), b.astype(cupy.float64)
        reference = cupy.matmul(a64, b64)
        scale = cupy.matmul(cupy.abs(a64), cupy.abs(b64))
        if not bool(cupy.isfinite(c).all()):
            raise CheckFailure("the result has a non-finite element")
        error = cupy.abs(c.astype(cupy.float64) - reference)
        bound = SLACK * 2.0 ** -24 * (1.0 + math.sqrt(4096)) * scale + TINY
        ratio = float((error / bound).max())
        count = int((error > bound).sum())
        if count:
            index = tuple(int(i) for i in cupy.unravel_index(int(cupy.argmax(error / bound)), c.shape))
            raise CheckFailure("%d of %d elements outside the bound, worst error/bound %.3g at %s: got %.9g, "
                               "reference %.9g" % (count, c.size, ratio, index, float(c[index]),
                                                   float(reference[index])))
        return "max error/bound %.3g" % ratio

    return [("cupy.matmul 2048x4096 @ 4096x2048", matmul)]


def run_check(results, framework, name, function, synchronize):
    mark("begin " + name)
    try:
        detail = function()
        status = "passed" if detail is not None else "skipped"
        if detail is None:
            detail = "this version has no such function"
    except CheckFailure as error:
        status, detail = "failed", str(error)
    except Exception:
        status, detail = "failed", traceback.format_exc().strip().replace("\n", " | ")
    try:
        synchronize()
    except Exception:
        if status != "failed":
            status, detail = "failed", "synchronize: " + traceback.format_exc().strip().replace("\n", " | ")
    mark("end " + name)
    results.append({"framework": framework, "name": name, "status": status, "detail": detail})
    say("check %s: %s (%s)" % (name, status, detail))


def child_checks():
    status = framework_status()
    results = []
    if status["torch"] is None:
        torch = torch_setup()
        for name, function in torch_checks(torch):
            run_check(results, "torch", name, function, torch.cuda.synchronize)
    else:
        results.append({"framework": "torch", "name": "torch checks", "status": "skipped", "detail": status["torch"]})
    if status["cupy"] is None:
        import cupy
        for name, function in cupy_checks(cupy):
            run_check(results, "cupy", name, function, cupy.cuda.Device().synchronize)
    else:
        results.append({"framework": "cupy", "name": "cupy checks", "status": "skipped", "detail": status["cupy"]})
    say(RESULT_PREFIX + json.dumps({"frameworks": status, "checks": results}))


def digest(data):
    return hashlib.sha256(data).hexdigest()


def torch_bytes(torch, tensor):
    tensor = tensor.detach().contiguous().cpu()
    try:
        return tensor.numpy().tobytes()
    except Exception:  # no NumPy: the bit patterns as integers serve as well
        return repr(tensor.view(torch.int32).flatten().tolist()).encode()


def child_hashes():
    """Prints the hash of each product's output bytes; run with and without the preload, the two must agree."""
    status = framework_status()
    hashes = {}
    if status["torch"] is None:
        torch = torch_setup()
        torch.manual_seed(SEED)
        a = torch.randn(2048, 4096, device="cuda")
        b = torch.randn(4096, 2048, device="cuda")
        hashes[TORCH_MM] = digest(torch_bytes(torch, torch.mm(a, b)))
        hashes["torch.mm b.t() @ a.t()"] = digest(torch_bytes(torch, b.t() @ a.t()))
        batch_a = torch.randn(4, 2048, 4096, device="cuda")
        batch_b = torch.randn(4, 4096, 2048, device="cuda")
        hashes["torch.bmm 4 x 2048x2048x4096"] = digest(torch_bytes(torch, torch.bmm(batch_a, batch_b)))
        layer = torch.nn.Linear(4096, 2048).cuda()
        with torch.no_grad():
            hashes[LINEAR_FORWARD] = digest(torch_bytes(torch, layer(a)))
        torch.cuda.synchronize()
    if status["cupy"] is None:
        import cupy
        rs = cupy.random.RandomState(SEED)
        a = rs.standard_normal((2048, 4096), dtype=cupy.float32)
        b = rs.standard_normal((4096, 2048), dtype=cupy.float32)
        hashes["cupy.matmul 2048x4096 @ 4096x2048"] = digest(cupy.asnumpy(cupy.matmul(a, b)).tobytes())
    say(RESULT_PREFIX + json.dumps({"frameworks": status, "hashes": hashes}))


def child_probe():
    say(RESULT_PREFIX + json.dumps({"frameworks": framework_status()}))


# ---------------------------------------------------------------------------------------------------------
# parent side


def child_environment(preload, extra):
    env = dict(os.environ)
    for name in ("LD_PRELOAD", "FASTGEMM_MATH", "FASTGEMM_CUBLAS_MIN_FLOPS", "FASTGEMM_LOG",
                 "FASTGEMM_CUBLAS_STATS"):
        env.pop(name, None)
    if preload:
        inherited = os.environ.get("LD_PRELOAD")
        env["LD_PRELOAD"] = preload + (":" + inherited if inherited else "")
    # Both runs use FP32 arithmetic in CuPy; with TF32 the products are not FP32 products at all.
    env["CUPY_TF32"] = "0"
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra)
    return env


def run_child(mode, preload, extra, timeout):
    """(result dict or None, stdout, stderr, return code)."""
    command = [sys.executable, os.path.abspath(__file__), "--child", mode]
    try:
        done = subprocess.run(command, env=child_environment(preload, extra), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True, timeout=timeout)
    except subprocess.TimeoutExpired as expired:
        def text(data):
            return data.decode(errors="replace") if isinstance(data, bytes) else (data or "")
        return None, text(expired.stdout), text(expired.stderr) + "\n(child timed out after %d s)" % timeout, None
    result = None
    for line in done.stdout.splitlines():
        if line.startswith(RESULT_PREFIX):
            result = json.loads(line[len(RESULT_PREFIX):])
    return result, done.stdout, done.stderr, done.returncode


def parse_log(stderr):
    """[(section or None, entry point, route, whole line)] for each of the interposer's log lines."""
    calls = []
    section = None
    for line in stderr.splitlines():
        if line.startswith(SECTION_PREFIX):
            word, _, name = line[len(SECTION_PREFIX):].partition(" ")
            section = name if word == "begin" else None
            continue
        match = LOG_LINE.match(line)
        if match:
            calls.append((section, match.group(1), match.group(3), line))
    return calls


def routes(calls, section):
    counts = {}
    for where, entry, route, _ in calls:
        if where == section:
            counts[entry + " -> " + route] = counts.get(entry + " -> " + route, 0) + 1
    return ", ".join("%s x%d" % item for item in sorted(counts.items())) or "no logged call"


class Tally:
    def __init__(self):
        self.passed, self.skipped, self.failed = 0, 0, []

    def record(self, name, status, detail):
        print("  %s: %s (%s)" % (name, status, detail), flush=True)
        if status == "passed":
            self.passed += 1
        elif status == "skipped":
            self.skipped += 1
        else:
            self.failed.append(name)


def dump_child(title, stdout, stderr, code):
    print("---- %s: exit status %s; stdout:" % (title, code))
    print(stdout.rstrip())
    print("---- %s: stderr:" % title)
    print(stderr.rstrip())
    print("----", flush=True)


def emulated(preload, timeout, tally):
    result, stdout, stderr, code = run_child("checks", preload, {"FASTGEMM_LOG": "1"}, timeout)
    if PRELOAD_ERROR in stderr:
        tally.record("preload", "failed", "the dynamic loader did not preload %s" % preload)
    if result is None or code != 0:
        tally.record("child", "failed", "the child ended with status %s and no complete result" % code)
        return stdout, stderr, code
    calls = parse_log(stderr)
    for check in result["checks"]:
        detail = check["detail"]
        if check["name"] not in ("torch checks", "cupy checks"):
            detail += "; " + routes(calls, check["name"])
        tally.record(check["name"], check["status"], detail)

    frameworks = result["frameworks"]
    if frameworks["torch"] is None:
        served = [line for _, entry, route, line in calls if entry == "cublasSgemm_v2" and route == "fastgemm"]
        tally.record("log: cublasSgemm_v2 -> fastgemm", "passed" if served else "failed",
                     "%d such lines" % len(served) if served else
                     "no such line; torch.mm's calls: " + routes(calls, TORCH_MM))
        lt = [(entry, route) for where, entry, route, _ in calls
              if where == LINEAR_FORWARD and entry == "cublasLtMatmul"]
        if not lt:
            tally.record("log: cublasLtMatmul -> fastgemm", "skipped",
                         "nn.Linear's forward made no cublasLtMatmul call here: " + routes(calls, LINEAR_FORWARD))
        else:
            served = [1 for _, route in lt if route == "fastgemm"]
            tally.record("log: cublasLtMatmul -> fastgemm", "passed" if served else "failed",
                         "nn.Linear's forward: " + routes(calls, LINEAR_FORWARD))
    if frameworks["cupy"] is None:
        served = [line for _, entry, route, line in calls if entry == "cublasGemmEx" and route == "fastgemm"]
        tally.record("log: cublasGemmEx -> fastgemm", "passed" if served else "failed",
                     "%d such lines" % len(served) if served else
                     "no such line; cupy.matmul's calls: " + routes(calls, "cupy.matmul 2048x4096 @ 4096x2048"))
    return stdout, stderr, code


def plain(preload, timeout, tally):
    """Pass-through: FASTGEMM_MATH=fp32 must hand every call to cuBLAS and change no bit of any result."""
    outputs = []
    preloaded, stdout, stderr, code = run_child("hashes", preload, {"FASTGEMM_LOG": "1", "FASTGEMM_MATH": "fp32"},
                                                timeout)
    outputs.append(("preloaded child (FASTGEMM_MATH=fp32)", stdout, stderr, code))
    reference, stdout2, stderr2, code2 = run_child("hashes", None, {}, timeout)
    outputs.append(("child without the preload", stdout2, stderr2, code2))
    if PRELOAD_ERROR in stderr:
        tally.record("preload", "failed", "the dynamic loader did not preload %s" % preload)
    if preloaded is None or code != 0 or reference is None or code2 != 0:
        tally.record("children", "failed", "a child ended with status %s / %s and no complete result" % (code, code2))
        return outputs
    calls = parse_log(stderr)
    others = [line for _, _, route, line in calls if route != "cuBLAS"]
    if not calls:
        tally.record("log: only -> cuBLAS lines", "failed", "no fastgemm_cublas: line at all: was it preloaded?")
    elif others:
        tally.record("log: only -> cuBLAS lines", "failed", "%d other lines, first: %s" % (len(others), others[0]))
    else:
        tally.record("log: only -> cuBLAS lines", "passed", "%d lines: %s" % (len(calls), routes(calls, None)))
    for framework, reason in sorted(preloaded["frameworks"].items()):
        if reason is not None:
            tally.record(framework + " checks", "skipped", reason)
    for name, value in sorted(preloaded["hashes"].items()):
        other = reference["hashes"].get(name)
        if value == other:
            tally.record(name + " bitwise as without the preload", "passed", "sha256 " + value[:16])
        else:
            tally.record(name + " bitwise as without the preload", "failed",
                         "sha256 %s preloaded, %s without" % (value[:16], (other or "none")[:16]))
    return outputs


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preload", required=False, help="path of libfastgemm_cublas.so")
    parser.add_argument("--plain", action="store_true",
                        help="check the pass-through (FASTGEMM_MATH=fp32) instead of the emulated mode")
    parser.add_argument("--timeout", type=int, default=1800, help="seconds each child may run (default 1800)")
    parser.add_argument("--child", choices=("checks", "hashes", "probe"), help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.child:
        {"checks": child_checks, "hashes": child_hashes, "probe": child_probe}[args.child]()
        return 0
    if not args.preload:
        parser.error("--preload PATH is required")

    missing = [name for name in ("torch", "cupy") if importlib.util.find_spec(name) is None]
    if len(missing) == 2:
        print("SKIPPED: neither torch nor cupy is importable")
        return 0
    # The probe runs without the preload, so that a library that cannot load on a machine without a GPU
    # does not decide whether the test runs there.
    probe, stdout, stderr, code = run_child("probe", None, {}, args.timeout)
    if probe is None:
        print("frameworks: the probe child failed")
        dump_child("probe child", stdout, stderr, code)
        return 1
    reasons = probe["frameworks"]
    if all(reason is not None for reason in reasons.values()):
        # A framework is present (the build registers this test only then): what it lacks is a device.
        print("SKIPPED: no CUDA device (" + "; ".join(reasons[name] for name in ("torch", "cupy")) + ")")
        return 0
    preload = os.path.abspath(args.preload)
    if not os.path.isfile(preload):
        print("frameworks: FAILED: --preload %s is not a file" % args.preload)
        return 1

    tally = Tally()
    print("frameworks: %s with %s preloaded" % ("pass-through (FASTGEMM_MATH=fp32)" if args.plain
                                                 else "emulated FP32", preload), flush=True)
    if args.plain:
        outputs = plain(preload, args.timeout, tally)
    else:
        outputs = [("child",) + emulated(preload, args.timeout, tally)]
    if tally.failed:
        for title, out, err, status in outputs:
            dump_child(title, out, err, status)
        print("frameworks: failed: " + "; ".join(tally.failed))
        print("frameworks: %d checks passed, %d skipped, %d failed" % (tally.passed, tally.skipped,
                                                                       len(tally.failed)))
        return 1
    print("frameworks: %d checks passed, %d skipped" % (tally.passed, tally.skipped))
    return 0


if __name__ == "__main__":
    sys.exit(main())
