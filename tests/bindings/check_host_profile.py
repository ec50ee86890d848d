# SPDX-License-Identifier: Apache-2.0
"""bench/host_profile.py on a profile written by hand: overlapping spans counted once, rates, setup, call choice."""
import subprocess
import sys
import tempfile
import os

script = sys.argv[1]
profile = """# m=128 n=128 k=64 tile=64x64x64 workers=2 devices=0:1 total_ms=20.000 device_times=1
worker,device,activity,begin_ms,end_ms,amount
-1,-1,setup_workers,0.0000,3.0000,0
-1,1,setup_buffers,3.0000,3.5000,0
0,0,upload,4.0000,6.0000,200000000
0,0,product,6.0000,10.0000,4000000000
0,0,product,8.0000,12.0000,4000000000
1,1,peer_copy,6.0000,7.0000,100000000
1,1,product,7.0000,9.0000,2000000000
0,0,pack,3.0000,5.0000,400000000
0,0,wait_uploads,5.0000,6.0000,0
# m=64 n=64 k=64 tile=64x64x64 workers=1 devices=0 total_ms=5.000 device_times=1
worker,device,activity,begin_ms,end_ms,amount
0,0,product,1.0000,2.0000,524288
"""
with tempfile.TemporaryDirectory() as work:
    path = os.path.join(work, "profile.csv")
    with open(path, "w") as f:
        f.write(profile)
    first = subprocess.run([sys.executable, "-B", script, path, "--call", "0"], capture_output=True, text=True)
    last = subprocess.run([sys.executable, "-B", script, path], capture_output=True, text=True)
    every = subprocess.run([sys.executable, "-B", script, path, "--call", "all"], capture_output=True, text=True)
    drawn = subprocess.run([sys.executable, "-B", script, path, "--call", "0", "--timeline", "20"],
                           capture_output=True, text=True)
for run in (first, last, every, drawn):
    if run.returncode != 0:
        sys.exit(f"host_profile.py failed: {run.stderr}")


def require(lines, text, what):
    """Exits naming every line of `lines` that `text` lacks."""
    missing = [line for line in lines if line not in text]
    if missing:
        sys.exit("missing from " + what + ":\n" + "\n".join(missing) + "\n--- got:\n" + text)


expected = [
    # Products of worker 0 overlap from 8 to 10 ms: 6 ms busy, not 8; 8e9 flops over 6 ms is 1.3 TFLOPS.
    "worker 0 (device 0): products 6.0 ms busy of 20.0 (30%), first from 6.0, last until 12.0 ms, 1.3 TFLOPS",
    "upload              2.0 ms busy,    0.19 GiB in     1,  100.0 GB/s while busy",
    "pack                2.0 ms,    0.37 GiB in     1,  200.0 GB/s",
    "waits: uploads 1.0 ms (1)",
    "worker 1 (device 1): products 2.0 ms busy of 20.0 (10%), first from 7.0, last until 9.0 ms, 1.0 TFLOPS",
    "peer_copy           1.0 ms busy,    0.09 GiB in     1,  100.0 GB/s while busy",
    "setup: workers 3.0 ms, buffers (device 1) 0.5 ms",
    "first product starts 6.0-7.0 ms, last ends 9.0-12.0 ms, call ends 20.0 ms",
]
require(expected, first.stdout, "the first call's summary")
# A millisecond a character: worker 0 computes from 6 to 12 ms, uploads from 4 to 6; worker 1 copies from 6 to 7 and
# computes from 7 to 9.
timeline = [
    "0/0 product   |......######........|",
    "0/0 upload    |....##..............|",
    "1/1 product   |.......##...........|",
    "1/1 peer_copy |......#.............|",
]
require(timeline, drawn.stdout, "the timeline")
if "timeline" in first.stdout:
    sys.exit("a timeline without --timeline:\n" + first.stdout)
if "m=64" not in last.stdout or "m=128" in last.stdout:
    sys.exit("the default is not the last call alone:\n" + last.stdout)
if "m=64" not in every.stdout or "m=128" not in every.stdout:
    sys.exit("--call all does not give both calls:\n" + every.stdout)
print("host_profile.py: the summaries are right")
