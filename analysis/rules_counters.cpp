// Rules that read hardware counters (point_result::counters) and name the cause with the
// counter evidence: excess-traffic (more DRAM bytes than the work model needs, and why),
// uncoalesced-access, achieved-occupancy, latency-bound, saturated-pipe, l2-thrashing.
// Each looks at the distinct kernels of the counters pass that take a noticeable share of
// the repetition.

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <optional>

#include "analysis/occupancy.hpp"
#include "analysis/rule_support.hpp"
#include "analysis/rules.hpp"
#include "analysis/source_lines.hpp"
#include "model/counters.hpp"

namespace speedlab::analysis {

namespace {

using detail::add;
using detail::gain_from_saving;
namespace cn = speedlab::counters;

constexpr double min_kernel_ns = 5000;  // shorter kernels: counters say little, gains are tiny
constexpr double min_share = 0.05;      // of the repetition's wall time

using kernel_view = detail::counter_kernel;

std::vector<kernel_view> kernels_of(const point_result& p) { return detail::counter_kernels(p); }

bool noticeable(const rule_context& ctx, const kernel_view& k) {
  const double W = ctx.wall_ns();
  return k.ns >= min_kernel_ns && W > 0 && k.time_per_rep() / W >= min_share;
}

std::string pct(double v) { return fmt::format("{:.1f}%", v); }

std::string sectors_text(double spr) {
  return fmt::format("{:.1f} sectors per request (4 is fully coalesced for 4-byte accesses, 32 is one sector per "
                     "thread)",
                     spr);
}

void add_kernel(finding& f, const kernel_view& k) {
  add(f, "kernel", k.name);
  if (k.name != k.counters.kernel) add(f, "kernel (mangled)", k.counters.kernel);
  if (k.counters.grid.size() == 3)
    add(f, "launch", fmt::format("grid {}x{}x{}, block {}x{}x{}", k.counters.grid[0], k.counters.grid[1],
                                 k.counters.grid[2], k.counters.block[0], k.counters.block[1], k.counters.block[2]));
  add(f, "duration (counters)", text::time(k.ns));
}

// Sectors per request above this, for loads or stores: more than a fully coalesced warp of
// 16-byte accesses needs (4-byte: 4, 8-byte: 8, 16-byte: 16); the counters do not tell the
// access width, so only what no width explains counts.
constexpr double uncoalesced_spr = 16;

// A rule that judges each noticeable kernel of the counters pass on its own, at most one
// finding a kernel: the loop and the filter are written once, here.
class kernel_rule : public rule {
public:
  using rule::rule;

protected:
  // Nothing (nullopt) when k shows no sign of what the rule looks for.
  virtual std::optional<finding> judge(const rule_context& ctx, const kernel_view& k) const = 0;

private:
  std::vector<finding> do_evaluate(const rule_context& ctx) const final {
    std::vector<finding> out;
    for (const auto& k : kernels_of(*ctx.point))
      if (noticeable(ctx, k))
        if (auto f = judge(ctx, k)) out.push_back(std::move(*f));
    return out;
  }
};

class excess_traffic final : public rule {
public:
  static constexpr double min_ratio = 1.5;
  excess_traffic()
      : rule({.name = "excess-traffic",
              .threshold = "the kernels move at least 1.5x the DRAM bytes the work model declares (counters, at least "
                           "1 MB), in kernels taking at least 5% of the wall time",
              .summary =
                  "the hardware moves more bytes than the algorithm needs (uncoalesced access, no reuse through L2)"}) {
  }

  std::vector<finding> do_evaluate(const rule_context& ctx) const override {
    const double need = ctx.point->work.bytes();
    if (!(need > 0) || !ctx.point->sections.has<counters::counter_pass>() || ctx.point->kind != variant_kind::cuda)
      return {};
    const auto ks = kernels_of(*ctx.point);
    double moved = 0, kernel_ns = 0;
    const kernel_view* worst = nullptr;
    for (const auto& k : ks) {
      if (!k.f.dram_bytes()) return {}; // DRAM bytes not read for every kernel: no total
      moved += *k.f.dram_bytes() * k.launches;
      kernel_ns += k.time_per_rep();
      if (!worst || *k.f.dram_bytes() * k.launches > *worst->f.dram_bytes() * worst->launches) worst = &k;
    }
    const double W = ctx.wall_ns();
    if (!worst || moved < 1e6 || moved / need < min_ratio || !(W > 0) || kernel_ns / W < min_share) return {};
    const double n = moved / need;
    // Moving only the needed bytes saves the excess share of the time, if the kernels are memory-bound.
    const double dram_busy = worst->f.dram_throughput_pct.value_or(100) / 100;
    const double saved = kernel_ns * (1 - 1 / n) * std::clamp(dram_busy, 0.0, 1.0);
    finding f = start(ctx, fmt::format("the kernels move {:.1f}x the bytes the work model needs", n),
                      gain_from_saving(W, saved));
    add(f, "DRAM bytes per repetition (counters)", text::bytes(moved));
    add(f, "bytes the work model declares", text::bytes(need));
    add_kernel(f, *worst);
    std::string why;
    const auto ld = worst->f.load_sectors_per_request, st = worst->f.store_sectors_per_request;
    if ((ld && *ld > uncoalesced_spr) || (st && *st > uncoalesced_spr)) {
      if (ld) add(f, "global loads", sectors_text(*ld));
      if (st) add(f, "global stores", sectors_text(*st));
      why = "Neighbouring threads touch addresses far apart (uncoalesced or strided access), so each request "
            "fetches many 32-byte sectors of which the warp uses a few bytes.";
      f.next_experiment = "Make consecutive threads touch consecutive addresses (swap the index roles, stage a tile "
                          "through shared memory, or use a structure of arrays); rerun with --metrics full and "
                          "compare sectors per request and DRAM bytes.";
    } else if (auto hit = worst->f.l2_hit_rate_pct) {
      add(f, "L2 hit rate", pct(*hit));
      if (worst->f.l2_bytes) add(f, "L2 traffic", text::bytes(*worst->f.l2_bytes));
      why = fmt::format("Accesses are coalesced, but data is fetched from DRAM again instead of being reused "
                        "through L2 (hit rate {}): the reuse distance exceeds what L2 keeps.",
                        pct(*hit));
      f.next_experiment = "Block the loops so that data is reused while it is still in L2 (tile the sweep, fuse the "
                          "passes that read the same data); rerun and compare DRAM bytes.";
    } else {
      why = "The metric set read no access-pattern counters.";
      f.next_experiment = "Rerun the point with --metrics full to see sectors per request and the L2 hit rate.";
    }
    f.explanation = fmt::format("The work model needs {} per repetition; the hardware counted {} ({:.1f}x). {}",
                                text::bytes(need), text::bytes(moved), n, why);
    return {f};
  }
};

class uncoalesced_access final : public kernel_rule {
public:
  uncoalesced_access()
      : kernel_rule({.name = "uncoalesced-access",
                     .threshold =
                         "global loads or stores use more than 16 sectors per request (counters, --metrics full) in "
                         "a kernel taking at least 5% of the wall time",
                     .summary = "a warp's accesses are spread over many 32-byte sectors"}) {}

  std::optional<finding> judge(const rule_context& ctx, const kernel_view& k) const override {
    const double ld = k.f.load_sectors_per_request.value_or(0), st = k.f.store_sectors_per_request.value_or(0);
    const double worst = std::max(ld, st);
    if (worst <= uncoalesced_spr) return std::nullopt;
    // A fully coalesced 4-byte access needs 4 sectors: moving to that divides the bytes by worst / 4, and
    // the time by at most that where the kernel is memory-bound.
    const double busy = std::clamp(k.f.memory_throughput_pct.value_or(50) / 100, 0.0, 1.0);
    const double s = 1 + (worst / 4 - 1) * busy;
    const double gain = gain_from_saving(ctx.wall_ns(), k.time_per_rep() * (1 - 1 / s));
    // The source pass, when run, names the line ("... at softmax.cu:25").
    const auto line = uncoalesced_line(*ctx.point, k.counters.kernel);
    finding f = start(ctx,
                      fmt::format("kernel {}: {} accesses use {:.1f} sectors per request{}", k.name,
                                  ld >= st ? "load" : "store", worst, line ? " at " + source::line_label(*line) : ""),
                      gain);
    add_kernel(f, k);
    if (line) add(f, "source line", describe_line(*line) + (line->text.empty() ? "" : ": " + line->text));
    if (ld > 0) add(f, "global loads", sectors_text(ld));
    if (st > 0) add(f, "global stores", sectors_text(st));
    if (k.f.memory_throughput_pct) add(f, "memory throughput", pct(*k.f.memory_throughput_pct) + " of peak");
    f.explanation = "Each warp-wide access touches many 32-byte sectors: threads next to each other read or write "
                    "addresses far apart (a strided or transposed index), so most of each sector moved is wasted.";
    f.next_experiment = "Index so that threadIdx.x walks the contiguous dimension, or stage the tile through shared "
                        "memory and write it out row-wise; rerun and compare sectors per request.";
    return f;
  }
};

class achieved_occupancy final : public kernel_rule {
public:
  static constexpr double max_ratio = 0.7;
  achieved_occupancy()
      : kernel_rule(
            {.name = "achieved-occupancy",
             .threshold =
                 "achieved occupancy (counters) below 70% of the theoretical occupancy, or below 30% absolute, in a "
                 "kernel taking at least 5% of the wall time that is not near its roofline bound",
             .summary = "fewer warps are resident than the SM could hold"}) {}

  std::optional<finding> judge(const rule_context& ctx, const kernel_view& k) const override {
    const sm_limits limits = sm_limits::from(ctx.device);
    if (!k.f.achieved_occupancy) return std::nullopt;
    const double achieved = *k.f.achieved_occupancy;
    // Theoretical occupancy from the launch's resources, where the trace has the kernel.
    std::optional<occupancy_result> theory;
    if (ctx.trace)
      for (const auto& t : ctx.trace->kernels)
        if (detail::same_kernel(t.name, k.counters.kernel)) {
          theory = theoretical_occupancy(t.threads_per_block(), t.registers_per_thread, t.shared_bytes, limits);
          break;
        }
    const bool below_theory = theory && theory->occupancy > 0 && achieved < max_ratio * theory->occupancy;
    const bool low = achieved < 0.3;
    if (!below_theory && !low) return std::nullopt;
    const roofline_point* r = nullptr;
    for (const auto* row : ctx.roofline)
      if (row->kernel_mangled == k.counters.kernel && row->level == "dram") r = row;
    if (r && r->percent_of_bound >= 60) return std::nullopt;
    const double target = theory ? theory->occupancy : 0.5;
    const double s = std::clamp(target / std::max(achieved, 0.01), 1.0, 4.0);
    const double gain = gain_from_saving(ctx.wall_ns(), k.time_per_rep() * (1 - 1 / std::sqrt(s)));
    finding f = start(ctx,
                      fmt::format("kernel {}: achieved occupancy {} of {} theoretical", k.name, text::percent(achieved),
                                  theory ? text::percent(theory->occupancy) : "?"),
                      gain);
    add_kernel(f, k);
    add(f, "achieved occupancy (sm__warps_active)", text::percent(achieved));
    if (theory) {
      add(f, "theoretical occupancy",
          fmt::format("{} (limited by {})", text::percent(theory->occupancy), theory->limiter));
      if (ctx.trace)
        for (const auto& t : ctx.trace->kernels)
          if (detail::same_kernel(t.name, k.counters.kernel)) {
            add(f, "waves", fmt::format("{:.2f}", waves(t.blocks(), theory->blocks_per_sm, limits.sm_count)));
            break;
          }
    }
    if (below_theory) {
      f.explanation = "The launch's resources allow more warps than were resident on average: the grid is too small "
                      "to fill every SM, the last wave runs partly empty (tail), or blocks finish unevenly.";
      f.next_experiment = "Give the grid at least a few full waves (more, smaller blocks, or a grid-stride loop sized "
                          "to a multiple of the SM count); rerun and compare achieved occupancy and time.";
    } else {
      f.explanation = fmt::format("Few warps are resident ({}), limited by {}: the SM cannot hide latency by "
                                  "switching warps.",
                                  text::percent(achieved), theory ? theory->limiter : std::string("the launch"));
      f.next_experiment = theory && theory->limiter == "registers"
                              ? "Cap registers with __launch_bounds__ and check for spills; rerun and compare."
                              : "Launch more threads per SM (larger grid or blocks of 128-512 threads); rerun.";
    }
    return f;
  }
};

class latency_bound final : public kernel_rule {
public:
  static constexpr double max_busy = 40;
  latency_bound()
      : kernel_rule({.name = "latency-bound",
                     .threshold =
                         "neither the SM (sm__throughput) nor memory (gpu__compute_memory_throughput) above 40% of "
                         "peak in a kernel taking at least 5% of the wall time (counters, --metrics full)",
                     .summary = "neither memory nor compute is busy: the kernel waits on latency"}) {}

  std::optional<finding> judge(const rule_context& ctx, const kernel_view& k) const override {
    if (!k.f.sm_throughput_pct || !k.f.memory_throughput_pct) return std::nullopt;
    const double busier = std::max(*k.f.sm_throughput_pct, *k.f.memory_throughput_pct);
    if (busier >= max_busy) return std::nullopt;
    // More work in flight can raise the busier unit toward 60% of its peak.
    const double s = 60 / std::max(busier, 1.0);
    const double gain = gain_from_saving(ctx.wall_ns(), k.time_per_rep() * (1 - 1 / s));
    finding f = start(ctx,
                      fmt::format("kernel {} is latency-bound: SM {}, memory {} of peak", k.name,
                                  pct(*k.f.sm_throughput_pct), pct(*k.f.memory_throughput_pct)),
                      gain);
    add_kernel(f, k);
    add(f, "SM throughput", pct(*k.f.sm_throughput_pct) + " of peak");
    add(f, "memory throughput", pct(*k.f.memory_throughput_pct) + " of peak");
    if (k.f.achieved_occupancy) add(f, "achieved occupancy", text::percent(*k.f.achieved_occupancy));
    if (k.f.issue_active_pct) add(f, "issue slots busy", pct(*k.f.issue_active_pct));
    f.explanation = "Neither the SM's pipes nor the memory system are anywhere near their peak: warps spend their "
                    "time waiting (on memory latency, dependencies or synchronization) with too little independent "
                    "work to cover the wait.";
    f.next_experiment = "Put more independent work in flight: more resident warps (occupancy), several independent "
                        "loads or accumulators per thread (unroll), fewer __syncthreads; rerun and compare the two "
                        "throughputs.";
    return f;
  }
};

class saturated_pipe final : public kernel_rule {
public:
  static constexpr double min_pct = 80;
  saturated_pipe()
      : kernel_rule({.name = "saturated-pipe",
                     .threshold =
                         "one SM pipe (FP64, ALU, XU, FMA, ...) issues at 80% of its peak or more in a kernel taking "
                         "at least 5% of the wall time (counters, --metrics full)",
                     .summary = "one execution pipe bounds the kernel"}) {}

  std::optional<finding> judge(const rule_context& ctx, const kernel_view& k) const override {
    if (!k.f.busiest_pipe_pct || *k.f.busiest_pipe_pct < min_pct) return std::nullopt;
    // The next pipe's load is what is left once the busiest one is relieved: a cap on the gain.
    double second = 0;
    for (const auto& p : cn::pipe_metrics()) {
      auto it = k.counters.metrics.find(p.metric);
      if (it != k.counters.metrics.end() && p.pipe != k.f.busiest_pipe) second = std::max(second, it->second);
    }
    const double s = std::clamp(*k.f.busiest_pipe_pct / std::max(second, 1.0), 1.0, 2.0);
    const double gain = gain_from_saving(ctx.wall_ns(), k.time_per_rep() * (1 - 1 / s));
    finding f = start(
        ctx, fmt::format("kernel {}: the {} pipe is {} busy", k.name, k.f.busiest_pipe, pct(*k.f.busiest_pipe_pct)),
        gain);
    add_kernel(f, k);
    add(f, "busiest pipe", fmt::format("{} at {} of peak", k.f.busiest_pipe, pct(*k.f.busiest_pipe_pct)));
    add(f, "next busiest pipe", pct(second) + " of peak");
    if (k.f.flops_fp64) add(f, "FP64 FLOPs", text::number(*k.f.flops_fp64));
    if (k.f.flops_fp32) add(f, "FP32 FLOPs", text::number(*k.f.flops_fp32));
    const std::string& p = k.f.busiest_pipe;
    f.explanation = fmt::format("The {} pipe issues near its peak rate: the kernel is bound by the instructions "
                                "that pipe executes, not by memory.",
                                p);
    if (p.rfind("FP64", 0) == 0)
      f.next_experiment = "Move what tolerates it to FP32 (FP64 runs at half the FP32 rate on H100), or cut FP64 "
                          "operations per result (strength reduction, fewer iterations); rerun and compare.";
    else if (p.rfind("XU", 0) == 0)
      f.next_experiment = "Replace special functions with cheaper forms (fast intrinsics such as __expf/__sinf where "
                          "accuracy allows, sincos for pairs, hoist them out of loops); rerun and compare.";
    else if (p.rfind("ALU", 0) == 0)
      f.next_experiment = "Cut integer and logic work per result: hoist index arithmetic, use cheaper random "
                          "number generators, avoid 64-bit integer division; rerun and compare.";
    else
      f.next_experiment = "Reduce the instructions this pipe executes per result (algebra, fewer passes) or "
                          "move work to an idle pipe; rerun and compare.";
    return f;
  }
};

class l2_thrashing final : public kernel_rule {
public:
  static constexpr double max_hit = 50;
  l2_thrashing()
      : kernel_rule({.name = "l2-thrashing",
                     .threshold =
                         "L2 hit rate below 50% while L2 traffic is at least 3x the DRAM traffic and DRAM is over "
                         "50% busy, in a kernel taking at least 5% of the wall time (counters, --metrics full)",
                     .summary = "data is requested again but L2 no longer holds it"}) {}

  std::optional<finding> judge(const rule_context& ctx, const kernel_view& k) const override {
    if (!k.f.l2_hit_rate_pct || !k.f.l2_bytes || !k.f.dram_bytes() || !k.f.dram_throughput_pct) return std::nullopt;
    const double hit = *k.f.l2_hit_rate_pct, l2 = *k.f.l2_bytes, dram = *k.f.dram_bytes();
    if (hit >= max_hit || l2 < 3 * dram || *k.f.dram_throughput_pct < 50) return std::nullopt;
    // Each reuse served from L2 instead of DRAM: DRAM bytes could fall toward L2 bytes x (1 - reuse).
    const double s = std::clamp((100 - hit) / 50, 1.0, 2.0);
    const double gain = gain_from_saving(ctx.wall_ns(), k.time_per_rep() * (1 - 1 / s));
    finding f = start(ctx,
                      fmt::format("kernel {}: L2 hit rate {} with {:.1f}x the DRAM bytes requested from L2", k.name,
                                  pct(hit), l2 / dram),
                      gain);
    add_kernel(f, k);
    add(f, "L2 hit rate", pct(hit));
    add(f, "L2 traffic", text::bytes(l2));
    add(f, "DRAM traffic", text::bytes(dram) + " (" + pct(*k.f.dram_throughput_pct) + " of peak)");
    f.explanation = "The kernel requests the same data several times, but by the time it comes back L2 has evicted "
                    "it, so DRAM serves most requests again: the working set between reuses exceeds the L2.";
    f.next_experiment = "Shrink the reuse distance: tile the loops so a block's working set fits in L2 (or shared "
                        "memory), process the data in chunks, or reorder blocks so neighbours share data; rerun "
                        "and compare the hit rate and DRAM bytes.";
    return f;
  }
};

} // namespace

namespace detail {

// The distinct kernels of the counters pass, each with its launches in the pass (the
// pass is one repetition; launches beyond K were counted, not profiled, so they are
// estimated from the launch count when every launch was of one key).
std::vector<counter_kernel> counter_kernels(const point_result& p) {
  std::vector<counter_kernel> out;
  const auto* pass = p.sections.get<counters::counter_pass>();
  if (!pass) return out;
  const auto& c = *pass;
  std::map<std::string, double> profiled;
  for (const auto& k : c.kernels) profiled[k.kernel] += 1;
  for (auto& k : cn::per_distinct_kernel(c.kernels)) {
    counter_kernel v;
    v.f = cn::derive(k.metrics);
    v.ns = v.f.duration_ns.value_or(0);
    v.launches = 0;
    for (const auto& l : c.kernels)
      if (l.kernel == k.kernel && l.grid == k.grid && l.block == k.block) v.launches += 1;
    if (c.skipped > 0 && profiled.size() == 1) v.launches += static_cast<double>(c.skipped);
    v.name = cn::demangled_name(k.kernel);
    v.counters = std::move(k);
    out.push_back(std::move(v));
  }
  return out;
}

bool same_kernel(const std::string& trace_name, const std::string& counters_name) {
  if (trace_name.empty() || counters_name.empty()) return false;
  if (trace_name == counters_name) return true;
  // The demangling the CUPTI backend applies to activity records (profilers/cupti).
  return trace_name == cn::demangled_name(counters_name);
}

std::optional<busy_unit> busiest_unit(const cn::counter_figures& f) {
  std::optional<busy_unit> best;
  auto consider = [&](const std::optional<double>& v, std::string name, bool memory) {
    if (v && (!best || *v > best->pct)) best = busy_unit{std::move(name), memory, *v};
  };
  // The bound's units when the set read them (the default set does), else the busiest pipe;
  // ncu's SM and memory summaries where read (the full set), as they can be higher.
  if (const auto* b = f.bound()) consider(b->pct, b->unit, b->memory);
  else if (f.busiest_pipe_pct) consider(f.busiest_pipe_pct, f.busiest_pipe + " pipe", false);
  consider(f.sm_throughput_pct, "SM throughput", false);
  if (!f.bound()) consider(f.dram_throughput_pct, "DRAM throughput", true);
  consider(f.memory_throughput_pct, "memory throughput (L1, L2, DRAM)", true);
  return best;
}

} // namespace detail

void add_counter_rules(rule_map& m) {
  detail::put<excess_traffic, uncoalesced_access, achieved_occupancy, latency_bound, saturated_pipe, l2_thrashing>(m);
}

} // namespace speedlab::analysis
