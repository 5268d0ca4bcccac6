#!/usr/bin/env python3
# Per point of kept interleaved pairs (KEEP_DIR of INTERLEAVE=1 scripts/bench/compare_false_alarms.sh,
# folders i<N>/base, i<N>/new): the spread of the per-round log ratio NEW/BASE, which the paired test
# sees, and the smallest change compare's rule (Yuen's trimmed t, g = floor(0.1 rounds) left out at each
# end; the plain paired t below 10 rounds) could call significant over the suite's points.
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
def trimmed_se(d):  # Yuen: (se, degrees of freedom)
    n=len(d); g=int(0.1*n); s=sorted(d); h=n-2*g
    w=[s[g]]*g+s[g:n-g]+[s[n-g-1]]*g
    return math.sqrt((n-1)*st.variance(w)/(h*(h-1))), h-1
dirs=[d.rstrip("/") for d in sorted(glob.glob(sys.argv[1]+"/i*/")) if os.path.exists(d+"new/run.json")]
sds=defaultdict(list); spr=defaultdict(list); smallest=defaultdict(list)
for d in dirs:
    b=load(d+"/base"); n=load(d+"/new"); m=len(b)
    for pid in b:
        ks=sorted(set(b[pid])&set(n[pid]))
        dl=[math.log(st.median(n[pid][k])/st.median(b[pid][k])) for k in ks]
        se,df=trimmed_se(dl)
        sds[pid].append(st.stdev(dl)); spr[pid].append(st.mean(len(b[pid][k]) for k in ks))
        smallest[pid].append(math.exp(sps.t.ppf(1-0.05/m, df)*se)-1)
print(f"{len(dirs)} pairs; smallest significant change: one-sided t at 1 - 0.05/points on the trimmed se")
for pid in sds:
    m=st.median(sds[pid])
    print(f"{pid:45s} sd of round log ratio: median {m:.3f} (min {min(sds[pid]):.3f}, max {max(sds[pid]):.3f}); samples/round {st.median(spr[pid]):.1f}; smallest significant change {100*st.median(smallest[pid]):.0f}%")
