#!/usr/bin/env python3
# Replays compare's paired verdict on kept interleaved pairs (KEEP_DIR of INTERLEAVE=1
# scripts/bench/compare_false_alarms.sh) with other rules: paired t (compare's) or Wilcoxon signed-rank
# with the Hodges-Lehmann interval, each on the rounds' medians or minima, and Yuen's trimmed paired t
# (g = 1 and 2 rounds left out at each end; compare's rule from 10 rounds: g = floor(0.1 rounds)).
# Prints, per rule, (self-comparisons with a point slower, pairs where SLOW x1.1 is slower, verdict counts).
# Usage: compare_interleave_rules.py KEEP_DIR [ROUNDS] (needs scipy: Debian python3-scipy); ROUNDS: use only
# the first ROUNDS rounds of each point (what fewer rounds would have found on the same runs).
import json, sys, math, statistics as st, glob, os, itertools
from collections import defaultdict
from scipy import stats as sps
def load(d):
    out={}
    for l in open(d+"/results.jsonl"):
        p=json.loads(l); by=defaultdict(list)
        for s,r in zip(p["samples_ns"],p.get("sample_rounds",[0]*len(p["samples_ns"]))): by[r].append(s)
        out[p["id"]]=by
    return out
def signrank_c(n, alpha):  # largest c with P(W <= c) <= alpha
    counts=[1]+[0]*(n*(n+1)//2)
    for k in range(1,n+1):
        for s in range(len(counts)-1,k-1,-1): counts[s]+=counts[s-k]
    tot=2**n; cum=0; c=-1
    for s,x in enumerate(counts):
        cum+=x
        if cum/tot<=alpha: c=s
        else: break
    return c
def t_rule(d, m):
    n=len(d); mean=st.mean(d); se=st.stdev(d)/math.sqrt(n); t=sps.t.ppf(1-0.05/m, n-1)
    return mean, mean-t*se, mean+t*se
def yuen_rule(g):
    def rule(d, m):
        n=len(d); s=sorted(d); gg=min(g,(n-2)//2); h=n-2*gg
        tm=st.mean(s[gg:n-gg]); w=[s[gg]]*gg+s[gg:n-gg]+[s[n-gg-1]]*gg
        se=math.sqrt((n-1)*st.variance(w)/(h*(h-1))); t=sps.t.ppf(1-0.05/m, h-1)
        return tm, tm-t*se, tm+t*se
    return rule
def hl_rule(d, m):
    n=len(d); w=sorted((d[i]+d[j])/2 for i in range(n) for j in range(i,n))
    c=signrank_c(n, 0.05/m)
    if c<0: return st.median(w), -9, 9
    return st.median(w), w[c], w[len(w)-1-c]
def verdict(est, lo, hi, thr=0.05):
    up=math.log(1+thr)
    if abs(est)<=up: return "same"
    if est>up and lo>0: return "slower"
    if est<-up and hi<0: return "faster"
    return "unclear"
def run(dirs, rule, slow="vector/threads", factor=1.1, agg=st.median):
    alarms=hits=0; pts=defaultdict(int)
    for d in dirs:
        b=load(d+"/base"); n=load(d+"/new"); m=len(b)
        self_slow=False; hit=False
        for pid in b:
            ks=sorted(set(b[pid])&set(n[pid]))[:first_rounds]
            dl=[math.log(agg(n[pid][k])/agg(b[pid][k])) for k in ks]
            v=verdict(*rule(dl,m)); pts[v]+=1
            if v=="slower": self_slow=True
            if pid.startswith(slow+"/"):
                v2=verdict(*rule([x+math.log(factor) for x in dl],m))
                if v2=="slower": hit=True
        alarms+=self_slow; hits+=hit
    return alarms, hits, dict(pts)
first_rounds=int(sys.argv[2]) if len(sys.argv) > 2 else None
dirs=sorted(glob.glob(sys.argv[1]+"/i*/"), key=lambda x: x)
dirs=[d.rstrip("/") for d in dirs if os.path.exists(d+"new/run.json")]
print(len(dirs), "pairs")
for name, rule in (("paired t", t_rule), ("HL/signed-rank", hl_rule), ("Yuen trimmed t, g=1", yuen_rule(1)),
                   ("Yuen trimmed t, g=2", yuen_rule(2))):
  for an, agg in (("median", st.median), ("min", min)):
    print(name, an, run(dirs, rule, agg=agg))
