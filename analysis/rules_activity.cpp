// Rules that read a recorded process's activity (activity.hpp, rule_context::activity):
// what shows only over a whole lifetime. Where the context has no activity (a suite point's
// repetitions) they return nothing.
//
//   start-up               time to the first kernel and the GPU idle before the steady state
//   gpu-idle-gaps          the GPU waits between bursts of work in the steady state
//   alloc-in-loop          cudaMalloc/cudaFree repeated while the program runs
//   sync-pageable-copies   synchronous copies from or to pageable memory block the host
//   tiny-kernels           the median kernel is shorter than the program's own launch cost
#include <fmt/format.h>

#include "analysis/rule_support.hpp"
#include "analysis/rules.hpp"
#include "analysis/text.hpp"

namespace speedlab::analysis {

using detail::add;
using detail::gain_from_saving;
using detail::put;

namespace {

// The steady state's wall time (what the gap, allocation and launch rules judge), and the
// whole lifetime's (for what is counted over the whole process).
double wall_of(const rule_context& ctx) { return ctx.activity->steady_wall_ns(); }
double lifetime_of(const rule_context& ctx) { return ctx.activity->lifetime_ns(); }

class startup final : public rule {
public:
  static constexpr double min_share = 0.1;
  static constexpr double min_ns = 100e6;
  startup()
      : rule({.name = "start-up",
              .threshold = "the time before the steady state (the first step, else the first kernel) is at least 10% "
                           "of the process's lifetime and at least 100 ms",
              .summary = "start-up before the first kernel and the steps, apart from them"}) {}

  std::vector<finding> do_evaluate(const rule_context& ctx) const override {
    if (!ctx.activity) return {};
    const startup_summary& u = ctx.activity->startup;
    const double life = lifetime_of(ctx);
    if (!u.known || !(life > 0) || u.steady_start_ns < min_ns || u.steady_start_ns / life < min_share) return {};
    std::string most;
    if (!u.calls.empty() && u.calls.front().total_ns >= 0.1 * u.to_first_kernel_ns)
      most = fmt::format(", {} of it in {}", text::time(u.calls.front().total_ns), u.calls.front().name);
    const double gain = gain_from_saving(life, u.idle_ns);
    finding f = start(ctx, fmt::format("start-up: {} before the first kernel{}", text::time(u.to_first_kernel_ns), most),
                      gain);
    add(f, "time to the first kernel", text::time(u.to_first_kernel_ns));
    add(f, "steady state from", fmt::format("{} after the start ({})", text::time(u.steady_start_ns),
                                            u.steady_method == "first kernel" ? "the first kernel"
                                                                              : "the first " + u.steady_method.substr(5) + " range"));
    add(f, "GPU idle before it", fmt::format("{} ({} of the lifetime)", text::time(u.idle_ns), text::percent(u.idle_ns / life)));
    for (std::size_t i = 0; i < u.calls.size() && i < 3; ++i)
      add(f, "before the first kernel: " + u.calls[i].name,
          fmt::format("{} in {} call(s)", text::time(u.calls[i].total_ns), u.calls[i].calls));
    add(f, "lifetime", text::time(life));
    add(f, "projection", fmt::format("without the start-up's GPU idle: {} / ({} - {}) = {}", text::time(life),
                                     text::time(life), text::time(u.idle_ns), text::factor(gain)));
    f.explanation = fmt::format(
        "The first {} of the process pass before its steady state: imports, CUDA context creation, module "
        "loading, library handles (cuBLAS, cuDNN) and communicators (NCCL) are paid once. It is told apart so that "
        "the idle, gap and rank findings judge the steps; it matters as much as it weighs in the runs you care about.",
        text::time(u.steady_start_ns));
    f.next_experiment =
        "If the program is meant to run long, profile more steps and the start-up amortizes. Otherwise look at the "
        "listed calls: lazy module loading (CUDA_MODULE_LOADING=LAZY), fewer or later imports, cached compiled "
        "kernels, one process reused for many runs; compare the time to the first kernel.";
    return {f};
  }
};

class gpu_idle_gaps final : public rule {
public:
  static constexpr double min_share = 0.2;
  gpu_idle_gaps()
      : rule({.name = "gpu-idle-gaps",
              .threshold =
                  "gaps of at least the gap threshold (100 us by default) between GPU work add up to at least 20% of "
                  "the steady state's GPU activity (its first to the last; start-up is the start-up rule's)",
              .summary = "the GPU waits between bursts of work"}) {}

  std::vector<finding> do_evaluate(const rule_context& ctx) const override {
    if (!ctx.activity) return {};
    const gap_summary& g = ctx.activity->gaps;
    if (g.count == 0 || !(g.active_span_ns > 0) || g.total_ns / g.active_span_ns < min_share) return {};
    const double wall = wall_of(ctx);
    const double gain = gain_from_saving(wall, g.total_ns);
    finding f = start(ctx, fmt::format("the GPU idles in {} gaps, {} of its active time", g.count,
                                       text::percent(g.total_ns / g.active_span_ns)),
                      gain);
    add(f, "gaps", fmt::format("{} of at least {}, {} in all", g.count, text::time(ctx.options.gap_min_ns), text::time(g.total_ns)));
    add(f, "largest gap", fmt::format("{} at {} after the start, host inside: {}", text::time(g.largest_ns),
                                      text::time(g.largest_at_ns), g.largest_inside));
    for (std::size_t i = 0; i < g.causes.size() && i < 3; ++i)
      add(f, "host inside: " + g.causes[i].what,
          fmt::format("{} gaps, {} ({} of the gap time)", g.causes[i].gaps, text::time(g.causes[i].total_ns),
                      text::percent(g.causes[i].total_ns / g.total_ns)));
    add(f, "steady state's first to last GPU activity", text::time(g.active_span_ns));
    add(f, "projection", fmt::format("if every gap were filled with work: {} / ({} - {}) = {}", text::time(wall),
                                     text::time(wall), text::time(g.total_ns), text::factor(gain)));
    f.explanation = fmt::format(
        "Between bursts of GPU work the device has nothing queued: {} gaps of at least {} add up to {} of the time "
        "the program used the GPU. The largest, {}, came while the host was inside {}. The host prepares the next "
        "work (or waits for a result) instead of keeping the GPU fed.",
        g.count, text::time(ctx.options.gap_min_ns), text::percent(g.total_ns / g.active_span_ns),
        text::time(g.largest_ns), g.largest_inside);
    f.next_experiment =
        "Look at what the host does in the listed calls or ranges: move data loading and preprocessing off the "
        "critical path (prefetch, a loader thread, pinned buffers with async copies), avoid reading results back "
        "every step, and queue the next step's work before waiting on the last; compare the gap total.";
    return {f};
  }
};

class alloc_in_loop final : public rule {
public:
  static constexpr std::size_t min_repeated = 20;
  static constexpr double min_per_launch = 0.02;
  alloc_in_loop()
      : rule({.name = "alloc-in-loop",
              .threshold = "at least 20 cudaMalloc/cudaFree-like calls after the first kernel launch, and at least one "
                           "per 50 kernel launches",
              .summary = "device memory allocated and freed again while the program runs"}) {}

  std::vector<finding> do_evaluate(const rule_context& ctx) const override {
    if (!ctx.activity) return {};
    const alloc_summary& a = ctx.activity->allocs;
    const double launches = ctx.trace ? static_cast<double>(ctx.trace->kernel_launches) : 0;
    if (a.repeated < min_repeated) return {};
    const double per_launch = launches > 0 ? static_cast<double>(a.repeated) / launches : 0;
    if (launches > 0 && per_launch < min_per_launch) return {};
    const double wall = wall_of(ctx);
    const double gain = gain_from_saving(wall, a.repeated_ns);
    finding f = start(ctx, fmt::format("{} allocations and frees while the program runs ({} in them)", a.repeated,
                                       text::time(a.repeated_ns)),
                      gain);
    add(f, "allocations / frees (whole process)", fmt::format("{} / {}", a.allocs, a.frees));
    add(f, "after the first kernel launch", std::to_string(a.repeated));
    if (a.steady_span_ns > 0)
      add(f, "per second", text::number(static_cast<double>(a.repeated) / (a.steady_span_ns / 1e9)));
    if (launches > 0) add(f, "per kernel launch", text::number(per_launch));
    add(f, "time inside them", fmt::format("{} ({} of the wall time)", text::time(a.repeated_ns),
                                           text::percent(wall > 0 ? a.repeated_ns / wall : 0)));
    add(f, "projection", fmt::format("{} / ({} - {}) = {}", text::time(wall), text::time(wall),
                                     text::time(a.repeated_ns), text::factor(gain)));
    f.explanation =
        "Device memory is allocated and released over and over while kernels run. Each cudaMalloc costs "
        "microseconds to milliseconds, and cudaFree synchronizes the device, so every iteration pays for the "
        "allocation and drains the GPU's queue.";
    f.next_experiment =
        "Allocate the buffers once before the loop and reuse them (or use a memory pool: cudaMallocAsync, "
        "CuPy's and PyTorch's caching allocators); compare allocation calls and wall time.";
    return {f};
  }
};

class sync_pageable_copies final : public rule {
public:
  static constexpr double min_share = 0.05;
  sync_pageable_copies()
      : rule({.name = "sync-pageable-copies",
              .threshold = "the host is blocked in synchronous copies from or to pageable memory for at least 5% of "
                           "the wall time",
              .summary = "synchronous copies through pageable memory block the host"}) {}

  std::vector<finding> do_evaluate(const rule_context& ctx) const override {
    if (!ctx.activity) return {};
    const pageable_sync_copies& c = ctx.activity->pageable_sync;
    const double wall = lifetime_of(ctx); // the copies are counted over the whole process
    // Without API records the copies' own time is what the host waited at least.
    const double blocked = std::max(c.call_ns, c.ns);
    if (c.count == 0 || !(wall > 0) || blocked / wall < min_share) return {};
    const double gain = gain_from_saving(wall, blocked - c.ns / 2);
    finding f = start(ctx, fmt::format("{} synchronous pageable copies block the host for {} of the run", c.count,
                                       text::percent(blocked / wall)),
                      gain);
    add(f, "copies", fmt::format("{} ({})", c.count, text::bytes(c.bytes)));
    add(f, "copy time on the GPU", text::time(c.ns));
    if (c.call_ns > 0) add(f, "host blocked in the copy calls", text::time(c.call_ns));
    if (c.ns > 0) add(f, "achieved", text::gbps(c.bytes / c.ns));
    add(f, "projection",
        fmt::format("pinned memory roughly halves the copy and async copies let the host go on: {} / ({} - {}) = {}",
                    text::time(wall), text::time(wall), text::time(blocked - c.ns / 2), text::factor(gain)));
    f.explanation =
        "cudaMemcpy from or to ordinary (pageable) host memory returns only once the data has been staged "
        "through a pinned bounce buffer and copied, so the host can neither queue more work nor overlap the "
        "copy with kernels meanwhile.";
    f.next_experiment =
        "Use pinned host buffers (cudaMallocHost / cudaHostRegister, pin_memory=True, cupyx.empty_pinned) with "
        "cudaMemcpyAsync on a stream, or keep the data on the device between steps; compare the blocked time.";
    return {f};
  }
};

class tiny_kernels final : public rule {
public:
  static constexpr std::size_t min_launches = 100;
  tiny_kernels()
      : rule({.name = "tiny-kernels",
              .threshold = "at least 100 kernel launches and the median kernel shorter than the launch cost (the "
                           "program's median launch call, else the device's launch latency)",
              .summary = "many tiny kernels: launching them costs more than running them"}) {}

  std::vector<finding> do_evaluate(const rule_context& ctx) const override {
    if (!ctx.activity) return {};
    if (!ctx.trace) return {};
    const trace_summary& t = *ctx.trace;
    if (t.kernel_launches < min_launches || t.kernel_durations.empty()) return {};
    std::string cost_text;
    double cost = ctx.activity->launch_call_median_ns;
    if (cost > 0) cost_text = text::time(cost) + " (median launch call of this program)";
    else {
      const auto lat = detail::launch_latency(ctx.device);
      cost = lat.us * 1e3;
      cost_text = lat.text;
    }
    std::vector<double> d = t.kernel_durations;
    std::nth_element(d.begin(), d.begin() + static_cast<long>(d.size() / 2), d.end());
    const double median = d[d.size() / 2];
    if (median >= cost) return {};
    double idle = 0;
    std::size_t shorter = 0;
    for (double k : t.kernel_durations)
      if (k < cost) {
        idle += cost - k;
        ++shorter;
      }
    const double wall = wall_of(ctx);
    const double kernel = ctx.activity->split ? ctx.activity->split->kernel : t.kernel_ns;
    const double saved = std::min(idle, std::max(0.0, wall - kernel));
    const double gain = gain_from_saving(wall, saved);
    finding f = start(ctx, fmt::format("{} kernel launches, median {} against a launch cost of {}", t.kernel_launches,
                                       text::time(median), text::time(cost)),
                      gain);
    add(f, "kernel launches", std::to_string(t.kernel_launches));
    add(f, "median kernel", text::time(median));
    add(f, "launch cost", cost_text);
    add(f, "kernels shorter than a launch",
        text::percent(static_cast<double>(shorter) / static_cast<double>(t.kernel_durations.size())));
    if (wall > 0) add(f, "launches per second", text::number(static_cast<double>(t.kernel_launches) / (wall / 1e9)));
    add(f, "projection", fmt::format("GPU waits ~{} for launches; {} / ({} - {}) = {}", text::time(idle),
                                     text::time(wall), text::time(wall), text::time(saved), text::factor(gain)));
    f.explanation = fmt::format(
        "Half the kernels run for less than {}, less than it costs the host to launch one ({}): the GPU finishes "
        "each and waits for the next, so the program is paced by launches, not by work.",
        text::time(median), text::time(cost));
    f.next_experiment =
        "Fuse element-wise kernels (torch.compile, cupy.fuse / ElementwiseKernel, one Numba kernel doing the "
        "whole step), batch more work per launch, or capture the step in a CUDA graph; compare launches per "
        "second and wall time.";
    return {f};
  }
};

} // namespace

void add_activity_rules(rule_map& m) {
  put<startup, gpu_idle_gaps, alloc_in_loop, sync_pageable_copies, tiny_kernels>(m);
}

} // namespace speedlab::analysis
