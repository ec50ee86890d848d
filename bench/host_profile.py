#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Summarizes a profile that fg_sgemm_host wrote where FASTGEMM_HOST_PROFILE pointed (docs/environment.md).

Per call and worker: how long its device computed, transferred and sat idle, how fast its transfers and the
host's copies ran, and what its threads waited for; then the call's totals across workers.

  FASTGEMM_HOST_PROFILE=/tmp/p.csv fastgemm-bench sgemm --host --devices 0,1,2,3 --sizes 16384 --repeats 1
  python3 bench/host_profile.py /tmp/p.csv            # the last call
  python3 bench/host_profile.py /tmp/p.csv --call all
  python3 bench/host_profile.py /tmp/p.csv --timeline 100     # each worker's activity over the call
"""
import argparse
import sys

DEVICE = ("product", "upload", "download", "peer_copy")


def read_calls(path):
    calls, current = [], None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("# "):
                fields = dict(item.split("=", 1) for item in line[2:].split() if "=" in item)
                current = {"header": fields, "spans": []}
                calls.append(current)
            elif line and not line.startswith("worker,") and current is not None:
                w, d, what, b, e, amount = line.split(",")
                current["spans"].append((int(w), int(d), what, float(b), float(e), int(amount)))
    return calls


def union(intervals):
    """Total length covered by the intervals."""
    total, end = 0.0, float("-inf")
    for b, e in sorted(intervals):
        if e > end:
            total += e - max(b, end)
            end = e
    return total


def coverage(intervals, begin, end):
    """The share of [begin, end) that the intervals cover."""
    clipped = [(max(b, begin), min(e, end)) for b, e in intervals if e > begin and b < end]
    return union(clipped) / (end - begin) if end > begin else 0.0


def timeline(spans, total, width, out):
    """Per worker and device activity, a character per 1/width of the call: '#' busy most of it, '+' some, '.' none."""
    out.write(f"  timeline, {total / width:.2f} ms a character:\n")
    for w, d in sorted({(s[0], s[1]) for s in spans if s[0] >= 0}):
        for what in DEVICE:
            mine = [(s[3], s[4]) for s in spans if s[0] == w and s[2] == what]
            if not mine:
                continue
            row = ""
            for i in range(width):
                share = coverage(mine, total * i / width, total * (i + 1) / width)
                row += "#" if share >= 0.5 else "+" if share > 0 else "."
            out.write(f"    {w}/{d} {what:9s} |{row}|\n")


def summarize(call, out, width=0):
    h, spans = call["header"], call["spans"]
    total = float(h.get("total_ms", "nan"))
    out.write(" ".join(f"{k}={v}" for k, v in h.items()) + "\n")
    setup = [s for s in spans if s[0] < 0]
    if setup:
        out.write("  setup: " + ", ".join(f"{s[2][6:]}{f' (device {s[1]})' if s[1] >= 0 else ''} {s[4] - s[3]:.1f} ms"
                                        for s in setup) + "\n")
    spans = [s for s in spans if s[0] >= 0]
    workers = sorted({(s[0], s[1]) for s in spans})
    rows = []
    for w, d in workers:
        mine = [s for s in spans if s[0] == w]
        by = {}
        for _, _, what, b, e, amount in mine:
            entry = by.setdefault(what, {"ms": 0.0, "count": 0, "amount": 0, "spans": []})
            entry["ms"] += e - b
            entry["count"] += 1
            entry["amount"] += amount
            entry["spans"].append((b, e))
        products = by.get("product", {"spans": []})["spans"]
        first = min((b for b, _ in products), default=float("nan"))
        last = max((e for _, e in products), default=float("nan"))
        busy = {what: union(by[what]["spans"]) if what in by else 0.0 for what in DEVICE}
        rows.append((w, d, by, busy, first, last))
        out.write(f"  worker {w} (device {d}): products {busy['product']:.1f} ms busy of {total:.1f}"
                  f" ({100 * busy['product'] / total:.0f}%), first from {first:.1f}, last until {last:.1f} ms")
        if "product" in by:
            out.write(f", {by['product']['amount'] / 1e9 / max(busy['product'], 1e-9):.1f} TFLOPS while busy")
        out.write("\n")
        for what in ("upload", "download", "peer_copy"):
            if what in by:
                e = by[what]
                out.write(f"    {what:14s} {busy[what]:8.1f} ms busy, {e['amount'] / 2**30:7.2f} GiB in {e['count']:5d},"
                          f" {e['amount'] / 1e6 / max(busy[what], 1e-9):6.1f} GB/s while busy\n")
        for what in ("pack", "pack_shared", "unpack"):
            if what in by:
                e = by[what]
                out.write(f"    {what:14s} {e['ms']:8.1f} ms, {e['amount'] / 2**30:7.2f} GiB in {e['count']:5d},"
                          f" {e['amount'] / 1e6 / max(e['ms'], 1e-9):6.1f} GB/s\n")
        waits = [(what, e) for what, e in sorted(by.items()) if what.startswith("wait_")]
        if waits:
            out.write("    waits: " + ", ".join(f"{what[5:]} {e['ms']:.1f} ms ({e['count']})" for what, e in waits) + "\n")
    # Across workers: what the host and the bus carried over the whole call.
    for what in ("upload", "download", "peer_copy"):
        chosen = [s for s in spans if s[2] == what]
        if chosen:
            covered = union([(s[3], s[4]) for s in chosen])
            amount = sum(s[5] for s in chosen)
            out.write(f"  {what} in all: {amount / 2**30:.2f} GiB, {covered:.1f} ms with one or more running,"
                      f" {amount / 1e6 / total:.1f} GB/s over the call\n")
    host_bytes = sum(s[5] for s in spans if s[2] in ("pack", "pack_shared", "unpack"))
    if host_bytes:
        out.write(f"  host copies: {host_bytes / 2**30:.2f} GiB, {host_bytes / 1e6 / total:.1f} GB/s over the call\n")
    if rows:
        starts = [r[4] for r in rows]
        ends = [r[5] for r in rows]
        out.write(f"  first product starts {min(starts):.1f}-{max(starts):.1f} ms, last ends {min(ends):.1f}-"
                  f"{max(ends):.1f} ms, call ends {total:.1f} ms\n")
    if width > 0:
        timeline(spans, total, width, out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("profile")
    parser.add_argument("--call", default="last", help="last (default), all, or a call's number from 0")
    parser.add_argument("--timeline", type=int, default=0, metavar="WIDTH",
                        help="also each worker's activity over the call, WIDTH characters wide")
    args = parser.parse_args()
    calls = read_calls(args.profile)
    if not calls:
        sys.exit(f"{args.profile}: no call in it")
    if args.call == "all":
        chosen = calls
    elif args.call == "last":
        chosen = calls[-1:]
    else:
        chosen = [calls[int(args.call)]]
    for call in chosen:
        summarize(call, sys.stdout, args.timeline)


if __name__ == "__main__":
    main()
