#!/usr/bin/env python3
"""Key figures of a GPU lesson-suite run, as Markdown (for docs/results/README.md).

    summarize_gpu_results.py SUITE_DIR/results.json [peers.jsonl ...]

Memory-bound kernels: bandwidth from CUPTI kernel time against the device-to-device copy
bandwidth measured by `speedlab calibrate` in the same session. Compute-bound ones: rate and
share of the measured FP32/FP64 peak, and the lessons' own Numba/CuPy versions (device
data) timed by scripts/peers/*.py on the same GPU. Threads: parallel efficiency on all cores.
"""
import json
import sys


def main():
    r = json.load(open(sys.argv[1]))
    peers = [json.loads(l) for f in sys.argv[2:] for l in open(f) if l.strip()]
    gpu = r["analysis"]["device"]["gpu"]
    d2d = gpu["dram_bw"]["value"]
    cores = r["run"]["cpu_cores"]
    pts = {p["id"]: p for p in r["points"]}

    def find(workload, variant, **params):
        for p in r["points"]:
            if p["workload"] == workload and p["variant"] == variant and all(p["params"].get(k) == v for k, v in params.items()):
                return p
        return None

    print(f"GPU: {r['run']['gpu_name']}; measured device-to-device copy bandwidth {d2d:.0f} GB/s, "
          f"FP32 {gpu['fp32_peak']['value']/1e3:.1f} TFLOP/s, FP64 {gpu['fp64_peak']['value']/1e3:.1f} TFLOP/s "
          f"(`speedlab calibrate --full`); host: {cores} cores.\n")

    print("### Memory-bound kernels (variant `cuda`, device-resident data, default size)\n")
    print("| workload | parameters | wall median | kernel time (CUPTI) | GB/s (kernel) | % of D2D copy |")
    print("|---|---|---:|---:|---:|---:|")
    for w, params in (("vector", {"op": "add"}), ("vector", {"op": "mul"}), ("reduction", {"op": "mean"}),
                      ("reduction", {"op": "dot"}), ("histogram", {}), ("transpose", {"size": "4096"}),
                      ("transpose", {"size": "4097"})):
        p = find(w, "cuda", **params)
        if not p or p["status"] != "ok" or not p.get("split_median"):
            continue
        k = p["split_median"]["kernel"]
        gbps = (p["work"]["bytes_read"] + p["work"]["bytes_written"]) / k
        pstr = ",".join(f"{a}={b}" for a, b in sorted(p["params"].items()))
        print(f"| {w} | `{pstr}` | {p['wall']['median']/1e3:.1f} us | {k/1e3:.1f} us | {gbps:.0f} | {100*gbps/d2d:.1f}% |")

    print("\n### Compute-bound kernels (variant `cuda`, default size) and the lessons' own GPU versions\n")
    print("| workload | parameters | wall median | kernel (CUPTI) | rate (kernel) | % of peak | fastest Numba/CuPy (device data) |")
    print("|---|---|---:|---:|---:|---:|---|")
    cases = (("montecarlo", {}, lambda q: q.get("lesson") == 3 and q.get("case", "").startswith("moment")),
             ("montecarlo_pi", {}, lambda q: q.get("lesson") == 3 and "pi" in q.get("case", "")),
             ("transcendental", {"func": "gauss", "dtype": "float32"},
              lambda q: q.get("lesson") == 4 and q.get("case", "").startswith("gauss-float32")),
             ("convolution", {}, lambda q: q.get("lesson") == "convolution"),
             ("mandelbrot", {}, lambda q: q.get("lesson") == "mandelbrot"))
    for w, params, peer_filter in cases:
        p = find(w, "cuda", **params)
        if not p or p["status"] != "ok" or not p.get("split_median"):
            continue
        k = p["split_median"]["kernel"]
        flops = p["work"]["flops"]
        peak = gpu["fp64_peak" if p["work"].get("fp64") else "fp32_peak"]["value"]
        rate = f"{flops / k:.0f} GFLOP/s" if flops else f"{p['work']['items'] / k:.1f} Gitems/s"
        share = f"{100 * flops / k / peak:.1f}% {'FP64' if p['work'].get('fp64') else 'FP32'}" if flops else "-"
        best = None
        for q in peers:
            if peer_filter(q) and q.get("data", "device") == "device" and "median_ms" in q:
                if best is None or q["median_ms"] < best["median_ms"]:
                    best = q
        peer = (f"{best['impl']} {best['median_ms']*1e3:.1f} us ({best['median_ms']*1e6/p['wall']['median']:.1f}x our wall)"
                if best else "-")
        pstr = ",".join(f"{a}={b}" for a, b in sorted(p["params"].items()))
        print(f"| {w} | `{pstr}` | {p['wall']['median']/1e3:.1f} us | {k/1e3:.1f} us | {rate} | {share} | {peer} |")

    print(f"\n### Multithreaded variants ({cores} threads, default size)\n")
    print("| workload | parameters | serial | threads | speedup | parallel efficiency | host GB/s (threads) |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for p in r["points"]:
        if p["variant"] != "threads" or p["status"] != "ok":
            continue
        s = find(p["workload"], "serial", **p["params"])
        if not s or s["status"] != "ok":
            continue
        sp = s["wall"]["median"] / p["wall"]["median"]
        gb = (p["work"]["bytes_read"] + p["work"]["bytes_written"]) / p["wall"]["median"]
        pstr = ",".join(f"{a}={b}" for a, b in sorted(p["params"].items()))
        print(f"| {p['workload']} | `{pstr}` | {s['wall']['median']/1e6:.2f} ms | {p['wall']['median']/1e6:.2f} ms | "
              f"{sp:.2f}x | {100*sp/p['threads']:.0f}% | {gb:.1f} |")


if __name__ == "__main__":
    main()
