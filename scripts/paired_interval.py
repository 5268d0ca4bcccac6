#!/usr/bin/env python3
"""Paired differences and a distribution-free 95% interval of their median, for the cost
benches that pair a capture on against off (scripts/gpu-python-lines.sh, gpu-light-capture.sh).

    python3 scripts/paired_interval.py FILE ON_KEY OFF_KEY LABEL [--relative] [--unit U] [--with FILE ...]

FILE holds one JSON object per line (a process), each with the arrays ON_KEY and OFF_KEY,
paired by index. Prints each process's pairs and medians, then the pooled median of the
differences (on - off, or 100 * (on - off) / off with --relative) and its interval: the order
statistics k+1 and n-k of the n sorted differences for the largest k whose binomial coverage
is still at least 95%. A line without the keys is reported by its "error" member. --with adds
the processes of another file (another call), pooled with FILE's: each pair stays within its
process, so pooling calls needs no pairing across them.
"""
import argparse
import json
import statistics
from math import comb


def median_interval(values, coverage=0.95):
    """(median, low, high) of `values`; low and high are None when too few for the coverage."""
    d = sorted(values)
    n = len(d)
    best = None
    for k in range(n // 2):
        if sum(comb(n, i) for i in range(k + 1, n - k)) / 2 ** n >= coverage:
            best = k
    if best is None:
        return statistics.median(d), None, None
    return statistics.median(d), d[best], d[n - 1 - best]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("file")
    p.add_argument("on_key")
    p.add_argument("off_key")
    p.add_argument("label")
    p.add_argument("--relative", action="store_true")
    p.add_argument("--unit", default="")
    p.add_argument("--with", dest="more", action="append", default=[], metavar="FILE")
    a = p.parse_args()
    unit = "%" if a.relative else a.unit
    pooled = []
    rows = []
    for name in [a.file, *a.more]:
        with open(name) as f:
            rows += [json.loads(l) for l in f if l.strip().startswith("{")]
    for i, r in enumerate(rows):
        if a.on_key not in r or a.off_key not in r:
            print(f"{a.label} process {i}: {r.get('error', 'no pairs')}")
            continue
        on, off = r[a.on_key], r[a.off_key]
        d = [100 * (x - y) / y if a.relative else x - y for x, y in zip(on, off)]
        pooled += d
        print(f"{a.label} process {i}: {len(d)} pairs, on {statistics.median(on):.3f}, off {statistics.median(off):.3f}, "
              f"paired difference median {statistics.median(d):+.3f}{unit}")
    if not pooled:
        print(f"{a.label}: no pairs")
        return
    m, lo, hi = median_interval(pooled)
    ci = f"{lo:+.3f} .. {hi:+.3f}{unit}" if lo is not None else "too few pairs"
    print(f"{a.label}: {len(pooled)} pairs in {len(rows)} processes; on - off: median {m:+.3f}{unit}, 95% interval {ci}")


if __name__ == "__main__":
    main()
