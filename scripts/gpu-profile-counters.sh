#!/usr/bin/env bash
# `speedlab profile --metrics` on the GPU machine: Numba (its context destroyed at Python's
# exit), CuPy, a C++ program (speedlab run in-process, vector mul) and a PyTorch loop; the
# counters pass, the kernels traced and the findings of each. Carry a folder holding
# speedlab, libspeedlab-inject.so, plugins/libspeedlab-vector.so and this script (the tree's
# examples/ are one level up):  bash <carry>/gpu-profile-counters.sh   (writes $OUT/ctr.tgz)
# docs/results/counters-h100.md, "speedlab profile --metrics", has what it printed.
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/.." && pwd)
export PATH="/usr/local/cuda/bin:$PATH" LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}"
S=$here/speedlab; w=/tmp/ctr; rm -rf $w; mkdir -p $w; out=${OUT:-$w/out}; mkdir -p $out
facts() { python3 - "$1" <<'PY'
import json, sys, os
d = sys.argv[1]
try:
    r = json.load(open(os.path.join(d, "results.json")))
except Exception as e:
    print("  no results.json:", e); sys.exit()
for p in r.get("points", []):
    c = p.get("counters")
    if not c: continue
    print(f"  {p['id']}: set {c.get('metric_set')} passes {c.get('passes')} K {c.get('per_kernel_limit')} launches {c.get('launches')} skipped {c.get('skipped')} kernels {len(c.get('kernels', []))} pass_wall {c.get('pass_wall_ns', 0)/1e6:.1f} ms")
    for k in c.get("kernels", [])[:6]:
        m = k.get("metrics", {})
        print(f"    {k.get('kernel', '')[:70]} grid {k.get('grid')} dram_r {m.get('dram__bytes_read.sum', 0)/1e6:.2f} MB dram_w {m.get('dram__bytes_write.sum', 0)/1e6:.2f} MB dur {m.get('gpu__time_duration.sum', 0)/1e3:.1f} us")
prog = r.get("program", {})
for q in prog.get("processes", []):
    if q.get("notes"): print("  notes:", [n[:160] for n in q["notes"]])
ks = prog.get("kernels", [])
print("  kernels:", sum(k["launches"] for k in ks), "launches,", len(ks), "names")
for f in r.get("findings", [])[:8]:
    print("  finding:", f.get("rule"), "|", f.get("title", "")[:150])
PY
}
run() { local name=$1; shift; local t=$(date +%s.%N); timeout 300 "$@" > $w/$name.log 2>&1; local rc=$?; echo "== $name: exit $rc, $(python3 -c "print(round($(date +%s.%N)-$t,1))") s"; tail -3 $w/$name.log | sed 's/^/  | /'; }
run numba $S profile --metrics default --out $w/numba -- python3 $root/examples/numba_pi.py --launches 10
facts $w/numba
run numba-plain $S profile --out $w/numba-plain -- python3 $root/examples/numba_pi.py --launches 10
python3 -c "import json; r=json.load(open('$w/numba-plain/results.json')); print('  numba-plain kernels', sum(k['launches'] for k in r['program']['kernels']))"
run cupy $S profile --metrics default --out $w/cupy -- python3 $root/examples/cupy_vector.py --n 16777216 --calls 5
facts $w/cupy
run vector $S profile --metrics default --out $w/vector -- $S run --plugin-path $here/plugins -w vector --variant cuda -p n=16777216 -p op=mul --no-isolate --profilers host --calibrate off --max-samples 5 --min-samples 3 --reports json --out $w/inner2
facts $w/vector
run torch $S profile --metrics default --out $w/torch -- python3 $root/examples/torch_mlp.py --steps 5
facts $w/torch
tar -C $w -czf $out/ctr.tgz --exclude='*.html' --exclude='trace*.json' --exclude='*.sqlite' --exclude=inner1 --exclude=inner2 . 2>/dev/null
ls -la $out
