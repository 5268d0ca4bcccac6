#!/usr/bin/env python3
"""Writes a folder of synthetic rank streams for the merge benchmark (rank_merge_bench.sh).

    rank_streams.py OUT_DIR [--ranks 64] [--records 1000000] [--ranks-per-host 8]
                            [--straggler 37] [--extra-us 1000] [--node-folders] [--binary]

Each stream is what libspeedlab-inject writes for one rank of a data-parallel job (the
chunk format of docs/profile-format.md: "SLP1", type, length, CRC-32, JSON payload), with
the launcher's variables (RANK, LOCAL_RANK, WORLD_SIZE) in its header. Every step of every
rank has one NVTX range "train_step", a memset, 30 compute kernels (200 us each), one NCCL
all-reduce kernel that ends when the slowest rank arrives, and one launch API record per
kernel: 64 records a step. Rank --straggler does --extra-us more compute each step, so a
correct merge names it and finds that every other rank waits that long per step. Ranks are
spread over hosts of --ranks-per-host, each host's clock offset by seconds from the others
(the merge must align them). OUT_DIR/profile.json makes OUT_DIR a profile folder;
OUT_DIR/expected.json says what the merge must find. --binary writes format 2 (binary records
chunks, type 5, as the injection library writes now; needs numpy) instead of format 1's JSON
chunks: the same records, and a thousand streams written in seconds. With --node-folders each host's streams
go into OUT_DIR/nodeN/ with a profile.json of its own (a job whose nodes each wrote a folder:
`speedlab report OUT_DIR/nodeN --summary` reduces one node, `speedlab analyze OUT_DIR` merges).
"""
import argparse
import json
import os
import struct
import sys
import zlib

RECORDS_PER_STEP = 64
COMPUTE_KERNELS = 30
KERNEL_NS = 200_000
STEP_NS = 10_000_000


def chunk(kind, payload):
    data = json.dumps(payload, separators=(",", ":")).encode() if not isinstance(payload, bytes) else payload
    return b"SLP1" + struct.pack("<III", kind, len(data), zlib.crc32(data) & 0xFFFFFFFF) + data


def columns():
    return {
        "kernels": ["start", "end", "device", "context", "stream", "correlation", "name", "mangled_name", "grid_x",
                    "grid_y", "grid_z", "block_x", "block_y", "block_z", "registers_per_thread",
                    "static_shared_bytes", "dynamic_shared_bytes", "local_bytes_per_thread"],
        "memcpys": ["start", "end", "device", "context", "stream", "correlation", "bytes", "copy_kind", "src_kind",
                    "dst_kind", "async"],
        "memsets": ["start", "end", "device", "context", "stream", "correlation", "bytes", "value", "memory_kind"],
        "api_calls": ["start", "end", "process", "thread", "correlation", "callback_id", "name", "driver",
                      "return_value"],
        "syncs": ["start", "end", "context", "stream", "correlation", "type"],
        "ranges": ["start", "end", "process", "thread", "domain", "name"],
        "overheads": ["start", "end", "kind"],
        "repetitions": ["start", "end", "transfer_in_end", "compute_end"],
    }


# The string table of every records chunk (indices are what the rows name).
STRINGS = ["sm90_xmma_gemm_f32f32_tf32_nn", "_Z4gemmv", "elementwise_relu", "_Z4reluv", "cudaLaunchKernel_v7000",
           "", "train_step", "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
           "_Z13ncclDevKernelv", "cudaMemsetAsync_v3020"]


def write_rank(path, rank, world, ranks_per_host, steps, straggler, extra_ns, steps_per_chunk):
    host = f"node{rank // ranks_per_host}"
    pid = 10_000 + rank
    # One steady clock per host, each host's 7 s ahead of the previous one's; the ranks of a
    # host start 3 ms apart and all take their first step at the same true moment.
    host_clock = 1_000_000_000_000 + (rank // ranks_per_host) * 7_000_000_000
    clock = host_clock + 3_000_000 * (rank % ranks_per_host)
    origin = host_clock + 50_000_000
    mine = extra_ns if rank == straggler else 0
    slowest = extra_ns if 0 <= straggler < world else 0
    header = {"format": 1, "writer": "rank_streams.py", "backend": "cupti", "pid": pid, "ppid": 1, "host": host,
              "argv": ["python3", "train.py"], "start_ns": clock, "realtime_ns": 1_790_000_000_000_000_000 + 50_000,
              "clock": "CLOCK_MONOTONIC ns", "flush_interval_ms": 500,
              "tags": {"RANK": str(rank), "LOCAL_RANK": str(rank % ranks_per_host), "WORLD_SIZE": str(world),
                       "LOCAL_WORLD_SIZE": str(ranks_per_host)}}
    # The host clock: each host's realtime - steady difference stays as it is (one wall clock).
    header["realtime_ns"] = 1_790_000_000_000_000_000 + (clock - host_clock)
    cols = json.dumps(columns(), separators=(",", ":"))
    strings = json.dumps(STRINGS, separators=(",", ":"))
    corr = 0
    with open(path, "wb") as f:
        f.write(chunk(1, header))
        for first in range(0, steps, steps_per_chunk):
            kernels, apis, memsets, ranges = [], [], [], []
            for s in range(first, min(steps, first + steps_per_chunk)):
                t0 = origin + s * STEP_NS
                ranges.append(f"[{t0 - 40_000},{t0 + 9_000_000},{pid},{pid},5,6]")
                host_t = t0 - 30_000
                corr += 1
                memsets.append(f"[{t0},{t0 + 2_000},0,1,7,{corr},4096,0,3]")
                t = t0 + 2_000
                for k in range(COMPUTE_KERNELS):
                    corr += 1
                    host_t += 5_000
                    dur = KERNEL_NS + (mine if k == 0 else 0)
                    n = 0 if k % 2 == 0 else 2
                    kernels.append(f"[{t},{t + dur},0,1,7,{corr},{n},{n + 1},128,8,1,256,1,1,128,0,16384,0]")
                    apis.append(f"[{host_t},{host_t + 4_000},{pid},{pid},{corr},211,4,false,0]")
                    t += dur
                corr += 1
                host_t += 5_000
                done = t0 + 2_000 + COMPUTE_KERNELS * KERNEL_NS + slowest + 500_000
                kernels.append(f"[{t},{done},0,1,9,{corr},7,8,2,1,1,512,1,1,96,0,0,0]")
                apis.append(f"[{host_t},{host_t + 4_000},{pid},{pid},{corr},211,4,false,0]")
            last = origin + min(steps, first + steps_per_chunk) * STEP_NS
            payload = ('{"flushed_ns":%d,"trace":{"format":"speedlab-device-trace","version":1,"backend":"cupti",'
                       '"note":"","dropped_records":0,"buffer_bytes":8388608,"process":%d,"columns":%s,'
                       '"kernels":[%s],"memcpys":[],"memsets":[%s],"api_calls":[%s],"syncs":[],"ranges":[%s],'
                       '"overheads":[],"repetitions":[],"strings":%s}}') % (
                last, pid, cols, ",".join(kernels), ",".join(memsets), ",".join(apis), ",".join(ranges), strings)
            f.write(chunk(2, payload.encode()))
        f.write(chunk(4, {"end_ns": origin + steps * STEP_NS + 20_000_000, "reason": "exit", "dropped_records": 0}))
    return host, pid


def binary_chunk_payload(pid, first, last, origin, mine, slowest, corr0, flushed):
    """One binary records chunk (docs/profile-format.md, type 5) of steps first..last-1: the
    same records as write_rank's JSON rows, built column by column with numpy."""
    import numpy as np
    strings = STRINGS + ["cupti"]
    n = last - first
    s = np.arange(first, last, dtype=np.uint64)
    t0 = np.uint64(origin) + s * np.uint64(STEP_NS)
    per = COMPUTE_KERNELS + 2                              # correlation ids a step: memset, kernels, all-reduce
    corr = np.uint32(corr0) + (s - np.uint64(first)).astype(np.uint32) * np.uint32(per)
    k = np.arange(COMPUTE_KERNELS + 1, dtype=np.uint64)   # the 30 compute kernels, then the all-reduce
    shifted = np.where(k > 0, np.uint64(mine), np.uint64(0))  # kernel 0 runs `mine` longer, the rest start later
    kstart = t0[:, None] + np.uint64(2_000) + k[None, :] * np.uint64(KERNEL_NS) + shifted[None, :]
    kend = kstart + np.uint64(KERNEL_NS)
    kend[:, 0] += np.uint64(mine)
    kend[:, -1] = t0 + np.uint64(2_000 + COMPUTE_KERNELS * KERNEL_NS + slowest + 500_000)
    kcorr = corr[:, None] + np.uint32(2) + k[None, :].astype(np.uint32)
    name = np.where(k % 2 == 0, 0, 2).astype(np.uint32)
    name[-1] = 7
    rows = n * (COMPUTE_KERNELS + 1)
    const = lambda v, dt: np.full(rows, v, dtype=dt)
    tile = lambda v: np.tile(v, n)
    is_nccl = np.arange(COMPUTE_KERNELS + 1) == COMPUTE_KERNELS
    kernels = [kstart.ravel(), kend.ravel(), const(0, np.uint32), const(1, np.uint32),
               tile(np.where(is_nccl, 9, 7).astype(np.uint32)), kcorr.ravel(), tile(name), tile(name + 1),
               tile(np.where(is_nccl, 2, 128).astype(np.int32)), tile(np.where(is_nccl, 1, 8).astype(np.int32)),
               const(1, np.int32), tile(np.where(is_nccl, 512, 256).astype(np.int32)), const(1, np.int32),
               const(1, np.int32), tile(np.where(is_nccl, 96, 128).astype(np.int32)), const(0, np.int32),
               tile(np.where(is_nccl, 0, 16384).astype(np.int32)), const(0, np.int32)]
    host = t0[:, None] - np.uint64(30_000) + (k[None, :] + np.uint64(1)) * np.uint64(5_000)
    apis = [host.ravel(), host.ravel() + np.uint64(4_000), const(pid, np.uint32), const(pid, np.uint32),
            kcorr.ravel(), const(211, np.uint32), const(4, np.uint32), const(0, np.uint8), const(0, np.int32)]
    memsets = [t0, t0 + np.uint64(2_000), np.zeros(n, np.uint32), np.ones(n, np.uint32), np.full(n, 7, np.uint32),
               corr + np.uint32(1), np.full(n, 4096, np.uint64), np.zeros(n, np.uint32), np.full(n, 3, np.uint8)]
    ranges = [t0 - np.uint64(40_000), t0 + np.uint64(9_000_000), np.full(n, pid, np.uint32), np.full(n, pid, np.uint32),
              np.full(n, 5, np.uint32), np.full(n, 6, np.uint32)]

    def table(columns, count, width):
        if not columns:
            return struct.pack("<II", 0, width)
        return struct.pack("<II", len(columns[0]), count) + b"".join(c.tobytes() for c in columns)

    encoded = [x.encode() for x in strings]
    out = struct.pack("<IIQQQI", 1, 8, flushed, 0, 8_388_608, pid) + struct.pack("<II", len(encoded), sum(map(len, encoded)))
    out += b"".join(struct.pack("<I", len(x)) for x in encoded) + b"".join(encoded)
    out += struct.pack("<II", strings.index("cupti"), strings.index(""))
    out += table(kernels, 18, 18) + table([], 0, 11) + table(memsets, 9, 9) + table(apis, 9, 9) + table([], 0, 6)
    out += table(ranges, 6, 6) + table([], 0, 3) + table([], 0, 4)
    return out


def write_rank_binary(path, rank, world, ranks_per_host, steps, straggler, extra_ns, steps_per_chunk):
    """write_rank's stream in format 2: the header's format is 2, records chunks are binary."""
    host = f"node{rank // ranks_per_host}"
    pid = 10_000 + rank
    host_clock = 1_000_000_000_000 + (rank // ranks_per_host) * 7_000_000_000
    clock = host_clock + 3_000_000 * (rank % ranks_per_host)
    origin = host_clock + 50_000_000
    mine = extra_ns if rank == straggler else 0
    slowest = extra_ns if 0 <= straggler < world else 0
    header = {"format": 2, "writer": "rank_streams.py", "backend": "cupti", "pid": pid, "ppid": 1, "host": host,
              "argv": ["python3", "train.py"], "start_ns": clock,
              "realtime_ns": 1_790_000_000_000_000_000 + (clock - host_clock), "clock": "CLOCK_MONOTONIC ns",
              "flush_interval_ms": 500,
              "tags": {"RANK": str(rank), "LOCAL_RANK": str(rank % ranks_per_host), "WORLD_SIZE": str(world),
                       "LOCAL_WORLD_SIZE": str(ranks_per_host)}}
    with open(path, "wb") as f:
        f.write(chunk(1, header))
        for first in range(0, steps, steps_per_chunk):
            last = min(steps, first + steps_per_chunk)
            payload = binary_chunk_payload(pid, first, last, origin, mine, slowest, first * (COMPUTE_KERNELS + 2),
                                           origin + last * STEP_NS)
            f.write(chunk(5, payload))
        f.write(chunk(4, {"end_ns": origin + steps * STEP_NS + 20_000_000, "reason": "exit", "dropped_records": 0}))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out")
    p.add_argument("--ranks", type=int, default=64)
    p.add_argument("--records", type=int, default=1_000_000, help="records per rank stream (a multiple of 64)")
    p.add_argument("--ranks-per-host", type=int, default=8)
    p.add_argument("--straggler", type=int, default=37, help="the slowed rank (-1: none)")
    p.add_argument("--extra-us", type=float, default=1000.0)
    p.add_argument("--steps-per-chunk", type=int, default=160)
    p.add_argument("--node-folders", action="store_true", help="one profile folder per host (OUT_DIR/nodeN)")
    p.add_argument("--binary", action="store_true", help="format 2: binary records chunks (needs numpy)")
    a = p.parse_args()
    if a.binary:
        try:
            import numpy  # noqa: F401
        except ImportError:
            sys.exit("rank_streams.py: --binary needs numpy (Debian: python3-numpy, /usr/bin/python3)")
    if a.ranks < 1 or a.records < RECORDS_PER_STEP or a.ranks_per_host < 1 or a.steps_per_chunk < 1:
        sys.exit("rank_streams.py: --ranks, --ranks-per-host, --steps-per-chunk must be >= 1 and --records >= 64")
    if a.straggler >= a.ranks:
        sys.exit(f"rank_streams.py: --straggler {a.straggler} is not one of the {a.ranks} ranks")
    os.makedirs(a.out, exist_ok=True)
    steps = a.records // RECORDS_PER_STEP
    extra = int(a.extra_us * 1000)
    for r in range(a.ranks):
        node = f"node{r // a.ranks_per_host}"
        folder = os.path.join(a.out, node) if a.node_folders else a.out
        os.makedirs(folder, exist_ok=True)
        (write_rank_binary if a.binary else write_rank)(
            os.path.join(folder, f"{node}-{10_000 + r}.slstream"), r, a.ranks, a.ranks_per_host, steps, a.straggler,
            extra, a.steps_per_chunk)
        if a.node_folders and (r + 1) % a.ranks_per_host == 0 or r + 1 == a.ranks:
            write_facts(folder, a, steps)
    with open(os.path.join(a.out, "expected.json"), "w") as f:
        json.dump({"ranks": a.ranks, "records_per_rank": steps * RECORDS_PER_STEP, "steps": steps,
                   "straggler": a.straggler if a.straggler >= 0 else None, "extra_ns": extra,
                   "hosts": (a.ranks + a.ranks_per_host - 1) // a.ranks_per_host,
                   "node_folders": a.node_folders, "binary": a.binary}, f)
    print(f"wrote {a.ranks} streams of {steps * RECORDS_PER_STEP} records ({steps} steps) into {a.out}")


def write_facts(folder, a, steps):
    facts = {"command_line": ["torchrun", f"--nproc_per_node={a.ranks_per_host}", "train.py"],
             "speedlab_command_line": "synthetic: scripts/bench/rank_streams.py", "started_at": "",
             "hostname": "node0", "speedlab_version": "", "wall_s": steps * STEP_NS / 1e9, "exit_code": 0,
             "signal": None, "flush_interval_ms": 500, "notes": [], "read_messages": [], "processes": []}
    with open(os.path.join(folder, "profile.json"), "w") as f:
        json.dump(facts, f)


if __name__ == "__main__":
    main()
