# SPDX-License-Identifier: Apache-2.0
"""bench/plot draws a PNG from a small sgemm CSV and a small rowmean JSON in fastgemm-bench's formats, and
refuses a file that is no report. Exits 77 (skipped) without matplotlib.

    python3 check_plot.py bench/plot WORK_DIR
"""
import json
import pathlib
import shutil
import subprocess
import sys

RUN = {"device": "Test GPU", "device_ordinal": 0, "compute_capability": "9.0", "sm_count": 4, "clock_mhz": 1000,
       "fp32_lanes_per_sm": 128, "peak_gflops": 1024.0, "l2_bytes": 1048576, "read_bandwidth_gb_per_s": 400.0,
       "cuda_driver": "13.0", "cuda_runtime": "13.0", "fastgemm_version": "0.1.0"}
MEASURED = ["status", "repeats", "min_ms", "median_ms", "max_ms"]
CHECKED = ["rel_error", "tolerance", "message"]


def sgemm_csv():
    columns = (["op", "algo", "ran", "layout", "trans", "m", "n", "k", "batch"] + MEASURED +
               ["gflops", "ratio_to_cublas", "percent_of_peak"] + CHECKED + list(RUN))
    rows = [
        ["sgemm", "auto", "double_buffer", "row", "NN", 256, 256, 256, 1, "ok", 20, 0.1, 0.11, 0.12, 305, 1.2, 29.8,
         1e-7, 1e-5, ""],
        ["sgemm", "naive", "naive", "col", "TN", 256, 128, 64, 4, "check_failed", 0, "", "", "", "", "", "",
         0.5, 1e-5, ""],
        ["sgemm", "smem_vec4", "", "row", "NN", 256, 256, 256, 1, "not_supported", 0, "", "", "", "", "", "", "", "",
         '"fg_sgemm: needs 16-byte rows, ""aligned"""'],
        ["sgemm", "cublas", "cublas", "row", "NN", 256, 256, 256, 1, "ok", 20, 0.12, 0.13, 0.14, 254, 1, 24.8,
         0, 1e-5, ""],
    ]
    lines = [",".join(columns)] + [",".join(str(v) for v in row + list(RUN.values())) for row in rows]
    return "\n".join(lines) + "\n"


def rowmean_json():
    results = []
    for algo, rate in (("auto", 350.0), ("two_pass", None), ("cublas", 300.0)):
        results.append({"op": "rowmean", "algo": algo, "ran": "", "dtype": "f64", "L": 64, "M": 32, "N": 100,
                        "status": "ok" if rate else "error", "repeats": 20, "min_ms": 0.1, "median_ms": 0.1,
                        "max_ms": 0.1, "gb_per_s": rate, "ratio_to_cublas": rate / 300.0 if rate else None,
                        "percent_of_read_bandwidth": None, "rel_error": 0, "tolerance": 1e-12,
                        "message": "" if rate else "cudaErrorLaunchFailure"})
    return json.dumps({"tool": "fastgemm-bench", "op": "rowmean", "command": "fastgemm-bench rowmean",
                       "timing": "test", **RUN, "results": results, "geometric_mean_ratio_to_cublas": {}})


def main(plot, work_dir):
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("matplotlib is not installed: bench/plot is not tried")
        return 77
    work = pathlib.Path(work_dir)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    (work / "sgemm.csv").write_text(sgemm_csv())
    (work / "rowmean.json").write_text(rowmean_json())
    (work / "other.csv").write_text("op,algo\ngemv,x\n")
    for report, extra in (("sgemm.csv", []), ("rowmean.json", ["--log", "-o", str(work / "rowmean-log.png")])):
        subprocess.run([sys.executable, plot, str(work / report)] + extra, check=True)
    for png in ("sgemm.png", "rowmean-log.png"):
        if not (work / png).read_bytes().startswith(b"\x89PNG"):
            print(f"{png} is not a PNG")
            return 1
    refused = subprocess.run([sys.executable, plot, str(work / "other.csv")], capture_output=True, text=True)
    if refused.returncode == 0 or "not a fastgemm-bench" not in refused.stderr:
        print(f"bench/plot accepted a file that is no report: {refused.stderr}")
        return 1
    print("bench/plot drew sgemm.png and rowmean-log.png")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
