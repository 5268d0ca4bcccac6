#!/usr/bin/env python3
"""Checks crossover sizes predicted from a sweep against fresh measurements on either side.

    check_crossover.py SPEEDLAB SWEEP_DIR OUT_DIR

For every in-range crossover (copies included) that speedlab found in SWEEP_DIR, runs the
variant and its baseline at half and at twice the predicted size and reports whether the
measured winner flips as predicted. Prints one JSON line per check and a summary line.
"""
import json
import math
import subprocess
import sys


def median_of(out_dir, variant):
    with open(f"{out_dir}/results.jsonl") as f:
        for line in f:
            p = json.loads(line)
            if p["variant"] == variant and p["status"] == "ok":
                return p["wall"]["median"]
    return None


def main():
    speedlab, sweep_dir, out_dir = sys.argv[1:4]
    analysis = json.loads(subprocess.run([speedlab, "analyze", sweep_dir, "--json"], check=True,
                                         capture_output=True, text=True).stdout)
    checks, agreed = 0, 0
    seen = set()
    for c in analysis["crossovers"]:
        if not c.get("in_range") or not c.get("with_transfers") or c.get("size") is None:
            continue
        key = (c["workload"], c["variant"], c["baseline"])
        if key in seen or c["baseline"] != "serial":
            continue
        seen.add(key)
        size = c["size"]
        params = [p for p in c.get("params_key", "").split(",") if p]
        faster_above = c.get("faster_above", True)
        result = {"workload": c["workload"], "variant": c["variant"], "baseline": c["baseline"],
                  "size_param": c["size_param"], "predicted": size,
                  "interval": [c.get("size_low"), c.get("size_high")]}
        for label, s in (("below", max(1, math.floor(size / 2))), ("above", math.ceil(size * 2))):
            out = f"{out_dir}/{c['workload']}-{c['variant']}-{label}"
            cmd = [speedlab, "run", "--workload", c["workload"], "--variant", c["variant"], "--variant",
                   c["baseline"], "--param", f"{c['size_param']}={s}", "--out", out, "--reports", "json",
                   "--calibrate", "off", "--profilers", "host", "--max-time", "1"]
            for p in params:
                cmd += ["--param", p]
            subprocess.run(cmd, capture_output=True, text=True)
            v, b = median_of(out, c["variant"]), median_of(out, c["baseline"])
            result[label] = {"size": s, "variant_ns": v, "baseline_ns": b}
        ok = None
        if all(result[x]["variant_ns"] and result[x]["baseline_ns"] for x in ("below", "above")):
            below_wins = result["below"]["variant_ns"] < result["below"]["baseline_ns"]
            above_wins = result["above"]["variant_ns"] < result["above"]["baseline_ns"]
            ok = (not below_wins and above_wins) if faster_above else (below_wins and not above_wins)
        result["prediction_holds"] = ok
        checks += 1
        agreed += 1 if ok else 0
        print(json.dumps(result), flush=True)
    print(f"crossover checks: {agreed} of {checks} predictions held on both sides")


if __name__ == "__main__":
    main()
