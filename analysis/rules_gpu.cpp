// Rules about how the GPU is used: launch-bound, synchronization-heavy, host-bound,
// kernel-below-roofline, low-occupancy, too-few-blocks.
#include <algorithm>
#include <optional>

#include "analysis/occupancy.hpp"
#include "analysis/rule_support.hpp"
#include "analysis/rules.hpp"

namespace speedlab::analysis {

namespace {

using detail::add;
using detail::gain_from_saving;

// The kernel time a rule may save, capped by the roofline: a kernel cannot beat
// `target_percent` of its bound (when its placement is known).
double kernel_speedup_cap(const roofline_point* r, double target_percent) {
  if (!r || r->bound == "unknown" || !(r->percent_of_bound > 0)) return 1e9;
  return std::max(1.0, target_percent / r->percent_of_bound);
}

class launch_bound final : public rule {
public:
  static constexpr double min_launches_per_rep = 10;
  static constexpr double min_short_share = 0.5;
  launch_bound()
      : rule(
            {.name = "launch-bound",
             .threshold =
                 "at least 10 kernel launches per repetition and at least half of them shorter than the launch latency",
             .summary = "many tiny kernels: launching them costs more than running them"}) {}

  std::vector<finding> do_evaluate(const rule_context& ctx) const override {
    // With a process's activity, tiny-kernels (rules_activity.cpp) judges the same against the
    // launch cost the program itself measured: one finding, not two.
    if (!ctx.trace || ctx.activity) return {};
    const trace_summary& t = *ctx.trace;
    const double per_rep = t.per_rep(static_cast<double>(t.kernel_launches));
    if (per_rep < min_launches_per_rep) return {};
    const auto lat = detail::launch_latency(ctx.device);
    const double L = lat.us * 1e3;
    std::size_t n_short = 0;
    double idle = 0;
    for (double d : t.kernel_durations)
      if (d < L) {
        ++n_short;
        idle += L - d;
      }
    const double share = static_cast<double>(n_short) / static_cast<double>(t.kernel_durations.size());
    if (share < min_short_share) return {};
    const double W = ctx.wall_ns();
    const double K = ctx.point->split_median ? ctx.point->split_median->kernel : t.per_rep(t.kernel_ns);
    const double saved = std::min(t.per_rep(idle), std::max(0.0, W - K));
    const double gain = gain_from_saving(W, saved);
    std::vector<double> d = t.kernel_durations;
    std::nth_element(d.begin(), d.begin() + static_cast<long>(d.size() / 2), d.end());
    finding f = start(ctx, fmt::format("{:.0f} kernel launches per repetition, {} shorter than a launch", per_rep,
                                       text::percent(share)),
                      gain);
    add(f, "launches per repetition", text::number(per_rep));
    add(f, "median kernel duration", text::time(d[d.size() / 2]));
    add(f, "launch latency", lat.text);
    add(f, "kernels shorter than the latency", text::percent(share));
    if (t.launch_calls > 0)
      add(f, "launch API time per repetition", text::time(t.per_rep(t.launch_call_ns)));
    add(f, "projection", fmt::format("GPU waits ~{} per repetition for launches; {} / ({} - {}) = {}",
                                     text::time(t.per_rep(idle)), text::time(W), text::time(W), text::time(saved),
                                     text::factor(gain)));
    f.explanation = fmt::format(
        "Most kernels finish in less time than it takes the host to launch the next one ({}), so the GPU "
        "idles between them and the run is paced by launches, not by work.",
        lat.text);
    f.next_experiment =
        "Fuse the small kernels into one (or loop inside one kernel), give each launch more work, or capture "
        "the sequence in a CUDA graph; compare launches per repetition and wall time.";
    return {f};
  }
};

class synchronization_heavy final : public rule {
public:
  static constexpr double min_share = 0.10;
  synchronization_heavy()
      : rule({.name = "synchronization-heavy",
              .threshold = "the GPU idles inside synchronizing calls for at least 10% of the wall time",
              .summary = "frequent synchronization leaves the GPU idle"}) {}

  std::vector<finding> do_evaluate(const rule_context& ctx) const override {
    if (!ctx.point->split_median) return {};
    const time_split& s = *ctx.point->split_median;
    if (!(s.wall_ns > 0) || s.sync / s.wall_ns < min_share) return {};
    const double gain = gain_from_saving(s.wall_ns, s.sync);
    finding f = start(ctx, fmt::format("{} of the run is idle synchronization", text::percent(s.sync / s.wall_ns)), gain);
    add(f, "idle in synchronizing calls", text::time(s.sync) + " per repetition");
    add(f, "wall per repetition", text::time(s.wall_ns));
    double per_rep = 0;
    if (ctx.trace && ctx.trace->sync_count > 0) {
      per_rep = ctx.trace->per_rep(static_cast<double>(ctx.trace->sync_count));
      add(f, "synchronizations per repetition", text::number(per_rep));
      add(f, "idle per synchronization", text::time(s.sync / std::max(per_rep, 1.0)));
    }
    // One synchronization per repetition that idles about a launch latency: it waits for
    // the launch to reach the GPU and the kernel's completion to come back, not for a queue
    // that extra synchronizations drained. Removing it is not the fix.
    const auto lat = detail::launch_latency(ctx.device);
    if (per_rep > 0 && per_rep <= 1.5 && s.sync <= 3 * lat.us * 1e3) {
      add(f, "launch latency", lat.text);
      f.explanation = fmt::format(
          "The host synchronizes once per repetition, before it needs the results, and the GPU idles {} in that "
          "call: about one launch latency ({}). The wait is the launch reaching the GPU and the kernel's "
          "completion coming back, fixed costs that a short kernel cannot hide. That costs {} of each repetition.",
          text::time(s.sync), text::time(lat.us * 1e3), text::percent(s.sync / s.wall_ns));
      f.next_experiment =
          "Give each launch more work (a larger problem per call) so the fixed latency is amortized, or issue "
          "several steps before synchronizing once (batch repetitions, capture them in a CUDA graph).";
      return {f};
    }
    f.explanation = fmt::format(
        "The host waits in cudaDeviceSynchronize/cudaStreamSynchronize-like calls while the GPU has nothing "
        "queued: every synchronization drains the queue and the next launch starts from empty. That costs {} "
        "of each repetition.",
        text::percent(s.sync / s.wall_ns));
    f.next_experiment =
        "Remove synchronizations between dependent kernels on one stream (stream order already serializes "
        "them); synchronize once before the host reads results, or use events for the one dependency that "
        "needs it.";
    return {f};
  }
};

class host_bound final : public rule {
public:
  static constexpr double min_share = 0.5;
  host_bound()
      : rule({.name = "host-bound",
              .threshold =
                  "the GPU idles while the host runs its own code or CUDA API calls for at least 50% of the wall time",
              .summary = "the GPU waits for the host (Amdahl's law caps GPU-side speedups)"}) {}

  std::vector<finding> do_evaluate(const rule_context& ctx) const override {
    if (ctx.point->kind != variant_kind::cuda || !ctx.point->split_median) return {};
    const time_split& s = *ctx.point->split_median;
    const double W = s.wall_ns, host = s.host + s.api;
    if (!(W > 0) || host / W < min_share) return {};
    // Overlapping host work with GPU work: the longer of the two remains.
    const double overlapped = std::max(host, W - host);
    const double gain = W / std::max(overlapped, W * 1e-3);
    const double amdahl = W / std::max(host, W * 1e-3);
    finding f = start(ctx, fmt::format("the GPU idles {} of the run while the host works", text::percent(host / W)), gain);
    add(f, "host code (GPU idle)", text::time(s.host));
    add(f, "other CUDA API calls (GPU idle)", text::time(s.api));
    add(f, "GPU busy", text::time(s.gpu_busy()));
    add(f, "wall per repetition", text::time(W));
    add(f, "Amdahl limit of GPU-side improvements", fmt::format("{} / {} = {}", text::time(W), text::time(host), text::factor(amdahl)));
    if (ctx.point->cpu_utilization > 0) add(f, "host CPU utilization", text::number(ctx.point->cpu_utilization));
    f.explanation = fmt::format(
        "For {} of each repetition the GPU has nothing to do while the host runs its own code ({}) or CUDA API "
        "calls such as allocations ({}). By Amdahl's law no kernel or copy improvement can make this run more "
        "than {} faster; overlapping the host work with GPU work could gain up to {}.",
        text::percent(host / W), text::time(s.host), text::time(s.api), text::factor(amdahl), text::factor(gain));
    f.next_experiment =
        "Find what the host does between launches (allocation, initialization or validation inside the timed "
        "phases?); move cudaMalloc/cudaFree out of the timed loop, and overlap the remaining host work with "
        "asynchronous GPU work.";
    return {f};
  }
};

// What the hardware counters say about the kernels behind one roofline row: the busiest
// unit of the dominant kernel and the speedup the counters leave (each kernel raised to
// `target` % of peak on its busiest unit). Absent when the counters do not cover the row:
// no counters pass, a metric set without utilization metrics, or counted kernels that
// account for less than half of the row's time.
struct counter_evidence {
  detail::counter_kernel dominant;
  detail::busy_unit unit; // the dominant kernel's busiest unit
  double speedup = 1;     // of the row's kernels, from the counters
};

// "SM throughput at 81.7% of peak (busiest pipe ALU (integer, logic) at 54.4%)".
std::string busy_text(const counter_evidence& ce) {
  std::string s = fmt::format("{} at {:.1f}% of peak", ce.unit.name, ce.unit.pct);
  const auto& f = ce.dominant.f;
  const bool is_pipe = ce.unit.name.size() > 5 && ce.unit.name.compare(ce.unit.name.size() - 5, 5, " pipe") == 0;
  if (!ce.unit.memory && !is_pipe && f.busiest_pipe_pct)
    s += fmt::format(" (busiest pipe {} at {:.1f}%)", f.busiest_pipe, *f.busiest_pipe_pct);
  return s;
}

std::optional<counter_evidence> counter_evidence_for(const rule_context& ctx, const roofline_point& r, double target) {
  double covered = 0, reachable = 0;
  std::optional<counter_evidence> out;
  for (auto& k : detail::counter_kernels(*ctx.point)) {
    if (!r.kernel.empty() && !detail::same_kernel(r.kernel, k.counters.kernel)) continue;
    const auto unit = detail::busiest_unit(k.f);
    if (!unit) return std::nullopt; // the metric set reads no utilization
    const double t = k.time_per_rep();
    if (!(t > 0)) continue;
    covered += t;
    reachable += t * std::min(1.0, std::max(unit->pct, 1.0) / target);
    if (!out || t > out->dominant.time_per_rep()) out = counter_evidence{std::move(k), *unit, 1};
  }
  if (!out || !(reachable > 0) || covered < 0.5 * r.time_ns) return std::nullopt;
  out->speedup = covered / reachable;
  return out;
}

class kernel_below_roofline final : public rule {
public:
  static constexpr double max_percent = 20;
  static constexpr double min_share = 0.10;
  static constexpr double target_percent = 60;
  // With counters: a dominant kernel whose busiest unit runs at this % of peak or more is
  // busy, whatever the declared work says (the same figure as the gain's target).
  static constexpr double busy_percent = 60;
  kernel_below_roofline()
      : rule({.name = "kernel-below-roofline",
              .threshold = "a kernel taking at least 10% of the wall time reaches less than 20% of its roofline bound "
                           "(gain projected to 60% of the bound); with counters (--metrics full) the busiest unit "
                           "(pipe, SM, memory or DRAM throughput) also caps the gain at 60% of its peak, and a kernel "
                           "at 60% or more there is reported as bound by that unit (info)",
              .summary = "a kernel is far from the bandwidth or compute roof it should reach (with counters: or bound "
                         "by a unit that roof does not see)"}) {}

  std::vector<finding> do_evaluate(const rule_context& ctx) const override {
    std::vector<finding> out;
    const double W = ctx.wall_ns();
    if (!(W > 0)) return out;
    std::vector<const roofline_point*> rows;
    for (const auto* r : ctx.roofline)
      if (!r->kernel.empty() && r->processor == "gpu" && r->level.empty()) rows.push_back(r);
    if (rows.empty())
      for (const auto* r : ctx.roofline)
        if (r->processor == "gpu" && r->level.empty()) rows.push_back(r);
    for (const auto* r : rows) {
      if (r->bound == "unknown" || !(r->time_ns > 0) || r->percent_of_bound >= max_percent) continue;
      if (r->time_ns / W < min_share) continue;
      const auto ce = counter_evidence_for(ctx, *r, target_percent);
      double s = target_percent / std::max(r->percent_of_bound, 1e-9); // the kernels' speedup to 60% of the roof
      if (ce) s = std::min(s, ce->speedup);
      const double saved = r->time_ns * (1 - 1 / std::max(s, 1.0));
      const double gain = gain_from_saving(W, saved);
      const std::string who = r->kernel.empty() ? "the compute phase" : "kernel " + r->kernel;
      const bool busy = ce && ce->unit.pct >= busy_percent;
      finding f = start(ctx,
                        busy ? fmt::format("{} is bound by its {}, not by the {} roof of its declared work "
                                           "({:.1f}% of it)",
                                           who, busy_text(*ce), r->bound, r->percent_of_bound)
                             : fmt::format("{} reaches {:.1f}% of its {} bound", who, r->percent_of_bound, r->bound),
                        gain);
      if (!r->kernel.empty()) add(f, "kernel", r->kernel);
      add(f, "bound", r->bound);
      add(f, "achieved", r->bound == "memory" ? text::gbps(r->achieved_gbps) : text::gflops(r->achieved_gflops));
      add(f, "roof", fmt::format("{} ({}{})", r->bound == "memory" ? text::gbps(r->roof_gbps) : text::gflops(r->roof_gflops),
                                 r->roof_measured ? "measured" : "estimate",
                                 r->roof_source.empty() ? "" : ", " + r->roof_source));
      add(f, "percent of bound", fmt::format("{:.1f}%", r->percent_of_bound));
      add(f, "intensity", text::number(r->intensity) + " flop/byte");
      add(f, "time per repetition", text::time(r->time_ns) + " (" + text::percent(r->time_ns / W) + " of wall)");
      if (!r->note.empty()) add(f, "work attribution", r->note);
      if (ce) add_counters(f, *ce);
      if (busy)
        explain_busy(f, *r, *ce);
      else
        explain_far(f, *r, ce ? &*ce : nullptr);
      out.push_back(std::move(f));
    }
    return out;
  }

private:
  static void add_counters(finding& f, const counter_evidence& ce) {
    const auto& k = ce.dominant;
    if (f.evidence.empty() || f.evidence.front().name != "kernel") add(f, "kernel (counters)", k.name);
    const auto pct = [](double v) { return fmt::format("{:.1f}% of peak", v); };
    add(f, "busiest unit (counters)", fmt::format("{} at {}", ce.unit.name, pct(ce.unit.pct)));
    if (k.f.busiest_pipe_pct)
      add(f, "busiest pipe", fmt::format("{} at {}", k.f.busiest_pipe, pct(*k.f.busiest_pipe_pct)));
    if (k.f.sm_throughput_pct) add(f, "SM throughput", pct(*k.f.sm_throughput_pct));
    if (k.f.memory_throughput_pct) add(f, "memory throughput", pct(*k.f.memory_throughput_pct));
    if (k.f.dram_throughput_pct) add(f, "DRAM throughput", pct(*k.f.dram_throughput_pct));
    add(f, "kernel speedup left (counters)",
        ce.speedup <= 1 + 1e-9 ? fmt::format("none: the busiest unit is at {:.0f}% of peak or more", target_percent)
                               : fmt::format("{} (each kernel's busiest unit raised to {:.0f}% of peak)",
                                             text::factor(ce.speedup), target_percent));
  }

  static void explain_busy(finding& f, const roofline_point& r, const counter_evidence& ce) {
    if (ce.unit.memory && r.bound == "memory") {
      f.explanation = fmt::format(
          "On the bytes the work model declares the kernel moves only {} of {} ({:.1f}%), but the hardware counters "
          "show {}: it moves far more bytes than declared (or through L1/L2 more than once), and the memory system "
          "is busy with them. The headroom is what the busiest unit has left, not the gap to the declared-bytes "
          "roof.",
          text::gbps(r.achieved_gbps), text::gbps(r.roof_gbps), r.percent_of_bound, busy_text(ce));
      f.next_experiment = "Compare the DRAM bytes the counters read with the declared bytes (excess-traffic, "
                          "uncoalesced-access): cut the traffic the algorithm does not need.";
    } else if (ce.unit.memory) {
      f.explanation = fmt::format(
          "On the FLOPs the work model declares the kernel reaches only {} of {} ({:.1f}%), but the hardware "
          "counters show {}: it is bound by memory traffic the declared work does not show, not by arithmetic. The "
          "headroom is what the memory system has left, not the gap to the FLOP roof.",
          text::gflops(r.achieved_gflops), text::gflops(r.roof_gflops), r.percent_of_bound, busy_text(ce));
      f.next_experiment = "Cut the bytes moved per result (keep data on chip, reuse it through shared memory or "
                          "L2, narrower types); compare the counters' DRAM bytes with the declared bytes.";
    } else if (r.bound == "memory") {
      f.explanation = fmt::format(
          "On the bytes the work model declares the kernel moves only {} of {} ({:.1f}%), but the hardware counters "
          "show the SM busy, {}: the kernel is bound by the instructions it executes, not by bandwidth, so the "
          "distance to the bandwidth roof is not headroom.",
          text::gbps(r.achieved_gbps), text::gbps(r.roof_gbps), r.percent_of_bound, busy_text(ce));
      f.next_experiment = "Cut the instructions of the busiest pipe per result (see saturated-pipe where it fires); "
                          "rerun with --metrics full and compare the pipe's share and the kernel time.";
    } else {
      f.explanation = fmt::format(
          "The FLOP roofline counts only the floating-point operations the work model declares: {} of {} ({:.1f}%). "
          "The hardware counters show the SM busy, {}: its issue slots go to instructions the FLOP roof does not "
          "count (integer and logic work such as random number generation and index arithmetic, conversions, "
          "comparisons), so the distance to the FLOP roof is not headroom; the headroom left is what the busiest "
          "unit has left.",
          text::gflops(r.achieved_gflops), text::gflops(r.roof_gflops), r.percent_of_bound, busy_text(ce));
      f.next_experiment = "Cut the instructions of the busiest pipe per result (see saturated-pipe where it fires: "
                          "cheaper random number generators, less index arithmetic, FP32 where FP64 is not needed); "
                          "rerun with --metrics full and compare the pipe's share and the kernel time.";
    }
  }

  static void explain_far(finding& f, const roofline_point& r, const counter_evidence* ce) {
    const std::string agree =
        ce ? fmt::format(" The hardware counters agree that the kernel is not busy: its busiest unit, the {}, runs at "
                         "{:.1f}% of peak.",
                         ce->unit.name, ce->unit.pct)
           : std::string();
    if (r.bound == "memory") {
      f.explanation = fmt::format(
          "With {} flop per byte this code is limited by memory bandwidth, yet it moves only {} of the "
          "{} available ({:.1f}%). Uncoalesced or strided accesses, too little parallelism to hide latency, "
          "or work that is not counted in the declared bytes keep it far from the roof.{}",
          text::number(r.intensity), text::gbps(r.achieved_gbps), text::gbps(r.roof_gbps), r.percent_of_bound, agree);
      f.next_experiment =
          "Check that consecutive threads touch consecutive addresses (coalescing), use shared-memory tiles "
          "for transposed or reused accesses, and confirm with `ncu --clock-control none --section "
          "MemoryWorkloadAnalysis`.";
    } else {
      f.explanation = fmt::format(
          "With {} flop per byte this code should be limited by arithmetic throughput, yet it reaches only "
          "{} of {} ({:.1f}%). Divergent branches, dependent instruction chains, float64 or integer work, or "
          "low occupancy keep it far from the roof.{}",
          text::number(r.intensity), text::gflops(r.achieved_gflops), text::gflops(r.roof_gflops), r.percent_of_bound, agree);
      f.next_experiment = "Check the data type (float32 vs float64), divergence and occupancy; confirm with `ncu "
                          "--clock-control none --section ComputeWorkloadAnalysis --section Occupancy`.";
    }
  }
};

// The trace's kernels that take at least min_share of the wall time, each with its time per
// repetition and its theoretical occupancy on the device (what the occupancy and wave rules judge).
struct heavy_kernel {
  const kernel_stats& k;
  double t;
  occupancy_result o;
};
std::vector<heavy_kernel> heavy_kernels(const rule_context& ctx, double min_share, const sm_limits& limits) {
  std::vector<heavy_kernel> out;
  const double W = ctx.wall_ns();
  if (!ctx.trace || !(W > 0)) return out;
  for (const auto& k : ctx.trace->kernels) {
    const double t = ctx.trace->per_rep(k.total_ns);
    if (t / W < min_share) continue;
    out.push_back({k, t, theoretical_occupancy(k.threads_per_block(), k.registers_per_thread, k.shared_bytes, limits)});
  }
  return out;
}

class low_occupancy final : public rule {
public:
  static constexpr double max_occupancy = 0.5;
  static constexpr double min_share = 0.05;
  static constexpr double roofline_ok_percent = 60;
  low_occupancy()
      : rule({.name = "low-occupancy",
              .threshold = "theoretical occupancy below 50% for a kernel taking at least 5% of the wall time that "
                           "reaches less than 60% of its roofline bound",
              .summary = "registers, shared memory or block size limit the warps per SM"}) {}

  std::vector<finding> do_evaluate(const rule_context& ctx) const override {
    std::vector<finding> out;
    const double W = ctx.wall_ns();
    const sm_limits limits = sm_limits::from(ctx.device);
    for (const auto& [k, t, o] : heavy_kernels(ctx, min_share, limits)) {
      if (o.blocks_per_sm == 0 || o.occupancy >= max_occupancy) continue;
      const roofline_point* r = ctx.kernel_roofline(k.name);
      if (r && r->bound != "unknown" && r->percent_of_bound >= roofline_ok_percent) continue;
      // Latency-bound kernels speed up at most in proportion to resident warps, and never beyond the roof.
      const double s = std::min(max_occupancy / o.occupancy, kernel_speedup_cap(r, roofline_ok_percent));
      const double gain = gain_from_saving(W, t * (1 - 1 / s));
      finding f = start(ctx, fmt::format("kernel {} runs at {} theoretical occupancy ({} limit)", k.name,
                                         text::percent(o.occupancy), o.limiter),
                        gain);
      add(f, "kernel", k.name);
      add(f, "block", fmt::format("{} threads ({}x{}x{})", k.threads_per_block(), k.block[0], k.block[1], k.block[2]));
      add(f, "registers per thread", std::to_string(k.registers_per_thread));
      add(f, "shared memory per block", text::bytes(k.shared_bytes));
      add(f, "resident blocks per SM",
          fmt::format("{} (warps allow {}, registers {}, shared memory {}, block limit {})", o.blocks_per_sm,
                      o.blocks_by_warps, o.blocks_by_registers > 1000 ? std::string("any") : std::to_string(o.blocks_by_registers),
                      o.blocks_by_shared > 1000 ? std::string("any") : std::to_string(o.blocks_by_shared), o.blocks_by_limit));
      add(f, "theoretical occupancy", fmt::format("{} ({} of {} warps)", text::percent(o.occupancy), o.active_warps,
                                                  limits.max_threads_per_sm / limits.warp_size));
      if (r && r->bound != "unknown") add(f, "percent of roofline bound", fmt::format("{:.1f}%", r->percent_of_bound));
      add(f, "time per repetition", text::time(t) + " (" + text::percent(t / W) + " of wall)");
      f.explanation = fmt::format(
          "Only {} warps can reside on each SM ({} of the maximum), limited by {}. With few warps the SM cannot "
          "hide memory and instruction latency by switching warps, so it stalls.",
          o.active_warps, text::percent(o.occupancy), o.limiter);
      if (o.limiter == "registers")
        f.next_experiment = "Cap registers with __launch_bounds__(threads, minBlocks) or -maxrregcount and check "
                            "for spills; rerun and compare occupancy and kernel time.";
      else if (o.limiter == "shared memory")
        f.next_experiment = "Use smaller shared-memory tiles (or fewer buffers per block) so more blocks fit per SM; "
                            "rerun and compare.";
      else
        f.next_experiment = "Use blocks of 128-512 threads (a multiple of 32) so more warps fit per SM; rerun and compare.";
      out.push_back(std::move(f));
    }
    return out;
  }
};

class too_few_blocks final : public rule {
public:
  static constexpr double min_share = 0.05;
  static constexpr double target_percent = 60;
  too_few_blocks()
      : rule({.name = "too-few-blocks",
              .threshold = "a kernel taking at least 5% of the wall time launches less than one full wave of blocks "
                           "(blocks < SMs x resident blocks per SM)",
              .summary = "the grid is too small to fill the GPU"}) {}

  std::vector<finding> do_evaluate(const rule_context& ctx) const override {
    std::vector<finding> out;
    const double W = ctx.wall_ns();
    const sm_limits limits = sm_limits::from(ctx.device);
    for (const auto& [k, t, o] : heavy_kernels(ctx, min_share, limits)) {
      if (o.blocks_per_sm == 0) continue;
      const double blocks = k.blocks();
      const double w = waves(blocks, o.blocks_per_sm, limits.sm_count);
      if (w >= 1) continue;
      const double s = std::min(1 / std::max(w, 1e-9), kernel_speedup_cap(ctx.kernel_roofline(k.name), target_percent));
      if (s < 1.05) continue;
      const double gain = gain_from_saving(W, t * (1 - 1 / s));
      const double idle_sms = std::max(0.0, limits.sm_count - blocks);
      finding f = start(ctx, fmt::format("kernel {} launches {:.0f} blocks: {:.2f} of a wave", k.name, blocks, w), gain);
      add(f, "kernel", k.name);
      add(f, "grid", fmt::format("{}x{}x{} = {:.0f} blocks of {} threads", k.grid[0], k.grid[1], k.grid[2], blocks,
                                 k.threads_per_block()));
      add(f, "SMs", std::to_string(limits.sm_count));
      add(f, "resident blocks per SM", std::to_string(o.blocks_per_sm));
      add(f, "waves", fmt::format("{:.0f} / ({} x {}) = {:.3f}", blocks, limits.sm_count, o.blocks_per_sm, w));
      if (idle_sms > 0) add(f, "idle SMs", text::number(idle_sms));
      add(f, "time per repetition", text::time(t) + " (" + text::percent(t / W) + " of wall)");
      f.explanation = fmt::format(
          "The GPU can hold {} x {} = {} blocks of this kernel at once, but the grid has only {:.0f}{}. The "
          "unused capacity cannot help, however fast each block is.",
          limits.sm_count, o.blocks_per_sm, limits.sm_count * o.blocks_per_sm, blocks,
          idle_sms > 0 ? fmt::format(": {:.0f} SMs get no work at all", idle_sms) : std::string());
      f.next_experiment =
          "Launch more, smaller blocks (one thread per element, or a grid-stride loop with a grid of several "
          "times the SM count); for a reduction's final stage, keep it short or do it on the host.";
      out.push_back(std::move(f));
    }
    return out;
  }
};

} // namespace

void add_gpu_rules(rule_map& m) {
  detail::put<launch_bound, synchronization_heavy, host_bound, kernel_below_roofline, low_occupancy, too_few_blocks>(m);
}

} // namespace speedlab::analysis
