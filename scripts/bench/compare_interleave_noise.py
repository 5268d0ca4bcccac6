#!/usr/bin/env python3
# Per point of kept interleaved pairs (KEEP_DIR of INTERLEAVE=1 scripts/bench/compare_false_alarms.sh,
# folders i<N>/base, i<N>/new): the spread of the per-round log ratio NEW/BASE, which the paired t
# sees, and the smallest change it could call significant with 10 rounds over 8 points.
# Usage: compare_interleave_noise.py KEEP_DIR (needs scipy: Debian python3-scipy)
import json, sys, math, statistics as st, glob, os
from collections import defaultdict
from scipy import stats as sps
def load(d):
    out={}
    for l in open(d+"/results.jsonl"):
        p=json.loads(l); by=defaultdict(list)
        for s,r in zip(p["samples_ns"],p.get("sample_rounds",[0]*len(p["samples_ns"]))): by[r].append(s)
        out[p["id"]]=by
    return out
dirs=[d.rstrip("/") for d in sorted(glob.glob(sys.argv[1]+"/i*/")) if os.path.exists(d+"new/run.json")]
sds=defaultdict(list); spr=defaultdict(list)
for d in dirs:
    b=load(d+"/base"); n=load(d+"/new")
    for pid in b:
        ks=sorted(set(b[pid])&set(n[pid]))
        dl=[math.log(st.median(n[pid][k])/st.median(b[pid][k])) for k in ks]
        sds[pid].append(st.stdev(dl)); spr[pid].append(st.mean(len(b[pid][k]) for k in ks))
t=sps.t.ppf(1-0.05/8, 9)
print(f"{len(dirs)} pairs; t(df 9, one-sided 1-0.05/8) = {t:.2f}")
for pid in sds:
    m=st.median(sds[pid])
    print(f"{pid:45s} sd of round log ratio: median {m:.3f} (min {min(sds[pid]):.3f}, max {max(sds[pid]):.3f}); samples/round {st.median(spr[pid]):.1f}; smallest significant change {100*(math.exp(t*m/math.sqrt(10))-1):.0f}%")
