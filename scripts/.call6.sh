set -u
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}
S=$PWD/.device-carry/speedlab; W=/tmp/c6; mkdir -p $W
timeout 120 $S profile --out $W/inflight --flush-interval 5 -- python3 examples/numba_pi.py --launches 40 --samples-per-thread 262144 >$W/inflight.log 2>&1
echo "inflight: exit $?"; tail -4 $W/inflight.log
python3 -c 'import json, sys
p = [q for q in json.load(open(sys.argv[1]))["processes"] if q["used_cuda"]]
print(sum(q["kernels"] for q in p), "kernels of 40,", sum(q["dropped_records"] for q in p), "records dropped")' $W/inflight/profile.json
MODES=slow BUDGET_S=150 timeout 220 bash .device-carry/ranks/gpu-ranks.sh > $OUT/ranks-console.txt 2>&1; echo "ranks exit $?"
grep -E "rank|straggler" $OUT/ranks-console.txt | grep -v "^\[" | head -20
tar -C $W -czf $OUT/inflight.tgz --exclude='*.slstream' .
