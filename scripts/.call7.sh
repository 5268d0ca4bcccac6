set -u
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}
S=$PWD/.device-carry/speedlab; c=/tmp/c7; mkdir -p $c; export SPEEDLAB_CACHE_DIR=$c/cache
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for set in dram default full; do
  timeout 40 $S run suites/gpu-counters.yaml --metrics $set --reports json --force --out $c/set-$set --workload vector \
    --variant cuda --param op=mul >$c/set-$set.log 2>&1; el "set $set: exit $?"
done
while read -r name vars args; do
  (( $(date +%s) - T0 > 150 )) && { el "slow $name: skipped (time)"; continue; }
  timeout 45 $S run suites/gpu-counters.yaml --metrics full --reports json,markdown --force --out $c/slow-$name \
    $(for v in ${vars//,/ }; do echo --variant $v; done) $args >$c/slow-$name.log 2>&1; el "slow $name: exit $?"
done <<'CASES'
pi cuda,cuda-lesson,cuda-tuned,cuda-fast --workload montecarlo_pi --param M=2700000000
mandel8k cuda,cuda-lesson,cuda-tuned --workload mandelbrot --param size=8192 --param iterations=256
moment cuda,cuda-lesson,cuda-tuned,cuda-fast --workload montecarlo --param M=512000000 --param N=8
CASES
tar -C $c -czf $OUT/call7.tgz --exclude=cache --exclude=traces --exclude='*.sqlite' --exclude=trace.json .
el done
